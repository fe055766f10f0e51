"""The drift report in a real browser: headless Chromium (Debian package `chromium`, installed by
tools/setup-system.sh) renders the HTML report to a PNG; the picture must not be blank and must
show the headline banner in the verdict's colour near the top of the page. A generated 1,000-host
audit (two drifts, ten readiness findings on every host) must show the drift above the readiness
findings and each of those findings once, not 1,000 times.

The PNG is decoded with the standard library (zlib), so no imaging package is needed."""
import shutil
import struct
import subprocess
import zlib

import os
import sys

from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import build_report, entry_from_result, render_html

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "unit", "audit"))
from test_report_verified import fleet  # noqa: E402 pylint: disable=wrong-import-position

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH, HEIGHT = 1000, 700
# colours of render_html's CSS: banners .v-drift / .v-ok / .v-notready, rows .drift (drift) and .readiness
ORANGE, GREEN, BLUE = (0xFD, 0x98, 0x43), (0x75, 0xB7, 0x98), (0x9E, 0xC5, 0xFE)
DRIFT_ROW, READINESS_ROW = (0xFF, 0xF3, 0xCD), (0xFD, 0xF6, 0xE3)


def decode_png(path):
    """Rows of (r, g, b) tuples of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as handle:
        data = handle.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour, interlace = header[0], header[1], header[2], header[3], header[6]
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    raw, stride, rows, prev = zlib.decompress(b"".join(chunks)), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return rows


def screenshot(report, tmp_path, name, height=HEIGHT):
    page, png = tmp_path / (name + ".html"), tmp_path / (name + ".png")
    page.write_text(render_html(report))
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--user-data-dir=%s" % (tmp_path / ("profile-" + name)), "--screenshot=%s" % png,
                    "--window-size=%d,%d" % (WIDTH, height), "file://%s" % page],
                   check=True, capture_output=True, timeout=60)
    return decode_png(str(png))


def rows_with(rows, colour):
    """Indices of the pixel rows holding at least 50 pixels of `colour`."""
    return [y for y, row in enumerate(rows) if sum(1 for pixel in row if pixel == colour) >= 50]


def count(rows, colour, top=None):
    return sum(1 for row in rows[:top] for pixel in row if pixel == colour)


def test_report_renders_in_chromium_with_the_verdict_banner_on_top(tmp_path):
    assert CHROMIUM, "chromium is not installed: run tools/setup-system.sh (Debian package chromium)"
    drift = build_report([entry_from_result("gpu02", "host", "host_network",
                                            {"changed": True, "diff": {"before": {"mtu": 1500}, "after": {"mtu": 9000}}}),
                          entry_from_result("leaf1", "switch", "switch", {"failed": True, "msg": "TCP connection to device failed."})],
                         fabric="lab", generated="2026-11-23T17:00:00Z", plan_digest="0123456789abcdef" * 4)
    clean = build_report([entry_from_result("gpu01", "host", "host_network", {"changed": False})], fabric="lab")
    drift_rows, clean_rows = screenshot(drift, tmp_path, "drift"), screenshot(clean, tmp_path, "clean")
    assert len(drift_rows) == HEIGHT and len(drift_rows[0]) == WIDTH
    ink = sum(1 for row in drift_rows for pixel in row if sum(pixel) < 200)  # dark text pixels
    assert ink > 2000, "page looks blank (%d dark pixels)" % ink
    # the headline banner sits in the top quarter, in the verdict's colour, and only there
    assert count(drift_rows, ORANGE, HEIGHT // 4) > 5000 and count(drift_rows, GREEN) == 0
    assert count(clean_rows, GREEN, HEIGHT // 4) > 5000 and count(clean_rows, ORANGE) == 0


def test_a_1000_host_audit_shows_drift_first_and_each_shared_finding_once(tmp_path):
    """The page a 1,000-host operator opens: orange DRIFT banner on top, the two drift rows next, the ten readiness
    findings of every host as ten rows (hosts collapsed) below them - all on the first screen."""
    assert CHROMIUM, "chromium is not installed: run tools/setup-system.sh (Debian package chromium)"
    height = 1100
    rows = screenshot(build_report(fleet(1000), "big", generated="2026-11-26T02:00:00Z"), tmp_path, "big", height)
    assert count(rows, ORANGE, height // 6) > 5000 and count(rows, BLUE, height // 6) == 0
    drift, readiness = rows_with(rows, DRIFT_ROW), rows_with(rows, READINESS_ROW)
    assert drift and readiness, (len(drift), len(readiness))
    # (the fleet summary's drift cells further down have the drift colour too)
    assert min(drift) < min(readiness), "drift rows must come before the readiness findings"
    # ten grouped readiness rows fit on the screen with room to spare (ungrouped: 10,000 rows)
    assert max(readiness) < height - 50 and len(readiness) < 400, len(readiness)
    in_sync = [e for e in fleet(3) if e["device"] not in ("gpu0002", "leaf1")]
    blue = screenshot(build_report(in_sync, "small"), tmp_path, "notready")
    assert count(blue, BLUE, HEIGHT // 4) > 5000 and count(blue, ORANGE) == 0  # blue: in sync, not ready
