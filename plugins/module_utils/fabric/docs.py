# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Generated reference pages: the fabric schema and its cross-key rules (docs/fabric-schema.md)."""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.layout import RULES, RESERVED_PRIORITIES, RESERVED_TABLES
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import PROFILES
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.schema import render_markdown


def schema_doc():
    out = [render_markdown(), "## Cross-key rules", "",
           "Checked after the types, all at once; each failure names the key and the fix.", "",
           "| key | rule |", "|---|---|"]
    out += ["| `%s` | %s |" % (key, rule) for key, rule in RULES]
    out += ["", "Reserved routing tables: %s. Reserved rule priorities: %s." % (
        ", ".join("%d (%s)" % item for item in sorted(RESERVED_TABLES.items())),
        ", ".join("%d (%s)" % item for item in sorted(RESERVED_PRIORITIES.items()))), ""]
    out += ["## QoS profiles", "", "Keys of `fabric.qos.overrides`; sources in [qos.md](qos.md).", ""]
    for name, profile in sorted(PROFILES.items()):
        out += ["### `%s`" % name, "", "| key | default |", "|---|---|"]
        out += ["| `%s` | `%s` |" % (key, profile[key]) for key in sorted(profile)]
        out += [""]
    out += ["Derived (not settable): `roce_tos` = roce_dscp << 2 | ECT(0) (26 -> 106), "
            "`dscp_to_priority` from the DSCP and priority keys.", ""]
    return "\n".join(out)
