# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NIC firmware upgrade with NVIDIA MFT ``mlxfwmanager``: which rail NICs need it, and the commands.

Options (NVIDIA MFT manual, "mlxfwmanager - Firmware Update and Query Tool"; mstflint's
mstfwmanager(1) has the same synopsis): ``-d|--dev`` device (PCI ``bus:dev.fn`` or /dev/mst path),
``--query``, ``-u|--update``, ``-i|--image-file FileName`` (one image), ``-D|--image-dir DirectoryName``
(a directory to find matching images in), ``-y|--yes`` (no prompt). So an image *directory* is
``-D``; ``-i`` takes a file. Query output: per ``Device #N:`` block, ``Versions: Current Available``,
``FW <current> <available>`` and ``Status:`` (``Update required``, ``Up to date``, ``No matching
image found``); real captures in tests/fixtures/hosts/captures (innova2-5-mlxup-query,
nvidia-tools-mlxup-query-update-required). The new firmware runs after a reset or reboot
("Restart needed for updates to take effect").
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.aifabric.roce.plugins.module_utils.host.facts import mlxfw_versions, parse_mlxfwmanager

UPDATE_REQUIRED = "update required"
_BDF_RE = re.compile(r"^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")


def normalise_bdf(text):
    """'65:00.0' / '0000:65:00.0' -> '0000:65:00.0'; anything else (an mst path) -> None."""
    match = _BDF_RE.match((text or "").strip())
    if not match:
        return None
    domain, bus, dev, fn = match.groups()
    return "%s:%s:%s.%s" % ((domain or "0000").lower(), bus.lower(), dev.lower(), fn)


def image_source_args(image_dir=None, image_file=None):
    if image_file:
        return ["-i", image_file]
    return ["-D", image_dir]


def query_command(bdf, image_dir=None, image_file=None):
    return ["mlxfwmanager", "--query", "-d", bdf] + image_source_args(image_dir, image_file)


def update_command(bdf, image_dir=None, image_file=None):
    return ["mlxfwmanager", "-u", "-y", "-d", bdf] + image_source_args(image_dir, image_file)


def device_state(query_text, bdf):
    """The query block of ``bdf`` (matched by PCI Device Name when it is a BDF; the only block
    otherwise, as ``-d`` selects one device): {bdf, psid, part_number, current, running, flashed, pending,
    pending_reset, available, status, update}. ``current`` and ``running`` are what runs now, the facts' firmware
    ``version`` (facts.mlxfw_versions is the one reading both use); ``flashed`` is the image in flash and
    ``pending`` that image while it waits for a reset (capture mlxup-cx7-fw-running)."""
    devices = parse_mlxfwmanager(query_text)
    want = normalise_bdf(bdf)
    chosen = [d for d in devices if normalise_bdf(d.get("pci_device_name")) == want]
    if not chosen and len(devices) == 1 and normalise_bdf(devices[0].get("pci_device_name")) is None:
        chosen = devices  # /dev/mst/... names: -d already selected the device
    if not chosen:
        return None
    dev = chosen[0]
    versions = mlxfw_versions(dev)
    status = dev.get("status") or ""
    return {"bdf": want, "psid": dev.get("psid"), "part_number": dev.get("part_number"),
            "current": versions["running"], "running": versions["running"], "flashed": versions["flashed"],
            "pending": versions["pending"], "pending_reset": versions["pending_reset"], "available": versions["available"],
            "status": status, "update": status.strip().lower() == UPDATE_REQUIRED and versions["available"] is not None}
