"""PBR state show commands of the lab switch simulators (test code), printed in the formats of the real captures
the product's parsers are tested on (tests/fixtures/switches/SOURCE.md): the simulator speaks the capture's format.

  EOS   show policy-map type pbr | json        eos/anta-show-policy-map-type-pbr-json.json (+ class ``name``)
  NX-OS show route-map                         nxos/genie-nxos-show-route-map.txt
  NVUE  nv show router pbr map <m> rule -o json nvue/cl-nv-show-router-pbr-map-rule-json.json
"""
import json
import re

IPV4 = re.compile(r"^\d+\.\d+\.\d+\.\d+$")


def eos_pbr_json(tree):
    """From an EOS running-config tree: every ``policy-map type pbr``, its classes in order (keyed by sequence, with
    the class name as Arista's policy-map JSON carries it) and the interfaces whose ``service-policy type pbr input``
    names it."""
    applied = {}
    for line, kids in tree:
        if line.startswith("interface "):
            for kid, _kids in kids:
                m = re.match(r"service-policy type pbr input (\S+)$", kid)
                if m:
                    applied.setdefault(m.group(1), []).append(line.split()[1])
    maps = {}
    for line, kids in tree:
        m = re.match(r"policy-map type pbr (\S+)$", line)
        if not m:
            continue
        classes, seq = {}, 0
        for kid, actions in kids:
            c = re.match(r"(?:(\d+) )?class (\S+)$", kid)
            if not c:
                continue
            seq = int(c.group(1)) if c.group(1) else seq + 10
            hops = [w for a, _sub in actions if a.startswith("set nexthop ") for w in a.split()[2:] if IPV4.match(w)]
            action = {"setNexthop": {"actionType": "setNexthop", "nexthops": dict((str(i), {"ip": h}) for i, h in enumerate(hops))}} \
                if hops else {}
            classes[str(seq)] = {"name": c.group(2), "configuredAction": action}
        maps[m.group(1)] = {"configuredIngressIntfs": sorted(applied.get(m.group(1), [])),
                            "configuredIngressIntfsAsFallback": [], "classMap": classes}
    return json.dumps({"policyMaps": maps}, indent=4)


def nxos_show_route_map(tree):
    """From an NX-OS running-config tree, in NX-OS's ``show route-map`` layout: ``route-map N, permit, sequence S``,
    then ``Match clauses:`` / ``Set clauses:`` with the ACL match and the next hop (trailing blank as printed)."""
    out = []
    for line, kids in tree:
        m = re.match(r"route-map (\S+) (permit|deny) (\d+)$", line)
        if not m:
            continue
        out.append("route-map %s, %s, sequence %s " % m.groups())
        out.append("  Match clauses:")
        for kid, _kids in kids:
            a = re.match(r"match ip address (\S+)$", kid)
            if a:
                out.append("    ip address (access-lists): %s " % a.group(1))
        out.append("  Set clauses:")
        for kid, _kids in kids:
            if kid.startswith("set ip next-hop "):
                out.append("    ip next-hop %s " % " ".join(kid.split()[3:]))
    return "\n" + "\n".join(out) + ("\n" if out else "")


def nvue_pbr_rules_json(paths, name):
    """From NVUE's applied paths: the source-ip rules of PBR map ``name`` as ``nv show router pbr map <m> rule -o json``
    prints them. A rule is installed when the map is on an interface and its nexthop group exists (a missing group
    with the documented reason ``Invalid NH-group``). Rules matching only a destination (our local-destination rules) are left
    out: no capture shows how NVUE prints their ``action vrf``."""
    prefix = "router pbr map %s rule " % name
    rules = {}
    for p in paths:
        if p.startswith(prefix):
            rule, rest = p[len(prefix):].split(" ", 1)
            rules.setdefault(rule, []).append(rest)
    if not rules:
        return "{}"   # no capture of NVUE's answer for an unknown map: an empty object, which pins nothing
    on_interface = any(re.match(r"interface \S+ router pbr map %s$" % re.escape(name), p) for p in paths)
    groups = set(p.split()[3] for p in paths if re.match(r"router nexthop group \S+ via ", p))
    out = {}
    for index, (rule, parts) in enumerate(sorted(rules.items(), key=lambda kv: int(kv[0]))):
        source = next((r.split()[2] for r in parts if r.startswith("match source-ip ")), None)
        group = next((r.split()[2] for r in parts if r.startswith("action nexthop-group ")), None)
        if source is None or group is None:
            continue
        installed = on_interface and group in groups
        entry = {"action": {"nexthop-group": {group: {"installed": "on" if installed else "off", "table-id": 10000 + index}}},
                 "installed": "on" if installed else "off"}
        if group not in groups:
            entry["installed-reason"] = "Invalid NH-group"
        entry.update({"ip-rule-id": 300 + index, "match": {"source-ip": source}})
        out[rule] = entry
    return json.dumps(out, indent=2)
