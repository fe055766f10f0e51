# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the twin's traffic really goes, against the plan: real packets and interface counters, and the
kernel's own route lookups (stdlib; run as root on the twin's machine).

    paths.py check --plan plan.json --prefix aif- [--count 200]
        1. per host, ``ip route get <every other NIC> from <each own NIC>`` in the host's namespace: out of
           that NIC, via its gateway (IRM: the host's per-NIC tables and rules);
        2. per host NIC, two RoCEv2-shaped UDP flows (tests/lab/twin/probe.py udp), each ``count``
           datagrams, with the interface counters of every twin namespace read before and after: a flow to a
           host on the same leaf (same rail) must cross exactly the source NIC, its leaf port and the
           destination's leaf port (no uplink); a flow across rails must cross the source NIC, its leaf port,
           the uplink the plan binds the source to, the bound spine's port, one spine-to-destination-leaf
           link, the destination's leaf port and NIC (PPD). Exit 1 when anything differs.
    paths.py ecmp --plan plan.json --prefix aif- [--flows 1024] [--bound 0.25]
        how the kernel's L4 hash (fib_multipath_hash_policy=1) spreads RoCE-like flows (UDP to 4791, one
        source port per flow): on each leaf, unpinned flows (a source in the leaf's host subnet that no
        binding pins) over the leaf's uplinks, with ``ip route get ... iif <host port> ipproto udp sport N
        dport 4791``; on the bound spine, real datagrams of a pinned host over the spine's parallel links to
        the destination leaf, counted, and compared with the spine's own route lookups for the same ports.
        Exit 1 when a path outside the plan's ECMP set is taken, or a path's share is off its fair share
        (flows / paths) by more than ``bound``.

Both print one JSON document (figures and failures).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import subprocess
import sys
import time

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")
DPORT = 4791        # RoCEv2
SPORT = 49152       # first source port of the flows


def ip(ns, *args, stdin=None):
    out = subprocess.run(["ip", "-n", ns] + list(args), input=stdin, capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError("ip -n %s %s: %s" % (ns, " ".join(args), out.stderr.strip()))
    return out.stdout


def counters(namespaces):
    """{(ns, ifname): (rx_packets, tx_packets)} of every interface of the namespaces."""
    seen = {}
    for ns in namespaces:
        for link in json.loads(ip(ns, "-j", "-s", "link", "show")):
            stats = link.get("stats64") or link.get("stats") or {}
            seen[(ns, link["ifname"])] = (stats["rx"]["packets"], stats["tx"]["packets"])
    return seen


def send(ns, src, dst, sports, count):
    out = subprocess.run(["ip", "netns", "exec", ns, sys.executable, PROBE, "udp", "--src", src, "--dst", dst,
                          "--sports", sports, "--count", str(count), "--dport", str(DPORT)],
                         capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError("probe.py udp in %s: %s" % (ns, out.stderr.strip()[-500:]))


class Twin(object):
    """The plan's wiring, named as the twin names it."""

    def __init__(self, plan, prefix):
        self.plan, self.prefix = plan, prefix
        self.nics = [(host, nic) for host, record in sorted(plan["hosts"].items()) for nic in record["nics"]]
        self.by_address = dict((nic["address"], (host, nic)) for host, nic in self.nics)
        # the twin's cables (veth pairs): the only interfaces whose counters are compared
        self.cables = set()
        self.spine_links = {}      # (spine, leaf) -> [(spine port, leaf uplink port)]
        for name, leaf in plan["leafs"].items():
            for uplink in leaf["uplinks"]:
                self.cables |= {(self.ns(name), uplink["port"]), (self.ns(uplink["spine"]), uplink["spine_port"])}
                self.spine_links.setdefault((uplink["spine"], name), []).append((uplink["spine_port"], uplink["port"]))
        for host, nic in self.nics:
            self.cables |= {(self.ns(host), nic["netdev"]), (self.ns(nic["leaf"]), nic["leaf_port"])}

    def ns(self, name):
        return self.prefix + name

    def namespaces(self):
        return sorted(set(ns for ns, _ifname in self.cables))

    def binding(self, address):
        _host, nic = self.by_address[address]
        for binding in self.plan["leafs"][nic["leaf"]]["bindings"]:
            if binding["source"].split("/")[0] == address:
                return binding
        return None

    def ingress(self, leaf_name, port):
        """The interface a host port's packets are routed from: the SVI bridge (scheme A) or the port itself."""
        for iface in self.plan["leafs"][leaf_name].get("host_interfaces") or []:
            if iface["kind"] == "svi" and port in iface["members"]:
                return "vlan%d" % iface["vlan"]
        return port


def irm(twin):
    """``ip route get`` from each host NIC to every other host's NICs, in the host's namespace."""
    failures, checked = [], 0
    for host in sorted(twin.plan["hosts"]):
        nics = twin.plan["hosts"][host]["nics"]
        queries = [(nic, dst) for nic in nics for other, dst in twin.nics if other != host]
        out = ip(twin.ns(host), "-o", "-batch", "-", stdin="".join(
            "route get %s from %s\n" % (dst["address"], nic["address"]) for nic, dst in queries))
        lines = [line for line in out.splitlines() if line and not line[0].isspace()]
        if len(lines) != len(queries):
            failures.append("%s: %d route lookups answered %d times: %s" % (host, len(queries), len(lines), out[-300:]))
            continue
        for (nic, dst), line in zip(queries, lines):
            checked += 1
            dev = re.search(r" dev (\S+)", line)
            via = re.search(r" via (\S+)", line)
            local = ipaddress.ip_address(dst["address"]) in ipaddress.ip_network(nic["subnet"])
            want_via = None if local else nic["gateway"]
            if (dev and dev.group(1), via and via.group(1)) != (nic["netdev"], want_via):
                failures.append("%s %s: to %s leaves dev %s via %s, plan: dev %s via %s" % (
                    host, nic["address"], dst["address"], dev and dev.group(1), via and via.group(1), nic["netdev"],
                    want_via or "- (same subnet)"))
    return checked, failures


def crossed(before, after, cables, count):
    """{(ns, ifname, 'rx'|'tx')} of the cables that carried at least ``count`` packets between the reads."""
    out = set()
    for key in cables:
        if key in before and key in after:
            for index, way in ((0, "rx"), (1, "tx")):
                if after[key][index] - before[key][index] >= count:
                    out.add(key + (way,))
    return out


def expected_path(twin, src, dst):
    """The cables a flow SRC -> DST crosses by the plan, and the choices ECMP leaves open (spine -> leaf links)."""
    src_host, src_nic = twin.by_address[src]
    dst_host, dst_nic = twin.by_address[dst]
    src_leaf, dst_leaf = src_nic["leaf"], dst_nic["leaf"]
    path = {(twin.ns(src_host), src_nic["netdev"], "tx"), (twin.ns(src_leaf), src_nic["leaf_port"], "rx"),
            (twin.ns(dst_leaf), dst_nic["leaf_port"], "tx"), (twin.ns(dst_host), dst_nic["netdev"], "rx")}
    choices = []
    if src_leaf != dst_leaf:
        binding = twin.binding(src)
        uplink = next(u for u in twin.plan["leafs"][src_leaf]["uplinks"] if u["port"] == binding["uplink"])
        path |= {(twin.ns(src_leaf), uplink["port"], "tx"), (twin.ns(uplink["spine"]), uplink["spine_port"], "rx")}
        choices = [{(twin.ns(uplink["spine"]), sport, "tx"), (twin.ns(dst_leaf), lport, "rx")}
                   for sport, lport in twin.spine_links[(uplink["spine"], dst_leaf)]]
    return path, choices


def describe(hops):
    return ", ".join("%s %s %s" % (ns, ifname, way) for ns, ifname, way in sorted(hops))


def flows(twin):
    """Per host NIC: a same-leaf flow (next host, same NIC index) and a cross-rail flow (next host, next NIC)."""
    hosts = sorted(twin.plan["hosts"])
    out = []
    for index, host in enumerate(hosts):
        peer = twin.plan["hosts"][hosts[(index + 1) % len(hosts)]]
        nics = twin.plan["hosts"][host]["nics"]
        for rail, nic in enumerate(nics):
            same = peer["nics"][rail]
            cross = peer["nics"][(rail + 1) % len(peer["nics"])]
            out.append(("same leaf", nic["address"], same["address"]))
            if cross["leaf"] != nic["leaf"]:
                out.append(("cross rail", nic["address"], cross["address"]))
    return out


def check(twin, count):
    started = time.monotonic()
    checked, failures = irm(twin)
    report = {"route_lookups": checked, "flows": [], "failures": failures}
    namespaces = twin.namespaces()
    for number, (kind, src, dst) in enumerate(flows(twin)):
        host = twin.by_address[src][0]
        before = counters(namespaces)
        send(twin.ns(host), src, dst, str(SPORT + number), count)
        time.sleep(0.05)
        seen = crossed(before, counters(namespaces), twin.cables, count)
        path, choices = expected_path(twin, src, dst)
        taken = [c for c in choices if c <= seen]
        ok = seen == path | (taken[0] if len(taken) == 1 else set()) and (not choices or len(taken) == 1)
        report["flows"].append({"kind": kind, "src": src, "dst": dst, "ok": ok, "path": describe(seen)})
        if not ok:
            failures.append("%s flow %s -> %s (UDP %d -> %d, %d datagrams): crossed [%s]; plan [%s]%s" % (
                kind, src, dst, SPORT + number, DPORT, count, describe(seen), describe(path),
                " + one of the spine's links to the destination leaf" if choices else ""))
    report["seconds"] = round(time.monotonic() - started, 1)
    return report


def spread(counts, paths, flows_total, bound):
    """Share of each path against the fair share; the failures when off by more than ``bound``."""
    fair = float(flows_total) / len(paths)
    shares = dict((p, counts.get(p, 0)) for p in sorted(paths))
    worst = max(abs(n - fair) / fair for n in shares.values())
    return {"flows": flows_total, "paths": shares, "max_deviation": round(worst, 3),
            "max_min_ratio": round(max(shares.values()) / float(max(min(shares.values()), 1)), 3)}, worst <= bound


def lookups(ns, queries):
    """``ip route get`` answers (the ``dev``) for each query line, in one ``ip -batch``."""
    out = ip(ns, "-o", "-batch", "-", stdin="".join(q + "\n" for q in queries))
    lines = [line for line in out.splitlines() if line and not line[0].isspace()]
    if len(lines) != len(queries):
        raise RuntimeError("%s: %d route lookups, %d answers" % (ns, len(queries), len(lines)))
    return [(re.search(r" dev (\S+)", line) or re.match(r"(.*)", line)).group(1) for line in lines]


def unpinned_source(leaf):
    """An address of the leaf's host subnet that no binding pins (and not the gateway), or None."""
    bound = set(b["source"].split("/")[0] for b in leaf["bindings"])
    gateway = (leaf.get("gateway") or {}).get("address")
    for subnet in leaf.get("local_destinations") or []:
        for address in ipaddress.ip_network(subnet).hosts():
            if str(address) not in bound and str(address) != gateway:
                return str(address)
    return None


def ecmp_devs(ns, dst):
    """The devices of the main table's route to ``dst`` (its ECMP set as installed in the kernel)."""
    devs = set()
    for route in json.loads(ip(ns, "-j", "route", "show", "match", dst)):
        devs |= set(hop.get("dev") for hop in route.get("nexthops") or [route])
    return devs


def settle(twin, pairs, timeout):
    """Wait (up to ``timeout`` s) until each leaf's route to its destination holds every uplink: BGP may still be
    installing paths after a session came back (a flap, a failover test)."""
    deadline = time.monotonic() + timeout
    while any(not set(u["port"] for u in twin.plan["leafs"][name]["uplinks"]) <= ecmp_devs(twin.ns(name), dst)
              for name, dst in pairs) and time.monotonic() < deadline:
        time.sleep(0.5)


def ecmp(twin, flows_total, bound, wait=10):
    report, failures = {"leafs": {}, "spine": None, "bound": bound, "failures": []}, []
    ports = range(SPORT, SPORT + flows_total)
    leaf_names = sorted(twin.plan["leafs"])
    remote = dict((name, twin.plan["leafs"][leaf_names[(index + 1) % len(leaf_names)]]["downlinks"][0]["host_address"])
                  for index, name in enumerate(leaf_names))
    settle(twin, sorted(remote.items()), wait)
    for name in leaf_names:
        leaf = twin.plan["leafs"][name]
        src = unpinned_source(leaf)
        if src is None:
            report["leafs"][name] = "no unpinned source in the host subnets"
            continue
        dst = remote[name]
        iif = twin.ingress(name, leaf["downlinks"][0]["port"])
        devs = lookups(twin.ns(name), ["route get %s from %s iif %s ipproto udp sport %d dport %d" % (dst, src, iif, p, DPORT)
                                       for p in ports])
        uplinks = [u["port"] for u in leaf["uplinks"]]
        counts = dict((d, devs.count(d)) for d in set(devs))
        figures, ok = spread(counts, uplinks, flows_total, bound)
        figures.update(src=src, dst=dst)
        report["leafs"][name] = figures
        outside = sorted(set(devs) - set(uplinks))
        if outside:
            failures.append("%s: unpinned flows %s -> %s left by %s, outside the plan's ECMP set (the uplinks %s)" % (
                name, src, dst, outside, uplinks))
        if not ok:
            failures.append("%s: unpinned flows %s -> %s over the uplinks %s: share off the fair %d by %.0f %% (bound %.0f %%)" % (
                name, src, dst, figures["paths"], flows_total // len(uplinks), figures["max_deviation"] * 100, bound * 100))
    # real datagrams of a pinned host: all on the bound uplink at the leaf, spread by the bound spine's L4 hash
    src_host, src_nic = twin.nics[0]
    dst_nic = next(n for h, n in twin.nics if n["leaf"] != src_nic["leaf"] and h != src_host)
    binding = twin.binding(src_nic["address"])
    uplink = next(u for u in twin.plan["leafs"][src_nic["leaf"]]["uplinks"] if u["port"] == binding["uplink"])
    links = twin.spine_links[(uplink["spine"], dst_nic["leaf"])]
    spine_ns = twin.ns(uplink["spine"])
    predicted = lookups(spine_ns, ["route get %s from %s iif %s ipproto udp sport %d dport %d" % (
        dst_nic["address"], src_nic["address"], uplink["spine_port"], p, DPORT) for p in ports])
    namespaces = [twin.ns(src_nic["leaf"]), spine_ns]
    before = counters(namespaces)
    send(twin.ns(src_host), src_nic["address"], dst_nic["address"], "%d-%d" % (ports[0], ports[-1]), 1)
    time.sleep(0.1)
    after = counters(namespaces)

    def delta(ns, ifname):
        return after[(ns, ifname)][1] - before[(ns, ifname)][1]
    measured = dict((port, delta(spine_ns, port)) for port, _leaf_port in links)
    figures, ok = spread(measured, [p for p, _l in links], flows_total, bound)
    figures.update(src=src_nic["address"], dst=dst_nic["address"], spine=uplink["spine"],
                   bound_uplink=delta(twin.ns(src_nic["leaf"]), uplink["port"]),
                   predicted=dict((p, predicted.count(p)) for p, _l in links))
    report["spine"] = figures
    # noise: BGP keepalives (3 s) and the few ICMP errors the far end sends back
    noise = max(8, flows_total // 100)
    if figures["bound_uplink"] < flows_total:
        failures.append("leaf %s: %d of %d pinned datagrams on the bound uplink %s" % (
            src_nic["leaf"], figures["bound_uplink"], flows_total, uplink["port"]))
    off = dict((p, (measured[p], figures["predicted"][p])) for p in measured if abs(measured[p] - figures["predicted"][p]) > noise)
    if off:
        failures.append("%s: datagrams per link (counted, predicted by ip route get) %s differ by more than %d" % (
            uplink["spine"], off, noise))
    if not ok:
        failures.append("%s: flows %s -> %s over its links to %s: %s, share off the fair %d by %.0f %% (bound %.0f %%)" % (
            uplink["spine"], src_nic["address"], dst_nic["address"], dst_nic["leaf"], measured, flows_total // len(links),
            figures["max_deviation"] * 100, bound * 100))
    report["failures"] = failures
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("action", choices=["check", "ecmp"])
    parser.add_argument("--plan", required=True)
    parser.add_argument("--prefix", required=True, help="the twin's namespace prefix")
    parser.add_argument("--count", type=int, default=200, help="check: datagrams per flow")
    parser.add_argument("--flows", type=int, default=1024, help="ecmp: flows (source ports)")
    parser.add_argument("--bound", type=float, default=0.25, help="ecmp: largest allowed deviation from the fair share")
    args = parser.parse_args(argv)
    with open(args.plan) as handle:
        twin = Twin(json.load(handle), args.prefix)
    report = check(twin, args.count) if args.action == "check" else ecmp(twin, args.flows, args.bound)
    print(json.dumps(report, indent=1, sort_keys=True))
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
