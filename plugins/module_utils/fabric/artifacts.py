# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render plan artifacts as text: cabling CSV, per-leaf binding tables, a Markdown report and a
Graphviz diagram. Pure: returns {relative path: text}. plan.json and the per-device slices are
written by the plan itself (planstore), not repeated here."""

from __future__ import annotations

import csv
import io

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import platforms
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.views import cabling
CABLE_FIELDS = ("label", "kind", "a_device", "a_port", "b_device", "b_port", "speed_gbps")
BINDING_FIELDS = ("ingress", "server", "source", "uplink", "spine", "next_hop", "exclude_destinations")
# Above this many servers the diagram shows one node per server group instead of per server.
DIAGRAM_SERVER_LIMIT = 16
# Above this many switches it shows one node per server group's leafs and per spine plane: past
# that a picture of every switch is unreadable, and Graphviz's layout time grows super-linearly
# (32K GPUs, 768 switches: ~92 s).
DIAGRAM_SWITCH_LIMIT = 96


def _csv(rows, fields):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    for row in rows:
        writer.writerow([" ".join(row[f]) if isinstance(row[f], list) else row[f] for f in fields])
    return out.getvalue()


def cabling_csv(plan):
    return _csv(cabling(plan), CABLE_FIELDS)


def binding_csv(leaf):
    """One row per bound port; exclude_destinations is the leaf's local destinations (never pinned)."""
    local = leaf.get("local_destinations") or []
    return _csv([dict(binding, exclude_destinations=local) for binding in leaf["bindings"]], BINDING_FIELDS)


def _table(headers, rows):
    lines = ["| %s |" % " | ".join(headers), "|%s|" % "|".join(["---"] * len(headers))]
    lines.extend("| %s |" % " | ".join(str(c) for c in row) for row in rows)
    return lines


def report_markdown(plan, host_rows=64, platform_notes=()):
    """``platform_notes``: report.md's lines on what each platform will not configure or cannot verify (the caller
    passes nos/capabilities.py report_lines: this package sits below the NOS drivers that declare it)."""
    sizing = plan["sizing"]
    qos = plan["qos"]
    out = ["# Fabric plan: %s" % plan["fabric"], ""]
    if sizing.get("warnings"):
        out += ["## Warnings", ""] + ["- **%s**" % warning for warning in sizing["warnings"]] + [""]
    out += list(platform_notes)
    out += ["## Sizing", ""]
    out += _table(("item", "value"), [
        ("GPU servers", sizing["servers"]), ("GPUs", sizing["gpus"]),
        ("rails (rail NICs per server)", "%d (%d GPUs per server)" % (sizing["rails"], sizing["gpus_per_server"])
         if "gpus_per_server" in sizing else sizing["rails"]),
        ("server groups (x %d servers)" % sizing["servers_per_group"], sizing["groups"]),
        ("leafs", sizing["leafs"]), ("spines (planes)", "%d (%d)" % (sizing["spines"], sizing["spine_planes"])),
        ("uplinks per leaf", sizing["uplinks_per_leaf"]),
        ("host links / fabric links", "%d / %d" % (sizing["host_links"], sizing["fabric_links"])),
        ("optics (one per cable end)", sizing["optics"]),
        ("leaf down:up bandwidth", "%dG : %dG (%s:1)" % (
            sizing["leaf_down_gbps"], sizing["leaf_up_gbps"], sizing["oversubscription_effective"])),
    ])
    out += ["", "Switch hops between GPUs on different servers: " + ", ".join(
        "%s = %s" % (k.replace("_", " "), "no path" if v is None else v) for k, v in sorted(sizing["hops"].items())), ""]
    out += ["## QoS profile `%s`" % qos["name"], ""]
    out += _table(("key", "value"), [(k, qos[k]) for k in sorted(qos) if k != "name"])
    out += ["", "## Leafs", ""]
    out += _table(("leaf", "group", "rail", "platform", "gateway", "uplinks", "bound ports"), [
        (name, leaf["group"], leaf["rail"], leaf["platform"],
         "%s/%d" % (leaf["gateway"]["address"], leaf["gateway"]["prefixlen"]) if leaf["gateway"] else "/31 per port",
         len(leaf["uplinks"]), len(leaf["bindings"]))
        for name, leaf in sorted(plan["leafs"].items())])
    out += ["", "## Spines", ""]
    out += _table(("spine", "plane", "platform", "loopback", "leaf links"), [
        (name, spine["plane"], spine["platform"], spine["loopback"], len(spine["downlinks"]))
        for name, spine in sorted(plan["spines"].items())])
    hosts = sorted(plan["hosts"].items(), key=lambda item: item[1]["slot"])
    out += ["", "## Hosts (first %d of %d)" % (min(host_rows, len(hosts)), len(hosts)), ""]
    rails = plan["sizing"]["rails"]
    out += _table(["host", "group"] + ["rail %d" % r for r in range(rails)], [
        [name, host["group"]] + ["%s/%d via %s" % (n["address"], n["prefixlen"], n["gateway"]) for n in host["nics"]]
        for name, host in hosts[:host_rows]])
    out += ["", "## Platforms", ""] + platform_lines(plan)
    out += ["", "Files beside this report: `plan.json`, `devices/<device>.json` (each device's slice of the plan),",
            "`cabling.csv`, `leafs/<leaf>-bindings.csv`, `switches/<switch>.cfg` (each switch's rendered config; "
            "`.json`, its CONFIG_DB tables, on a CONFIG_DB NOS),",
            "`topology.dot` / `topology.svg`.", ""]
    return "\n".join(out)


def platform_lines(plan):
    """Per platform in use: its switches, and what the platform table (docs/platforms.md) marks unverified
    or does not render for it, so a user sees before any push which lines have no vendor source."""
    used = {}
    for role in ("leafs", "spines"):
        for name, intent in plan[role].items():
            used.setdefault(intent["platform"], []).append(name)
    out = _table(("platform", "switches", "status", "not rendered"), [
        (platform, len(names), "verified" if platforms.is_verified(platform) else "**unverified**",
         ", ".join(platforms.not_rendered(platform)) or "-")
        for platform, names in sorted(used.items())])
    for platform in sorted(used):
        rows = platforms.unverified(platform)
        if rows:
            out += ["", "Unverified on `%s` (%s):" % (platform, ", ".join(sorted(used[platform])[:8]) +
                                                      (" ..." if len(used[platform]) > 8 else "")), ""]
            out += ["- %s: %s" % (item, source) for item, source in rows]
    return out


def _quote(text):
    return '"%s"' % str(text).replace('"', '\\"')


def _keep_order(names):
    """Invisible edges inside a rank keep nodes left-to-right in plan order."""
    if len(names) < 2:
        return []
    return ["    %s [style=invis];" % " -> ".join(_quote(n) for n in names)]


def _header(plan):
    return ["digraph fabric {", '  graph [rankdir=TB, label=%s, labelloc=t, fontsize=18, splines=false];' % _quote(
        "%s: %d GPUs, %d leafs, %d spines, %s" % (plan["fabric"], plan["sizing"]["gpus"], plan["sizing"]["leafs"],
                                                  plan["sizing"]["spines"], plan["addressing_scheme"])),
            '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
            '  edge [dir=none, color="#777777"];']


def _rank(nodes):
    """One rank of (id, fill, label) nodes, kept left-to-right in the given order."""
    out = ["  { rank=same;"]
    out += ["    %s [fillcolor=\"%s\", label=%s];" % (_quote(node), fill, _quote(label)) for node, fill, label in nodes]
    out += _keep_order([node for node, _fill, _label in nodes])
    out.append("  }")
    return out


def topology_dot_collapsed(plan):
    """Large fabrics: one node per spine plane, per server group's leafs and per server group;
    edges carry link counts."""
    planes, groups, servers, uplinks = {}, {}, {}, {}
    for spine in plan["spines"].values():
        planes.setdefault(spine["plane"], []).append(spine["platform"])
    for name, leaf in plan["leafs"].items():
        groups.setdefault(leaf["group"], []).append(leaf["platform"])
        for uplink in leaf["uplinks"]:
            key = (plan["spines"][uplink["spine"]]["plane"], leaf["group"])
            uplinks[key] = uplinks.get(key, 0) + 1
    for host in plan["hosts"].values():
        servers[host["group"]] = servers.get(host["group"], 0) + len(host["nics"])
    out = _header(plan)
    out += _rank([("plane%d" % p, "#f4cccc", "plane %d\n%d spines (%s)" % (p, len(planes[p]), ", ".join(sorted(set(planes[p])))))
                  for p in sorted(planes)])
    out += _rank([("leafs%d" % g, "#cfe2f3", "group %d leafs\n%d leafs (%s)" % (g, len(groups[g]), ", ".join(sorted(set(groups[g])))))
                  for g in sorted(groups)])
    out += _rank([("group%d" % g, "#d9ead3", "group %d\n%d host links" % (g, servers[g])) for g in sorted(servers)])
    for (plane, group), count in sorted(uplinks.items()):
        out.append("  %s -> %s [label=%s, fontsize=8];" % (_quote("plane%d" % plane), _quote("leafs%d" % group), _quote("%dx" % count)))
    for group, count in sorted(servers.items()):
        out.append("  %s -> %s [label=%s, fontsize=8];" % (_quote("leafs%d" % group), _quote("group%d" % group), _quote("%dx" % count)))
    out.append("}")
    return "\n".join(out) + "\n"


def topology_dot(plan):
    """Graphviz DOT: spines on top, leafs by group, servers (or server groups) at the bottom."""
    if len(plan["leafs"]) + len(plan["spines"]) > DIAGRAM_SWITCH_LIMIT:
        return topology_dot_collapsed(plan)
    out = _header(plan)
    out.append("  { rank=same;")
    for name, spine in sorted(plan["spines"].items()):
        out.append("    %s [fillcolor=\"#f4cccc\", label=%s];" % (_quote(name), _quote("%s\\n%s  plane %d" % (
            name, spine["platform"], spine["plane"]))))
    out += _keep_order(sorted(plan["spines"]))
    out.append("  }")
    out.append("  { rank=same;")
    for name, leaf in sorted(plan["leafs"].items(), key=lambda item: item[1]["slot"]):
        gateway = leaf["gateway"]["subnet"] if leaf["gateway"] else "/31s"
        out.append("    %s [fillcolor=\"#cfe2f3\", label=%s];" % (_quote(name), _quote("%s\\n%s  rail %d\\n%s" % (
            name, leaf["platform"], leaf["rail"], gateway))))
    out += _keep_order([name for name, _leaf in sorted(plan["leafs"].items(), key=lambda item: item[1]["slot"])])
    out.append("  }")
    for name, leaf in sorted(plan["leafs"].items()):
        per_spine = {}
        for uplink in leaf["uplinks"]:
            per_spine[uplink["spine"]] = per_spine.get(uplink["spine"], 0) + 1
        for spine, count in sorted(per_spine.items()):
            out.append("  %s -> %s [label=%s, fontsize=8];" % (_quote(spine), _quote(name), _quote("%dx" % count)))
    per_server = len(plan["hosts"]) <= DIAGRAM_SERVER_LIMIT
    out.append("  { rank=same;")
    if per_server:
        for name, host in sorted(plan["hosts"].items(), key=lambda item: item[1]["slot"]):
            out.append("    %s [fillcolor=\"#d9ead3\", label=%s];" % (_quote(name), _quote("%s\\ngroup %d" % (name, host["group"]))))
        out += _keep_order([name for name, _host in sorted(plan["hosts"].items(), key=lambda item: item[1]["slot"])])
    else:
        groups = {}
        for host in plan["hosts"].values():
            groups[host["group"]] = groups.get(host["group"], 0) + 1
        for group, count in sorted(groups.items()):
            out.append("    %s [fillcolor=\"#d9ead3\", label=%s];" % (_quote("group%d" % group), _quote(
                "group %d\\n%d servers" % (group, count))))
        out += _keep_order(["group%d" % group for group in sorted(groups)])
    out.append("  }")
    for name, leaf in sorted(plan["leafs"].items()):
        if per_server:
            for link in leaf["downlinks"]:
                out.append("  %s -> %s;" % (_quote(name), _quote(link["server"])))
        else:
            label = _quote("%dx" % len(leaf["downlinks"]))
            out.append("  %s -> %s [label=%s, fontsize=8];" % (_quote(name), _quote("group%d" % leaf["group"]), label))
    out.append("}")
    return "\n".join(out) + "\n"


class UnsafeArtifactPath(ValueError):
    """A plan name would put an artifact outside the artifact directory."""


def _artifact_name(name):
    """``name`` as one file-name part; refuses what could leave the directory (defence in depth:
    the schema's allowlist already refuses such server and leaf names)."""
    text = str(name)
    if not text or text in (".", "..") or "/" in text or "\\" in text or "\x00" in text:
        raise UnsafeArtifactPath("%r cannot be an artifact file name" % (name,))
    return text


def render_all(plan, switch_files=None, platform_notes=()):
    """Every artifact as {relative path: text}; every path stays inside the artifact directory.
    ``switch_files(name, intent, qos, stem) -> {path: text}`` adds each switch's offline config (the caller passes
    nos/offline.py ``switch_files``: this package sits below the NOS drivers, which read its platform table);
    ``platform_notes`` are report.md's lines on what each platform will not configure or verify (nos/capabilities.py)."""
    files = {
        "cabling.csv": cabling_csv(plan),
        "report.md": report_markdown(plan, platform_notes=platform_notes),
        "topology.dot": topology_dot(plan),
    }
    for name, leaf in plan["leafs"].items():
        files["leafs/%s-bindings.csv" % _artifact_name(name)] = binding_csv(leaf)
    for role in ("leafs", "spines") if switch_files else ():
        for name, intent in plan[role].items():
            files.update(switch_files(name, intent, plan["qos"], _artifact_name(name)))
    return files
