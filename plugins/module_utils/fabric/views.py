# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only views over a plan, shaped for module results and reports."""

from __future__ import annotations


def rail_view(plan):
    """Per rail: pool and each leaf's subnet and gateway (scheme A) or /31 summary (scheme B)."""
    rails = {}
    for host in plan["hosts"].values():
        for nic in host["nics"]:
            rails.setdefault(nic["rail"], nic["rail_pool"])
    out = []
    for rail in sorted(rails):
        leafs = []
        for name, leaf in sorted(plan["leafs"].items(), key=lambda item: item[1]["slot"]):
            if leaf["rail"] != rail:
                continue
            if leaf["gateway"]:
                leafs.append({"leaf": name, "subnet": leaf["gateway"]["subnet"], "gateway": leaf["gateway"]["address"]})
            else:
                leafs.append({"leaf": name, "subnet": leaf["local_destinations"], "gateway": None})
        out.append({"rail": rail, "pool": rails[rail], "leafs": leafs})
    return out


def fabric_links(plan):
    links = []
    for name, leaf in sorted(plan["leafs"].items(), key=lambda item: item[1]["slot"]):
        for uplink in leaf["uplinks"]:
            links.append({"leaf": name, "leaf_port": uplink["port"], "leaf_address": uplink["address"],
                          "spine": uplink["spine"], "spine_port": uplink["spine_port"], "spine_address": uplink["peer"],
                          "prefixlen": uplink["prefixlen"]})
    return links


def cabling(plan):
    """Every cable: host<->leaf (hosts in slot order, rails in order), then leaf<->spine
    (leafs in slot order, uplinks in order). Labels are H-<host>-R<rail> and U-<leaf>-<n>."""
    rows = []
    for name, host in sorted(plan["hosts"].items(), key=lambda item: item[1]["slot"]):
        for nic in host["nics"]:
            rows.append({"label": "H-%s-R%d" % (name, nic["rail"]), "kind": "host-leaf", "a_device": name,
                         "a_port": nic["netdev"], "b_device": nic["leaf"], "b_port": nic["leaf_port"],
                         "speed_gbps": nic["speed_gbps"]})
    for name, leaf in sorted(plan["leafs"].items(), key=lambda item: item[1]["slot"]):
        for uplink in leaf["uplinks"]:
            rows.append({"label": "U-%s-%d" % (name, uplink["index"] + 1), "kind": "leaf-spine", "a_device": name,
                         "a_port": uplink["port"], "b_device": uplink["spine"], "b_port": uplink["spine_port"],
                         "speed_gbps": uplink["speed_gbps"]})
    return rows
