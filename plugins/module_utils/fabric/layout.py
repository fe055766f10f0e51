# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cross-key validation and the derived layout of a fabric (counts, slots, port lists).

Slot arithmetic is chosen so that growth never renumbers:
- a server's slot is its position in the server list; group = slot // servers_per_group;
- a leaf's slot is ``group * max_rails + rail`` (rails reserve their slot up front);
- spine ports are reserved per (group, rail slot) block inside the leaf's spine plane.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError, FabricProblem
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import PLATFORM_DEVICE_TYPES
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.schema import parse_port_list, parse_ratio

# Linux reserved routing tables (iproute2 rt_tables) and rule priorities (ip-rule(8)).
RESERVED_TABLES = {0: "unspec", 253: "default", 254: "main", 255: "local"}
RESERVED_PRIORITIES = {0: "local", 32766: "main", 32767: "default"}

# Cross-key rules, rendered into docs/fabric-schema.md (one list for docs and code review).
RULES = [
    ("fabric.servers", "Give `names` or `count`; generated or listed names must be unique."),
    ("fabric.rails", "When given, equals the number of `servers.nics`; never above `max_rails`."),
    ("fabric.servers.nics", "`netdev` and `rdma` names are unique and differ from `mgmt_interface`."),
    ("fabric.switch_models", "Port numbers lie within no other group of the same model; "
     "`port_name` yields unique names."),
    ("fabric.leafs.model / fabric.spines.model", "Name an existing switch model with the needed port groups."),
    ("fabric.servers.servers_per_group", "At most the leaf model's downlink count; NIC speed at most "
     "the downlink speed."),
    ("fabric.oversubscription", "The uplinks a leaf needs (group bandwidth / n) fit its uplink "
     "ports and spread evenly over the spines of its plane."),
    ("fabric.spines", "`count` divides by `planes`; `planes` divides `max_rails`; each spine has "
     "ports for every reserved (group, rail) block of its plane."),
    ("fabric.leafs.platform / spines.platform / platform_overrides", "A supported platform; "
     "overrides name existing leafs."),
    ("fabric.addressing", "Rail pools, the fabric link pool and loopback pools do not overlap and "
     "are large enough for every group, link and switch."),
    ("fabric.routing", "Table ids base..base+max_rails-1 avoid 0, 253, 254, 255; rule priorities "
     "avoid 0, 32766, 32767."),
]


class PortGroup(object):
    """Logical ports of one role (downlinks / uplinks) on a switch model."""

    __slots__ = ("names", "speed_gbps", "breakout", "physical")

    def __init__(self, names, speed_gbps, breakout, physical):
        self.names = names
        self.speed_gbps = speed_gbps
        self.breakout = breakout
        self.physical = physical


class Layout(object):
    """Everything the planner derives from the intent before assigning addresses."""

    def __init__(self, intent):
        self.intent = intent


def _format(pattern, path, problems, **fields):
    try:
        return pattern.format(**fields)
    except (KeyError, IndexError, ValueError) as exc:
        problems.append(FabricProblem(path, "cannot format %r (%s)" % (pattern, exc),
                                      "use only the fields %s" % ", ".join("{%s}" % f for f in sorted(fields))))
        return None


def _port_group(model_name, model, role, problems):
    spec = model.get(role)
    path = "fabric.switch_models.%s.%s" % (model_name, role)
    if not spec:
        return None
    physical = parse_port_list(spec["ports"])
    names = []
    for port in physical:
        for lane in range(1, spec["breakout"] + 1):
            fields = {"port": port, "lane": lane, "index": len(names)}
            name = _format(model["port_name"], "fabric.switch_models.%s.port_name" % model_name, problems, **fields)
            if name is None:
                return None
            names.append(name)
    if spec["breakout"] > 1 and len(set(names)) != len(names):
        problems.append(FabricProblem("fabric.switch_models.%s.port_name" % model_name,
                                      "breakout ports get the same name", "add {lane} to port_name, e.g. 'Ethernet{port}/{lane}'"))
        return None
    return PortGroup(names, spec["speed_gbps"], spec["breakout"], physical)


def _switch_model(intent, role_path, needed_groups, problems):
    name = intent[role_path]["model"]
    models = intent["switch_models"]
    if name not in models:
        problems.append(FabricProblem("fabric.%s.model" % role_path, "unknown switch model %r" % name,
                                      "use one of %s or add it under fabric.switch_models" % ", ".join(sorted(models))))
        return None
    model = models[name]
    groups = {}
    for role in needed_groups:
        group = _port_group(name, model, role, problems)
        if group is None and not problems:
            problems.append(FabricProblem("fabric.switch_models.%s.%s" % (name, role),
                                          "model %r has no %s but is used as %s" % (name, role, role_path),
                                          "define %s ports for this model" % role))
        groups[role] = group
    if all(groups.values()) and len(groups) > 1:
        down, up = set(groups["downlinks"].physical), set(groups["uplinks"].physical)
        if down & up:
            problems.append(FabricProblem("fabric.switch_models.%s.uplinks.ports" % name,
                                          "ports %s are both downlinks and uplinks" % sorted(down & up)[:8],
                                          "give each physical port one role"))
    return groups


def _server_names(servers, problems):
    if servers["names"]:
        names = list(servers["names"])
        path = "fabric.servers.names"
    elif servers["count"]:
        names = []
        for offset in range(servers["count"]):
            name = _format(servers["name_pattern"], "fabric.servers.name_pattern", problems,
                           index=servers["first_index"] + offset)
            if name is None:
                return []
            names.append(name)
        path = "fabric.servers.name_pattern"
    else:
        problems.append(FabricProblem("fabric.servers", "neither names nor count is given",
                                      "add servers.count (with name_pattern) or servers.names"))
        return []
    if len(set(names)) != len(names):
        seen, dupes = set(), []
        for name in names:
            if name in seen:
                dupes.append(name)
            seen.add(name)
        problems.append(FabricProblem(path, "duplicate server names: %s" % ", ".join(sorted(set(dupes))[:5]),
                                      "make every server name unique (name_pattern needs {index})"))
    return names


def _check_nics(intent, problems):
    nics = intent["servers"]["nics"]
    mgmt = intent["servers"]["mgmt_interface"]
    for field in ("netdev", "rdma"):
        seen = {}
        for index, nic in enumerate(nics):
            if nic[field] in seen:
                problems.append(FabricProblem("fabric.servers.nics[%d].%s" % (index, field),
                                              "%r is also used by nics[%d]" % (nic[field], seen[nic[field]]),
                                              "give each rail NIC its own %s" % field))
            seen[nic[field]] = index
    for index, nic in enumerate(nics):
        if nic["netdev"] == mgmt:
            problems.append(FabricProblem("fabric.servers.nics[%d].netdev" % index,
                                          "%r is the management interface" % mgmt,
                                          "rail NICs must not include servers.mgmt_interface"))
    rails = len(nics)
    if intent["rails"] is not None and intent["rails"] != rails:
        problems.append(FabricProblem("fabric.rails", "rails is %d but servers.nics lists %d NICs"
                                      % (intent["rails"], rails), "list one NIC per rail or correct rails"))
    if rails > intent["max_rails"]:
        problems.append(FabricProblem("fabric.max_rails", "%d rails exceed max_rails %d" % (rails, intent["max_rails"]),
                                      "raise max_rails (before the fabric is built: it lays out spine ports)"))


def _check_platform_names(intent, problems):
    known = ", ".join(sorted(PLATFORM_DEVICE_TYPES))
    for role in ("leafs", "spines"):
        platform = intent[role]["platform"]
        if platform not in PLATFORM_DEVICE_TYPES:
            problems.append(FabricProblem("fabric.%s.platform" % role, "unknown NOS %r" % platform,
                                          "use one of %s" % known))


def _check_platform_overrides(intent, leaf_names, problems):
    known = ", ".join(sorted(PLATFORM_DEVICE_TYPES))
    for leaf, platform in intent["leafs"]["platform_overrides"].items():
        path = "fabric.leafs.platform_overrides.%s" % leaf
        if leaf not in leaf_names:
            problems.append(FabricProblem(path, "no leaf is named %r" % leaf, "use a leaf name from the plan"))
        if platform not in PLATFORM_DEVICE_TYPES:
            problems.append(FabricProblem(path, "unknown NOS %r" % (platform,), "use one of %s" % known))


def _check_routing(intent, problems):
    routing = intent["routing"]
    span = intent["max_rails"]
    tables = range(routing["table_base"], routing["table_base"] + span)
    hit = sorted(t for t in tables if t in RESERVED_TABLES)
    if hit:
        problems.append(FabricProblem("fabric.routing.table_base",
                                      "tables %d..%d include reserved table %s" % (tables[0], tables[-1], ", ".join(
                                          "%d (%s)" % (t, RESERVED_TABLES[t]) for t in hit)),
                                      "pick a base such that base..base+%d avoids 0 and 253-255, e.g. 100" % (span - 1)))
    if tables[-1] > 0xFFFFFFFF:
        problems.append(FabricProblem("fabric.routing.table_base", "table ids exceed 2^32-1", "use a smaller base"))
    prios = range(routing["rule_priority_base"], routing["rule_priority_base"] + span)
    hit = sorted(p for p in prios if p in RESERVED_PRIORITIES)
    if hit or prios[-1] >= 32766:
        problems.append(FabricProblem("fabric.routing.rule_priority_base",
                                      "rule priorities %d..%d reach the kernel's main/default rules (32766, 32767)"
                                      % (prios[0], prios[-1]),
                                      "use a base between 1 and %d" % (32765 - span)))


def _network(text):
    return ipaddress.IPv4Network(text)


def _rail_pools(intent, rails, problems):
    addressing = intent["addressing"]
    if addressing["rail_pools"]:
        pools = [_network(p) for p in addressing["rail_pools"]]
        if len(pools) < rails:
            problems.append(FabricProblem("fabric.addressing.rail_pools", "%d pools for %d rails" % (len(pools), rails),
                                          "list one pool per rail (index = rail)"))
            return None, "fabric.addressing.rail_pools"
        return pools[:rails], "fabric.addressing.rail_pools"
    if addressing["supernet"]:
        supernet = _network(addressing["supernet"])
        prefixlen = addressing["rail_prefixlen"]
        if prefixlen < supernet.prefixlen or (1 << (prefixlen - supernet.prefixlen)) < rails:
            problems.append(FabricProblem("fabric.addressing.rail_prefixlen",
                                          "%s cannot hold %d /%d rail pools" % (supernet, rails, prefixlen),
                                          "use a larger supernet or a longer rail_prefixlen"))
            return None, "fabric.addressing.supernet"
        size = 1 << (32 - prefixlen)
        base = int(supernet.network_address)
        return [ipaddress.IPv4Network((base + r * size, prefixlen)) for r in range(rails)], "fabric.addressing.supernet"
    problems.append(FabricProblem("fabric.addressing", "no rail addresses", "give addressing.rail_pools or addressing.supernet"))
    return None, "fabric.addressing"


def _pool_block(count):
    """Smallest power-of-two block with room for `count` hosts + gateway + network + broadcast."""
    need = count + 3
    size = 4
    while size < need:
        size <<= 1
    return size


def _check_overlaps(named_pools, problems):
    """Every overlapping pair, reported on the more specific prefix (usually the mistake)."""
    for index, (path_a, net_a) in enumerate(named_pools):
        for path_b, net_b in named_pools[index + 1:]:
            if net_a.overlaps(net_b):
                (wide_path, wide), (narrow_path, narrow) = sorted(
                    ((path_a, net_a), (path_b, net_b)), key=lambda item: item[1].prefixlen)
                problems.append(FabricProblem(narrow_path, "%s overlaps %s (%s)" % (narrow, wide, wide_path),
                                              "give every pool its own address range"))


def build_layout(intent):
    """Validate cross-key rules and derive counts, names and slots. Raises FabricError."""
    problems = []
    lay = Layout(intent)
    servers = intent["servers"]
    _check_nics(intent, problems)
    _check_routing(intent, problems)
    lay.server_names = _server_names(servers, problems)
    lay.rails = len(servers["nics"])
    lay.max_rails = intent["max_rails"]
    lay.ratio = parse_ratio(intent["oversubscription"])

    _check_platform_names(intent, problems)
    leaf_ports = _switch_model(intent, "leafs", ("downlinks", "uplinks"), problems) or {}
    spine_ports = _switch_model(intent, "spines", ("downlinks",), problems) or {}
    if not lay.server_names or not leaf_ports or not spine_ports or not all(leaf_ports.values()) \
            or not all(spine_ports.values()):
        raise FabricError(problems)
    lay.leaf_down, lay.leaf_up = leaf_ports["downlinks"], leaf_ports["uplinks"]
    lay.spine_down = spine_ports["downlinks"]

    spg = servers["servers_per_group"] or len(lay.leaf_down.names)
    lay.servers_per_group = spg
    if spg > len(lay.leaf_down.names):
        problems.append(FabricProblem("fabric.servers.servers_per_group",
                                      "%d servers per group but leaf model %r has %d downlinks"
                                      % (spg, intent["leafs"]["model"], len(lay.leaf_down.names)),
                                      "lower servers_per_group or use a leaf model with more downlinks (or breakout)"))
    nic_speed = max(nic["speed_gbps"] for nic in servers["nics"])
    if nic_speed > lay.leaf_down.speed_gbps:
        problems.append(FabricProblem("fabric.servers.nics", "NIC speed %dG exceeds leaf downlink speed %dG"
                                      % (nic_speed, lay.leaf_down.speed_gbps),
                                      "use a leaf downlink speed >= the NIC speed"))
    lay.nic_speed = nic_speed
    lay.groups = max(1, -(-len(lay.server_names) // spg))

    # Uplinks: group bandwidth / ratio, in uplink ports (rounded up).
    down_bw = spg * nic_speed
    lay.uplinks_per_leaf = -(-down_bw // (lay.ratio * lay.leaf_up.speed_gbps))
    spines = intent["spines"]
    planes = spines["planes"]
    lay.planes = planes
    if spines["count"] % planes:
        problems.append(FabricProblem("fabric.spines.count", "%d spines do not split into %d planes" % (spines["count"], planes),
                                      "make count a multiple of planes"))
    if lay.max_rails % planes:
        problems.append(FabricProblem("fabric.spines.planes", "%d planes do not divide max_rails %d" % (planes, lay.max_rails),
                                      "choose planes dividing max_rails"))
    lay.spines_per_plane = max(1, spines["count"] // planes)
    lay.rail_slots_per_plane = max(1, lay.max_rails // planes)
    if lay.uplinks_per_leaf > len(lay.leaf_up.names):
        problems.append(FabricProblem("fabric.oversubscription",
                                      "%s needs %d uplinks of %dG per leaf (%d servers x %dG) but the leaf has %d"
                                      % (intent["oversubscription"], lay.uplinks_per_leaf, lay.leaf_up.speed_gbps, spg,
                                         nic_speed, len(lay.leaf_up.names)),
                                      "raise the ratio, lower servers_per_group or add uplink ports"))
    # Round uplinks up to a multiple of the plane's spines so each spine gets the same share.
    per_spine = -(-lay.uplinks_per_leaf // lay.spines_per_plane)
    if per_spine * lay.spines_per_plane > len(lay.leaf_up.names):
        problems.append(FabricProblem("fabric.spines.count",
                                      "%d uplinks cannot spread evenly over %d spines per plane with %d uplink ports"
                                      % (lay.uplinks_per_leaf, lay.spines_per_plane, len(lay.leaf_up.names)),
                                      "use a spine count per plane that divides the leaf's uplinks"))
    lay.uplinks_per_leaf = per_spine * lay.spines_per_plane
    lay.uplinks_per_spine = per_spine
    top_slot = (lay.groups - 1) * lay.rail_slots_per_plane + min(lay.rails, lay.rail_slots_per_plane)
    spine_ports_needed = top_slot * per_spine
    if spine_ports_needed > len(lay.spine_down.names):
        problems.append(FabricProblem("fabric.spines.model",
                                      "each spine needs %d leaf-facing ports (%d groups x %d rail slots x %d) but model %r has %d"
                                      % (spine_ports_needed, lay.groups, lay.rail_slots_per_plane, per_spine,
                                         spines["model"], len(lay.spine_down.names)),
                                      "add spines or planes, use a larger spine model, or lower max_rails"))

    # Names.
    lay.leafs = []
    for group in range(lay.groups):
        for rail in range(lay.rails):
            name = _format(intent["leafs"]["name_pattern"], "fabric.leafs.name_pattern", problems, group=group + 1, rail=rail)
            lay.leafs.append((name, group, rail))
    lay.spines = []
    for plane in range(planes):
        for index in range(lay.spines_per_plane):
            global_index = plane * lay.spines_per_plane + index
            name = _format(spines["name_pattern"], "fabric.spines.name_pattern", problems,
                           index=global_index + 1, plane=plane + 1)
            lay.spines.append((name, plane, index))
    if problems:
        raise FabricError(problems)
    all_names = lay.server_names + [leaf[0] for leaf in lay.leafs] + [spine[0] for spine in lay.spines]
    if len(set(all_names)) != len(all_names):
        problems.append(FabricProblem("fabric.leafs.name_pattern", "server, leaf and spine names collide",
                                      "make name patterns unique (leafs need {group} and {rail}, spines {index})"))
    _check_platform_overrides(intent, set(leaf[0] for leaf in lay.leafs), problems)

    # Addressing.
    addressing = intent["addressing"]
    pools, pools_path = _rail_pools(intent, lay.rails, problems)
    named = []
    if pools:
        lay.rail_pools = pools
        if addressing["scheme"] == "subnet_per_leaf":
            lay.block = _pool_block(spg)
            need = lay.block * lay.groups
        else:
            lay.block = 2 * spg
            need = 2 * spg * lay.groups
        for rail, pool in enumerate(pools):
            path = "%s[%d]" % (pools_path, rail) if pools_path.endswith("rail_pools") else "%s (rail %d)" % (pools_path, rail)
            if pool.num_addresses < need:
                problems.append(FabricProblem(path, "%s holds %d addresses; rail %d needs %d (%d groups x %d)"
                                              % (pool, pool.num_addresses, rail, need, lay.groups, lay.block),
                                              "use a larger pool (prefix /%d or shorter)" % (32 - (need - 1).bit_length())))
            named.append((path, pool))
    link_pool = _network(addressing["fabric_link_pool"])
    top_leaf_slot = (lay.groups - 1) * lay.max_rails + lay.rails
    links_needed = 2 * top_leaf_slot * lay.uplinks_per_leaf
    if link_pool.num_addresses < links_needed:
        problems.append(FabricProblem("fabric.addressing.fabric_link_pool",
                                      "%s holds %d addresses; %d /31 links need %d" % (link_pool, link_pool.num_addresses,
                                                                                       links_needed // 2, links_needed),
                                      "use a pool of /%d or shorter" % (32 - (links_needed - 1).bit_length())))
    named.append(("fabric.addressing.fabric_link_pool", link_pool))
    lay.link_pool = link_pool
    for role, count in (("leaf", top_leaf_slot), ("spine", len(lay.spines))):
        key = "fabric.addressing.%s_loopback_pool" % role
        pool = _network(addressing["%s_loopback_pool" % role])
        if pool.num_addresses < count + 1:
            problems.append(FabricProblem(key, "%s holds %d addresses; %d %ss need %d" % (pool, pool.num_addresses, count, role, count + 1),
                                          "use a larger pool"))
        named.append((key, pool))
        setattr(lay, "%s_loopback_pool" % role, pool)
    _check_overlaps(named, problems)
    if problems:
        raise FabricError(problems)
    return lay
