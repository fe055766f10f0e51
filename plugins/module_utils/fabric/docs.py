# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Generated reference pages: the fabric schema and its cross-key rules (docs/fabric-schema.md)."""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import names as allow
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.layout import MAX_RAIL_NICS, RULES, RESERVED_PRIORITIES, RESERVED_TABLES
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import PROFILES, STRING_CHOICES
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.schema import MAX_PORT_NUMBER, MAX_SERVERS, render_markdown


def _names_section():
    """Why names are allowlisted and which characters each kind admits (one table, from the code)."""
    rows = [
        ("fabric `name`, `servers.names`, generated server/leaf/spine names, switch model names",
         "`%s`, no `..`; at most %d characters (servers: %d, they may be FQDNs)" % (
             allow.OBJECT_NAME_RE.pattern, allow.OBJECT_NAME_MAX, allow.SERVER_NAME_MAX),
         "artifact file names (`hosts/<name>.json`), hostnames, reports"),
        ("switch port names (`port_name` output)", "`%s`, no `..`; at most %d characters; not a management port "
         "(`%s`, case-insensitive)" % (allow.PORT_NAME_RE.pattern, allow.PORT_NAME_MAX, allow.MGMT_PORT_RE.pattern),
         "`interface ...` lines of every switch CLI"),
        ("ports of a model used by an `nvue` switch", "also a Linux interface name: `%s`, at most %d characters" % (
            allow.LINUX_IFNAME_RE.pattern, allow.LINUX_IFNAME_MAX), "`nv set interface ...` typed into bash"),
        ("`nics[].netdev`, `mgmt_interface`", "`%s`, at most %d characters (IFNAMSIZ); a rail NIC is not `%s`" % (
            allow.LINUX_IFNAME_RE.pattern, allow.LINUX_IFNAME_MAX, allow.LOOPBACK_IFNAME),
         "`ip` batches, sysfs paths, host boot scripts"),
        ("`nics[].rdma`", "`%s`, at most %d characters" % (allow.LINUX_IFNAME_RE.pattern, allow.RDMA_NAME_MAX),
         "configfs paths, NCCL_IB_HCA, host boot scripts"),
        ("`nccl.socket_ifname`", "`%s`" % allow.SOCKET_IFNAME_RE.pattern, "NCCL_SOCKET_IFNAME"),
        ("name patterns (`name_pattern`, `port_name`)", "only their documented fields; no `{a.b}` or `{a[0]}`; "
         "format spec at most fill/align, zero padding, width <= 99 and d/x/X/o/b", "every generated name"),
    ]
    out = ["## Names that reach devices, shells and paths", "",
           "Fabric strings end up in switch CLIs, in NVUE's bash session, in root boot scripts on the hosts and",
           "in artifact file names. Instead of escaping at each of those places, the schema admits only",
           "characters none of them treats specially (the host scripts and artifact writer quote and check",
           "paths as well). Each rule is checked before anything is generated; a failure names the key path.",
           "", "| names | allowed | reach |", "|---|---|---|"]
    out += ["| %s | %s | %s |" % (a, b.replace("|", "\\|"), c) for a, b, c in rows]
    out += ["", "Bounds checked before expansion or generation: port numbers 1..%d, each listed once; "
            "`servers.count` and `servers.names` at most %d; servers x rails at most %d rail NICs; "
            "the ranges of the other keys are in the key table." % (MAX_PORT_NUMBER, MAX_SERVERS, MAX_RAIL_NICS), ""]
    return out


def schema_doc():
    out = [render_markdown(), "## Cross-key rules", "",
           "Checked after the types, all at once; each failure names the key and the fix.", "",
           "| key | rule |", "|---|---|"]
    out += ["| `%s` | %s |" % (key, rule) for key, rule in RULES]
    out += ["", "Reserved routing tables: %s. Reserved rule priorities: %s." % (
        ", ".join("%d (%s)" % item for item in sorted(RESERVED_TABLES.items())),
        ", ".join("%d (%s)" % item for item in sorted(RESERVED_PRIORITIES.items()))), ""]
    out += _names_section()
    out += ["## QoS profiles", "", "Keys of `fabric.qos.overrides`; sources in [qos.md](qos.md). String keys take one "
            "of a fixed list: %s." % "; ".join("`%s`: %s" % (key, ", ".join("`%s`" % c for c in choices))
                                               for key, choices in sorted(STRING_CHOICES.items())), ""]
    for name, profile in sorted(PROFILES.items()):
        out += ["### `%s`" % name, "", "| key | default |", "|---|---|"]
        out += ["| `%s` | `%s` |" % (key, profile[key]) for key in sorted(profile)]
        out += [""]
    out += ["Derived (not settable): `roce_tos` = roce_dscp << 2 | ECT(0) (26 -> 106), "
            "`dscp_to_priority` from the DSCP and priority keys.", ""]
    return "\n".join(out)
