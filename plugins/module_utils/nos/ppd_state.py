# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PPD forwarding state read from a vendor switch's own show output, judged against the plan: per host port, the
policy holding the port's host source and the next hop it sends that traffic to now. A driver declares its read
(``ppd_read``: a ``PpdRead`` below, or its own on the shared judge) and names its policies (``ppd_pins``); a NOS
without one reports the check not run. Each parser is tested on a capture (tests/fixtures/switches/SOURCE.md): eos
``show policy-map type pbr | json`` (Arista's ANTA fixture); nxos ``show route-map`` text (Cisco's genieparser
capture; its ``| json`` form has no capture with a next hop); nvue ``nv show router pbr map <map> rule -o json``
(NVIDIA's NVUE command reference). Pure: no Ansible, no I/O."""

from __future__ import annotations

import json
import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos.bgp_state import finding

ERROR = re.compile(r"^\s*(% ?Invalid|% ?Incomplete|% ?Ambiguous|Error:|ERROR:)", re.M)


# --- parsers --------------------------------------------------------------------------------------
def parse_eos(text):
    """``show policy-map type pbr | json`` -> {(policy, class name, else its sequence): {next_hops, interfaces}}."""
    data = json.loads(text)
    out = {}
    for policy, body in (data.get("policyMaps") or {}).items():
        interfaces = list(body.get("configuredIngressIntfs") or []) + list(body.get("configuredIngressIntfsAsFallback") or [])
        for key, entry in (body.get("classMap") or {}).items():
            nexthops = ((entry.get("configuredAction") or {}).get("setNexthop") or {}).get("nexthops") or {}
            hops = [nexthops[k]["ip"] for k in sorted(nexthops, key=_int_key) if isinstance(nexthops[k], dict)]
            out[(policy, entry.get("name") or key)] = {"next_hops": hops, "interfaces": interfaces}
    return out


ROUTE_MAP_HEAD = re.compile(r"^route-map (\S+), (permit|deny), sequence (\d+)\s*$")


def parse_nxos(text):
    """``show route-map`` (NX-OS text) -> {(route-map, ACL): {next_hops, action, seq}} per ACL a sequence matches."""
    out, head, part, acls, hops = {}, None, None, [], []

    def flush():
        if head:
            for acl in acls:
                out[(head[0], acl)] = {"next_hops": list(hops), "action": head[1], "seq": int(head[2])}

    for line in text.splitlines():
        m = ROUTE_MAP_HEAD.match(line.strip())
        if m:
            flush()
            head, part, acls, hops = m.groups(), None, [], []
            continue
        s = line.strip()
        if s in ("Match clauses:", "Set clauses:"):
            part = s
        elif head and part == "Match clauses:" and s.startswith("ip address (access-lists):"):
            acls += [a.strip() for a in s.split(":", 1)[1].split(",") if a.strip()]
        elif head and part == "Set clauses:" and s.startswith("ip next-hop "):
            hops += [w for w in s.split()[2:] if re.match(r"^\d+\.\d+\.\d+\.\d+$", w)]
    flush()
    return out


def parse_nvue(policy, text):
    """``nv show router pbr map <policy> rule -o json`` -> {(policy, source-ip): {groups, installed, reason, rule}}."""
    out = {}
    for rule, body in (json.loads(text) or {}).items():
        source = (body.get("match") or {}).get("source-ip")
        if source:
            out[(policy, source)] = {"groups": sorted((body.get("action") or {}).get("nexthop-group") or {}),
                                     "installed": body.get("installed"), "reason": body.get("installed-reason"),
                                     "rule": rule}
    return out


def _int_key(key):
    return (0, int(key)) if str(key).isdigit() else (1, str(key))


# --- judging --------------------------------------------------------------------------------------
def _path(intent, hop, detail):
    """``ip route get``'s form (via A dev U, U the leaf uplink whose /31 peer A is) the PPD metrics read."""
    uplink = next((u["port"] for u in intent.get("uplinks") or [] if u.get("peer") == hop), "?")
    return "via %s dev %s (%s)" % (hop, uplink, detail)


# --- how each NOS shows it: a driver declares one as its ``ppd_read`` (nos/base.py Driver) --------------------------
class PpdRead(object):
    """How a NOS shows its pins' PPD state: ``commands(pins)``, ``state(cmds, outputs)`` -> {(policy, match): entry},
    ``pin(...)`` -> (next hops, detail) or a failed finding; ``route_lookup``: the kernel is asked instead."""
    route_lookup = False
    empty_ok = False        # an empty answer is a valid, empty state (NX-OS `show route-map` with no map)
    missing = "%s %s"

    def __init__(self, describe):
        self.describe = describe

    def args(self, pin):
        return (pin["policy"], pin["match"])

    def state(self, cmds, outputs):
        return self.parse(outputs[0])


class KernelRoute(PpdRead):
    """The kernel's forwarding decision (``ip route get``, nos/validation.py): a Linux switch (FRR)."""
    route_lookup = True


class EosPolicyMap(PpdRead):
    missing = "class %s in policy-map %s"

    def commands(self, pins):
        return ["show policy-map type pbr | json"]

    parse = staticmethod(parse_eos)

    def args(self, pin):
        return (pin["match"], pin["policy"])

    def pin(self, intent, pin, entry, state, group_hops, want, probe):
        b = pin["binding"]
        detail = "class %s of policy-map %s on %s" % (pin["match"], pin["policy"], ",".join(entry["interfaces"]) or "no interface")
        if pin["ingress"] not in entry["interfaces"]:
            return finding(probe, "fail", want, detail, "host port %s: policy-map %s is not on %s" % (
                b["ingress"], pin["policy"], pin["ingress"]))
        return entry["next_hops"], detail


class NxosRouteMap(PpdRead):
    missing = "a route-map %s sequence matching ACL %s"
    empty_ok = True

    def commands(self, pins):
        return ["show route-map"]

    parse = staticmethod(parse_nxos)

    def pin(self, intent, pin, entry, state, group_hops, want, probe):
        detail = "route-map %s %s sequence %d" % (pin["policy"], entry["action"], entry["seq"])
        if entry["action"] != "permit":
            return finding(probe, "fail", want, detail, "host port %s: its sequence denies (routes normally)" %
                           pin["binding"]["ingress"])
        return entry["next_hops"], detail


class NvuePbrMap(PpdRead):
    missing = "a rule of PBR map %s matching source-ip %s"

    def commands(self, pins):
        return ["nv show router pbr map %s rule -o json" % m for m in sorted(set(p["policy"] for p in pins))]

    def state(self, cmds, outputs):
        state = {}
        for cmd, text in zip(cmds, outputs):
            state.update(parse_nvue(cmd.split()[5], text))
        return state

    def pin(self, intent, pin, entry, state, group_hops, want, probe):
        hops = sorted(set(group_hops.get(g, g) for g in entry["groups"]))
        detail = "rule %s nexthop-group %s, installed %s%s" % (entry["rule"], ",".join(entry["groups"]) or "none",
                                                               entry["installed"],
                                                               " (%s)" % entry["reason"] if entry.get("reason") else "")
        if entry["installed"] != "on":
            return finding(probe, "fail", want, _path(intent, hops[0], detail) if hops else detail,
                           "host port %s: the PBR rule is not installed" % pin["binding"]["ingress"])
        return hops, detail


def judge(driver, intent, pins, outputs):
    """``ppd_paths`` findings from the show outputs (in ``commands`` order); a refused or unreadable one: skipped."""
    read = driver.ppd_read
    cmds = read.commands(pins)
    for cmd, text in zip(cmds, outputs):
        if not (text or "").strip() and not read.empty_ok or ERROR.search(text or ""):
            return [finding("ppd_paths", "skipped", "PPD state read with `%s`" % cmd, (text or "no output").strip()[:200],
                            "not run: the switch did not show its PBR state with `%s`" % cmd)]
    try:
        state = read.state(cmds, outputs)
    except (ValueError, AttributeError, TypeError, KeyError) as exc:
        return [finding("ppd_paths", "skipped", "PPD state in the format of `%s`" % cmds[0], "", "not run: cannot read "
                        "the output of `%s`: %s" % (cmds[0], exc))]
    # NVUE: our nexthop groups are named after their next hop (nvue.nh_name); a foreign group stays its name
    group_hops = dict((p["group"], p["binding"]["next_hop"]) for p in pins if p.get("group"))
    return [_judge_pin(read, intent, pin, state, group_hops) for pin in pins]


def _judge_pin(read, intent, pin, state, group_hops):
    b = pin["binding"]
    src = b["source"].split("/")[0]
    probe = "pinned %s -> %s %s" % (src, pin["policy"], pin["match"])
    want = "via %s dev %s (%s, host port %s)" % (b["next_hop"], b["uplink"], b.get("spine", "?"), b["ingress"])
    entry = state.get((pin["policy"], pin["match"]))
    if entry is None:
        return finding(probe, "fail", want, "not pinned: no %s" % (read.missing % read.args(pin)),
                       "host port %s: its host source is not pinned on the switch" % b["ingress"])
    got = read.pin(intent, pin, entry, state, group_hops, want, probe)
    if isinstance(got, dict):
        return got
    hops, detail = got
    if hops != [b["next_hop"]]:
        actual = _path(intent, hops[0], detail) if hops else "no next hop (%s)" % detail
        return finding(probe, "fail", want, actual, "host port %s: bound to %s, planned %s via %s" % (
            b["ingress"], ",".join(hops) or "nothing", b["uplink"], b["next_hop"]))
    return finding(probe, "ok", want, _path(intent, hops[0], detail))
