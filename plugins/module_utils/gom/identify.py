# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe plan that localises: every single directed-link failure fails a set of probes no other link's
failure fails (a 1-identifiable probe matrix, deTector, USENIX ATC'17). Pure functions; docs/gom.md.

A link's *signature* is the set of probes whose path crosses it. The covering plan
(:func:`probes.cover`) gives every reachable link a non-empty signature; this module then adds probes
until signatures are pairwise distinct, by partition refinement: links with equal signatures form a
class, and every added probe splits each class it crosses into the links it crosses and the rest.
A class of two or more links is split by a probe crossing some of its links but not all; candidates
come from the links' own kinds (a same-leaf probe from or to a NIC splits its host link from the
fabric links and the far end's host link; a probe from another source through a spine->leaf link
splits it from the uplink of the first one), the one splitting the most classes wins.

Links no host-sourced probe can tell apart under the port binding are reported with the reason
(``ambiguous``): e.g. a NIC bound alone to its uplink with no other host on its leaf to probe.
"""
from __future__ import annotations

import gc

from . import probes as gom

# candidates looked at per class (the first splitting two or more classes wins at once)
CANDIDATES = 8


class Partition(object):
    """Links grouped by equal signature; :meth:`add` refines by one probe path."""

    def __init__(self, links):
        self.cls = dict((link, 0) for link in links)
        self.members = {0: set(links)}
        self.next_id = 1

    def _touched(self, path):
        touched = {}
        for link in path:
            c = self.cls.get(link)
            if c is not None:
                touched.setdefault(c, set()).add(link)
        return touched

    def score(self, path):
        """Classes of 2+ links the path splits (crosses some, not all, of their links)."""
        return sum(1 for c, links in self._touched(path).items() if len(links) < len(self.members[c]))

    def splits(self, path, c):
        crossed = sum(1 for link in path if self.cls.get(link) == c)
        return 0 < crossed < len(self.members[c])

    def add(self, path):
        """Refine by one probe; returns the ids of classes made or shrunk."""
        changed = []
        for c, links in self._touched(path).items():
            if len(links) == len(self.members[c]):
                continue
            new = self.next_id
            self.next_id += 1
            self.members[c] -= links
            self.members[new] = links
            for link in links:
                self.cls[link] = new
            changed.extend((c, new))
        return changed

    def classes(self):
        return [links for links in self.members.values() if links]


class _Candidates(object):
    """Probe candidates (src, dst, member) through a given link, rotating through sources and destinations."""

    def __init__(self, model):
        self.model = model
        self.kind = {}
        for nic in model.nics:
            self.kind[nic["link_up"]] = ("U", nic)
            self.kind[nic["link_down"]] = ("D", nic)
        for (leaf_name, port), link in model.uplink_up.items():
            self.kind[link] = ("Lu", (leaf_name, port))
        for (spine, leaf_name), links in model.parallel_down.items():
            for k, link in enumerate(links):
                self.kind[link] = ("Sd", (spine, leaf_name, k))
        self.bound = {}
        for nic in model.nics:
            if nic["spine"] is not None:
                self.bound.setdefault((nic["leaf"], nic["uplink"]), []).append(nic)
        self.turn = {}      # rotation offsets, per list key
        self.used_src, self.used_dst = {}, {}

    def _rotate(self, key, items, limit, accept):
        """Up to ``limit`` items that ``accept``, starting after the last one handed out for ``key``."""
        out = []
        count = len(items)
        if not count:
            return out
        start = self.turn.get(key, 0)
        for step in range(count):
            item = items[(start + step) % count]
            if accept(item):
                out.append(item)
                if len(out) == 1:
                    self.turn[key] = (start + step + 1) % count
                if len(out) >= limit:
                    break
        return out

    def local_peers(self, nic, as_source, limit):
        """NICs of other hosts on the same leaf that a same-leaf probe can go to (or come from)."""
        model = self.model
        if as_source:
            def accept(d):
                return d["host"] != nic["host"] and model.is_local(nic, d)
        else:
            def accept(s):
                return s["host"] != nic["host"] and model.is_local(s, nic)
        return self._rotate(("local", nic["leaf"]), model.by_leaf[nic["leaf"]], limit, accept)

    def remote_dst(self, src, leaf_name, limit=1):
        def accept(d):
            return d["host"] != src["host"]
        return self._rotate(("dst", leaf_name), self.model.by_leaf.get(leaf_name, ()), limit, accept)

    def remote_leafs(self, src, limit):
        model = self.model

        def accept(leaf_name):
            return leaf_name != src["leaf"] and gom._other_host(model.hosts_of[leaf_name], src["host"])
        return self._rotate(("leafs", src["spine"]), model.leafs_behind.get(src["spine"], ()), limit, accept)

    def member(self, spine, leaf_name):
        key = ("member", spine, leaf_name)
        members = len(self.model.parallel[(spine, leaf_name)])
        k = self.turn.get(key, 0)
        self.turn[key] = (k + 1) % members
        return k

    def through(self, link):
        """Candidates (src, dst, member or None for same-leaf) whose path crosses ``link``."""
        kind, obj = self.kind[link]
        model = self.model
        out = []
        if kind == "U":
            out.extend((obj, d, None) for d in self.local_peers(obj, True, CANDIDATES // 2))
            if obj["spine"] is not None:
                for leaf_name in self.remote_leafs(obj, 2):
                    out.extend((obj, d, self.member(obj["spine"], leaf_name)) for d in self.remote_dst(obj, leaf_name))
        elif kind == "D":
            out.extend((s, obj, None) for s in self.local_peers(obj, False, CANDIDATES // 2))
            for spine in model.spines_of_plane.get(obj["plane"], ()):
                if (spine, obj["leaf"]) not in model.parallel:
                    continue
                for src in self._rotate(("src", spine), model.by_spine.get(spine, ()), 1,
                                        lambda s: gom._remote_for(model, s, obj["leaf"]) and s["host"] != obj["host"]):
                    out.append((src, obj, self.member(spine, obj["leaf"])))
        elif kind == "Lu":
            for src in self._rotate(("bound",) + obj, self.bound.get(obj, ()), 2, lambda s: gom._has_remote_leaf(model, s)):
                for leaf_name in self.remote_leafs(src, 2):
                    out.extend((src, d, self.member(src["spine"], leaf_name)) for d in self.remote_dst(src, leaf_name))
        else:
            spine, leaf_name, k = obj
            for src in self._rotate(("src", spine), model.by_spine.get(spine, ()), CANDIDATES // 2,
                                    lambda s: gom._remote_for(model, s, leaf_name)):
                out.extend((src, d, k) for d in self.remote_dst(src, leaf_name))
        return out


def augment(model, raw, dport=gom.ROCE_UDP_PORT, oracle=None, reachable=None):
    """Adds probes to ``raw`` (covering probes, :func:`probes.cover`) until every reachable link's
    signature is unique where host-sourced probes can make it so. Returns (raw, unsplit classes)."""
    reachable = set(gom.reachable_links(model)) if reachable is None else reachable
    order = dict((link, i) for i, link in enumerate(model.links))
    part = Partition(sorted(reachable, key=order.get))
    for probe in raw:
        part.add(model.path_links(probe["src"], probe["dst"], probe["member"]))
    cands = _Candidates(model)
    stuck = []
    # classes in link order (deterministic); a class made by a split is queued again
    queue = sorted((c for c, links in part.members.items() if len(links) > 1),
                   key=lambda c: min(order[link] for link in part.members[c]), reverse=True)
    tried = {}
    while queue:
        c = queue.pop()
        links = part.members.get(c)
        if not links or len(links) < 2:
            continue
        best = best_score = None
        for link in sorted(links, key=order.get):
            for src, dst, member in cands.through(link):
                path = model.path_links(src, dst, member)
                if not part.splits(path, c):
                    continue
                score = part.score(path)
                if best is None or score > best_score:
                    best, best_score = (src, dst, member), score
            if best is not None and best_score >= 2:
                break
        if best is None:
            stuck.append(c)
            continue
        src, dst, member = best
        members = len(model.parallel[(src["spine"], dst["leaf"])]) if member is not None else 0
        probe = gom.make_probe(model, src, dst, member if member is not None else 0, members, dport, oracle)
        raw.append(probe)
        changed = part.add(model.path_links(src, dst, probe["member"]))
        tried[c] = tried.get(c, 0) + 1
        if c not in changed and tried[c] > 3 * CANDIDATES:
            stuck.append(c)     # the device keeps taking another link than wanted: give up on this class
            continue
        queue.extend(x for x in set(changed) | {c} if len(part.members.get(x, ())) > 1)
    unsplit = [sorted(part.members[c], key=order.get) for c in stuck if len(part.members.get(c, ())) > 1]
    return raw, unsplit


def signatures(probe_list):
    """Directed link -> frozenset of the ids of the probes crossing it."""
    sig = {}
    for probe in probe_list:
        for link in probe["path"]:
            sig.setdefault(link, set()).add(probe["id"])
    return dict((link, frozenset(ids)) for link, ids in sig.items())


def identifiability(probe_list, links):
    """Figures for single-link failures over ``links``: fraction whose signature is non-empty and shared
    by no other link, and the groups of links sharing one."""
    sig = signatures(probe_list)
    groups = {}
    for link in links:
        groups.setdefault(sig.get(link, frozenset()), []).append(link)
    shared = sorted(sorted(group) for key, group in groups.items() if len(group) > 1 or not key)
    unique = sum(1 for key, group in groups.items() if len(group) == 1 and key)
    return {"identifiable": float(unique) / len(links) if links else 1.0, "ambiguous": shared}


def _spine_bound(m, alone, others):
    """Fewest probes sourced by the NICs bound to one spine (their same-leaf probes for the "alone" NICs left out),
    for ``m`` reachable spine->leaf links of that spine, ``alone`` sources each the only one on its uplink and
    ``others`` sources sharing an uplink. Of the alone sources, ``a`` send one remote probe and ``alone - a`` two or
    more; the others send one probe at least. Every spine->leaf link needs a remote probe through the spine (only
    the sources bound to it send one), and a link crossed by an alone source's only remote probe needs a second
    one (else its signature equals that source's uplink's): the ``a`` single probes fill at most ``a // 2`` links by
    themselves, so the remote probes are at least m + ceil(a / 2) when a > 0."""
    best = None
    for a in range(alone + 1):
        remote = m + (a + 1) // 2 if a else m
        own = a + 2 * (alone - a) + others
        value = max(remote, own)
        best = value if best is None else min(best, value)
    return best or 0


def _ident_bound(model, reachable):
    """A lower bound on a 1-identifiable host-sourced set (docs/gom.md section 1, with the proof):

    * a source NIC alone on its uplink (the only reachable source bound to it) needs a same-leaf probe of its own:
      every remote probe it sends crosses both its host link and that uplink, and no other source's probe crosses
      the uplink (PPD), so only a probe it sends to its own leaf tells the two apart;
    * per spine, the probes its bound sources send (``_spine_bound``): each source at least one, an alone source
      with one remote probe only makes its uplink's signature that one probe, so the spine->leaf link that probe
      crosses must carry another probe too;
    * a source bound to no spine: one probe.
    Never below one probe per source NIC plus one per alone NIC with a same-leaf peer (the earlier bound)."""
    sources = [nic for nic in model.nics if nic["link_up"] in reachable]
    per_uplink = {}
    unbound = 0
    for nic in sources:
        if nic["spine"] is not None and model.source_up_link(nic) in reachable:
            per_uplink.setdefault((nic["leaf"], nic["uplink"]), []).append(nic)
        else:
            unbound += 1
    local = 0
    per_spine = {}
    for nics in per_uplink.values():
        spine = nics[0]["spine"]
        counts = per_spine.setdefault(spine, [0, 0])
        if len(nics) == 1:
            counts[0] += 1
            nic = nics[0]
            if any(d["host"] != nic["host"] and model.is_local(nic, d) for d in model.by_leaf[nic["leaf"]]):
                local += 1
        else:
            counts[1] += len(nics)
    links_of = {}
    for (spine, _leaf), links in model.parallel_down.items():
        links_of[spine] = links_of.get(spine, 0) + sum(1 for link in links if link in reachable)
    spines = sum(_spine_bound(links_of.get(spine, 0), alone, others) for spine, (alone, others) in per_spine.items())
    return max(len(sources) + local, local + spines + unbound)


def plan_identifiable(plan, dport=gom.ROCE_UDP_PORT, oracle=None):
    """:func:`probes.plan_probes` made 1-identifiable: the report gains ``identifiable`` (fraction of reachable
    links whose single failure has a failing-probe set of its own), ``ambiguous`` (groups still sharing one,
    with ``ambiguous_why``), ``cover_count`` (probes of the covering plan), ``ident_bound`` and ``ratio_ident``."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        model = gom.LinkModel(plan)
        raw = gom.cover(model, dport, oracle)
        cover_count = len(raw)
        reachable = set(gom.reachable_links(model))
        raw, unsplit = augment(model, raw, dport, oracle, reachable)
        out = gom.report(model, raw, dport, oracle is not None)
        figures = identifiability(out["probes"], sorted(reachable))
        bound = max(out["tight_bound"], _ident_bound(model, reachable))
        out.update(figures, cover_count=cover_count, ident_bound=bound,
                   ratio_ident=float(out["count"]) / bound if bound else 0.0,
                   ambiguous_why=[{"links": group, "why": "no host-to-host probe under the port binding crosses some of "
                                   "these links but not all (e.g. a NIC bound alone to its uplink with no other host "
                                   "on its leaf): they fail the same probes"} for group in unsplit])
        return out
    finally:
        if was_enabled:
            gc.enable()


def explanations(failing, sig, on_probe, limit=2):
    """Sets of at most ``limit`` (1 or 2) links whose signatures' union is exactly ``failing`` (probe ids):
    the single- or double-link failures boolean tomography cannot tell apart from what was seen."""
    failing = frozenset(failing)
    cands = sorted(set(link for pid in failing for link in on_probe.get(pid, ()) if sig[link] <= failing))
    out = [(link,) for link in cands if sig[link] == failing]
    if limit >= 2:
        for i, a in enumerate(cands):
            for b in cands[i + 1:]:
                if sig[a] | sig[b] == failing and sig[a] != failing and sig[b] != failing:
                    out.append((a, b))
    return out


def two_link(probe_list, links, sample=None, seed=7):
    """Double-link failures: the fraction whose failing-probe set no single link and no other pair explains
    (so the pair is named exactly). All pairs of ``links``, or ``sample`` pairs drawn at random (seeded)."""
    import random
    sig = signatures(probe_list)
    on_probe = dict((probe["id"], probe["path"]) for probe in probe_list)
    links = [link for link in links if sig.get(link)]
    if sample is None:
        pairs = [(a, b) for i, a in enumerate(links) for b in links[i + 1:]]
    else:
        rng = random.Random(seed)
        pairs = []
        while len(pairs) < sample and len(links) > 1:
            a, b = rng.sample(links, 2)
            pairs.append((a, b))
    exact = 0
    masked = 0      # one link's probes all cross the other: only the other is seen
    for a, b in pairs:
        if sig[a] <= sig[b] or sig[b] <= sig[a]:
            masked += 1
            continue
        found = explanations(sig[a] | sig[b], sig, on_probe)
        if found == [tuple(sorted((a, b)))]:
            exact += 1
    total = len(pairs)
    return {"pairs": total, "exact": float(exact) / total if total else 1.0,
            "masked": float(masked) / total if total else 0.0}
