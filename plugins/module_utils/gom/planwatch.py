# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GOM's probe plan against the fabric it runs on (docs/gom.md section 3, "When the fabric changes"). Pure.

A probe's planned path holds while the leaf port bindings (PPD), the leaf-spine links and the NICs it was planned
on hold. GOR moves bindings (its steer record), an operator changes the plan, a cabling change moves links: then
probes cross other links than planned and a stale plan names the wrong link. This module

* digests what the paths depend on (``fabric_view``, ``digest``; GOR's steer record applied) so the collector sees
  at once that its probes were planned on another fabric, and says what changed (``changes``);
* re-paths the probes on the fabric as it is (``repath``): a probe whose source binding GOR moved crosses the new
  uplink (and its spine), not the planned one; its spine->leaf hop is kept when the spine is the same, and left
  out when the spine changed (the new spine's ECMP pick among its parallel links is not known without asking the
  device: the probe then judges the links it surely crosses);
* carries a running localiser's state over to the re-pathed plan (``carry``): per-probe loss history of probes
  whose path did not change, the agents' liveness and clocks, open faults (no second page), maintenance and
  counters. A fault on a link no probe crosses any more (GOR steered every binding off it) stays open, not
  recovered: no probe's success says anything about it.
"""
from __future__ import annotations

import copy
import hashlib
import json

from . import probes as gom


def _steered(record):
    return dict(((e["leaf"], e["ingress"]), e) for e in (record or {}).get("steered") or [])


def effective_plan(plan, record=None):
    """The plan with GOR's steered bindings applied (uplink, spine, next hop); the plan itself when none."""
    steered = _steered(record)
    if not steered:
        return plan
    out = dict(plan, leafs=dict(plan["leafs"]))
    for name, leaf in plan["leafs"].items():
        mine = [b for b in leaf.get("bindings") or [] if (name, b["ingress"]) in steered]
        if not mine:
            continue
        leaf = copy.deepcopy(leaf)
        for b in leaf.get("bindings") or []:
            entry = steered.get((name, b["ingress"]))
            if entry and entry.get("planned_uplink") == b["uplink"]:
                b.update(uplink=entry["uplink"], spine=entry["spine"], next_hop=entry.get("next_hop"))
        out["leafs"][name] = leaf
    return out


def fabric_view(plan, record=None):
    """What the probes' paths depend on: per leaf its uplinks, local destinations and bindings (steered ones as
    GOR's record has them); per NIC its leaf port and address."""
    plan = effective_plan(plan, record)
    leafs = {}
    for name, leaf in sorted(plan["leafs"].items()):
        leafs[name] = {
            "uplinks": sorted([u["index"], u["port"], u["spine"], u["spine_port"]] for u in leaf.get("uplinks") or []),
            "local": sorted(leaf.get("local_destinations") or []),
            "bindings": sorted([b["ingress"], b["uplink"], b["spine"]] for b in leaf.get("bindings") or []),
        }
    nics = sorted([host, nic["netdev"], nic["leaf"], nic["leaf_port"], nic["address"]]
                  for host, entry in plan["hosts"].items() for nic in entry["nics"])
    return {"leafs": leafs, "nics": nics}


def digest(view):
    return hashlib.sha256(json.dumps(view, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def changes(old, new):
    """What differs between two ``fabric_view``: bindings moved, leaf-spine links added or removed, NICs changed."""
    moved, added, removed = [], [], []
    for name in sorted(set(old["leafs"]) | set(new["leafs"])):
        a, b = old["leafs"].get(name, {}), new["leafs"].get(name, {})
        before = dict((x[0], x[1]) for x in a.get("bindings", ()))
        after = dict((x[0], x[1]) for x in b.get("bindings", ()))
        for port in sorted(set(before) | set(after)):
            if before.get(port) != after.get(port):
                moved.append({"leaf": name, "ingress": port, "from": before.get(port), "to": after.get(port)})
        ups_a = set(tuple(u[1:]) for u in a.get("uplinks", ()))
        ups_b = set(tuple(u[1:]) for u in b.get("uplinks", ()))
        added.extend("%s:%s<->%s:%s" % (name, u[0], u[1], u[2]) for u in sorted(ups_b - ups_a))
        removed.extend("%s:%s<->%s:%s" % (name, u[0], u[1], u[2]) for u in sorted(ups_a - ups_b))
    nics_a, nics_b = set(tuple(n) for n in old["nics"]), set(tuple(n) for n in new["nics"])
    return {"bindings_moved": moved, "links_added": added, "links_removed": removed,
            "nics_changed": sorted("%s:%s" % n[:2] for n in nics_a ^ nics_b)}


def repath(plan, probes, record=None):
    """The probes with their paths on the fabric as it is (GOR's steer record applied): (probes, moved ids).
    A probe's source, destination and ports never change (the agents keep sending them)."""
    model = gom.LinkModel(effective_plan(plan, record))
    nics = dict((n["id"], n) for n in model.nics)
    out, moved = [], []
    for probe in probes:
        src = nics.get("%s:%s" % (probe["src_host"], probe["src_netdev"]))
        dst = nics.get("%s:%s" % (probe["dst_host"], probe["dst_netdev"]))
        path = list(probe["path"])
        if src is None or dst is None:
            new = []        # a NIC left the plan: the probe crosses nothing known
        elif len(path) <= 2 or src["spine"] is None:
            new = path      # same-leaf (or unbound): no binding on its way
        else:
            up = model.source_up_link(src)
            if up == path[1]:
                new = path
            else:
                new = [src["link_up"], up]
                planned_spine = path[1].split(">")[1].split(":")[0]
                if src["spine"] == planned_spine and len(path) > 3:
                    new.append(path[2])    # same spine: its pick among the parallel links is the planned one
                new.append(dst["link_down"])
        if new != path:
            moved.append(probe["id"])
            probe = dict(probe, path=new, planned_path=path)
        out.append(probe)
    return out, moved


def carry(old, new, plan):
    """Moves a running localiser's state to ``new`` (a Localiser over ``plan``'s re-pathed probes, not yet fed)."""
    same = set(pid for pid, path in new.topo.paths.items() if old.topo.paths.get(pid) == path)
    for pid in same:
        new.probes[pid] = old.probes[pid]
        if pid in old.lossy:
            new.lossy[pid] = old.lossy[pid]
        if pid in old.measured:
            new.measured.add(pid)
    for pid in set(new.probes) - same:
        probe = old.probes.get(pid)
        if probe is not None:
            # path changed: what it lost was on the old path; keep its numbering and judge afresh from here. Its last
            # loss is put at the reload (no loss recorded), so a fault on its new path is not called recovered before
            # it has been clean there for as long as recovery asks
            fresh = new.probes[pid]
            fresh.eval_to, fresh.due, fresh.rx = probe.eval_to, probe.due, probe.rx
            fresh.last_loss = probe.eval_to or 0
    for name in ("last_seen", "first_seen", "offset", "batch_no", "watermark", "dropped", "maintenance",
                 "maint_reported", "maint_probes", "counters", "detect_t", "run_id", "seq", "clock", "rate", "boosted",
                 "ports_down", "down_open", "rerouting", "boost_rate", "boost_seconds"):
        if hasattr(old, name):
            setattr(new, name, getattr(old, name))
    known = set(gom.LinkModel(plan).links)
    for key, event in old.open.items():
        links = [link for link in event["links"] if link in known] if event["links"] else []
        if event["links"] and not links:
            continue    # its links left the plan
        for link in links:
            if link not in new.topo.info and link in old.topo.info:
                # no probe crosses it now: keep it in the metrics, with its fault
                new.topo.info[link] = old.topo.info[link]
                for switch in old.topo.info[link]["switches"]:
                    new.topo.links_of_switch.setdefault(switch, set()).add(link)
        new.open[key] = event
        new.open_q[key] = old.open_q.get(key, 1.0)
        for link in links:
            if link in old.link_state:
                new.link_state[link] = old.link_state[link]
    # steered-off links keep their state without probes: no recovery on evidence that does not cross them
    for link, state in old.link_state.items():
        if link not in new.link_state and any(link in event["links"] for event in new.open.values()):
            new.link_state[link] = state
    return new


def unmeasured_faults(localiser):
    """Open faults whose links no probe crosses (e.g. every binding steered off them): their state holds until a
    probe crosses them again."""
    sig = localiser.topo.sig
    return sorted(key for key, event in localiser.open.items()
                  if event["links"] and not any(sig.get(link) for link in event["links"]))
