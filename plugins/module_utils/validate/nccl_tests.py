# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl-tests ``all_reduce_perf`` across GPU hosts: command line, output parsing, bus-bandwidth verdict.

Sources:
- Table layout: NVIDIA/nccl-tests ``src/common.cu`` prints, per size, ``size count type redop root``
  then out-of-place ``time algbw busbw #wrong`` and in-place ``time algbw busbw #wrong`` (older
  releases: no ``root`` column, ``error`` instead of ``#wrong``; accepted, no real sample kept), then ``# Out of bounds values`` and
  ``# Avg bus bandwidth``. Real sample: tests/fixtures/validate/nccl-tests-a3mega-all-reduce (SOURCE.md).
- Meaning of busbw: NVIDIA/nccl-tests ``doc/PERFORMANCE.md``: bus bandwidth is algbw scaled by the
  collective's traffic (all-reduce: 2(n-1)/n) so that it reflects how fast the hardware bottleneck
  is used, comparable to the hardware's peak independently of the number of ranks. Across nodes
  the bottleneck is the nodes' NICs, so the reference here is the planned rail line rate of a host
  (sum of its rail NICs' speeds), see docs/playbooks.md.
- Launch: Open MPI ``mpirun -np <ranks> -H host:slots,...`` with ``all_reduce_perf -g 1`` (one GPU per
  rank), as the nccl-tests README shows for multi-node runs.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

DEFAULT_ARGS = ("-b", "512M", "-e", "8G", "-f", "2", "-g", "1")
_TAG_RE = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")  # mpirun --tag-output prefix
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_WRONG = r"(?:\d+|N/A|%s)" % _NUM


def _float(text):
    try:
        return float(text)
    except ValueError:
        return None


def _wrong(text):
    """#wrong is a count (new) or an error magnitude (old ``error`` column); N/A when not checked."""
    if text == "N/A":
        return None
    value = _float(text)
    return value


_ROW_RE = re.compile(
    r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>\S+)\s+(?P<redop>\S+)\s+(?:(?P<root>-?\d+)\s+)?"
    r"(?P<oop_time>%s)\s+(?P<oop_algbw>%s)\s+(?P<oop_busbw>%s)\s+(?P<oop_wrong>%s)\s+"
    r"(?P<ip_time>%s)\s+(?P<ip_algbw>%s)\s+(?P<ip_busbw>%s)\s+(?P<ip_wrong>%s)\s*$"
    % (_NUM, _NUM, _NUM, _WRONG, _NUM, _NUM, _NUM, _WRONG))


def parse_output(text):
    """all_reduce_perf stdout -> {'rows': [...], 'avg_busbw', 'out_of_bounds', 'ranks', 'hosts'}.

    Each row: size (bytes), count, type, redop, root, and 'out_of_place' / 'in_place' dicts with
    time_us, algbw, busbw (GB/s) and wrong. Lines that are not table rows (NCCL INFO logs, rank
    list) are skipped; mpirun's ``[1,0]<stdout>:`` tags are removed. No row -> rows == [].
    """
    rows, avg, oob, ranks, hosts = [], None, None, 0, set()
    for raw in (text or "").splitlines():
        line = _TAG_RE.sub("", raw).rstrip()
        match = re.match(r"^#\s+Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)", line)
        if match:
            ranks += 1
            hosts.add(match.group(1))
            continue
        match = re.match(r"^#\s*Avg bus bandwidth\s*:\s*(%s)" % _NUM, line)
        if match:
            avg = float(match.group(1))
            continue
        match = re.match(r"^#\s*Out of bounds values\s*:\s*(\d+)", line)
        if match:
            oob = int(match.group(1))
            continue
        match = _ROW_RE.match(line)
        if not match:
            continue
        g = match.groupdict()
        rows.append({
            "size": int(g["size"]), "count": int(g["count"]), "type": g["type"], "redop": g["redop"],
            "root": int(g["root"]) if g["root"] is not None else None,
            "out_of_place": {"time_us": float(g["oop_time"]), "algbw": float(g["oop_algbw"]),
                             "busbw": float(g["oop_busbw"]), "wrong": _wrong(g["oop_wrong"])},
            "in_place": {"time_us": float(g["ip_time"]), "algbw": float(g["ip_algbw"]),
                         "busbw": float(g["ip_busbw"]), "wrong": _wrong(g["ip_wrong"])},
        })
    return {"rows": rows, "avg_busbw": avg, "out_of_bounds": oob, "ranks": ranks, "hosts": sorted(hosts)}


def judge(parsed, line_rate_gbps, threshold):
    """Verdict on the out-of-place bus bandwidth: its peak over sizes must reach
    ``threshold`` x the reference (``line_rate_gbps`` Gb/s -> GB/s), and no size may report wrong
    values. Returns {'status': ok|fail, 'peak_busbw', 'peak_size', 'reference_gbytes', 'required', 'message'}."""
    rows = parsed.get("rows") or []
    reference = float(line_rate_gbps) / 8.0
    required = round(reference * float(threshold), 2)
    out = {"reference_gbytes": round(reference, 2), "required": required, "peak_busbw": None, "peak_size": None,
           "avg_busbw": parsed.get("avg_busbw")}
    if not rows:
        out.update(status="fail", message="no all_reduce_perf result rows in the output")
        return out
    peak = max(rows, key=lambda r: (r["out_of_place"]["busbw"], r["size"]))
    out["peak_busbw"], out["peak_size"] = peak["out_of_place"]["busbw"], peak["size"]
    wrong = [r["size"] for r in rows for side in ("out_of_place", "in_place") if r[side]["wrong"]]
    problems = []
    if wrong:
        problems.append("wrong results at size(s) %s" % ", ".join(str(s) for s in sorted(set(wrong))))
    if parsed.get("out_of_bounds"):
        problems.append("%d out-of-bounds values" % parsed["out_of_bounds"])
    if peak["out_of_place"]["busbw"] < required:
        problems.append("out-of-place busbw peak %.2f GB/s (at %d B) below %.2f GB/s = %.2f x %.2f GB/s (%s Gb/s planned)"
                        % (peak["out_of_place"]["busbw"], peak["size"], required, float(threshold), reference, line_rate_gbps))
    if problems:
        out.update(status="fail", message="; ".join(problems))
    else:
        out.update(status="ok", message="out-of-place busbw peak %.2f GB/s (at %d B) >= %.2f GB/s (%.2f x %.2f GB/s planned)"
                   % (peak["out_of_place"]["busbw"], peak["size"], required, float(threshold), reference))
    return out


def host_list(hosts, slots):
    """Open MPI -H value: host:slots,... (names checked by the caller)."""
    return ",".join("%s:%d" % (host, int(slots)) for host in hosts)


def command(launcher, binary, hosts, gpus_per_host, launcher_args=(), args=DEFAULT_ARGS):
    """argv: <launcher> [launcher_args] -np <hosts x gpus> -H h:g,... <binary> [args]."""
    return ([launcher] + list(launcher_args) + ["-np", str(len(hosts) * int(gpus_per_host)),
                                                "-H", host_list(hosts, gpus_per_host), binary] + list(args))
