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

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import names as allow
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError, FabricProblem
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import (
    PLATFORMS, PLATFORM_DEVICE_TYPES, RETIRED, VERIFIED, device_type_choices, port_name)
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.schema import parse_port_list, parse_ratio

# Most rail NICs (servers x rails) one plan may hold: twice the 131K-GPU benchmark (docs/benchmarks.md,
# ~1 GB there). Checked before any name is generated, so a huge count fails fast instead of hanging.
MAX_RAIL_NICS = 262144

# Linux reserved routing tables (iproute2 rt_tables) and rule priorities (ip-rule(8)).
RESERVED_TABLES = {0: "unspec", 253: "default", 254: "main", 255: "local"}
RESERVED_PRIORITIES = {0: "local", 32766: "main", 32767: "default"}

# Cross-key rules, rendered into docs/fabric-schema.md (one list for docs and code review).
RULES = [
    ("fabric.servers", "Give `names` or `count`, not both; generated or listed names must be unique. "
     "Servers x rails is at most %d, checked before any name is generated." % MAX_RAIL_NICS),
    ("fabric.rails", "When given, equals the number of `servers.nics`; never above `max_rails`."),
    ("fabric.servers.nics", "`netdev` and `rdma` names are unique and differ from `mgmt_interface`; "
     "`gpu` is below `servers.gpus`."),
    ("fabric.switch_models", "Port numbers lie within no other group of the same model; `breakout` divides "
     "`lanes` (unless `lanes` is 1); the names every platform using the model gives its ports (docs/platforms.md, "
     "or `port_name` when set) are unique across all ports of the model (a host port never shares a name "
     "with an uplink) and match the port name allowlist of that platform."),
    ("fabric.leafs.model / fabric.spines.model", "Name an existing switch model with the needed port groups."),
    ("fabric.servers.servers_per_group", "At most the leaf model's downlink count; NIC speed at most "
     "the downlink speed."),
    ("fabric.oversubscription", "The uplinks a leaf needs (group bandwidth / n) fit its uplink "
     "ports and spread evenly over the spines of its plane."),
    ("fabric.spines", "`count` divides by `planes`; `planes` divides `max_rails`; each spine has "
     "ports for every reserved (group, rail) block of its plane."),
    ("fabric.leafs.platform / spines.platform / platform_overrides", "A supported platform; "
     "overrides name existing leafs."),
    ("fabric.leafs.device_type / spines.device_type", "A netmiko device type of the platform: %s." % "; ".join(
        "%s: %s" % (platform, ", ".join("`%s`" % t for t in device_type_choices(platform)))
        for platform in sorted(PLATFORM_DEVICE_TYPES))),
    ("fabric.leafs.name_pattern / spines.name_pattern / servers.name_pattern", "Generated names match "
     "the object name allowlist and never collide with each other."),
    ("fabric.addressing", "Rail pools, the fabric link pool and loopback pools do not overlap and "
     "are large enough for every group, link and switch."),
    ("fabric.routing", "Table ids base..base+max_rails-1 avoid 0, 253, 254, 255; rule priorities "
     "avoid 0, 32766, 32767."),
]


class PortGroup(object):
    """Logical ports of one role (downlinks / uplinks) on a switch model: ``slots`` are (physical port,
    1-based sub-port) in port order; ``names_for(platform)`` is what that NOS calls them (the platform
    table's naming, or the model's ``port_name`` override). A name depends only on its own slot, so
    adding servers never renames a port."""

    __slots__ = ("slots", "speed_gbps", "breakout", "lanes", "physical", "override", "_names")

    def __init__(self, slots, speed_gbps, breakout, lanes, physical, override=None):
        self.slots = slots
        self.speed_gbps = speed_gbps
        self.breakout = breakout
        self.lanes = lanes
        self.physical = physical
        self.override = override
        self._names = {}

    def __len__(self):
        return len(self.slots)

    def names_for(self, platform):
        names = self._names.get(platform)
        if names is None:
            if self.override is not None:
                names = self.override
            else:
                names = [port_name(platform, port, sub, self.breakout, self.lanes) for port, sub in self.slots]
            self._names[platform] = names
        return names


class Layout(object):
    """Everything the planner derives from the intent before assigning addresses."""

    def __init__(self, intent):
        self.intent = intent


def _format(pattern, path, problems, **fields):
    # The schema already refused unknown fields and unbounded format specs (names.pattern_problem);
    # any exception left is still reported as a problem, never as a traceback.
    try:
        return pattern.format(**fields)
    except Exception as exc:  # noqa: BLE001 - user text drives str.format
        problems.append(FabricProblem(path, "cannot format %s (%s)" % (allow.shown(pattern), type(exc).__name__),
                                      "use only the fields %s" % ", ".join("{%s}" % f for f in sorted(fields))))
        return None


def _port_group(model_name, model, role, problems):
    spec = model.get(role)
    if not spec:
        return None
    physical = parse_port_list(spec["ports"])
    breakout, lanes = spec["breakout"], model.get("lanes") or 1
    if breakout > 1 and lanes > 1 and lanes % breakout:
        problems.append(FabricProblem("fabric.switch_models.%s.%s.breakout" % (model_name, role),
                                      "a %d-lane port cannot be split %d ways" % (lanes, breakout),
                                      "use a breakout that divides lanes (%s)" % ", ".join(
                                          str(n) for n in range(1, lanes + 1) if lanes % n == 0)))
        return None
    slots = [(port, sub) for port in physical for sub in range(1, breakout + 1)]
    override = None
    if model.get("port_name") is not None:
        override = []
        for port, sub in slots:
            fields = {"port": port, "lane": sub, "index": len(override)}
            name = _format(model["port_name"], "fabric.switch_models.%s.port_name" % model_name, problems, **fields)
            if name is None:
                return None
            override.append(name)
        if breakout > 1 and len(set(override)) != len(override):
            problems.append(FabricProblem("fabric.switch_models.%s.port_name" % model_name,
                                          "breakout ports get the same name",
                                          "add {lane} to port_name, e.g. 'Ethernet{port}/{lane}', or leave port_name out"))
            return None
    return PortGroup(slots, spec["speed_gbps"], breakout, lanes, physical, override)


def _first_duplicate(names):
    seen = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def _check_port_names(model_name, groups, platforms, problems):
    """Port names of one model: unique across its groups and within every platform's allowlist."""
    path = "fabric.switch_models.%s.port_name" % model_name
    by_role = [(role, group) for role, group in sorted(groups.items()) if group]
    for platform in sorted(platforms):
        if not _check_platform_port_names(path, by_role, platform, problems):
            return


def _check_platform_port_names(path, by_role, platform, problems):
    """True when the names ``platform`` gives the model's ports are unique and allowed."""
    for role, group in by_role:
        duplicate = _first_duplicate(group.names_for(platform))
        if duplicate is not None:
            problems.append(FabricProblem(path, "two %s get the name %s" % (role, allow.shown(duplicate)),
                                          "use {port} (and {lane} with breakout) in port_name"))
            return False
    if len(by_role) > 1:
        (role_a, group_a), (role_b, group_b) = by_role
        shared = set(group_a.names_for(platform)) & set(group_b.names_for(platform))
        if shared:
            problems.append(FabricProblem(path, "a port of %s and a port of %s are both named %s" % (
                role_a, role_b, allow.shown(sorted(shared)[0])),
                "use {port} rather than {index} in port_name ({index} restarts in every port group)"))
            return False
    for _role, group in by_role:
        for name in group.names_for(platform):
            problem = allow.port_name_problem(path, name, platform)
            if problem:
                problems.append(problem)
                return False
    return True


def _model_platforms(intent, role_path):
    """Platforms that will receive this role's port names (leaf overrides included)."""
    role = intent[role_path]
    platforms = set([role["platform"]])
    if role_path == "leafs":
        platforms.update(p for p in role["platform_overrides"].values() if isinstance(p, str))
    return set(p for p in platforms if _is_platform(p))


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
    _check_port_names(name, groups, _model_platforms(intent, role_path), problems)
    if all(groups.values()) and len(groups) > 1:
        down, up = set(groups["downlinks"].physical), set(groups["uplinks"].physical)
        if down & up:
            problems.append(FabricProblem("fabric.switch_models.%s.uplinks.ports" % name,
                                          "ports %s are both downlinks and uplinks" % sorted(down & up)[:8],
                                          "give each physical port one role"))
    return groups


def _naming_warnings(intent, role_groups):
    """A model's ``port_name`` replaces the platform's own naming: say so, per model and platform, where the names it
    gives differ from what the platform calls the same ports (fabric/platforms.py port_naming: rule, example), so a
    name copied from the example (``Ethernet{port}``) is checked against the switch before a push."""
    out = []
    for role_path, groups in role_groups:
        model_name = intent[role_path]["model"]
        model = intent["switch_models"].get(model_name) or {}
        for group in [g for g in (groups or {}).values() if g is not None and g.override is not None][:1]:
            for platform in sorted(_model_platforms(intent, role_path)):
                native = [port_name(platform, port, sub, group.breakout, group.lanes) for port, sub in group.slots]
                if native == group.override:
                    continue
                naming = PLATFORMS[platform]["port_naming"]
                warning = ("fabric.switch_models.%s.port_name %r names the %s ports of %s switches %s, ...; %s names "
                           "them by %s (e.g. %s; with this model's lanes %d: %s, ...)%s. Check them against the switch "
                           "(its interface list), or leave port_name out for the platform's naming%s"
                           % (model_name, model.get("port_name"), role_path[:-1], platform, ", ".join(group.override[:2]),
                              platform, naming["rule"], naming["example"], group.lanes, ", ".join(native[:2]),
                              "" if naming["status"] == VERIFIED else " (unverified: %s)" % naming["source"],
                              " and set lanes to the cage's serdes lanes" if group.lanes == 1 else ""))
                if warning not in out:
                    out.append(warning)
    return out


def _server_count(servers, rails, problems):
    """How many servers the intent asks for, checked before a single name is generated."""
    if servers["names"] and servers["count"]:
        # Both given used to mean `count` was silently ignored.
        problems.append(FabricProblem("fabric.servers.count", "given together with servers.names",
                                      "remove count (names lists every server) or remove names"))
        return 0
    count = len(servers["names"]) if servers["names"] else servers["count"]
    if not count:
        problems.append(FabricProblem("fabric.servers", "neither names nor count is given",
                                      "add servers.count (with name_pattern) or servers.names"))
        return 0
    if count * rails > MAX_RAIL_NICS:
        problems.append(FabricProblem("fabric.servers.names" if servers["names"] else "fabric.servers.count",
                                      "%d servers x %d rails = %d rail NICs; one plan holds at most %d"
                                      % (count, rails, count * rails, MAX_RAIL_NICS),
                                      "split the fabric into several inventories or lower the count"))
        return 0
    return count


def _generated_names(pattern, path, problems, what, field_sets):
    """Names from ``pattern`` for each field set; stops at the first one the allowlist refuses."""
    names = []
    for fields in field_sets:
        name = _format(pattern, path, problems, **fields)
        if name is None:
            return None
        problem = allow.object_name_problem(path, name, "generated %s name" % what)
        if problem:
            problems.append(problem)
            return None
        names.append(name)
    return names


def _server_names(servers, problems):
    if servers["names"]:
        names = list(servers["names"])
        path = "fabric.servers.names"
    else:
        first = servers["first_index"]
        path = "fabric.servers.name_pattern"
        names = _generated_names(servers["name_pattern"], path, problems, "server",
                                 ({"index": first + offset} for offset in range(servers["count"])))
        if names is None:
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
        if nic["gpu"] is not None and nic["gpu"] >= intent["servers"]["gpus"]:
            problems.append(FabricProblem("fabric.servers.nics[%d].gpu" % index,
                                          "GPU %d does not exist: servers have %d GPUs (0..%d)"
                                          % (nic["gpu"], intent["servers"]["gpus"], intent["servers"]["gpus"] - 1),
                                          "use a GPU index below servers.gpus, or raise servers.gpus"))
    rails = len(nics)
    if intent["rails"] is not None and intent["rails"] != rails:
        problems.append(FabricProblem("fabric.rails", "rails is %d but servers.nics lists %d NICs"
                                      % (intent["rails"], rails), "list one NIC per rail or correct rails"))
    if rails > intent["max_rails"]:
        problems.append(FabricProblem("fabric.max_rails", "%d rails exceed max_rails %d" % (rails, intent["max_rails"]),
                                      "raise max_rails (before the fabric is built: it lays out spine ports)"))


def _is_platform(value):
    return isinstance(value, str) and value in PLATFORM_DEVICE_TYPES


def _unknown_platform(path, platform, known):
    if isinstance(platform, str) and platform in RETIRED:
        return FabricProblem(path, RETIRED[platform][0], RETIRED[platform][1])
    return FabricProblem(path, "unknown NOS %s" % allow.shown(platform), "use one of %s" % known)


def _check_platform_names(intent, problems):
    known = ", ".join(sorted(PLATFORM_DEVICE_TYPES))
    for role in ("leafs", "spines"):
        platform = intent[role]["platform"]
        if platform not in PLATFORM_DEVICE_TYPES:
            problems.append(_unknown_platform("fabric.%s.platform" % role, platform, known))
        _check_device_type(intent, role, problems)


def _check_device_type(intent, role, problems):
    """device_type reaches netmiko's ConnectHandler: only the types of the role's platform."""
    device_type = intent[role]["device_type"]
    choices = device_type_choices(intent[role]["platform"])
    if device_type is not None and choices and device_type not in choices:
        problems.append(FabricProblem("fabric.%s.device_type" % role,
                                      "%s is not a netmiko device type of platform %s"
                                      % (allow.shown(device_type), intent[role]["platform"]),
                                      "remove it (the platform's default is %s) or use one of %s"
                                      % (choices[0], ", ".join(choices))))


def _check_platform_overrides(intent, leaf_names, problems):
    known = ", ".join(sorted(PLATFORM_DEVICE_TYPES))
    for leaf, platform in intent["leafs"]["platform_overrides"].items():
        path = "fabric.leafs.platform_overrides.%s" % (leaf,)
        if leaf not in leaf_names:
            problems.append(FabricProblem(path, "no leaf is named %s" % allow.shown(leaf), "use a leaf name from the plan"))
        if not _is_platform(platform):
            problems.append(_unknown_platform(path, platform, known))


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


def _check_name_collisions(intent, lay, problems):
    """Each generated name once: the first name two devices share, with both devices and the fix."""
    owners = {}
    devices = ([(name, "server %s" % name, "fabric.servers.name_pattern") for name in lay.server_names]
               + [(name, "the leaf of group %d rail %d" % (group + 1, rail), "fabric.leafs.name_pattern")
                  for name, group, rail in lay.leafs]
               + [(name, "spine %d of plane %d" % (index + 1, plane + 1), "fabric.spines.name_pattern")
                  for name, plane, index in lay.spines])
    for name, device, path in devices:
        if name not in owners:
            owners[name] = (device, path)
            continue
        first, first_path = owners[name]
        pattern = intent["leafs"]["name_pattern"]
        if path == "fabric.leafs.name_pattern" and first_path == path and "{group" not in pattern:
            fix = ("put {group} in it (the fabric has %d server groups), e.g. %r; the leafs of group 1 get new names: "
                   "rename them in the inventory" % (lay.groups, "leaf{group}-{rail}"))
        elif path == "fabric.leafs.name_pattern" and first_path == path and "{rail" not in pattern:
            fix = "put {rail} in it, e.g. %r" % "leaf{group}-{rail}"
        else:
            fix = "make the name patterns give every server, leaf and spine its own name (leafs need {group} and {rail}, spines {index})"
        problems.append(FabricProblem(path, "%s and %s are both named %r (%s %r)"
                                      % (first, device, name, path.rsplit(".", 1)[-1], intent[path.split(".")[1]]["name_pattern"]),
                                      fix))
        return


def build_layout(intent):
    """Validate cross-key rules and derive counts, names and slots. Raises FabricError."""
    problems = []
    lay = Layout(intent)
    servers = intent["servers"]
    _check_nics(intent, problems)
    _check_routing(intent, problems)
    lay.rails = len(servers["nics"])
    server_count = _server_count(servers, lay.rails, problems)
    lay.max_rails = intent["max_rails"]
    lay.ratio = parse_ratio(intent["oversubscription"])

    _check_platform_names(intent, problems)
    leaf_ports = _switch_model(intent, "leafs", ("downlinks", "uplinks"), problems) or {}
    spine_ports = _switch_model(intent, "spines", ("downlinks",), problems) or {}
    lay.naming_warnings = [] if problems else _naming_warnings(intent, (("leafs", leaf_ports), ("spines", spine_ports)))
    if not server_count or not leaf_ports or not spine_ports or not all(leaf_ports.values()) \
            or not all(spine_ports.values()):
        raise FabricError(problems)
    lay.leaf_down, lay.leaf_up = leaf_ports["downlinks"], leaf_ports["uplinks"]
    lay.spine_down = spine_ports["downlinks"]

    spg = servers["servers_per_group"] or len(lay.leaf_down)
    lay.servers_per_group = spg
    if spg > len(lay.leaf_down):
        problems.append(FabricProblem("fabric.servers.servers_per_group",
                                      "%d servers per group but leaf model %r has %d downlinks"
                                      % (spg, intent["leafs"]["model"], len(lay.leaf_down)),
                                      "lower servers_per_group or use a leaf model with more downlinks (or breakout)"))
    nic_speed = max(nic["speed_gbps"] for nic in servers["nics"])
    if nic_speed > lay.leaf_down.speed_gbps:
        problems.append(FabricProblem("fabric.servers.nics", "NIC speed %dG exceeds leaf downlink speed %dG"
                                      % (nic_speed, lay.leaf_down.speed_gbps),
                                      "use a leaf downlink speed >= the NIC speed"))
    lay.nic_speed = nic_speed
    lay.groups = max(1, -(-server_count // spg))

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
    if lay.uplinks_per_leaf > len(lay.leaf_up):
        problems.append(FabricProblem("fabric.oversubscription",
                                      "%s needs %d uplinks of %dG per leaf (%d servers x %dG) but the leaf has %d"
                                      % (intent["oversubscription"], lay.uplinks_per_leaf, lay.leaf_up.speed_gbps, spg,
                                         nic_speed, len(lay.leaf_up)),
                                      "raise the ratio, lower servers_per_group or add uplink ports"))
    # Round uplinks up to a multiple of the plane's spines so each spine gets the same share.
    per_spine = -(-lay.uplinks_per_leaf // lay.spines_per_plane)
    if per_spine * lay.spines_per_plane > len(lay.leaf_up):
        problems.append(FabricProblem("fabric.spines.count",
                                      "%d uplinks cannot spread evenly over %d spines per plane with %d uplink ports"
                                      % (lay.uplinks_per_leaf, lay.spines_per_plane, len(lay.leaf_up)),
                                      "use a spine count per plane that divides the leaf's uplinks"))
    lay.uplinks_per_leaf = per_spine * lay.spines_per_plane
    lay.uplinks_per_spine = per_spine
    top_slot = (lay.groups - 1) * lay.rail_slots_per_plane + min(lay.rails, lay.rail_slots_per_plane)
    spine_ports_needed = top_slot * per_spine
    if spine_ports_needed > len(lay.spine_down):
        problems.append(FabricProblem("fabric.spines.model",
                                      "each spine needs %d leaf-facing ports (%d groups x %d rail slots x %d) but model %r has %d"
                                      % (spine_ports_needed, lay.groups, lay.rail_slots_per_plane, per_spine,
                                         spines["model"], len(lay.spine_down)),
                                      "add spines or planes, use a larger spine model, or lower max_rails"))

    # Names: from the counts above, also when a count does not fit yet, so a name collision the growth brings (leafs
    # named without {group} once a second group exists) is reported with the capacity problems, not after their fix.
    lay.server_names = _server_names(servers, problems)
    leaf_keys = [(group, rail) for group in range(lay.groups) for rail in range(lay.rails)]
    leaf_names = _generated_names(intent["leafs"]["name_pattern"], "fabric.leafs.name_pattern", problems, "leaf",
                                  ({"group": group + 1, "rail": rail} for group, rail in leaf_keys))
    spine_keys = [(plane, index) for plane in range(planes) for index in range(lay.spines_per_plane)]
    spine_names = _generated_names(spines["name_pattern"], "fabric.spines.name_pattern", problems, "spine",
                                   ({"index": plane * lay.spines_per_plane + index + 1, "plane": plane + 1}
                                    for plane, index in spine_keys))
    if leaf_names is None or spine_names is None or not lay.server_names:
        raise FabricError(problems)
    lay.leafs = [(name, group, rail) for name, (group, rail) in zip(leaf_names, leaf_keys)]
    lay.spines = [(name, plane, index) for name, (plane, index) in zip(spine_names, spine_keys)]
    _check_name_collisions(intent, lay, problems)
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
