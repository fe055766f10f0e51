# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA bandwidth probes with perftest's ib_write_bw: GID lookup, command lines, output parsing, verdicts.

Pure functions (file reads only through a root path, so fixture trees stand in for /sys);
`processes.py` starts and waits for the processes. Sources:

- GID table: Linux Documentation/ABI/stable/sysfs-class-infiniband
  (``/sys/class/infiniband/<dev>/ports/<port>/gids/<n>``, ``gid_attrs/types/<n>``); a RoCE v2 GID
  of an IPv4 address is the IPv4-mapped IPv6 address ``::ffff:a.b.c.d``.
- Options: perftest ib_write_bw ``-d`` device, ``-x`` GID index, ``-p`` TCP port, ``-D`` seconds,
  ``-q`` QPs, ``-F`` (no CPU frequency warning), ``--report_gbits``; the client adds the server address.
- Result table: linux-rdma/perftest ``src/perftest_parameters.h`` (``RESULT_FMT_G`` header
  `` #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]`` and one
  ``REPORT_FMT`` row per size); sample in tests/fixtures/validate (see its SOURCE.md).
- Listening sockets: Linux Documentation/networking/proc_net_tcp.rst (``st`` 0A = LISTEN).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.aifabric.roce.plugins.module_utils.host.facts import gid_to_ipv4
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot

ROCE_V2 = "RoCE v2"
_HEADER_AVERAGE = "BW average[Gb/sec]"
_TCP_LISTEN = "0A"


def rdma_devices(root="/"):
    """Names of the RDMA devices under <root>/sys/class/infiniband (empty when none or no RDMA stack)."""
    return sorted(SysRoot(root).listdir("/sys/class/infiniband"))


def roce_v2_gid_index(root, rdma, ipv4, port=1):
    """(index, None) of the RoCE v2 GID of `ipv4` on `rdma` port `port`, or (None, reason)."""
    sysroot = SysRoot(root)
    base = "/sys/class/infiniband/%s/ports/%s" % (rdma, port)
    if not sysroot.exists("/sys/class/infiniband/%s" % rdma):
        return None, "RDMA device %s not present" % rdma
    if not sysroot.isdir(base + "/gids"):
        return None, "RDMA device %s has no port %s GID table" % (rdma, port)
    indexes = sorted(int(name) for name in sysroot.listdir(base + "/gids") if name.isdigit())
    for index in indexes:
        if gid_to_ipv4(sysroot.read("%s/gids/%d" % (base, index))) != ipv4:
            continue
        if sysroot.read("%s/gid_attrs/types/%d" % (base, index)) == ROCE_V2:
            return index, None
    return None, "no RoCE v2 GID for %s on %s port %s (address not configured on the netdev, or not RoCE v2)" % (
        ipv4, rdma, port)


def _common_args(probe, gid_index):
    args = ["-d", probe["rdma"], "-x", str(gid_index), "-p", str(probe["port"]), "--report_gbits",
            "-D", str(probe["duration"]), "-F"]
    if probe.get("qps", 1) > 1:
        args += ["-q", str(probe["qps"])]
    return args


def server_command(binary, probe, gid_index):
    """ib_write_bw server for `probe` (role server): waits for one client, runs, exits."""
    return [binary] + _common_args(probe, gid_index)


def client_command(binary, probe, gid_index):
    """ib_write_bw client for `probe` (role client): the server options plus the server's address."""
    return [binary] + _common_args(probe, gid_index) + [probe["peer_address"]]


def parse_ib_write_bw(text):
    """Average bandwidth in Gb/s from ib_write_bw --report_gbits output, or None.

    Reads the rows after the `BW average[Gb/sec]` header whose columns are all numbers
    (#bytes, #iterations, BW peak, BW average, MsgRate) and returns BW average of the last one
    (one row with -D; one per interval with --run_infinitely). Other lines (CPU frequency
    warnings, separators) are ignored."""
    average = None
    in_table = False
    for line in (text or "").splitlines():
        if _HEADER_AVERAGE in line:
            in_table = True
            continue
        fields = line.split()
        if not in_table or len(fields) < 4:
            continue
        try:
            int(fields[0])
            int(fields[1])
            values = [float(field) for field in fields[2:]]
        except ValueError:
            continue
        average = values[1]
    return average


def probe_name(probe):
    if probe["role"] == "server":
        return "rdma_bw server %s (%s) port %d for %s" % (probe["rdma"], probe["dev"], probe["port"], probe["peer"])
    return "rdma_bw %s (%s) %s -> %s %s:%d" % (
        probe["rdma"], probe["dev"], probe["address"], probe["peer"], probe["peer_address"], probe["port"])


def expected_text(probe):
    rate = probe.get("line_rate_gbps")
    if not rate:
        return "no line rate in the plan"
    return ">= %s Gb/s (%s x %s Gb/s line rate)" % (_number(rate * probe["threshold"]), _number(probe["threshold"]), rate)


def judge_rdma_bw(probe, average_gbps, output=""):
    """Finding for a client probe: ok when the average reaches threshold x line rate; fail when it
    does not or when the output has no result (then `actual` is the output's last line)."""
    finding = {"probe": probe_name(probe), "expected": expected_text(probe)}
    if average_gbps is None:
        tail = [line.strip() for line in (output or "").splitlines() if line.strip()]
        finding.update(status="fail", actual="no result%s" % (": " + tail[-1] if tail else ""))
        return finding
    actual = "%s Gb/s average" % _number(average_gbps)
    rate = probe.get("line_rate_gbps")
    if not rate:
        finding.update(status="skipped", actual=actual + ", not judged")
        return finding
    finding.update(status="ok" if average_gbps >= rate * probe["threshold"] else "fail",
                   actual="%s (%s%% of line rate)" % (actual, _number(round(100.0 * average_gbps / rate, 1))))
    return finding


def listening_ports(text):
    """TCP ports in LISTEN state from /proc/net/tcp or /proc/net/tcp6 text."""
    ports = set()
    for line in (text or "").splitlines()[1:]:
        fields = line.split()
        if len(fields) < 4 or fields[3] != _TCP_LISTEN or ":" not in fields[1]:
            continue
        try:
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
        except ValueError:
            continue
    return ports


def _number(value):
    """Plain decimal text without a trailing .0 (90.0 -> 90, 92.57 -> 92.57)."""
    return ("%.2f" % value).rstrip("0").rstrip(".")
