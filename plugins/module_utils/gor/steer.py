# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GOR steering (DIGEST 003 "reroute flows off congested links"): PPD bindings moved off bad fabric links.

Pure functions over a plan (no Ansible, no network); docs/gor.md documents the model.

* A leaf port's PPD binding pins the traffic it sends off-leaf to one uplink (``fabric/binding.py``).
  A bad or congested **leaf->spine** link (``leaf:port>spine:port``, GOM's name) carries the traffic of the
  bindings on that uplink: those move. A bad **spine->leaf** link ``S:p>D:q`` carries traffic that any
  leaf of D's plane sends through spine S towards D; PPD picks the spine, not the spine's link to D, so
  the bindings of the plane's other leafs bound to spine S move off S (the only lever a leaf has).
* Each moved binding goes to the healthy uplink of its leaf that carries the fewest bindings at that moment
  (ties: the lower uplink index), in ingress-port order: the moved ports are spread over the healthy uplinks.
* The steer **record** (a JSON document kept by the controller) holds one entry per steered binding: the
  leaf, the ingress port, the planned and the current uplink, the link it was moved for and since when.
  The plan is never changed; the effective intent of a leaf is its planned slice with the record's entries
  applied (``steered_intent``), and the audit reports those bindings as steered, not as drift.
* A binding goes back to its planned uplink once no bad link avoids it and the link it was moved for has
  been healthy for ``hold_down`` seconds (a flapping link does not pull traffic back and forth). The record keeps
  when that link was reported healthy (``healthy_since``), so a later run without events (a periodic job) restores
  it once the hold-down has passed; a new fault report of the link clears it.
"""
from __future__ import annotations

import copy

RECORD_VERSION = 1
STATES = ("bad", "congested", "healthy")


class SteerError(ValueError):
    """Bad input for steering (the message names the key and the fix)."""


def _uplink_links(plan):
    """{link name: (kind, leaf, spine, uplink port)} for every leaf->spine and spine->leaf link of the plan."""
    out = {}
    for leaf_name, leaf in plan["leafs"].items():
        for up in leaf.get("uplinks") or []:
            leaf_end = "%s:%s" % (leaf_name, up["port"])
            spine_end = "%s:%s" % (up["spine"], up["spine_port"])
            out["%s>%s" % (leaf_end, spine_end)] = ("up", leaf_name, up["spine"], up["port"])
            out["%s>%s" % (spine_end, leaf_end)] = ("down", leaf_name, up["spine"], up["port"])
    return out


def check_links(plan, links):
    """Validate ``links`` ([{link, state, since, event}]); returns them keyed by link name (fabric links only)."""
    known = _uplink_links(plan)
    out = {}
    for index, item in enumerate(links):
        where = "links[%d]" % index
        if not isinstance(item, dict) or not isinstance(item.get("link"), str):
            raise SteerError("%s: give a dict with link (GOM's name, e.g. leaf0:Ethernet8>spine1:Ethernet1), state and "
                             "since" % where)
        if item.get("state") not in STATES:
            raise SteerError("%s.state %r: use one of %s" % (where, item.get("state"), ", ".join(STATES)))
        since = item.get("since")
        if isinstance(since, bool) or not isinstance(since, (int, float)):
            raise SteerError("%s.since %r: give the epoch seconds the link entered this state" % (where, since))
        if item["link"] not in known:
            continue    # a host link: the scheduler's (playbooks/gor_drain.yml), not steering's
        out[item["link"]] = dict(item, event=str(item.get("event") or ""))
    return out


def avoided(plan, links):
    """{(leaf, uplink port): (link, since, event)}: uplinks no binding may use while ``links`` are bad/congested."""
    known = _uplink_links(plan)
    out = {}
    for name in sorted(links):
        item = links[name]
        if item["state"] == "healthy":
            continue
        kind, leaf_name, spine, port = known[name]
        why = (name, item["since"], item["event"])
        if kind == "up":
            out.setdefault((leaf_name, port), why)
            continue
        plane = plan["leafs"][leaf_name]["plane"]
        for other_name, other in plan["leafs"].items():
            if other_name == leaf_name or other.get("plane") != plane:
                continue
            for up in other.get("uplinks") or []:
                if up["spine"] == spine:
                    out.setdefault((other_name, up["port"]), why)
    return out


def empty_record():
    return {"version": RECORD_VERSION, "steered": []}


def check_record(record):
    if record is None:
        return empty_record()
    if not isinstance(record, dict) or record.get("version") != RECORD_VERSION or not isinstance(
            record.get("steered"), list):
        raise SteerError("the steer record is not version %d of GOR's record ({version, steered: [...]}). Fix: restore "
                         "it from the switch transaction notes, or remove it only after every leaf carries its planned "
                         "bindings (audit.yml shows them)" % RECORD_VERSION)
    return record


def compute(plan, links, record=None, now=0, hold_down=300):
    """The new record for ``links`` (check_links) over ``record``; returns (record, moves, notes).

    moves: [{leaf, ingress, from, to, because, action: steer|restore|move}] in leaf/ingress order.
    notes: bindings that should move but cannot (no healthy uplink), in words.
    """
    record = check_record(record)
    avoid = avoided(plan, links)
    current = dict(((e["leaf"], e["ingress"]), e) for e in record["steered"])
    new_entries = []
    moves = []
    notes = []
    for leaf_name in sorted(plan["leafs"]):
        leaf = plan["leafs"][leaf_name]
        uplinks = leaf.get("uplinks") or []
        by_port = dict((u["port"], u) for u in uplinks)
        bindings = leaf.get("bindings") or []
        load = dict((u["port"], 0) for u in uplinks)
        effective = {}
        for b in bindings:
            entry = current.get((leaf_name, b["ingress"]))
            effective[b["ingress"]] = entry["uplink"] if entry and entry["uplink"] in by_port else b["uplink"]
        for port in effective.values():
            load[port] = load.get(port, 0) + 1
        for b in sorted(bindings, key=lambda x: x["ingress"]):
            entry = current.get((leaf_name, b["ingress"]))
            now_port = effective[b["ingress"]]
            planned_ok = (leaf_name, b["uplink"]) not in avoid
            if planned_ok and not entry:
                continue    # on its planned uplink, nothing avoids it
            if entry:
                entry = _note_health(entry, links.get(entry["because"]))
            if planned_ok and _held_down(entry, now, hold_down):
                _move(load, moves, leaf_name, b, now_port, b["uplink"], entry["because"], "restore")
                continue
            if entry and (leaf_name, now_port) not in avoid:
                new_entries.append(entry)   # steered, its uplink still healthy: stays (hold-down or still bad)
                continue
            healthy = [u for u in uplinks if (leaf_name, u["port"]) not in avoid]
            if not healthy:
                notes.append("%s %s: no healthy uplink left (every uplink avoided); binding left on %s"
                             % (leaf_name, b["ingress"], now_port))
                if entry:
                    new_entries.append(entry)
                continue
            why = avoid.get((leaf_name, now_port)) or avoid.get((leaf_name, b["uplink"]))
            target = min(healthy, key=lambda u: (load[u["port"]], u["index"]))
            if target["port"] == b["uplink"]:
                _move(load, moves, leaf_name, b, now_port, target["port"], why[0], "restore")
                continue
            new_entries.append({
                "leaf": leaf_name, "ingress": b["ingress"], "source": b["source"], "planned_uplink": b["uplink"],
                "uplink": target["port"], "spine": target["spine"], "next_hop": target["peer"],
                "because": why[0], "since": why[1], "event": why[2]})
            _move(load, moves, leaf_name, b, now_port, target["port"], why[0], "move" if entry else "steer")
    new_entries.sort(key=lambda e: (e["leaf"], e["ingress"]))
    return {"version": RECORD_VERSION, "steered": new_entries}, moves, notes


def _note_health(entry, cause):
    """The entry with ``healthy_since`` as the latest report of its link says: set by a healthy report, dropped by a
    bad or congested one, kept when the link is not reported (a later run without events can still restore)."""
    if not cause:
        return entry
    entry = dict(entry)
    if cause["state"] == "healthy":
        entry["healthy_since"] = cause["since"]
    else:
        entry.pop("healthy_since", None)
    return entry


def _held_down(entry, now, hold_down):
    """The link a binding was moved for has been healthy for ``hold_down`` seconds (never reported healthy: not yet)."""
    return entry.get("healthy_since") is not None and now - entry["healthy_since"] >= hold_down


def _move(load, moves, leaf_name, binding, old, new, because, action):
    load[old] -= 1
    load[new] += 1
    moves.append({"leaf": leaf_name, "ingress": binding["ingress"], "from": old, "to": new, "because": because,
                  "action": action})


def leafs_changed(moves):
    return sorted(set(m["leaf"] for m in moves))


def steered_intent(intent, leaf_name, record):
    """The leaf's slice with the record's steered bindings applied (uplink, spine, next hop); a copy."""
    entries = dict((e["ingress"], e) for e in check_record(record)["steered"] if e["leaf"] == leaf_name)
    if not entries:
        return intent
    out = copy.deepcopy(intent)
    for b in out.get("bindings") or []:
        entry = entries.get(b["ingress"])
        if entry and entry["planned_uplink"] == b["uplink"]:
            b.update(uplink=entry["uplink"], spine=entry["spine"], next_hop=entry["next_hop"])
            ups = dict((u["port"], u) for u in out.get("uplinks") or [])
            if entry["uplink"] in ups:
                b["uplink_index"] = ups[entry["uplink"]]["index"]
    return out


def restrict(record, old, leafs):
    """``record``'s entries for ``leafs``, ``old``'s for every other leaf: what holds once only ``leafs`` were pushed."""
    keep = [e for e in check_record(old)["steered"] if e["leaf"] not in leafs]
    new = [e for e in check_record(record)["steered"] if e["leaf"] in leafs]
    return {"version": RECORD_VERSION, "steered": sorted(keep + new, key=lambda e: (e["leaf"], e["ingress"]))}


def audit_entries(record, switches, when=None):
    """Drift report entries (audit/report.py) for the steered bindings of ``switches``: one per leaf, status warn
    (a steer is not drift), an item per binding (planned uplink expected, steered actual), the message
    'steered by GOR because <link> <since>'."""
    by_leaf = {}
    for e in check_record(record)["steered"]:
        if e["leaf"] in switches:
            by_leaf.setdefault(e["leaf"], []).append(e)
    out = []
    for leaf_name in sorted(by_leaf):
        entries = by_leaf[leaf_name]
        reasons = sorted(set("steered by GOR because %s %s" % (e["because"], when(e["since"]) if when else e["since"])
                             for e in entries))
        out.append({"device": leaf_name, "kind": "switch", "check": "gor_steer", "status": "warn",
                    "message": "; ".join(reasons),
                    "items": [{"item": "pbr %s (%s)" % (e["ingress"], e["source"]), "expected": e["planned_uplink"],
                               "actual": "%s (steered by GOR because %s)" % (e["uplink"], e["because"])}
                              for e in entries]})
    return out
