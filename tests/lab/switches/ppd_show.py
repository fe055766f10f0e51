"""PBR state show commands of the lab switch simulators (test code), printed in the formats of the real captures
the product's parsers are tested on (tests/fixtures/switches/SOURCE.md): the simulator speaks the capture's format.

  EOS   show policy-map type pbr | json        eos/anta-show-policy-map-type-pbr-json.json (+ class ``name``)
  NX-OS show route-map                         nxos/genie-nxos-show-route-map.txt
  NVUE  nv show router pbr map <m> rule -o json nvue/cl-nv-show-router-pbr-map-rule-json.json
  community SONiC  show acl table <t> / show acl rule <t>
                                               sonic/sonic-utilities-show-acl-{table,rule-redirect}.txt, printed with
                                               tabulate as acl-loader prints them
"""
import ipaddress
import json
import re

import tabulate

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


def _natural(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def sonic_acl_table(config, name=None):
    """acl-loader ``show_table`` over CONFIG_DB ``ACL_TABLE``: one row per table (the first bound port), a row per
    further port; every table Active (the simulator has no orchagent that could refuse one)."""
    data = []
    for key, val in sorted((config.get("ACL_TABLE") or {}).items()):
        if name and key != name:
            continue
        ports = sorted(val.get("ports") or [], key=_natural)
        data.append([key, val.get("type", "N/A"), ports[0] if ports else "", val.get("policy_desc", ""),
                     val.get("stage", "ingress").lower(), "Active"])
        data += [["", "", port, "", "", ""] for port in ports[1:]]
    return tabulate.tabulate(data, headers=("Name", "Type", "Binding", "Description", "Stage", "Status"),
                             tablefmt="simple", missingval="") + "\n"


def _connected(config, address):
    """Whether ``address`` lies in a subnet of the switch's routed interfaces (CONFIG_DB ``INTERFACE`` /
    ``VLAN_INTERFACE`` address keys): orchagent creates a redirect to a next hop it can resolve, else it logs
    "ACL Redirect action target next hop ip ... doesn't exist on the switch" and writes no status (sonic-buildimage
    #4457)."""
    ip = ipaddress.ip_address(address)
    for table in ("INTERFACE", "VLAN_INTERFACE"):
        for key in config.get(table) or {}:
            parts = key.split("|")
            if len(parts) == 2 and "/" in parts[1] and ip in ipaddress.ip_interface(parts[1]).network:
                return True
    return False


def sonic_acl_rule(config, name=None):
    """acl-loader ``show_rule`` over CONFIG_DB ``ACL_RULE``: priority, action (PACKET_ACTION as stored,
    REDIRECT_ACTION as ``REDIRECT: x``), one sorted ``FIELD: value`` match per row, the rules sorted by priority
    (as strings, highest first), status Active unless a redirect's next hop cannot be resolved (N/A)."""
    raw = []
    for key, val in (config.get("ACL_RULE") or {}).items():
        table, rule = key.split("|", 1)
        if name and table != name:
            continue
        val = dict(val)
        priority = val.pop("PRIORITY", "N/A")
        action = val.pop("PACKET_ACTION", "")
        if "REDIRECT_ACTION" in val:
            action = "REDIRECT: %s" % val.pop("REDIRECT_ACTION")
        matches = sorted("%s: %s" % (k, v) for k, v in val.items()) or ["N/A"]
        hops = re.match(r"^REDIRECT:\s*(\S+)$", action)
        status = "Active" if not hops or all(_connected(config, h.split("@")[0]) for h in hops.group(1).split(",")) else "N/A"
        rows = [[table, rule, priority, action, matches[0], status]] + [["", "", "", "", m, ""] for m in matches[1:]]
        raw.append((priority, rows))
    raw.sort(key=lambda item: item[0], reverse=True)
    data = [row for _prio, rows in raw for row in rows]
    return tabulate.tabulate(data, headers=("Table", "Rule", "Priority", "Action", "Match", "Status"),
                             tablefmt="simple", missingval="") + "\n"
