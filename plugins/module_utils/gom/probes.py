# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe plan with full link coverage (GOM, DIGEST 003), computed from a fabric plan.

Pure functions: no Ansible, no network. docs/probe-plan.md explains the model.

Path model of one probe (source NIC -> destination NIC, UDP):

* destination local to the source leaf (``leaf.local_destinations``): host -> leaf -> host;
* otherwise PPD: host -> leaf -> the uplink bound to the source's ingress port
  (``binding['uplink']``) -> that spine -> one of the spine's parallel links to the destination
  leaf -> host. The spine's choice among its ``uplinks_per_spine`` parallel links is ECMP; it is
  modelled by :func:`ecmp_index` (a stand-in for the switch's real hash: an agent that sends the
  probes must use the listed UDP source port, and a fabric whose real hash differs must replace
  this function, nothing else).

Directed links: every host link in both directions (``up`` host->leaf, ``down`` leaf->host) and
every leaf-spine link in both directions (``up`` leaf->spine, ``down`` spine->leaf).
"""
from __future__ import annotations

import ipaddress
import zlib

ROCE_UDP_PORT = 4791
SPORT_BASE = 49152


def ecmp_index(src, dst, sport, members, dport=ROCE_UDP_PORT, proto=17):
    """Modelled ECMP member (0-based) for a UDP 5-tuple: CRC32 of the tuple text modulo members."""
    if members <= 1:
        return 0
    key = ("%s|%s|%d|%d|%d" % (src, dst, proto, sport, dport)).encode("ascii")
    return zlib.crc32(key) % members


def sport_for(src, dst, wanted, members, dport=ROCE_UDP_PORT):
    """Lowest UDP source port >= SPORT_BASE whose modelled hash picks member ``wanted``."""
    for sport in range(SPORT_BASE, 65536):
        if ecmp_index(src, dst, sport, members, dport) == wanted:
            return sport
    raise ValueError("no UDP source port selects ECMP member %d of %d" % (wanted, members))


def _link(a, b):
    return "%s>%s" % (a, b)


class LinkModel(object):
    """NICs, leafs, spines and the directed links of a plan, indexed for path computation."""

    def __init__(self, plan):
        self.plan = plan
        self.nics = []
        self.leaf_order = sorted(plan["leafs"], key=lambda n: (plan["leafs"][n]["plane"], plan["leafs"][n]["slot"]))
        self.leaf_index = dict((name, i) for i, name in enumerate(self.leaf_order))
        self.locals = {}
        self.parallel = {}      # (spine, leaf) -> [uplink dicts of the leaf toward that spine, by index]
        self.links = []         # every directed link, in a stable order
        self.meta = {}          # link -> (kind host|fabric, direction up|down, leaf)
        bindings = {}
        for leaf_name in self.leaf_order:
            leaf = plan["leafs"][leaf_name]
            self.locals[leaf_name] = [ipaddress.ip_network(n) for n in leaf.get("local_destinations") or []]
            for binding in leaf.get("bindings") or []:
                bindings[(leaf_name, binding["ingress"])] = binding
            for uplink in sorted(leaf.get("uplinks") or [], key=lambda u: u["index"]):
                self.parallel.setdefault((uplink["spine"], leaf_name), []).append(uplink)
                self.links.append(self.fabric_link(leaf_name, uplink, "up"))
                self.links.append(self.fabric_link(leaf_name, uplink, "down"))
        for host_name in sorted(plan["hosts"], key=lambda h: (plan["hosts"][h]["slot"], h)):
            for nic in plan["hosts"][host_name]["nics"]:
                binding = bindings.get((nic["leaf"], nic["leaf_port"]))
                entry = {
                    "id": "%s:%s" % (host_name, nic["netdev"]),
                    "host": host_name, "netdev": nic["netdev"], "rdma": nic.get("rdma"),
                    "rail": nic["rail"], "address": nic["address"], "leaf": nic["leaf"],
                    "leaf_port": nic["leaf_port"], "plane": plan["leafs"][nic["leaf"]]["plane"],
                    "spine": binding["spine"] if binding else None,
                    "uplink": binding["uplink"] if binding else None,
                    "ip": ipaddress.ip_address(nic["address"]),
                }
                self.nics.append(entry)
                self.links.append(self.host_link(entry, "up"))
                self.links.append(self.host_link(entry, "down"))
        self.spines_of_plane = {}
        for spine_name, spine in plan.get("spines", {}).items():
            self.spines_of_plane.setdefault(spine["plane"], []).append(spine_name)

    def host_link(self, nic, direction):
        host_end = "%s:%s" % (nic["host"], nic["netdev"])
        leaf_end = "%s:%s" % (nic["leaf"], nic["leaf_port"])
        link = _link(host_end, leaf_end) if direction == "up" else _link(leaf_end, host_end)
        self.meta[link] = ("host", direction, nic["leaf"])
        return link

    def fabric_link(self, leaf_name, uplink, direction):
        leaf_end = "%s:%s" % (leaf_name, uplink["port"])
        spine_end = "%s:%s" % (uplink["spine"], uplink["spine_port"])
        link = _link(leaf_end, spine_end) if direction == "up" else _link(spine_end, leaf_end)
        self.meta[link] = ("fabric", direction, leaf_name)
        return link

    def is_local(self, src, dst):
        return any(dst["ip"] in net for net in self.locals[src["leaf"]])

    def members(self, src, dst):
        """Parallel spine->leaf links a remote probe src->dst can take (empty: no spine path)."""
        if src["spine"] is None:
            return []
        return self.parallel.get((src["spine"], dst["leaf"]), [])

    def path(self, src, dst, sport=None, dport=ROCE_UDP_PORT):
        """Directed links of the probe, or None when the plan gives it no path."""
        if src["host"] == dst["host"]:
            return None
        if self.is_local(src, dst):
            if src["leaf"] != dst["leaf"]:
                return None
            return [self.host_link(src, "up"), self.host_link(dst, "down")]
        members = self.members(src, dst)
        if not members:
            return None
        src_uplink = [u for u in self.plan["leafs"][src["leaf"]]["uplinks"] if u["port"] == src["uplink"]][0]
        down = members[ecmp_index(src["address"], dst["address"], sport or SPORT_BASE, len(members), dport)]
        return [self.host_link(src, "up"), self.fabric_link(src["leaf"], src_uplink, "up"),
                self.fabric_link(dst["leaf"], down, "down"), self.host_link(dst, "down")]


def reachable_links(model):
    """Directed links that some host-to-host flow can cross under PPD and the modelled ECMP.

    Not reachable: uplinks bound to no in-use host port (upstream), links of a spine no binding
    uses, links of a leaf with no other leaf behind its spines, host links of a lone host.
    """
    by_leaf = {}
    for nic in model.nics:
        by_leaf.setdefault(nic["leaf"], []).append(nic)
    hosts_of = dict((leaf, set(n["host"] for n in nics)) for leaf, nics in by_leaf.items())
    out = set()
    reached = {}    # leaf -> hosts of remote sources reaching it (at most two kept)
    for src in model.nics:
        remote = [leaf for leaf in model.leaf_order if leaf in by_leaf and leaf != src["leaf"]
                  and model.parallel.get((src["spine"], leaf)) and hosts_of[leaf] - set([src["host"]])]
        local = [d for d in by_leaf[src["leaf"]] if d["host"] != src["host"] and model.is_local(src, d)]
        if remote or local:
            out.add(model.host_link(src, "up"))
        for dst in local:
            out.add(model.host_link(dst, "down"))
        if remote:
            uplink = [u for u in model.plan["leafs"][src["leaf"]]["uplinks"] if u["port"] == src["uplink"]][0]
            out.add(model.fabric_link(src["leaf"], uplink, "up"))
        for leaf in remote:
            for member in model.parallel[(src["spine"], leaf)]:
                out.add(model.fabric_link(leaf, member, "down"))
            seen = reached.setdefault(leaf, set())
            if len(seen) < 2:
                seen.add(src["host"])
    for leaf, sources in reached.items():
        for dst in by_leaf[leaf]:
            if sources - set([dst["host"]]):
                out.add(model.host_link(dst, "down"))
    return out


def _probe(model, src, dst, member, members, dport):
    sport = sport_for(src["address"], dst["address"], member, members, dport) if members > 1 else None
    return {"src": src, "dst": dst, "sport": sport}


def _cyclic(model, a, b):
    n = len(model.leaf_order)
    return (model.leaf_index[b] - model.leaf_index[a]) % n


def plan_probes(plan, dport=ROCE_UDP_PORT):
    """Probe flows whose paths cover every coverable directed link; returns the report dict."""
    model = LinkModel(plan)
    nics = model.nics
    by_leaf = {}
    for nic in nics:
        by_leaf.setdefault(nic["leaf"], []).append(nic)
    dest_used = dict((n["id"], 0) for n in nics)
    hosts_of = dict((leaf, set(n["host"] for n in items)) for leaf, items in by_leaf.items())
    slot_used = {}
    for key, members in model.parallel.items():
        for k in range(len(members)):
            slot_used[(key[0], key[1], k)] = 0
    raw = []
    need = dict((leaf, len(items)) for leaf, items in by_leaf.items())
    need_host = {}
    for nic in nics:
        need_host[(nic["leaf"], nic["host"])] = need_host.get((nic["leaf"], nic["host"]), 0) + 1

    def remote_leafs(src):
        out = []
        for leaf_name in model.leaf_order:
            if leaf_name == src["leaf"] or not model.parallel.get((src["spine"], leaf_name)):
                continue
            if leaf_name in by_leaf and hosts_of[leaf_name] - set([src["host"]]):
                out.append(leaf_name)
        return out

    def pick_dest(leaf_name, src):
        candidates = [d for d in by_leaf[leaf_name] if d["host"] != src["host"]]
        return min(candidates, key=lambda d: dest_used[d["id"]])

    def emit(src, dst, k, members):
        raw.append(_probe(model, src, dst, k, members, dport))
        if not dest_used[dst["id"]]:
            need[dst["leaf"]] -= 1
            need_host[(dst["leaf"], dst["host"])] -= 1
        dest_used[dst["id"]] += 1
        if members:
            slot_used[(src["spine"], dst["leaf"], k)] += 1

    # 1. every NIC sources one probe (its host->leaf link and, remote, its bound uplink);
    #    sources interleaved across leafs so the greedy keeps every leaf's demand balanced.
    positions = {}
    for leaf_name in model.leaf_order:
        for pos, nic in enumerate(by_leaf.get(leaf_name, [])):
            positions[nic["id"]] = (pos, model.leaf_index[leaf_name])
    order = sorted(nics, key=lambda n: positions[n["id"]])
    local_only = []
    for src in order:
        leafs = remote_leafs(src)
        if not leafs:
            local_only.append(src)
            continue

        def score(leaf_name, src=src):
            free = [k for k in range(len(model.parallel[(src["spine"], leaf_name)]))
                    if slot_used[(src["spine"], leaf_name, k)] == 0]
            wanted = need[leaf_name] - need_host.get((leaf_name, src["host"]), 0)
            return (len(free) > 0, wanted, len(free), -_cyclic(model, src["leaf"], leaf_name))

        target = max(leafs, key=score)
        members = len(model.parallel[(src["spine"], target)])
        k = min(range(members), key=lambda i: (slot_used[(src["spine"], target, i)], i))
        emit(src, pick_dest(target, src), k, members)

    # 2. NICs with no spine path: same-leaf probes in a ring over the leaf's NICs (other hosts).
    for src in local_only:
        peers = [d for d in by_leaf[src["leaf"]] if d["host"] != src["host"] and model.is_local(src, d)]
        if peers:
            emit(src, min(peers, key=lambda d: dest_used[d["id"]]), 0, 0)

    # 3. repair: spine->leaf slots and destination NICs still uncovered.
    source_used = {}
    for probe in raw:
        source_used[probe["src"]["id"]] = source_used.get(probe["src"]["id"], 0) + 1
    for (spine, leaf_name, k), used in sorted(slot_used.items()):
        if used or leaf_name not in by_leaf:
            continue
        sources = [s for s in nics if s["spine"] == spine and s["leaf"] != leaf_name
                   and any(d["host"] != s["host"] for d in by_leaf[leaf_name])]
        if not sources:
            continue
        src = min(sources, key=lambda s: source_used.get(s["id"], 0))
        source_used[src["id"]] = source_used.get(src["id"], 0) + 1
        emit(src, pick_dest(leaf_name, src), k, len(model.parallel[(spine, leaf_name)]))
    for dst in nics:
        if dest_used[dst["id"]]:
            continue
        sources = [s for s in nics if s["host"] != dst["host"] and model.path(s, dst) is not None]
        if not sources:
            continue
        src = min(sources, key=lambda s: source_used.get(s["id"], 0))
        source_used[src["id"]] = source_used.get(src["id"], 0) + 1
        members = len(model.members(src, dst)) if not model.is_local(src, dst) else 0
        k = min(range(members), key=lambda i: slot_used[(src["spine"], dst["leaf"], i)]) if members else 0
        emit(src, dst, k, members)
    return _report(model, raw, dport)


def _report(model, raw, dport):
    covered = set()
    probes = []
    for number, probe in enumerate(raw):
        src, dst = probe["src"], probe["dst"]
        path = model.path(src, dst, probe["sport"], dport)
        covered.update(path)
        probes.append({
            "id": number,
            "src_host": src["host"], "src_netdev": src["netdev"], "src_rdma": src["rdma"],
            "src_address": src["address"], "rail": src["rail"],
            "dst_host": dst["host"], "dst_netdev": dst["netdev"], "dst_rdma": dst["rdma"],
            "dst_address": dst["address"],
            "udp_sport": probe["sport"], "udp_dport": dport,
            "path": path,
        })
    coverable = set(model.links)
    unreachable = sorted(coverable - reachable_links(model))
    reachable = coverable - set(unreachable)
    total = len(reachable)
    per_path = 4 if len(model.leaf_order) > 1 and model.parallel else 2
    naive = -(-total // per_path)
    # every probe ends on exactly one leaf->host link, and every spine->leaf link is crossed only
    # by a probe ending under that leaf: probes ending at leaf L >= max(NICs on L, links into L).
    per_leaf = {}
    sources = 0
    for link in reachable:
        kind, direction, leaf_name = model.meta[link]
        if kind == "host" and direction == "up":
            sources += 1
        elif direction == "down":
            per_leaf.setdefault(leaf_name, {"host": 0, "fabric": 0})[kind] += 1
    ending = sum(max(v["host"], v["fabric"]) for v in per_leaf.values())
    tight = max(naive, sources, ending)
    count = len(probes)
    missing = sorted(reachable - covered)
    return {
        "probes": probes,
        "links": total,
        "links_all": len(coverable),
        "links_covered": len(covered & reachable),
        "coverage": float(len(covered & reachable)) / total if total else 1.0,
        "coverage_all": float(len(covered & coverable)) / len(coverable) if coverable else 1.0,
        "uncovered": missing,
        "unreachable_under_ppd": sorted(unreachable),
        "nics": len(model.nics),
        "links_per_path": per_path,
        "bound": naive,
        "tight_bound": tight,
        "ratio": float(count) / naive if naive else 0.0,
        "ratio_tight": float(count) / tight if tight else 0.0,
        "count": count,
        "hash": "crc32('src|dst|17|sport|dport') % members",
    }


def by_host(report):
    """Probe list grouped by source host, the shape an agent on each host runs."""
    out = {}
    for probe in report["probes"]:
        out.setdefault(probe["src_host"], []).append(dict(
            (k, probe[k]) for k in ("id", "src_netdev", "src_rdma", "src_address", "dst_host", "dst_address",
                                    "udp_sport", "udp_dport")))
    return out
