# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Post-bring-up validation: which probes each host runs, and how to read their output.

Probes are planned on the controller from the plan (pure) and executed on the host by the
`rail_validate` module (stdlib only). A ring over the hosts in play keeps the probe count linear:
each host checks the next host on every rail, so every host and rail NIC is covered. The optional
RDMA bandwidth mesh uses the same ring (see `plan_rdma_bw`; running and reading perftest is in
`perftest.py`).
"""

from __future__ import annotations

import json
import re

# IPv4 header 20 + ICMP header 8: an 8972-byte payload fills a 9000-byte MTU exactly.
ICMP_OVERHEAD = 28
_LOSS_RE = re.compile(r"(\d+(?:\.\d+)?)% packet loss")
_RTT_RE = re.compile(r"= [\d.]+/([\d.]+)/")
# perftest's default TCP port (DEF_PORT in perftest_parameters.h); the server for rail r listens on base + r.
RDMA_BW_BASE_PORT = 18515


def _ring(plan, hosts_in_play):
    """Hosts in play that are in the plan, in plan slot order."""
    return sorted((name for name in hosts_in_play if name in plan["hosts"]), key=lambda n: plan["hosts"][n]["slot"])


def plan_probes(plan, host, hosts_in_play, peers_per_rail=1):
    """Probes for `host`: DF pings to same-rail NICs of the next hosts in the ring, and
    `ip route get` checks for same-rail and cross-rail destinations."""
    ring = _ring(plan, hosts_in_play)
    if host not in ring or len(ring) < 2:
        return []
    position = ring.index(host)
    peers = [ring[(position + step) % len(ring)] for step in range(1, min(peers_per_rail, len(ring) - 1) + 1)]
    mine = plan["hosts"][host]["nics"]
    probes = []
    for peer in peers:
        theirs = plan["hosts"][peer]["nics"]
        for nic in mine:
            same = next((n for n in theirs if n["rail"] == nic["rail"]), None)
            if same is None:
                continue
            on_link = same["subnet"] == nic["subnet"]
            probes.append({"kind": "mtu_ping", "rail": nic["rail"], "dev": nic["netdev"], "src": nic["address"],
                           "dst": same["address"], "peer": peer, "size": nic["mtu"] - ICMP_OVERHEAD})
            probes.append({"kind": "route", "rail": nic["rail"], "dev": nic["netdev"], "src": nic["address"],
                           "dst": same["address"], "peer": peer, "via": None if on_link else nic["gateway"]})
            other = next((n for n in theirs if n["rail"] != nic["rail"]), None)
            if other is not None:  # cross-rail traffic must leave by this NIC via the rail gateway
                probes.append({"kind": "route", "rail": nic["rail"], "dev": nic["netdev"], "src": nic["address"],
                               "dst": other["address"], "peer": peer, "via": nic["gateway"]})
    return probes


def plan_rdma_bw(plan, host, hosts_in_play, threshold=0.9, duration=5, base_port=RDMA_BW_BASE_PORT, qps=1,
                 fallback_speeds=None):
    """RDMA write bandwidth probes for `host` over the ping ring: on every rail, host[i] runs the
    ib_write_bw client towards host[i+1]'s same-rail NIC, and host[i+1] runs the server for it.
    So every rail NIC is a client once and a server once, and a host runs one server per rail
    NIC, on port `base_port + rail` (distinct per host, so all of a host's servers run at once).

    Expected rate: the lower NIC speed of the pair (`speed_gbps` of the plan NICs, else
    `fallback_speeds[netdev]`, e.g. from fabric.servers.nics); pass at `threshold` x that rate."""
    ring = _ring(plan, hosts_in_play)
    if host not in ring or len(ring) < 2:
        return []
    fallback_speeds = fallback_speeds or {}
    position = ring.index(host)
    neighbours = (("client", ring[(position + 1) % len(ring)]), ("server", ring[(position - 1) % len(ring)]))
    probes = []
    for nic in plan["hosts"][host]["nics"]:
        for role, peer in neighbours:
            theirs = next((n for n in plan["hosts"][peer]["nics"] if n["rail"] == nic["rail"]), None)
            if theirs is None:
                continue
            speeds = [n.get("speed_gbps") or fallback_speeds.get(n["netdev"]) for n in (nic, theirs)]
            probes.append({"kind": "rdma_bw", "role": role, "rail": nic["rail"], "rdma": nic["rdma"],
                           "dev": nic["netdev"], "address": nic["address"], "peer": peer,
                           "peer_address": theirs["address"], "port": base_port + nic["rail"],
                           "duration": duration, "qps": qps, "threshold": threshold,
                           "line_rate_gbps": min(speeds) if all(speeds) else None})
    return probes


def expected_lldp(plan, host):
    """netdev -> (leaf, leaf port) from the cabling plan."""
    return dict((nic["netdev"], (nic["leaf"], nic["leaf_port"])) for nic in plan["hosts"][host]["nics"])


def parse_route_get(text):
    """`ip -j route get` output -> {'dev', 'via', 'prefsrc'} (None when absent)."""
    try:
        routes = json.loads(text or "[]")
    except ValueError:
        return None
    if not routes:
        return None
    route = routes[0]
    return {"dev": route.get("dev"), "via": route.get("gateway"), "prefsrc": route.get("prefsrc")}


def route_batch_input(probes):
    """The ``route`` probes as iproute2 batch input (``ip -j -force -batch -`` reads it on stdin): one ``ip`` process
    for all of a host's lookups instead of one each."""
    return "".join("route get %s from %s\n" % (p["dst"], p["src"]) for p in probes)


def parse_route_batch(text, probes):
    """Output of ``ip -j -force -batch -`` over ``route_batch_input(probes)`` -> per probe what ``parse_route_get``
    gives (None: refused or not answered). Each answer is one JSON line carrying its ``dst`` and ``from`` (iproute2
    6.1, tests/fixtures/switches/frr/SOURCE.md); a refused lookup prints only to stderr."""
    answers = {}
    for line in (text or "").splitlines():
        if line.startswith("["):
            try:
                routes = json.loads(line)
            except ValueError:
                continue
            for route in routes:
                answers.setdefault((route.get("dst"), route.get("from")), []).append(json.dumps([route]))
    out = []
    for p in probes:
        found = answers.get((p["dst"], p["src"])) or []
        out.append(parse_route_get(found.pop(0)) if found else None)
    return out


def judge_route(probe, route):
    """Finding dict for a route probe."""
    expected = {"dev": probe["dev"], "via": probe["via"]}
    actual = {"dev": route.get("dev"), "via": route.get("via")} if route else None
    ok = actual == expected
    return {"probe": "route %s from %s" % (probe["dst"], probe["src"]), "status": "ok" if ok else "fail",
            "expected": "dev %s%s" % (probe["dev"], " via %s" % probe["via"] if probe["via"] else " (on-link)"),
            "actual": "no route" if not actual else "dev %s%s" % (actual["dev"], " via %s" % actual["via"] if actual["via"] else " (on-link)")}


def parse_ping(text, rc):
    loss = _LOSS_RE.search(text or "")
    rtt = _RTT_RE.search(text or "")
    return {"ok": rc == 0 and loss is not None and float(loss.group(1)) == 0.0,
            "loss_percent": float(loss.group(1)) if loss else 100.0,
            "rtt_avg_ms": float(rtt.group(1)) if rtt else None}


def judge_ping(probe, parsed):
    return {"probe": "ping -M do -s %d %s from %s (%s)" % (probe["size"], probe["dst"], probe["src"], probe["dev"]),
            "status": "ok" if parsed["ok"] else "fail",
            "expected": "0%% loss at %d bytes, DF" % (probe["size"] + ICMP_OVERHEAD),
            "actual": "%s%% loss%s" % (parsed["loss_percent"], (", avg %s ms" % parsed["rtt_avg_ms"]) if parsed["rtt_avg_ms"] else "")}


def parse_lldp(text):
    """`lldpctl -f json` -> {netdev: (system name, port id)}; tolerates lldpd's one-or-many shapes."""
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return {}
    interfaces = data.get("lldp", {}).get("interface", [])
    if isinstance(interfaces, dict):
        interfaces = [{name: value} for name, value in interfaces.items()]
    out = {}
    for entry in interfaces:
        for name, info in entry.items():
            chassis = info.get("chassis", {})
            system = next(iter(chassis)) if isinstance(chassis, dict) and chassis else None
            port = info.get("port", {}).get("id", {})
            out[name] = (system, port.get("value") if isinstance(port, dict) else port)
    return out


def judge_lldp(expected, seen):
    findings = []
    for netdev, (leaf, port) in sorted(expected.items()):
        actual = seen.get(netdev)
        findings.append({"probe": "lldp %s" % netdev, "status": "ok" if actual == (leaf, port) else "fail",
                         "expected": "%s %s" % (leaf, port),
                         "actual": "no neighbour" if actual is None else "%s %s" % actual})
    return findings
