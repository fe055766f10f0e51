# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe plan with full link coverage (GOM, DIGEST 003), computed from a fabric plan.

Pure functions: no Ansible, no network. docs/probe-plan.md explains the model.

Path model of one probe (source NIC -> destination NIC, UDP):

* destination local to the source leaf (``leaf.local_destinations``): host -> leaf -> host;
* otherwise PPD: host -> leaf -> the uplink bound to the source's ingress port
  (``binding['uplink']``) -> that spine -> one of the spine's parallel links to the destination
  leaf -> host. The spine's choice among its ``uplinks_per_spine`` parallel links is ECMP. No
  supported spine's hash can be computed offline (each driver's ``ecmp_hash`` says why), so
  either the device is asked which link a 5-tuple takes (``oracle``: e.g. ``ip route get ...
  ipproto udp sport S dport 4791`` on the twin's Linux spines) and the source port is chosen from
  its answers, or the source port comes from :func:`ecmp_index` (a crc32 stand-in) and every
  spine->leaf link that only the stand-in reaches is listed as ``at_risk`` with the reason.

Directed links: every host link in both directions (``up`` host->leaf, ``down`` leaf->host) and
every leaf-spine link in both directions (``up`` leaf->spine, ``down`` spine->leaf).
"""
from __future__ import annotations

import bisect
import gc
import heapq
import ipaddress
import socket
import zlib

ROCE_UDP_PORT = 4791
# GOM's probes: not 4791, which a RoCE NIC's engine takes before the host stack sees it (docs/gom.md)
GOM_UDP_PORT = 4792
SPORT_BASE = 49152
ORACLE_TRIES = 64   # source ports asked per probe: with 2..8 parallel links a wanted one is all but certain
PAIR_TRIES = 256    # (source, destination) pairs asked for a spine->leaf link no probe has crossed yet

STAND_IN = "crc32('src|dst|17|sport|dport') % members (a stand-in: no spine hash can be computed offline)"


def hash_model(platform):
    """The stated ECMP hash of a spine platform (docs/probe-plan.md): its driver's ``ecmp_hash`` (nos/base.py)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS
    return DRIVERS[platform].ecmp_hash.format(name=platform)


def ecmp_index(src, dst, sport, members, dport=ROCE_UDP_PORT, proto=17):
    """Modelled ECMP member (0-based) for a UDP 5-tuple: CRC32 of the tuple text modulo members."""
    if members <= 1:
        return 0
    key = ("%s|%s|%d|%d|%d" % (src, dst, proto, sport, dport)).encode("ascii")
    return zlib.crc32(key) % members


def sport_for(src, dst, wanted, members, dport=ROCE_UDP_PORT):
    """Lowest UDP source port >= SPORT_BASE whose modelled hash picks member ``wanted``."""
    if members <= 1:
        return SPORT_BASE if wanted == 0 else _no_port(wanted, members)
    # the key text of ecmp_index(), its fixed part formatted once (this runs once per probe)
    head, tail = "%s|%s|%d|" % (src, dst, 17), "|%d" % dport
    for sport in range(SPORT_BASE, 65536):
        if zlib.crc32((head + str(sport) + tail).encode("ascii")) % members == wanted:
            return sport
    return _no_port(wanted, members)


def _no_port(wanted, members):
    raise ValueError("no UDP source port selects ECMP member %d of %d" % (wanted, members))


def _link(a, b):
    return "%s>%s" % (a, b)


class LinkModel(object):
    """NICs, leafs, spines and the directed links of a plan, indexed for path computation.

    Reads from each leaf only ``local_destinations``, ``uplinks`` and the binding fields
    ``ingress``, ``uplink`` and ``spine`` (never a binding's ``exclude_destinations``).
    """

    def __init__(self, plan):
        self.plan = plan
        self.nics = []
        self.leaf_order = sorted(plan["leafs"], key=lambda n: (plan["leafs"][n]["plane"], plan["leafs"][n]["slot"]))
        self.leaf_index = dict((name, i) for i, name in enumerate(self.leaf_order))
        self.locals = {}        # leaf -> [(version, network int, mask int)] of its local_destinations
        self.parallel = {}      # (spine, leaf) -> [uplink dicts of the leaf toward that spine, by index]
        self.parallel_down = {}  # (spine, leaf) -> [spine->leaf link names, same order]
        self.uplink_at = {}     # (leaf, port) -> uplink dict
        self.uplink_up = {}     # (leaf, port) -> leaf->spine link name
        self.links = []         # every directed link, in a stable order
        self.asked_pairs = {}   # spine->leaf link -> (source, destination) pairs the device was asked for it (cover)
        bindings = self._index_leafs()
        self._index_hosts(bindings)
        self.spines_of_plane = {}
        for spine_name, spine in plan.get("spines", {}).items():
            self.spines_of_plane.setdefault(spine["plane"], []).append(spine_name)
        self._index_nics()

    def _index_leafs(self):
        """Local destinations, uplinks and their link names per leaf; returns (leaf, ingress) -> binding."""
        bindings = {}
        for leaf_name in self.leaf_order:
            leaf = self.plan["leafs"][leaf_name]
            self.locals[leaf_name] = [_network_ints(n) for n in leaf.get("local_destinations") or []]
            for binding in leaf.get("bindings") or []:
                bindings[(leaf_name, binding["ingress"])] = binding
            for uplink in sorted(leaf.get("uplinks") or [], key=lambda u: u["index"]):
                up, down = self.fabric_link(leaf_name, uplink, "up"), self.fabric_link(leaf_name, uplink, "down")
                self.parallel.setdefault((uplink["spine"], leaf_name), []).append(uplink)
                self.parallel_down.setdefault((uplink["spine"], leaf_name), []).append(down)
                self.uplink_at.setdefault((leaf_name, uplink["port"]), uplink)
                self.uplink_up.setdefault((leaf_name, uplink["port"]), up)
                self.links.append(up)
                self.links.append(down)
        return bindings

    def _index_hosts(self, bindings):
        """One entry per host NIC (hosts by slot), with its binding's spine and uplink and its link names."""
        plan = self.plan
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
                    "ip": _address_int(nic["address"]),
                }
                # link names made once here: a path is then a few lookups
                leaf_end = "%s:%s" % (nic["leaf"], nic["leaf_port"])
                entry["link_up"] = _link(entry["id"], leaf_end)
                entry["link_down"] = _link(leaf_end, entry["id"])
                self.nics.append(entry)
                self.links.append(entry["link_up"])
                self.links.append(entry["link_down"])

    def _index_nics(self):
        """NICs per leaf, per spine and per host (all in NIC order), hosts per leaf, leafs behind each spine."""
        self.by_leaf = {}
        self.by_spine = {}
        self.leafs_of_host = {}
        for nic in self.nics:
            self.by_leaf.setdefault(nic["leaf"], []).append(nic)
            self.by_spine.setdefault(nic["spine"], []).append(nic)
            leafs = self.leafs_of_host.setdefault(nic["host"], [])
            if nic["leaf"] not in leafs:
                leafs.append(nic["leaf"])
        self.hosts_of = dict((leaf, set(n["host"] for n in nics)) for leaf, nics in self.by_leaf.items())
        self.own_leaf_indices = dict((host, frozenset(self.leaf_index[leaf] for leaf in leafs))
                                     for host, leafs in self.leafs_of_host.items())
        # a host's leafs that another host's NIC can be reached on (possible destinations for it)
        self.shared_leafs_of_host = dict((host, [leaf for leaf in leafs if _other_host(self.hosts_of[leaf], host)])
                                         for host, leafs in self.leafs_of_host.items())
        # Candidate destination leafs of a spine (its plane's leafs that have NICs), computed once
        # instead of walking every leaf for every NIC.
        self.leafs_behind = {}
        for leaf_name in self.leaf_order:
            for spine in sorted(set(u["spine"] for u in self.plan["leafs"][leaf_name].get("uplinks") or [])):
                if leaf_name in self.by_leaf:
                    self.leafs_behind.setdefault(spine, []).append(leaf_name)

    def host_link(self, nic, direction):
        return nic["link_" + direction]

    def fabric_link(self, leaf_name, uplink, direction):
        leaf_end = "%s:%s" % (leaf_name, uplink["port"])
        spine_end = "%s:%s" % (uplink["spine"], uplink["spine_port"])
        return _link(leaf_end, spine_end) if direction == "up" else _link(spine_end, leaf_end)

    def is_local(self, src, dst):
        return self.is_local_to(src["leaf"], dst)

    def is_local_to(self, leaf_name, dst):
        version, address = dst["ip"]
        for net_version, network, mask in self.locals[leaf_name]:
            if version == net_version and address & mask == network:
                return True
        return False

    def members(self, src, dst):
        """Parallel spine->leaf links a remote probe src->dst can take (empty: no spine path)."""
        if src["spine"] is None:
            return []
        return self.parallel.get((src["spine"], dst["leaf"]), [])

    def source_uplink(self, src):
        """The leaf uplink bound to the source's ingress port."""
        return self.uplink_at[(src["leaf"], src["uplink"])]

    def source_up_link(self, src):
        """Name of the leaf->spine link bound to the source's ingress port."""
        return self.uplink_up[(src["leaf"], src["uplink"])]

    def has_path(self, src, dst):
        if src["host"] == dst["host"]:
            return False
        if self.is_local(src, dst):
            return src["leaf"] == dst["leaf"]
        return bool(self.members(src, dst))

    def path(self, src, dst, sport=None, dport=ROCE_UDP_PORT):
        """Directed links of the probe, or None when the plan gives it no path."""
        if not self.has_path(src, dst):
            return None
        if self.is_local(src, dst):
            return self.path_links(src, dst, None)
        members = len(self.members(src, dst))
        return self.path_links(src, dst, ecmp_index(src["address"], dst["address"], sport or SPORT_BASE, members, dport))

    def path_links(self, src, dst, member):
        """Links of a probe known to have a path: same-leaf when ``member`` is None, else via that parallel link;
        ``member`` -1: the device answered a link outside the plan, so only the first two links are known."""
        if member is None:
            return [src["link_up"], dst["link_down"]]
        if member < 0:
            return [src["link_up"], self.source_up_link(src)]
        return [src["link_up"], self.source_up_link(src), self.parallel_down[(src["spine"], dst["leaf"])][member],
                dst["link_down"]]


def _address_int(text):
    """(IP version, address as int): cheaper to parse and test than ipaddress objects for 100K NICs."""
    if ":" in text:
        return 6, int.from_bytes(socket.inet_pton(socket.AF_INET6, text), "big")
    return 4, int.from_bytes(socket.inet_aton(text), "big")


def _network_ints(text):
    net = ipaddress.ip_network(text)
    return net.version, int(net.network_address), int(net.netmask)


def _other_host(hosts, host):
    """True when ``hosts`` holds a host other than ``host``."""
    return len(hosts) > 1 or (len(hosts) == 1 and host not in hosts)


def reachable_links(model):
    """Directed links that some host-to-host flow can cross under PPD and the modelled ECMP.

    Not reachable: uplinks bound to no in-use host port (upstream), links of a spine no binding
    uses, links of a leaf with no other leaf behind its spines, host links of a lone host.
    Linear in NICs x spines: leafs are looked at per spine, not per NIC.
    """
    out = set()
    has_local = _local_reach(model, out)
    has_remote = set()
    reached = {}    # leaf -> hosts of remote sources reaching it (two distinct are enough)
    for spine, sources in model.by_spine.items():
        _spine_reach(model, spine, sources, reached, has_remote, out)
    for src in model.nics:
        if has_local[src["id"]] or src["id"] in has_remote:
            out.add(model.host_link(src, "up"))
    for leaf_name, hosts in reached.items():
        for dst in model.by_leaf[leaf_name]:
            if _other_host(hosts, dst["host"]):
                out.add(model.host_link(dst, "down"))
    return out


def _local_reach(model, out):
    """Adds host->leaf->host down links; returns NIC id -> whether it has a same-leaf destination."""
    has_local = {}
    for leaf_name, nics in model.by_leaf.items():
        local = [d for d in nics if model.is_local_to(leaf_name, d)]
        local_hosts = set(d["host"] for d in local)
        for dst in local:
            if _other_host(model.hosts_of[leaf_name], dst["host"]):
                out.add(model.host_link(dst, "down"))
        for src in nics:
            has_local[src["id"]] = _other_host(local_hosts, src["host"])
    return has_local


def _remote_for(model, src, leaf_name):
    return leaf_name != src["leaf"] and _other_host(model.hosts_of[leaf_name], src["host"])


def _has_remote_leaf(model, src):
    # Only the source's own leaf and leafs holding nothing but its host are left out: this stops early.
    own_leaf, host, hosts_of = src["leaf"], src["host"], model.hosts_of
    for leaf_name in model.leafs_behind.get(src["spine"], ()):
        if leaf_name != own_leaf and _other_host(hosts_of[leaf_name], host):
            return True
    return False


def _spine_reach(model, spine, sources, reached, has_remote, out):
    """Links a spine's sources reach: their bound uplinks, the spine's links down to reachable leafs."""
    if spine is None:
        return
    for src in sources:
        if _has_remote_leaf(model, src):
            has_remote.add(src["id"])
            out.add(model.source_up_link(src))
    for leaf_name in model.leafs_behind.get(spine, ()):
        hosts = reached.setdefault(leaf_name, set())
        found = False
        for src in sources:    # stops at the first sources that qualify (typically the first two)
            if _remote_for(model, src, leaf_name):
                found = True
                hosts.add(src["host"])
                if len(hosts) >= 2:
                    break
        if found:
            out.update(model.parallel_down[(spine, leaf_name)])


def make_probe(model, src, dst, member, members, dport, oracle=None):
    """A planned probe; ``members`` 0 means a same-leaf probe (no spine), else ``member`` is its spine->leaf link."""
    if members and oracle is not None:
        return _asked_probe(src, dst, member, dport, oracle)
    sport = sport_for(src["address"], dst["address"], member, members, dport) if members > 1 else None
    return {"src": src, "dst": dst, "sport": sport, "member": member if members else None, "asked": False}


def _asked_probe(src, dst, member, dport, oracle):
    """The lowest source port for which the device itself says its spine takes parallel link ``member``.

    ``oracle(src, dst, sports, dport)`` returns, per source port, the index of the parallel link the
    source's bound spine forwards that flow on toward ``dst``'s leaf (None: a link outside the plan).
    When none of the ports asked takes ``member``, the probe keeps the first port and the link the
    device named for it, so coverage is counted from what the device does, never from what was wanted.
    """
    sports = list(range(SPORT_BASE, SPORT_BASE + ORACLE_TRIES))
    picks = oracle(src, dst, sports, dport)
    for sport, pick in zip(sports, picks):
        if pick == member:
            return {"src": src, "dst": dst, "sport": sport, "member": member, "asked": True}
    first = picks[0] if picks and picks[0] is not None else -1
    return {"src": src, "dst": dst, "sport": sports[0], "member": first, "asked": True, "wanted": member}


def _search_pairs(model, sources, leaf_name, member, dport, oracle):
    """A probe the device itself puts on parallel link ``member`` toward ``leaf_name``: every (source bound to the
    spine, destination NIC of another host on that leaf) pair in turn, each with the source ports of
    :func:`_asked_probe`, until one takes it (a spine hashing on addresses alone gives every port of a pair one link,
    so another pair is the only other way). At most ``PAIR_TRIES`` pairs. Returns (probe or None, pairs asked)."""
    asked = 0
    for src in sources:
        for dst in model.by_leaf[leaf_name]:
            if dst["host"] == src["host"] or model.is_local(src, dst):
                continue
            if asked >= PAIR_TRIES:
                return None, asked
            asked += 1
            probe = _asked_probe(src, dst, member, dport, oracle)
            if probe["member"] == member:
                return probe, asked
    return None, asked


class _Demand(object):
    """What is still uncovered: destination NICs per leaf (and per host on it), free spine->leaf slots.

    Counters only fall, which is what lets the per-spine buckets below update lazily.
    """

    def __init__(self, model):
        self.model = model
        self.dest_used = dict((n["id"], 0) for n in model.nics)
        self.need = dict((leaf, len(items)) for leaf, items in model.by_leaf.items())
        self.need_host = {}
        for nic in model.nics:
            self.need_host[(nic["leaf"], nic["host"])] = self.need_host.get((nic["leaf"], nic["host"]), 0) + 1
        self.slot_uses = dict((key, [0] * len(members)) for key, members in model.parallel.items())
        self.free = dict((key, len(members)) for key, members in model.parallel.items())  # slots not crossed yet
        # per leaf: heap of (times used, position in the leaf's NIC list), refreshed lazily
        self.dest_heaps = dict((leaf, [(0, pos) for pos in range(len(items))]) for leaf, items in model.by_leaf.items())

    def key(self, spine, leaf_name):
        """Greedy preference of a leaf for a source behind ``spine`` owning no NIC on that leaf."""
        free = self.free[(spine, leaf_name)]
        return (free > 0, self.need[leaf_name], free)

    def score(self, src, leaf_name):
        """Full preference of ``leaf_name`` for ``src``: key, own host's NICs discounted, ring distance."""
        free = self.free[(src["spine"], leaf_name)]
        wanted = self.need[leaf_name] - self.need_host.get((leaf_name, src["host"]), 0)
        model = self.model
        ring = (model.leaf_index[leaf_name] - model.leaf_index[src["leaf"]]) % len(model.leaf_order)
        return (free > 0, wanted, free, -ring)

    def pick_dest(self, leaf_name, src):
        """Least used NIC of another host on the leaf (first in NIC order on ties)."""
        heap = self.dest_heaps[leaf_name]
        nics = self.model.by_leaf[leaf_name]
        held = []
        while True:
            used, pos = heap[0]
            nic = nics[pos]
            if used != self.dest_used[nic["id"]]:
                heapq.heapreplace(heap, (self.dest_used[nic["id"]], pos))
            elif nic["host"] == src["host"]:
                held.append(heapq.heappop(heap))
            else:
                break
        for entry in held:
            heapq.heappush(heap, entry)
        return nic

    def use(self, src, dst, k, members):
        if not self.dest_used[dst["id"]]:
            self.need[dst["leaf"]] -= 1
            self.need_host[(dst["leaf"], dst["host"])] -= 1
        self.dest_used[dst["id"]] += 1
        if members:
            uses = self.slot_uses[(src["spine"], dst["leaf"])]
            if not uses[k]:
                self.free[(src["spine"], dst["leaf"])] -= 1
            uses[k] += 1

    def least_used_slot(self, spine, leaf_name):
        """Parallel link toward the leaf crossed least so far (lowest index on ties)."""
        uses = self.slot_uses[(spine, leaf_name)]
        return uses.index(min(uses))


class _SpineLeafs(object):
    """Leafs behind one spine bucketed by their last recorded :meth:`_Demand.key`.

    Keys only fall, so an entry is re-bucketed when a query meets it out of date instead of on
    every probe; a query is a walk of the top bucket in ring order from the source's leaf.
    """

    def __init__(self, model, demand, spine):
        self.spine = spine
        self.demand = demand
        self.order = model.leaf_order
        self.buckets = {}       # key -> sorted leaf indices
        self.keys = []          # keys of non-empty buckets, ascending
        for leaf_name in model.leafs_behind.get(spine, ()):
            self._put(model.leaf_index[leaf_name], demand.key(spine, leaf_name))

    def _put(self, index, key):
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = []
            bisect.insort(self.keys, key)
        bisect.insort(bucket, index)

    def best(self, after, skip):
        """Leaf with the highest current key, first in ring order after leaf index ``after``; leaf indices
        in ``skip`` left out. Every stale entry met that is not skipped is re-bucketed before a lower
        bucket is looked at, so a lower bucket never hides a better leaf."""
        pos = len(self.keys) - 1
        while pos >= 0:
            key = self.keys[pos]
            found = self._walk(key, after, skip)
            if found is not None:
                return found
            pos = bisect.bisect_left(self.keys, key) - 1
        return None

    def _walk(self, key, after, skip):
        bucket = self.buckets[key]
        pos = bisect.bisect_right(bucket, after)
        found = None
        for _visit in range(len(bucket)):
            if pos >= len(bucket):
                pos = 0
            index = bucket[pos]
            if index in skip:
                # left stale if it is: a skipped leaf cannot be this query's answer
                pos += 1
                continue
            leaf_name = self.order[index]
            current = self.demand.key(self.spine, leaf_name)
            if current != key:
                del bucket[pos]
                self._put(index, current)
            else:
                found = leaf_name
                break
        if not bucket:
            del self.buckets[key]
            self.keys.remove(key)
        return found


def _target_leaf(model, demand, spine_leafs, src):
    """Destination leaf the greedy picks for ``src`` (None: no remote leaf).

    Same choice as maximising :meth:`_Demand.score` over every remote leaf: the leafs holding a
    NIC of the source's host (a handful) are scored one by one, all others come from the spine's
    buckets, where a leaf's key is its score without the ring distance.
    """
    host, spine = src["host"], src["spine"]
    best = spine_leafs.best(model.leaf_index[src["leaf"]], model.own_leaf_indices[host])
    best_score = demand.score(src, best) if best is not None else None
    best_key = best_score[:3] if best is not None else None
    free_of, need = demand.free, demand.need
    for leaf_name in model.shared_leafs_of_host[host]:
        free = free_of.get((spine, leaf_name))
        if free is None or leaf_name == src["leaf"]:
            continue
        if best is not None and (free > 0, need[leaf_name], free) < best_key:
            continue    # its score is at most its key: cannot win (saves most scoring)
        score = demand.score(src, leaf_name)
        if best is None or score > best_score:
            best, best_score, best_key = leaf_name, score, score[:3]
    return best


def _source_order(model):
    """Sources interleaved across leafs (position on the leaf first) so every leaf's demand stays balanced."""
    rows = [model.by_leaf[leaf_name] for leaf_name in model.leaf_order if leaf_name in model.by_leaf]
    deepest = max([len(row) for row in rows] or [0])
    return [row[pos] for pos in range(deepest) for row in rows if pos < len(row)]


def plan_probes(plan, dport=ROCE_UDP_PORT, oracle=None):
    """Probe flows whose paths cover every coverable directed link; returns the report dict.

    ``oracle``: see :func:`_asked_probe`; without it the spine's pick is the crc32 stand-in and the
    report lists what depends on it (``at_risk``)."""
    # Everything built here is acyclic; left on, the cyclic collector rescans the whole plan
    # (131K GPUs: ~1 GB of dicts) again and again as the model grows, so pause it (as build_plan does).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _plan_probes(plan, dport, oracle)
    finally:
        if was_enabled:
            gc.enable()


def _plan_probes(plan, dport, oracle=None):
    model = LinkModel(plan)
    return report(model, cover(model, dport, oracle), dport, oracle is not None)


def cover(model, dport=ROCE_UDP_PORT, oracle=None):
    """The covering probes of :func:`plan_probes` before the report: dicts with ``src``, ``dst`` (NIC
    entries of ``model``), ``sport`` and ``member`` (None: same-leaf; -1: a link outside the plan)."""
    demand = _Demand(model)
    raw = []

    def emit(src, dst, k, members):
        probe = make_probe(model, src, dst, k, members, dport, oracle)
        raw.append(probe)
        # the link the device takes, not the one wanted: a miss leaves its slot free for the repair below
        demand.use(src, dst, probe["member"], members if probe["member"] is None or probe["member"] >= 0 else 0)

    # 1. every NIC sources one probe (its host->leaf link and, remote, its bound uplink).
    spine_leafs = dict((spine, _SpineLeafs(model, demand, spine)) for spine in model.leafs_behind)
    local_only = []
    for src in _source_order(model):
        target = _target_leaf(model, demand, spine_leafs[src["spine"]], src) if src["spine"] in spine_leafs else None
        if target is None:
            local_only.append(src)
            continue
        members = len(model.parallel[(src["spine"], target)])
        k = demand.least_used_slot(src["spine"], target)
        emit(src, demand.pick_dest(target, src), k, members)

    # 2. NICs with no spine path: same-leaf probes in a ring over the leaf's NICs (other hosts).
    for src in local_only:
        peers = [d for d in model.by_leaf[src["leaf"]] if d["host"] != src["host"] and model.is_local(src, d)]
        if peers:
            emit(src, min(peers, key=lambda d: demand.dest_used[d["id"]]), 0, 0)

    # 3. repair: spine->leaf slots and destination NICs still uncovered (none on regular fabrics).
    source_used = {}
    for probe in raw:
        source_used[probe["src"]["id"]] = source_used.get(probe["src"]["id"], 0) + 1

    def least_used(sources):
        src = min(sources, key=lambda s: source_used.get(s["id"], 0))
        source_used[src["id"]] = source_used.get(src["id"], 0) + 1
        return src

    unused_slots = sorted((spine, leaf_name, k) for (spine, leaf_name), uses in demand.slot_uses.items()
                          for k, used in enumerate(uses) if not used)
    for spine, leaf_name, k in unused_slots:
        if leaf_name not in model.by_leaf or demand.slot_uses[(spine, leaf_name)][k]:
            continue
        sources = [s for s in model.by_spine.get(spine, ()) if _remote_for(model, s, leaf_name)]
        if not sources:
            continue
        members = len(model.parallel[(spine, leaf_name)])
        if oracle is None:
            src = least_used(sources)
            emit(src, demand.pick_dest(leaf_name, src), k, members)
            continue
        probe, asked = _search_pairs(model, sources, leaf_name, k, dport, oracle)
        model.asked_pairs[model.parallel_down[(spine, leaf_name)][k]] = asked
        if probe is not None:
            raw.append(probe)
            source_used[probe["src"]["id"]] = source_used.get(probe["src"]["id"], 0) + 1
            demand.use(probe["src"], probe["dst"], k, members)
    for dst in model.nics:
        if demand.dest_used[dst["id"]]:
            continue
        sources = [s for s in model.nics if model.has_path(s, dst)]
        if not sources:
            continue
        src = least_used(sources)
        members = len(model.members(src, dst)) if not model.is_local(src, dst) else 0
        k = demand.least_used_slot(src["spine"], dst["leaf"]) if members else 0
        emit(src, dst, k, members)
    return raw


def report(model, raw, dport, asked=False):
    covered = set()
    probes = []
    for number, probe in enumerate(raw):
        src, dst = probe["src"], probe["dst"]
        # the member the source port was chosen for is the one ecmp_index() gives back
        path = model.path_links(src, dst, probe["member"])
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
        if "wanted" in probe:
            probes[-1]["off_plan"] = ("the device takes %s, not the wanted link, for every source port asked" %
                                      ("a link outside the plan" if probe["member"] < 0 else path[2]))
    coverable = set(model.links)
    reach = reachable_links(model)
    unreachable = sorted(coverable - reach)
    reachable = coverable & reach
    covered_reachable = len(covered & reachable)
    total = len(reachable)
    per_path = 4 if len(model.leaf_order) > 1 and model.parallel else 2
    naive = -(-total // per_path)
    tight = max(naive, _tight_bound(model, reachable))
    count = len(probes)
    missing = sorted(reachable - covered)
    spines = model.plan.get("spines", {})
    platforms = sorted(set(spine["platform"] for spine in spines.values()))
    if asked:
        pairs = model.asked_pairs
        why = dict((link, "no probe reaches it: for %d (source bound to %s, destination) pairs and every UDP source "
                    "port asked (%d-%d), the device itself forwards on another link%s" % (
                        pairs.get(link, 0), link.split(">")[0].split(":")[0], SPORT_BASE, SPORT_BASE + ORACLE_TRIES - 1,
                        " (search stopped at %d pairs)" % PAIR_TRIES if pairs.get(link, 0) >= PAIR_TRIES else ""))
                   for link in missing)
        at_risk = []
    else:
        why = dict((link, "no probe reaches it") for link in missing)
        at_risk = sorted(set(link for (_spine, _leaf), links in model.parallel_down.items() if len(links) > 1
                             for link in links) & covered)
    return {
        "probes": probes,
        "links": total,
        "links_all": len(coverable),
        "links_covered": covered_reachable,
        "coverage": float(covered_reachable) / total if total else 1.0,
        "coverage_all": float(len(covered & coverable)) / len(coverable) if coverable else 1.0,
        "uncovered": missing,
        "unreachable_under_ppd": unreachable,
        "nics": len(model.nics),
        "links_per_path": per_path,
        "bound": naive,
        "tight_bound": tight,
        "ratio": float(count) / naive if naive else 0.0,
        "ratio_tight": float(count) / tight if tight else 0.0,
        "count": count,
        "hash": "asked the device" if asked else STAND_IN,
        "hash_models": dict((platform, hash_model(platform)) for platform in platforms),
        "uncovered_why": why,
        # covered only if the spines' real hash agrees with the stand-in: plan with the device's answers
        "at_risk": at_risk,
        "at_risk_why": ("the source port of each probe crossing these spine->leaf links was chosen by the crc32 "
                        "stand-in; the spine (%s) picks among its parallel links by its own hash, so the probe "
                        "may take a sibling link: plan with the device's answers (the twin's "
                        "tests/lab/twin/gom.py) to be sure" % ", ".join(platforms)) if at_risk else None,
        "coverage_assured": (float(len((covered & reachable) - set(at_risk))) / total) if total else 1.0,
    }


def _tight_bound(model, reachable):
    """Every probe starts on one host->leaf link and ends on one leaf->host link, and a spine->leaf
    link is only crossed by a probe ending under that leaf: probes >= reachable sources and, summed
    over leafs, >= max(reachable NIC links into the leaf, reachable spine links into it)."""
    sources = sum(1 for nic in model.nics if nic["link_up"] in reachable)
    into_leaf = {}
    for nic in model.nics:
        if nic["link_down"] in reachable:
            into_leaf.setdefault(nic["leaf"], [0, 0])[0] += 1
    for (_spine, leaf_name), links in model.parallel_down.items():
        fabric = sum(1 for link in links if link in reachable)
        if fabric:
            into_leaf.setdefault(leaf_name, [0, 0])[1] += fabric
    return max(sources, sum(max(counts) for counts in into_leaf.values()))


def by_host(report):
    """Probe list grouped by source host, the shape an agent on each host runs."""
    out = {}
    for probe in report["probes"]:
        out.setdefault(probe["src_host"], []).append(dict(
            (k, probe[k]) for k in ("id", "src_netdev", "src_rdma", "src_address", "dst_host", "dst_address",
                                    "udp_sport", "udp_dport")))
    return out
