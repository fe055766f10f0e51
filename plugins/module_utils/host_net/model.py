# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rail NIC state: normalise the host intent and ``ip -j`` output to one model, diff, build ``ip -batch``.

Pure functions, stdlib only (runs on the GPU host).  The model is a dict::

    {"links":   {netdev: {"mtu": int, "up": bool}},
     "addrs":   {netdev: ["10.100.0.2/29", ...]},          # IPv4, scope global
     "routes":  [route_key, ...],                            # see route_key()
     "rules":   [rule_key, ...],                             # see rule_key()
     "sysctls": {"net.ipv4.conf.rail0.arp_ignore": "1", ...}}

Ownership (what a diff may remove): the plan's rail NICs (their IPv4 addresses), every route in an
owned table, main-table routes out of a rail NIC that the kernel did not add itself, and every rule
whose priority is in the owned priority set.  Nothing else is read for removal.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress

TABLE_IDS = {"unspec": 0, "default": 253, "main": 254, "local": 255}
MAIN = 254

# route_key = (table, type, dst, via, dev, src, scope, metric); every field a str or int, hashable.
ROUTE_FIELDS = ("table", "type", "dst", "via", "dev", "src", "scope", "metric")
# rule_key = (priority, from, to, table, extra) where extra is a sorted tuple of other selectors.
RULE_FIELDS = ("priority", "from", "to", "table", "extra")


class HostNetError(Exception):
    """A problem with the intent or the host that must stop the run before anything is applied."""


def parse_rt_tables(texts):
    """Map routing table names to ids from the contents of rt_tables files (plus the kernel's own)."""
    names = dict(TABLE_IDS)
    for text in texts:
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            parts = line.split()
            if len(parts) >= 2 and parts[0].isdigit():
                names[parts[1]] = int(parts[0])
    return names


def table_id(value, names=None):
    if isinstance(value, int):
        return value
    text = str(value)
    if text.isdigit():
        return int(text)
    table = (names or TABLE_IDS).get(text)
    if table is None:
        raise HostNetError("unknown routing table name %r (not in rt_tables)" % text)
    return table


def canonical_dst(dst):
    if dst in (None, "", "default", "0.0.0.0/0"):
        return "default"
    return str(ipaddress.ip_network(str(dst), strict=False))


def canonical_prefix(addr):
    if addr in (None, "", "all", "0.0.0.0/0"):
        return "all"
    return str(ipaddress.ip_network(str(addr), strict=False))


def route_key(table, dst, via="", dev="", src="", scope="", rtype="unicast", metric=0):
    rtype = rtype or "unicast"
    if not scope:
        scope = "link" if (rtype == "unicast" and not via) else "global"
        if rtype in ("blackhole", "unreachable", "prohibit", "throw"):
            scope = "global"
    return (int(table), rtype, canonical_dst(dst), via or "", dev or "", src or "", scope, int(metric or 0))


def rule_key(priority, src="all", dst="all", table=MAIN, extra=()):
    return (int(priority), canonical_prefix(src), canonical_prefix(dst), int(table), tuple(sorted(extra)))


def route_dict(key):
    return dict(zip(ROUTE_FIELDS, key))


def route_text(key):
    """A route as `ip route` arguments (the part after add/del/replace)."""
    route = route_dict(key)
    words = []
    if route["type"] != "unicast":
        words.append(route["type"])
    words.append(route["dst"])
    if route["via"]:
        words += ["via", route["via"]]
    if route["dev"]:
        words += ["dev", route["dev"]]
    words += ["table", "main" if route["table"] == MAIN else str(route["table"])]
    if route["src"]:
        words += ["src", route["src"]]
    default_scope = "link" if (route["type"] == "unicast" and not route["via"]) else "global"
    if route["scope"] != default_scope:
        words += ["scope", route["scope"]]
    if route["metric"]:
        words += ["metric", str(route["metric"])]
    return " ".join(words)


def rule_text(key):
    priority, src, dst, table, extra = key
    words = ["priority", str(priority), "from", src]
    if dst != "all":
        words += ["to", dst]
    for name, value in extra:
        words += [name, str(value)]
    words += ["table", "main" if table == MAIN else str(table)]
    return " ".join(words)


def sysctl_path(name):
    """/proc/sys path of a sysctl name; net.ipv4.conf.<dev>.<key> keeps dots inside <dev>."""
    for prefix in ("net.ipv4.conf.", "net.ipv6.conf.", "net.ipv4.neigh.", "net.ipv6.neigh."):
        if name.startswith(prefix):
            dev, key = name[len(prefix):].rsplit(".", 1)
            return "/proc/sys/" + prefix.replace(".", "/") + dev + "/" + key
    return "/proc/sys/" + name.replace(".", "/")


# --------------------------------------------------------------------------------------------
# desired model from the host intent
# --------------------------------------------------------------------------------------------

def desired_model(intent, manage_sysctls=True):
    """The model the host intent asks for (the planner's ``plan.hosts[host]``)."""
    try:
        nics = intent["nics"]
    except (KeyError, TypeError):
        raise HostNetError("intent has no 'nics' list: pass plan.hosts[<host>] from aifabric.roce.fabric_plan")
    links, addrs = {}, {}
    for index, nic in enumerate(nics):
        for key in ("netdev", "address", "prefixlen", "mtu"):
            if key not in nic:
                raise HostNetError("intent.nics[%d] has no %r" % (index, key))
        dev = nic["netdev"]
        if dev in links:
            raise HostNetError("intent.nics[%d]: netdev %s is listed twice" % (index, dev))
        links[dev] = {"mtu": int(nic["mtu"]), "up": True}
        addrs[dev] = [str(ipaddress.ip_interface("%s/%s" % (nic["address"], nic["prefixlen"])))]
    routes = set()
    for route in intent.get("routes", []):
        routes.add(route_key(table_id(route["table"]), route["dst"], route.get("via", ""), route.get("dev", ""),
                             route.get("src", ""), route.get("scope", ""), route.get("type", "unicast"),
                             route.get("metric", 0)))
    rules = set()
    for rule in intent.get("rules", []):
        rules.add(rule_key(rule["priority"], rule.get("from", "all"), rule.get("to", "all"), table_id(rule["table"])))
    sysctls = {k: str(v) for k, v in intent.get("sysctls", {}).items()} if manage_sysctls else {}
    return {"links": links, "addrs": addrs, "routes": sorted(routes), "rules": sorted(rules), "sysctls": sysctls}


def owned_scope(intent, owned_tables=None, owned_priorities=None):
    """What this run owns: rail NICs, table ids, rule priorities (defaults: exactly the plan's)."""
    devs = sorted(nic["netdev"] for nic in intent["nics"])
    tables = set(int(t) for t in (owned_tables or []))
    tables |= set(table_id(r["table"]) for r in intent.get("routes", []) if table_id(r["table"]) != MAIN)
    priorities = set(int(p) for p in (owned_priorities or []))
    priorities |= set(int(r["priority"]) for r in intent.get("rules", []))
    for reserved in (0, 32766, 32767):
        if reserved in priorities:
            raise HostNetError("rule priority %d is the kernel's own (local/main/default); pick another range" % reserved)
    for reserved in (0, 253, MAIN, 255):
        if reserved in tables:
            raise HostNetError("routing table %d is the kernel's own; the plan may only own its own tables" % reserved)
    return {"devs": devs, "tables": sorted(tables), "priorities": sorted(priorities)}


# --------------------------------------------------------------------------------------------
# current model from `ip -j` output
# --------------------------------------------------------------------------------------------

def parse_route(entry, names=None):
    table = table_id(entry.get("table", "main"), names)
    return route_key(table, entry.get("dst"), entry.get("gateway", ""), entry.get("dev", ""), entry.get("prefsrc", ""),
                     entry.get("scope", ""), entry.get("type", "unicast"), entry.get("metric", 0))


def parse_rule(entry, names=None):
    src = entry.get("src", "all")
    if src != "all" and "srclen" in entry:
        src = "%s/%s" % (src, entry["srclen"])
    dst = entry.get("dst", "all")
    if dst != "all" and "dstlen" in entry:
        dst = "%s/%s" % (dst, entry["dstlen"])
    known = ("priority", "src", "srclen", "dst", "dstlen", "table", "flags", "protocol")
    extra = tuple((k, str(v)) for k, v in sorted(entry.items()) if k not in known)
    table = entry.get("table", "main")
    return rule_key(entry.get("priority", 0), src, dst, table_id(table, names), extra)


def current_model(addr_json, route_json, rule_json, scope, sysctl_values=None, names=None):
    """The owned part of the host's state, from `ip -j addr`, `ip -j route show table all`, `ip -j rule`."""
    devs = set(scope["devs"])
    tables = set(scope["tables"])
    priorities = set(scope["priorities"])
    links, addrs, present = {}, {}, {}
    for link in addr_json:
        name = link.get("ifname")
        present[name] = link
        if name not in devs:
            continue
        links[name] = {"mtu": int(link.get("mtu", 0)), "up": "UP" in link.get("flags", [])}
        addrs[name] = sorted(str(ipaddress.ip_interface("%s/%s" % (a["local"], a["prefixlen"])))
                             for a in link.get("addr_info", [])
                             if a.get("family") == "inet" and a.get("scope", "global") == "global")
    routes = set()
    for entry in route_json:
        key = parse_route(entry, names)
        if key[0] in tables or (key[0] == MAIN and entry.get("dev") in devs and entry.get("protocol") != "kernel"):
            routes.add(key)
    rules = set()
    for entry in rule_json:
        if int(entry.get("priority", 0)) in priorities:
            rules.add(parse_rule(entry, names))
    return {"links": links, "addrs": addrs, "routes": sorted(routes), "rules": sorted(rules),
            "sysctls": dict(sysctl_values or {}), "_present": sorted(present)}


def main_default_routes(route_json):
    """The main table's default route(s), as comparable keys (the management path)."""
    return sorted(parse_route(e) for e in route_json
                  if e.get("table", "main") == "main" and canonical_dst(e.get("dst")) == "default")


# --------------------------------------------------------------------------------------------
# diff and batch
# --------------------------------------------------------------------------------------------

def diff(desired, current):
    """Ordered list of change items turning `current` into `desired` (owned things only)."""
    items = []
    for dev in sorted(desired["links"]):
        want, have = desired["links"][dev], current["links"].get(dev)
        if have is None:
            items.append({"kind": "link", "action": "missing", "dev": dev})
            continue
        if want["mtu"] != have["mtu"]:
            items.append({"kind": "mtu", "action": "set", "dev": dev, "before": have["mtu"], "after": want["mtu"]})
        if want["up"] and not have["up"]:
            items.append({"kind": "link", "action": "up", "dev": dev})
    for dev in sorted(desired["addrs"]):
        have = set(current["addrs"].get(dev, []))
        want = set(desired["addrs"][dev])
        for addr in sorted(want - have):
            items.append({"kind": "address", "action": "add", "dev": dev, "address": addr})
    for dev in sorted(current["addrs"]):
        want = set(desired["addrs"].get(dev, []))
        for addr in sorted(set(current["addrs"][dev]) - want):
            items.append({"kind": "address", "action": "delete", "dev": dev, "address": addr})
    want_routes, have_routes = set(desired["routes"]), set(current["routes"])
    for key in sorted(have_routes - want_routes):
        items.append({"kind": "route", "action": "delete", "route": route_text(key)})
    for key in sorted(want_routes - have_routes):
        items.append({"kind": "route", "action": "add", "route": route_text(key)})
    want_rules, have_rules = set(desired["rules"]), set(current["rules"])
    for key in sorted(have_rules - want_rules):
        items.append({"kind": "rule", "action": "delete", "rule": rule_text(key)})
    for key in sorted(want_rules - have_rules):
        items.append({"kind": "rule", "action": "add", "rule": rule_text(key)})
    for name in sorted(desired["sysctls"]):
        want, have = desired["sysctls"][name], current["sysctls"].get(name)
        if have != want:
            items.append({"kind": "sysctl", "action": "set", "name": name, "before": have, "after": want})
    return items


def item_text(item):
    kind, action = item["kind"], item["action"]
    if kind == "mtu":
        return "mtu %s %s -> %s" % (item["dev"], item["before"], item["after"])
    if kind == "link":
        return "link %s %s" % (item["dev"], action)
    if kind == "address":
        return "address %s %s %s" % (action, item["address"], item["dev"])
    if kind == "route":
        return "route %s %s" % (action, item["route"])
    if kind == "rule":
        return "rule %s %s" % (action, item["rule"])
    return "sysctl %s %s -> %s" % (item["name"], item["before"], item["after"])


def batch_lines(items, current=None):
    """`ip -batch` lines for the iproute2 part of `items`, in a safe order.

    Order: links (MTU, up) -> new addresses -> stale addresses (secondaries before primaries) ->
    stale routes -> new routes -> stale rules -> new rules.  Addresses are added before stale ones
    go so a NIC never has no IPv4 address (the kernel flushes a NIC's routes when its last goes).
    """
    lines = []
    links = {}
    for item in items:
        if item["kind"] == "mtu":
            links.setdefault(item["dev"], []).extend(["mtu", str(item["after"])])
        elif item["kind"] == "link" and item["action"] == "up":
            links.setdefault(item["dev"], []).append("up")
    for dev in sorted(links):
        lines.append("link set dev %s %s" % (dev, " ".join(links[dev])))
    adds = [i for i in items if i["kind"] == "address" and i["action"] == "add"]
    dels = [i for i in items if i["kind"] == "address" and i["action"] == "delete"]
    lines += ["address add %s dev %s" % (i["address"], i["dev"]) for i in adds]
    primaries = set()
    for dev, addrs in ((current or {}).get("addrs") or {}).items():
        seen = set()
        for addr in addrs:
            net = ipaddress.ip_interface(addr).network
            if net not in seen:
                seen.add(net)
                primaries.add((dev, addr))
    dels.sort(key=lambda i: ((i["dev"], i["address"]) in primaries, i["dev"], i["address"]))
    lines += ["address del %s dev %s" % (i["address"], i["dev"]) for i in dels]
    lines += ["route del %s" % i["route"] for i in items if i["kind"] == "route" and i["action"] == "delete"]
    lines += ["route replace %s" % i["route"] for i in items if i["kind"] == "route" and i["action"] == "add"]
    lines += ["rule del %s" % i["rule"] for i in items if i["kind"] == "rule" and i["action"] == "delete"]
    lines += ["rule add %s" % i["rule"] for i in items if i["kind"] == "rule" and i["action"] == "add"]
    return lines


def model_text(model):
    """A stable, line-per-item text of a model (for --diff before/after)."""
    lines = []
    for dev in sorted(model["links"]):
        link = model["links"][dev]
        lines.append("link %s mtu %s %s" % (dev, link["mtu"], "up" if link["up"] else "down"))
        for addr in model["addrs"].get(dev, []):
            lines.append("address %s dev %s" % (addr, dev))
    lines += ["route " + route_text(k) for k in model["routes"]]
    lines += ["rule " + rule_text(k) for k in model["rules"]]
    lines += ["sysctl %s = %s" % (k, v) for k, v in sorted(model["sysctls"].items())]
    return "\n".join(lines) + "\n"
