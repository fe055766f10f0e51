# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric intent schema: one definition that both validates and documents.

``FABRIC_SCHEMA`` is walked by :func:`normalize` (type checks, unknown keys, defaults) and by
:func:`render_markdown` (docs/fabric-schema.md). Cross-key rules (overlaps, sizes, counts) live
in ``validate.py`` because they need the whole intent.

We do not use jsonschema here: it is not a runtime dependency of ansible-core, and its error
texts do not carry our key paths and fixes.
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import names as allow
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError, FabricProblem
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import opt_in_keys

REQUIRED = object()

# Digit counts are capped so int() never meets a 10^4-digit text (Python refuses those, ValueError).
_RATIO_RE = re.compile(r"^\s*(\d{1,6})\s*:\s*1\s*$")
_RANGE_RE = re.compile(r"^\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?$")

# Bounds checked before anything is expanded or generated: a port range like 1-2000000000 or a
# count of 10^9 would otherwise exhaust memory or time before any capacity rule could refuse it.
MAX_PORT_NUMBER = 4096     # above any fixed or modular switch's front-panel numbering
MAX_SERVERS = 65536        # 524K GPUs at 8 per server; the planner benchmark plans 131K GPUs
MAX_SPINES = 4096


def parse_ratio(value):
    """'7:1' -> 7. Returns None when the text is not 'n:1' with n >= 1."""
    match = _RATIO_RE.match(str(value))
    if not match or int(match.group(1)) < 1:
        return None
    return int(match.group(1))


def _port_ranges(value):
    """[(first, last)] of a port list, or (None, reason). Nothing is expanded here."""
    if isinstance(value, bool):
        return None, "not a port list"
    if isinstance(value, int):
        return [(value, value)], None
    if isinstance(value, list):
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return None, "a port list holds whole numbers only"
        return [(v, v) for v in value], None
    if not isinstance(value, str) or not value.strip():
        return None, "not a port list"
    ranges = []
    for part in value.split(","):
        match = _RANGE_RE.match(part)
        if not match:
            return None, "%r is not a port or a range" % part.strip()
        first = int(match.group(1))
        ranges.append((first, int(match.group(2) or first)))
    return ranges, None


def port_list_problem(value):
    """Why ``value`` is not a usable port list (None when it is): bounds and overlaps first."""
    ranges, reason = _port_ranges(value)
    if ranges is None:
        return reason
    if not ranges:
        return "empty port list"
    for first, last in ranges:
        if first < 1 or last < first:
            return "range %d-%d is empty or starts below 1" % (first, last)
        if last > MAX_PORT_NUMBER:
            return "port %d is above %d" % (last, MAX_PORT_NUMBER)
    ordered = sorted(ranges)
    for (first_a, last_a), (first_b, _last_b) in zip(ordered, ordered[1:]):
        if first_b <= last_a:
            # Overlaps used to be merged silently, hiding a typo in the port plan.
            return "port %d is listed twice" % first_b
    return None


def parse_port_list(value):
    """'1-32' / '1-4,9,11-12' / [1, 2] -> sorted unique physical port numbers, or None."""
    if port_list_problem(value) is not None:
        return None
    ranges, _reason = _port_ranges(value)
    ports = []
    for first, last in sorted(ranges):
        ports.extend(range(first, last + 1))
    return ports


class Key(object):
    """A leaf value in the intent."""

    def __init__(self, kind, doc, default=REQUIRED, example=None, drives="", choices=None,
                 minimum=None, maximum=None, check=None, rule="", max_items=None):
        # check(path, value) -> FabricProblem or None: the allowlist of a string (per list item for
        # kind "list"); rule: its one-line description for the docs.
        self.check = check
        self.rule = rule
        self.max_items = max_items
        self.kind = kind
        self.doc = doc
        self.default = default
        self.example = example
        self.drives = drives
        self.choices = choices
        self.minimum = minimum
        self.maximum = maximum

    @property
    def required(self):
        return self.default is REQUIRED


class Section(object):
    """A mapping with known keys."""

    def __init__(self, doc, keys, required=False, drives=""):
        self.doc = doc
        self.keys = keys
        self.default = REQUIRED if required else None
        self.drives = drives

    @property
    def required(self):
        return self.default is REQUIRED


class ListOf(object):
    """A list whose items are Sections."""

    def __init__(self, item, doc, required=False, min_items=0, drives="", max_items=None):
        self.item = item
        self.doc = doc
        self.default = REQUIRED if required else []
        self.min_items = min_items
        self.max_items = max_items
        self.drives = drives

    @property
    def required(self):
        return self.default is REQUIRED


class MapOf(object):
    """A mapping of user-chosen names to Sections."""

    def __init__(self, item, doc, required=False, drives=""):
        self.item = item
        self.doc = doc
        self.default = REQUIRED if required else {}
        self.drives = drives

    @property
    def required(self):
        return self.default is REQUIRED


MAX_SPEED_GBPS = 12800  # Gb/s; room above 1.6T ports, a bound on the bandwidth arithmetic
PORT_FIELDS = ("port", "lane", "index")
PATTERN_RULE = ("Only the listed fields, no attribute or index lookups, format spec at most zero padding "
                "and a width up to 99 (e.g. `{index:03d}`).")
OBJECT_RULE = ("Matches `%s`, has no `..`, at most %d characters (a file name, a hostname and a CLI word)."
               % (allow.OBJECT_NAME_RE.pattern, allow.OBJECT_NAME_MAX))
GENERATED_RULE = "Generated names match `%s`, have no `..` and at most %d characters." % (
    allow.OBJECT_NAME_RE.pattern, allow.OBJECT_NAME_MAX)
NETDEV_RULE = "A Linux interface name: matches `%s`, at most %d characters (IFNAMSIZ)." % (
    allow.LINUX_IFNAME_RE.pattern, allow.LINUX_IFNAME_MAX)
DEVICE_TYPE_RULE = "One of the netmiko device types of the platform (docs/platforms.md)."

PORT_GROUP = Section("A set of logical ports on a switch model.", {
    "ports": Key("ports", "Physical port numbers: a range text `1-32`, a comma list `1-4,9` or a "
                 "YAML list of integers.", example="1-32",
                 rule="Numbers 1..%d, each listed once (overlapping ranges are an error)." % MAX_PORT_NUMBER,
                 drives="Which physical ports carry this role; cabling walks them in order."),
    "breakout": Key("int", "Logical ports per physical port (1 = no breakout, 2 = 2x200G from "
                    "a 400G port, ...).", default=1, minimum=1, maximum=8, example=2,
                    drives="Logical port count and names (breakout children, see docs/platforms.md)."),
    "speed_gbps": Key("int", "Speed of one logical port in Gb/s.", minimum=1, maximum=MAX_SPEED_GBPS, example=400,
                      drives="Oversubscription arithmetic and cabling labels."),
}, required=True)

SWITCH_MODEL = Section("One switch hardware model and how its ports are used.", {
    "lanes": Key("int", "Serdes lanes of one physical port (SFP 1, QSFP28 4, QSFP-DD/OSFP 8). With `breakout` it "
                 "gives the device's own port names (docs/platforms.md: EOS names a logical port after its first "
                 "lane, SONiC native naming counts lanes).", default=1, minimum=1, maximum=8, example=8,
                 rule="`breakout` divides `lanes` (or `lanes` is 1: a virtual lab port).",
                 drives="Device port names (EOS `/1` and `/5` for 2x200G on 8 lanes; SONiC `Ethernet<lane>`)."),
    "port_name": Key("str", "Overrides the platform's port naming (docs/platforms.md) for every platform using "
                     "the model: a Python format string with `{port}` (physical number), `{lane}` (1-based "
                     "breakout lane), `{index}` (0-based position in the whole model). Leave it out so each "
                     "NOS gets the names the device itself shows.",
                     default=None, example="Ethernet{port}/{lane}",
                     check=lambda path, value: allow.pattern_problem(path, value, PORT_FIELDS),
                     rule=PATTERN_RULE + " Every port name of the model is unique and matches `%s` (at most %d "
                     "characters; on `nvue` a Linux interface name of at most %d), and none is a management port "
                     "(`Management1`, `mgmt0`, `eth0`, ...: `%s`)."
                     % (allow.PORT_NAME_RE.pattern, allow.PORT_NAME_MAX, allow.LINUX_IFNAME_MAX, allow.MGMT_PORT_RE.pattern),
                     drives="Interface names in cabling, switch configs and PBR rules."),
    "downlinks": Section("Host-facing ports (leaf) or leaf-facing ports (spine).",
                         PORT_GROUP.keys, required=False),
    "uplinks": Section("Spine-facing ports (leaf only).", PORT_GROUP.keys, required=False),
}, required=True)

NIC = Section("One rail NIC of a GPU server; list order is rail order (first = rail 0).", {
    "netdev": Key("str", "Linux interface name of the NIC on the host.", example="eth1",
                  check=allow.rail_netdev_problem, rule=NETDEV_RULE + " Not the loopback `lo`.",
                  drives="Host addresses, MTU, routing tables and rules; NCCL_SOCKET_IFNAME."),
    "rdma": Key("str", "RDMA device name (`ibv_devices`).", example="mlx5_0", check=allow.rdma_problem,
                rule="Matches `%s`, at most %d characters." % (allow.LINUX_IFNAME_RE.pattern, allow.RDMA_NAME_MAX),
                drives="NCCL_IB_HCA order; RDMA checks and QoS."),
    "speed_gbps": Key("int", "Port speed in Gb/s.", default=400, minimum=1, maximum=MAX_SPEED_GBPS, example=400,
                      drives="Oversubscription and uplink count per leaf; link-speed checks."),
    "gpu": Key("int", "Index of the GPU this NIC serves (PCIe-closest).", default=None, minimum=0,
               maximum=63, example=0, rule="Below `servers.gpus`.", drives="GPU<->NIC affinity checks (NODE/PIX expectations)."),
})

STACK = Section("The servers' GPU and RoCE NIC stack: which collective library's GPUDirect rules (NCCL for NVIDIA, "
                "RCCL for AMD) and which NIC driver's modules apply (docs/host-rdma.md, \"Host stacks\"). A key left "
                "out is detected on each host.", {
                    "gpu_vendor": Key("str", "GPU vendor of the servers.", default=None, choices=["nvidia", "amd"],
                                      example="amd", drives="GPUDirect RDMA rules (NCCL or RCCL), GPU discovery, RCCL_* settings."),
                    "nic_driver": Key("str", "RoCE NIC driver of the rail NICs.", default=None,
                                      choices=["mlx5", "bnxt_re", "irdma", "ionic"], example="bnxt_re",
                                      drives="Kernel modules host_preflight requires; host QoS tooling."),
                }, required=False)

FABRIC_SCHEMA = Section("The fabric intent: the one source of truth, in inventory group_vars.", {
    "name": Key("str", "Fabric name; used in reports, labels and artifact file names.",
                example="lab", drives="Artifact names, cable labels.",
                check=allow.object_name_problem, rule=OBJECT_RULE),
    "servers": Section("GPU servers and their rail NICs.", {
        "names": Key("list", "Explicit server names, in slot order. Give either this or "
                     "`name_pattern` + `count`. Append new servers at the end: order is slot order.",
                     default=None, example=["gpu-a01", "gpu-a02"], max_items=MAX_SERVERS,
                     check=lambda path, value: allow.object_name_problem(path, value, "server name", allow.SERVER_NAME_MAX),
                     rule="Not together with `count`. At most %d names; each matches `%s`, has no `..` and at most %d "
                     "characters." % (MAX_SERVERS, allow.OBJECT_NAME_RE.pattern, allow.SERVER_NAME_MAX),
                     drives="Host names, slots, addresses."),
        "name_pattern": Key("str", "Python format string with `{index}` to generate names.",
                            default="gpu{index:03d}", example="gpu{index:02d}",
                            check=lambda path, value: allow.pattern_problem(path, value, ("index",)),
                            rule=PATTERN_RULE + " Generated names follow the `names` rule.",
                            drives="Server names when `names` is not given."),
        "count": Key("int", "Number of servers generated from `name_pattern`.", default=None,
                     minimum=1, maximum=MAX_SERVERS, example=64, rule="Not together with `names`.", drives="Server count, groups, leaf count."),
        "first_index": Key("int", "`{index}` of the first generated server.", default=1,
                           minimum=0, maximum=999999, example=1, drives="Server names."),
        "gpus": Key("int", "GPUs per server.", default=8, minimum=1, maximum=64, example=8,
                    drives="GPU totals in sizing; NIC<->GPU checks."),
        "mgmt_interface": Key("str", "Management interface: never touched by this collection.",
                              default="eth0", example="eno1", check=allow.netdev_problem, rule=NETDEV_RULE,
                              drives="Safety checks; NCCL_SOCKET_IFNAME default."),
        "servers_per_group": Key("int", "Scalable-unit size: servers under one set of rail leafs. "
                                 "Default: the leaf model's downlink count. Fix it before the "
                                 "fabric grows: changing it renumbers.", default=None, minimum=1, maximum=MAX_SERVERS,
                                 example=32, drives="Groups, leaf count, per-leaf subnets, PPD ratio."),
        "stack": STACK,
        "nics": ListOf(NIC, "Rail NICs, identical on every server; index = rail.", required=True,
                       min_items=1, max_items=64, drives="Rails, addresses, tables, NCCL_IB_HCA."),
    }, required=True),
    "rails": Key("int", "Number of rails. Optional; when given it must equal the NIC count.",
                 default=None, minimum=1, maximum=64, example=8, drives="Consistency check only."),
    "max_rails": Key("int", "Rails the fabric is designed to grow to. Spine port blocks are "
                     "reserved per rail slot so adding a rail renumbers nothing.", default=8,
                     minimum=1, maximum=64, example=8, drives="Spine port and loopback layout."),
    "oversubscription": Key("ratio", "Leaf downlink:uplink bandwidth, `n:1`.", default="1:1",
                            example="7:1", drives="Uplinks per leaf and PPD n:1 binding."),
    # each platform's opt-in key, with its doc, from its platform entry (fabric/platforms.py ``opt_in``)
    **dict((o["key"], Key("str", o["doc"], default=o["default"], choices=o["choices"], example=o["example"],
                          drives=o["drives"])) for o in opt_in_keys()),
    "switch_models": MapOf(SWITCH_MODEL, "Switch hardware models by name.", required=True,
                           drives="Port names and counts for leafs and spines."),
    "leafs": Section("Rail leafs: one per rail per server group.", {
        "model": Key("str", "Name of an entry in `switch_models`.", example="leaf-64x400",
                     drives="Downlink/uplink ports."),
        "name_pattern": Key("str", "Format string; fields `{group}` (1-based), `{rail}` (0-based).",
                            default="leaf-g{group}-r{rail}", example="su{group}-rail{rail}",
                            check=lambda path, value: allow.pattern_problem(path, value, ("group", "rail")),
                            rule=PATTERN_RULE + " " + GENERATED_RULE,
                            drives="Leaf names."),
        "platform": Key("str", "Switch OS of the leafs: one of the platforms in docs/platforms.md.",
                        default="eos", example="nvue", drives="NOS driver, netmiko device_type."),
        "device_type": Key("str", "netmiko device_type; default follows `platform`.", default=None,
                           example="arista_eos", drives="netmiko sessions.", rule=DEVICE_TYPE_RULE),
        "platform_overrides": Key("dict", "Per-leaf platform, by leaf name.", default={},
                                  example={"leaf-g1-r1": "nvue"},
                                  drives="Mixed-vendor fabrics (the lab uses one NOS per leaf)."),
    }, required=True),
    "spines": Section("Spines; each leaf connects to every spine of its plane.", {
        "model": Key("str", "Name of an entry in `switch_models`.", example="spine-64x800",
                     drives="Spine ports."),
        "count": Key("int", "Total spines.", minimum=1, maximum=MAX_SPINES, example=2, drives="Spine count."),
        "planes": Key("int", "Spine planes. Rails are split into equal contiguous blocks, one "
                      "per plane; leafs of a rail connect only to their plane's spines.",
                      default=1, minimum=1, maximum=64, example=1, drives="Leaf-spine cabling."),
        "name_pattern": Key("str", "Format string; fields `{index}` (1-based), `{plane}` (1-based).",
                            default="spine{index:02d}", example="spine-p{plane}-{index}",
                            check=lambda path, value: allow.pattern_problem(path, value, ("index", "plane")),
                            rule=PATTERN_RULE + " " + GENERATED_RULE,
                            drives="Spine names."),
        "platform": Key("str", "Switch OS of the spines: one of the platforms in docs/platforms.md.", default="eos", example="nxos",
                        drives="NOS driver, netmiko device_type."),
        "device_type": Key("str", "netmiko device_type; default follows `platform`.", default=None,
                           example="arista_eos", drives="netmiko sessions.", rule=DEVICE_TYPE_RULE),
    }, required=True),
    "addressing": Section("IPv4 addressing of rails, fabric links and loopbacks.", {
        "scheme": Key("str", "`subnet_per_leaf` (scheme A: one subnet per rail per leaf, gateway "
                      "on the leaf) or `p2p` (scheme B: a /31 per NIC, the leaf port is the peer).",
                      default="subnet_per_leaf", choices=["subnet_per_leaf", "p2p"],
                      example="p2p", drives="Host addresses, gateways, leaf port addresses."),
        "rail_pools": Key("cidrs", "One IPv4 pool per rail (index = rail). Give this or `supernet`.",
                          default=None, example=["10.100.0.0/16", "10.101.0.0/16"],
                          drives="Every rail NIC address and gateway."),
        "supernet": Key("cidr", "Pool split into one `rail_prefixlen` block per rail slot.",
                        default=None, example="10.64.0.0/10", drives="Rail pools when not listed."),
        "rail_prefixlen": Key("int", "Prefix length of each rail pool cut from `supernet`.",
                              default=16, minimum=8, maximum=30, example=16, drives="Rail pools."),
        "gateway": Key("str", "Scheme A: gateway at the `first` or `last` usable address of "
                       "each leaf subnet.", default="last", choices=["first", "last"],
                       example="last", drives="Gateway and host offsets."),
        "fabric_link_pool": Key("cidr", "Pool of /31s for leaf-spine links.",
                                example="10.254.0.0/16", drives="Uplink addresses, PPD next hops."),
        "leaf_loopback_pool": Key("cidr", "Pool of /32 leaf loopbacks.", example="10.255.0.0/24",
                                  drives="Router ids / loopbacks."),
        "spine_loopback_pool": Key("cidr", "Pool of /32 spine loopbacks.", example="10.255.1.0/24",
                                   drives="Router ids / loopbacks."),
    }, required=True),
    "underlay": Section("Routed underlay between leafs and spines: eBGP per RFC 7938 (docs/underlay.md).", {
        "spine_asn_base": Key("int", "ASN of spine plane 1; plane p uses base + p - 1 (all spines of a plane share it).",
                              default=4200000000, minimum=1, maximum=4294967294, example=65000,
                              rule="Private (RFC 6996), below `leaf_asn_base`.", drives="Spine `router bgp` ASN."),
        "leaf_asn_base": Key("int", "ASN of leaf slot 0; a leaf uses base + slot (slot = group * max_rails + rail), "
                             "so adding a group renumbers nothing.", default=4200001000, minimum=1, maximum=4294967294,
                             example=65100, rule="Private (RFC 6996); base + highest slot stays private.",
                             drives="Leaf `router bgp` ASN."),
        "maximum_paths": Key("int", "ECMP paths BGP installs per prefix.", default=64, minimum=1, maximum=128,
                             example=64, drives="`maximum-paths`."),
        "multipath_relax": Key("bool", "Treat equal-length AS paths through different ASNs as ECMP "
                               "(needed when spines of different planes or leafs differ in ASN).", default=True,
                               example=True, drives="`bgp bestpath as-path multipath-relax`."),
        "keepalive_seconds": Key("int", "BGP keepalive interval.", default=3, minimum=1, maximum=3600, example=3,
                                 drives="`timers bgp`."),
        "hold_seconds": Key("int", "BGP hold time.", default=9, minimum=3, maximum=65535, example=9,
                            rule="At least 3 x `keepalive_seconds`.", drives="`timers bgp`."),
        "spine_allowas_in": Key("int", "How many times a spine accepts its own (plane) ASN in a path from a leaf; "
                                "0 turns it off. 1 lets a spine that lost its links to a leaf reach it through "
                                "another leaf and a sibling spine, so a PPD pin to that spine does not blackhole "
                                "(docs/underlay.md#when-a-spine-loses-a-leaf).", default=1, minimum=0, maximum=10,
                                example=1, drives="Spine `neighbor ... allowas-in N` towards every leaf."),
        "host_vlan": Key("int", "Scheme A: VLAN of the leaf's host ports; its SVI holds the rail gateway.",
                         default=100, minimum=2, maximum=4094, example=100, drives="Leaf SVI and PBR ingress."),
    }),
    "routing": Section("Host policy routing (IRM).", {
        "table_base": Key("int", "Routing table id of rail 0; rail r uses base + r.", default=100,
                          minimum=1, maximum=2 ** 31, example=100, drives="Per-NIC tables."),
        "rule_priority_base": Key("int", "`ip rule` priority of rail 0; rail r uses base + r.",
                                  default=1000, minimum=1, maximum=32765, example=1000,
                                  drives="Per-NIC rules."),
    }),
    "qos": Section("RoCE QoS shared by hosts and switches.", {
        "profile": Key("str", "Named QoS profile (see docs/qos.md).", default="roce_lossless",
                       example="roce_lossless", drives="Host and switch QoS."),
        "overrides": Key("dict", "Keys of the profile to override.", default={},
                         example={"ecn_min_kbytes": 150}, drives="Host and switch QoS."),
    }),
    "nccl": Section("NCCL environment hints derived from the plan.", {
        "gid_index": Key("int", "RoCEv2 GID index NCCL must use; unset (the default) leaves NCCL_IB_GID_INDEX out: "
                         "NCCL >= 2.21 finds the RoCEv2 GID of the interface address itself, and real NICs carry it at "
                         "other indexes than 3.", default=None,
                         minimum=0, maximum=255, example=3, drives="NCCL_IB_GID_INDEX (only when set)."),
        "socket_ifname": Key("str", "NCCL_SOCKET_IFNAME; default `=` and the management interface (exact match).",
                             default=None, example="eno1", drives="NCCL_SOCKET_IFNAME.",
                             check=allow.socket_ifname_problem,
                             rule="Comma list of interface names or prefixes, optionally led by `^` or `=`."),
    }),
}, required=True)


def _check_scalar(key, value, path):
    """Return (normalised value, problem or None) for one leaf value: type, bounds, then allowlist."""
    value, problem = _check_type(key, value, path)
    if problem is None and key.check is not None:
        problem = _check_allowlist(key, value, path)
    return value, problem


def _check_allowlist(key, value, path):
    if key.kind != "list":
        return key.check(path, value)
    for index, item in enumerate(value):
        problem = key.check("%s[%d]" % (path, index), item)
        if problem:
            return problem
    return None


def _check_type(key, value, path):
    kind = key.kind
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return value, FabricProblem(path, "expected an integer, got %r" % (value,),
                                        "write a whole number, e.g. %r" % (key.example,))
        if key.minimum is not None and value < key.minimum:
            return value, FabricProblem(path, "%d is below the minimum %d" % (value, key.minimum),
                                        "use a value >= %d" % key.minimum)
        if key.maximum is not None and value > key.maximum:
            return value, FabricProblem(path, "%d is above the maximum %d" % (value, key.maximum),
                                        "use a value <= %d" % key.maximum)
    elif kind == "bool":
        if not isinstance(value, bool):
            return value, FabricProblem(path, "expected true or false, got %s" % allow.shown(value), "write true or false")
    elif kind == "str":
        if not isinstance(value, str) or not value:
            return value, FabricProblem(path, "expected a non-empty string, got %s" % allow.shown(value),
                                        "write a string, e.g. %r" % (key.example,))
        if key.choices and value not in key.choices:
            return value, FabricProblem(path, "%s is not one of %s" % (allow.shown(value), ", ".join(key.choices)),
                                        "use one of %s" % ", ".join(key.choices))
    elif kind == "ratio":
        if parse_ratio(value) is None:
            return value, FabricProblem(path, "%r is not an oversubscription ratio" % (value,),
                                        "write it as 'n:1' with n >= 1, e.g. '1:1' or '7:1'")
        value = "%d:1" % parse_ratio(value)
    elif kind == "cidr":
        return _check_cidr(value, path, key)
    elif kind == "cidrs":
        if not isinstance(value, list) or not value:
            return value, FabricProblem(path, "expected a list of IPv4 prefixes", "e.g. %r" % (key.example,))
        out = []
        for index, item in enumerate(value):
            net, problem = _check_cidr(item, "%s[%d]" % (path, index), key)
            if problem:
                return value, problem
            out.append(net)
        value = out
    elif kind == "ports":
        reason = port_list_problem(value)
        if reason is not None:
            return value, FabricProblem(path, "%s is not a port list: %s" % (allow.shown(value), reason),
                                        "write a range like '1-32', a list like '1-4,9', or [1, 2]; "
                                        "ports 1..%d, each once" % MAX_PORT_NUMBER)
    elif kind == "list":
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            return value, FabricProblem(path, "expected a list of non-empty strings", "e.g. %r" % (key.example,))
        if key.max_items is not None and len(value) > key.max_items:
            return value, FabricProblem(path, "%d items; at most %d" % (len(value), key.max_items),
                                        "list at most %d items" % key.max_items)
    elif kind == "dict":
        if not isinstance(value, dict):
            return value, FabricProblem(path, "expected a mapping", "e.g. %r" % (key.example,))
    return value, None


def _check_cidr(value, path, key):
    try:
        net = ipaddress.IPv4Network(str(value), strict=True)
    except ValueError as exc:
        return value, FabricProblem(path, "%r is not an IPv4 network prefix (%s)" % (value, exc),
                                    "write a network address with prefix length, e.g. %r" % (key.example,))
    return str(net), None


def _closest(name, options):
    import difflib
    match = difflib.get_close_matches(name, list(options), n=1)
    return (" (did you mean %r?)" % match[0]) if match else ""


def _normalize(node, value, path, problems):
    if isinstance(node, Key):
        normalised, problem = _check_scalar(node, value, path)
        if problem:
            problems.append(problem)
        return normalised
    if isinstance(node, Section):
        if not isinstance(value, dict):
            problems.append(FabricProblem(path, "expected a mapping, got %s" % type(value).__name__,
                                          "write %s as a mapping of keys" % path))
            return {}
        out = {}
        for name in value:
            if name not in node.keys:
                problems.append(FabricProblem("%s.%s" % (path, name), "unknown key" + _closest(str(name), node.keys),
                                              "remove it or correct its spelling; known keys: %s"
                                              % ", ".join(sorted(node.keys))))
        for name, child in node.keys.items():
            child_path = "%s.%s" % (path, name)
            if name in value and value[name] is not None:
                out[name] = _normalize(child, value[name], child_path, problems)
            elif child.required:
                problems.append(FabricProblem(child_path, "is required", "add %s (%s)" % (child_path, _short_doc(child))))
            elif isinstance(child, Section):
                # An absent optional section gets its defaults, unless it has required keys
                # (then absent means "not used", e.g. a spine model without uplinks).
                has_required = any(getattr(k, "required", False) for k in child.keys.values())
                out[name] = None if has_required else _normalize(child, {}, child_path, problems)
            else:
                default = child.default
                out[name] = dict(default) if isinstance(default, dict) else (list(default) if isinstance(default, list) else default)
        return out
    if isinstance(node, ListOf):
        if not isinstance(value, list):
            problems.append(FabricProblem(path, "expected a list", "write %s as a YAML list" % path))
            return []
        if node.max_items is not None and len(value) > node.max_items:
            problems.append(FabricProblem(path, "%d items; at most %d" % (len(value), node.max_items),
                                          "list at most %d entries in %s" % (node.max_items, path)))
            return []
        if len(value) < node.min_items:
            problems.append(FabricProblem(path, "needs at least %d item(s)" % node.min_items, "add entries to %s" % path))
        return [_normalize(node.item, item, "%s[%d]" % (path, index), problems) for index, item in enumerate(value)]
    if isinstance(node, MapOf):
        if not isinstance(value, dict) or not value:
            problems.append(FabricProblem(path, "expected a non-empty mapping of names", "define at least one entry under %s" % path))
            return {}
        out = {}
        for name, item in value.items():
            item_path = "%s.%s" % (path, name)
            problem = allow.object_name_problem(item_path, name)
            if problem:
                problems.append(problem)
                continue
            out[name] = _normalize(node.item, item, item_path, problems)
        return out
    raise TypeError("unknown schema node %r" % (node,))


def _short_doc(node):
    return node.doc.split(".")[0].strip()


def normalize(intent, path="fabric"):
    """Type-check ``intent`` against FABRIC_SCHEMA and fill defaults.

    Raises FabricError listing every problem; returns a new dict (the input is not modified).
    """
    problems = []
    out = _normalize(FABRIC_SCHEMA, intent, path, problems)
    if problems:
        raise FabricError(problems)
    return out


def _example_text(value):
    import json
    return "`%s`" % json.dumps(value) if value is not None else ""


def _default_text(node):
    if node.required:
        return "**required**"
    if isinstance(node, (Section,)):
        return "(section)"
    if node.default is None:
        return "-"
    return _example_text(node.default)


def _walk_rows(node, path, rows):
    if isinstance(node, Section):
        rows.append((path, "mapping", _default_text(node), "", node.doc, node.drives))
        for name, child in node.keys.items():
            _walk_rows(child, "%s.%s" % (path, name), rows)
    elif isinstance(node, ListOf):
        rows.append((path, "list of mappings", _default_text(node), "", node.doc, node.drives))
        for name, child in node.item.keys.items():
            _walk_rows(child, "%s[].%s" % (path, name), rows)
    elif isinstance(node, MapOf):
        rows.append((path, "mapping of names", _default_text(node), "", node.doc, node.drives))
        for name, child in node.item.keys.items():
            _walk_rows(child, "%s.NAME.%s" % (path, name), rows)
    else:
        kind = {"cidr": "IPv4 prefix", "cidrs": "list of IPv4 prefixes", "ports": "port list",
                "ratio": "ratio n:1"}.get(node.kind, node.kind)
        doc = node.doc
        if node.rule:
            doc += " " + node.rule
        if node.choices:
            doc += " Choices: %s." % ", ".join("`%s`" % c for c in node.choices)
        if node.minimum is not None or node.maximum is not None:
            doc += " Range: %s..%s." % (node.minimum if node.minimum is not None else "",
                                        node.maximum if node.maximum is not None else "")
        rows.append((path, kind, _default_text(node), _example_text(node.example), doc, node.drives))


def render_markdown():
    """The key-by-key reference in docs/fabric-schema.md, generated from FABRIC_SCHEMA."""
    rows = []
    _walk_rows(FABRIC_SCHEMA, "fabric", rows)
    out = [
        "# Fabric schema reference",
        "",
        "<!-- Generated by `make docs` from plugins/module_utils/fabric/schema.py. Do not edit. -->",
        "",
        "The fabric intent lives in inventory group_vars under the key `fabric` (see",
        "`inventories/lab/group_vars/all/fabric.yml`). Every key below is type-checked before",
        "anything runs; unknown keys are errors (with a spelling suggestion). Cross-key rules",
        "(pool overlaps and sizes, port counts, reserved table ids) are listed at the end.",
        "",
        "| key | type | default | example | meaning | drives |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        out.append("| %s |" % " | ".join(str(c).replace("|", "\\|") for c in (("`%s`" % row[0],) + row[1:])))
    out.append("")
    return "\n".join(out)
