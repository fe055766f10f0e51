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
