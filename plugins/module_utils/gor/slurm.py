# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm side of GOR: the plan's topology for the tree plugin, and drains this collection owns.

Pure functions (no Ansible, no Slurm calls); docs/scheduler.md documents them. Witnesses: Slurm's
topology.conf(5) and scontrol(1) man pages (22.05, Debian 12's slurm-wlm) and a real slurmctld +
slurmd + munge started by tests/integration/scheduler/test_slurm.py.

* ``topology_conf(plan)``: one tree switch per server group (the group's rail leafs: every host of
  a group reaches every other host of it through one leaf per rail, never a spine) and, above them,
  one switch for the spine layer. Jobs that fit in a group land in one group (GOR's rank-order goal,
  docs/rank-order.md). Slurm 22.05 has no topology.yaml (it came with Slurm 25.05): not written.
* Ownership of a drain is told by the node's reason alone: ``aifabric: <link> <event id>`` (several
  faults on one node are joined by ``; ``). A node drained with any other reason is someone else's:
  it is never resumed and its reason is never rewritten.
"""
from __future__ import annotations

import re

REASON_PREFIX = "aifabric:"
SEPARATOR = "; "
# scontrol show node -o: "... State=IDLE+DRAIN ... Reason=<text> [<user>@<time>]" (the reason is last in 22.05;
# the bracketed user@time suffix ends it in every version, so the regex does not rely on its position).
_NAME = re.compile(r"(?:^|\s)NodeName=(\S+)")
_STATE = re.compile(r"(?:^|\s)State=(\S+)")
_REASON = re.compile(r"(?:^|\s)Reason=(.*?) \[([^@\]\s]+)@([^\]\s]+)\]")
_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:>/@+-]*$")
_HOSTNUM = re.compile(r"^(.*?)(\d+)$")


class SlurmError(ValueError):
    """Bad input for a Slurm action (the message names the key and the fix)."""


def compress(names):
    """Slurm hostlist expression for ``names`` (``gpu[01-03,07]``), the syntax scontrol show hostlist prints."""
    groups = {}
    order = []
    for name in sorted(set(names), key=_sort_key):
        match = _HOSTNUM.match(name)
        key = (match.group(1), len(match.group(2))) if match else (name, None)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(match.group(2)) if match else None)
    out = []
    for prefix, width in order:
        numbers = groups[(prefix, width)]
        if width is None:
            out.append(prefix)
            continue
        if len(numbers) == 1:
            out.append("%s%0*d" % (prefix, width, numbers[0]))
            continue
        out.append("%s[%s]" % (prefix, ",".join(_ranges(numbers, width))))
    return ",".join(out)


def _sort_key(name):
    match = _HOSTNUM.match(name)
    return (match.group(1), len(match.group(2)), int(match.group(2))) if match else (name, 0, -1)


def _ranges(numbers, width):
    spans = []
    start = prev = numbers[0]
    for number in numbers[1:] + [None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        spans.append("%0*d" % (width, start) if start == prev else "%0*d-%0*d" % (width, start, width, prev))
        if number is not None:
            start = prev = number
    return spans


def topology(plan, node_names=None):
    """Tree of the plan: {'groups': [{switch, nodes, leafs}], 'top': {switch, spines, switches}}."""
    node_names = node_names or {}
    fabric = plan.get("fabric") or "fabric"
    groups = {}
    for host_name, host in plan["hosts"].items():
        entry = groups.setdefault(host["group"], {"nodes": [], "leafs": set()})
        entry["nodes"].append(node_names.get(host_name, host_name))
        entry["leafs"].update(nic["leaf"] for nic in host["nics"])
    out = []
    for group in sorted(groups):
        out.append({"switch": "%s-g%d" % (fabric, group), "group": group,
                    "nodes": sorted(groups[group]["nodes"], key=_sort_key),
                    "leafs": sorted(groups[group]["leafs"], key=_sort_key)})
    top = {"switch": "%s-spine" % fabric, "spines": sorted(plan.get("spines") or {}, key=_sort_key),
           "switches": [g["switch"] for g in out]}
    return {"groups": out, "top": top}


def topology_conf(plan, node_names=None):
    """topology.conf text for TopologyPlugin=topology/tree (one line per switch, hostlist expressions)."""
    tree = topology(plan, node_names)
    lines = ["# aifabric.roce: topology of fabric %s for Slurm's topology/tree plugin (generated from the plan)."
             % (plan.get("fabric") or "fabric"),
             "# One switch per server group (its rail leafs); the spine layer above joins the groups."]
    for group in tree["groups"]:
        lines.append("# %s: group %d, rail leafs %s" % (group["switch"], group["group"], ", ".join(group["leafs"])))
        lines.append("SwitchName=%s Nodes=%s" % (group["switch"], compress(group["nodes"])))
    if tree["top"]["switches"]:
        lines.append("# %s: spines %s" % (tree["top"]["switch"], ", ".join(tree["top"]["spines"]) or "none"))
        lines.append("SwitchName=%s Switches=%s" % (tree["top"]["switch"], compress(tree["top"]["switches"])))
    return "\n".join(lines) + "\n"


def parse_node(text):
    """One node of ``scontrol -o show node NAME``: name, state flags, reason, reason's user and time."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    name = _NAME.search(line)
    state = _STATE.search(line)
    if not name or not state:
        raise SlurmError("not a node line of 'scontrol -o show node': %r. Fix: check scontrol and SLURM_CONF"
                         % line[:200])
    words = state.group(1).split("+")
    reason = _REASON.search(line)
    return {
        "name": name.group(1), "state": state.group(1), "base": words[0], "flags": words[1:],
        "drain": "DRAIN" in words[1:] or words[0] in ("DRAINED", "DRAINING"),
        "reason": reason.group(1) if reason else None,
        "reason_user": reason.group(2) if reason else None,
        "reason_time": reason.group(3) if reason else None,
    }


def check_token(key, value):
    """A link or event id goes into the reason as one word: no spaces, no ';' (the reason's separator)."""
    if not value or not _TOKEN.match(value):
        raise SlurmError("%s %r is not one word of letters, digits and _.:>/@+- (it goes into the Slurm drain "
                         "reason 'aifabric: <link> <event id>'). Fix: pass the link name from the GOM event "
                         "(e.g. gpu01:rail0>leaf0:Ethernet0) and its event id" % (key, value))
    return value


def owned_faults(reason):
    """[(link, event)] of a reason this collection wrote, or None when the reason is not ours."""
    if not reason or not reason.startswith(REASON_PREFIX):
        return None
    faults = []
    for part in reason[len(REASON_PREFIX):].split(SEPARATOR.strip()):
        words = part.split()
        if len(words) != 2:
            return None     # edited by someone: not in the form we write, so not ours any more
        faults.append((words[0], words[1]))
    return faults


def reason_for(faults):
    return "%s %s" % (REASON_PREFIX, SEPARATOR.join("%s %s" % fault for fault in faults))


# the words of one scheduler's hold: Slurm drains and resumes, Kubernetes cordons and uncordons (k8s_nodes.py)
SLURM_WORDS = {"hold": "drain", "held": "drained", "release": "resume", "released": "resumed"}


def owned_hold(held, reason, by, want, link, event, words=None):
    """The one ownership rule of a scheduler hold (a Slurm drain, a Kubernetes cordon) for a fault on ``link``.

    ``held``: the node is held now; ``reason``: its reason (ours: ``aifabric: <link> <event>; ...``); ``by``: who set
    it (for the message). want held: hold it with our reason; a node we hold for other links gets this link added;
    a node someone else holds is left as it is. want released: drop this link from our reason; release when no
    fault of ours is left; a node someone else holds (or whose reason was edited) is never touched.
    Returns {'action': 'hold'|'update_reason'|'release'|None, 'reason': new reason or None, 'why': text}.
    """
    w = words or SLURM_WORDS
    check_token("link", link)
    faults = owned_faults(reason) if held else None
    if want == w["held"]:
        check_token("event_id", event)
        if not held:
            return {"action": "hold", "reason": reason_for([(link, event)]),
                    "why": "%s for %s (event %s)" % (w["held"], link, event)}
        if faults is None:
            return {"action": None, "reason": None,
                    "why": "already %s by %s (reason %r): left as it is, and never %s by this collection"
                           % (w["held"], by or "someone else", reason, w["released"])}
        if any(f[0] == link for f in faults):
            return {"action": None, "reason": None, "why": "already %s by this collection for %s" % (w["held"], link)}
        return {"action": "update_reason", "reason": reason_for(faults + [(link, event)]),
                "why": "already %s by this collection; %s added to the reason" % (w["held"], link)}
    if want != w["released"]:
        raise SlurmError("state %r: use %s or %s" % (want, w["held"], w["released"]))
    if not held:
        return {"action": None, "reason": None, "why": "not %s: nothing to %s" % (w["held"], w["release"])}
    if faults is None:
        return {"action": None, "reason": None,
                "why": "%s by %s (reason %r), not by this collection: never %s here"
                       % (w["held"], by or "someone else", reason, w["released"])}
    left = [f for f in faults if f[0] != link]
    if len(left) == len(faults):
        return {"action": None, "reason": None,
                "why": "%s by this collection for %s, not for %s: left %s"
                       % (w["held"], ", ".join(f[0] for f in faults), link, w["held"])}
    if left:
        return {"action": "update_reason", "reason": reason_for(left),
                "why": "%s repaired; still %s for %s" % (link, w["held"], ", ".join(f[0] for f in left))}
    return {"action": "release", "reason": None,
            "why": "%s repaired: %s (%s by this collection)" % (link, w["released"], w["held"])}


def decide(node, want, link, event):
    """owned_hold for a Slurm node (parse_node): action 'drain', 'update_reason', 'resume' or None."""
    out = owned_hold(node["drain"], node["reason"], node["reason_user"], want, link, event)
    out["action"] = {"hold": "drain", "release": "resume"}.get(out["action"], out["action"])
    return out


def command(node_name, decision):
    """scontrol argv for a decision (None when nothing is to be done)."""
    action = decision["action"]
    if action == "drain":
        return ["scontrol", "update", "nodename=%s" % node_name, "state=drain", "reason=%s" % decision["reason"]]
    if action == "update_reason":
        return ["scontrol", "update", "nodename=%s" % node_name, "reason=%s" % decision["reason"]]
    if action == "resume":
        return ["scontrol", "update", "nodename=%s" % node_name, "state=resume"]
    return None
