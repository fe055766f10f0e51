# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The routed underlay of the plan: eBGP ASNs, sessions and host-facing L3 interfaces.

RFC 7938 ("Use of BGP for Routing in Large-Scale Data Centers") section 5.2.1: eBGP only, one
private ASN per leaf (ToR), one ASN shared by the spines of a plane (so a spine never accepts a
path that crossed another spine of its own plane: the AS_PATH loop check does it), sessions over
the point-to-point links, ECMP over equal-length paths (section 6.1, with AS_PATH multipath relax
for paths through different ASNs). Each leaf announces its loopback and its host subnets; a spine
its loopback.

Pure: no Ansible, no I/O. ``assign(intent, plan)`` adds ``bgp`` to every leaf and spine and
``host_interfaces`` to every leaf; ``underlay_problems(intent, plan)`` is the validation (key
paths and fixes).
"""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError, FabricProblem

ASN_MAX = 4294967294            # 4294967295 is reserved (RFC 7300)
# ASNs no session may use: AS_TRANS (RFC 6793), 65535 (RFC 7300), documentation (RFC 5398).
RESERVED_ASNS = ((0, 0), (23456, 23456), (64496, 64511), (65535, 65551))
PRIVATE_ASNS = ((64512, 65534), (4200000000, 4294967294))   # RFC 6996


def leaf_asn(intent, leaf):
    return intent["underlay"]["leaf_asn_base"] + leaf["slot"]


def spine_asn(intent, spine):
    return intent["underlay"]["spine_asn_base"] + spine["plane"] - 1


def _range_problems(path, first, last, what):
    problems = []
    if last > ASN_MAX:
        problems.append(FabricProblem(path, "%s need ASNs %d..%d, past the last usable ASN %d" % (what, first, last, ASN_MAX),
                                      "lower %s so the range ends at or below %d" % (path, ASN_MAX)))
    for low, high in RESERVED_ASNS:
        if first <= high and low <= last:
            problems.append(FabricProblem(path, "%s ASNs %d..%d include reserved ASNs %d..%d" % (what, first, last, low, high),
                                          "move %s to a private range (64512-65534 or 4200000000-4294967294, RFC 6996)" % path))
    if not any(low <= first and last <= high for low, high in PRIVATE_ASNS):
        problems.append(FabricProblem(path, "%s ASNs %d..%d are not all private (RFC 6996)" % (what, first, last),
                                      "use 64512-65534 or 4200000000-4294967294, as RFC 7938 section 5.2.1 advises"))
    return problems


def underlay_problems(intent, plan):
    """Cross-key rules of ``fabric.underlay`` against the planned leafs and spines."""
    under = intent["underlay"]
    problems = []
    planes = max([s["plane"] for s in plan["spines"].values()] or [1])
    spine_first = under["spine_asn_base"]
    spine_last = spine_first + planes - 1
    problems += _range_problems("fabric.underlay.spine_asn_base", spine_first, spine_last, "%d spine plane(s)" % planes)
    slots = [leaf["slot"] for leaf in plan["leafs"].values()] or [0]
    leaf_first = under["leaf_asn_base"]
    leaf_last = leaf_first + max(slots)
    problems += _range_problems("fabric.underlay.leaf_asn_base", leaf_first, leaf_last, "%d leaf slot(s)" % (max(slots) + 1))
    # Leaf ASNs grow upward with the fabric (base + slot), so spines sit below them: a new server
    # group then never lands on a spine ASN.
    if spine_last >= leaf_first:
        problems.append(FabricProblem("fabric.underlay.spine_asn_base",
                                      "spine ASNs %d..%d are not below the leaf ASNs starting at %d" % (spine_first, spine_last, leaf_first),
                                      "set spine_asn_base + planes <= leaf_asn_base (leaf ASNs grow upward with the fabric)"))
    if under["hold_seconds"] < 3 * under["keepalive_seconds"]:
        problems.append(FabricProblem("fabric.underlay.hold_seconds",
                                      "hold time %d s is under three keepalives (%d s)" % (under["hold_seconds"], under["keepalive_seconds"]),
                                      "use hold_seconds >= 3 * keepalive_seconds (RFC 4271 section 10 suggests the 1:3 ratio)"))
    return problems


def _session(under, asn, router_id, neighbors, networks, allowas_in=0):
    return {"asn": asn, "router_id": router_id, "neighbors": neighbors, "networks": networks, "allowas_in": allowas_in,
            "maximum_paths": under["maximum_paths"], "multipath_relax": under["multipath_relax"],
            "keepalive_seconds": under["keepalive_seconds"], "hold_seconds": under["hold_seconds"]}


def host_interfaces(plan, leaf, vlan):
    """The leaf's L3 side towards its hosts: one SVI holding the gateway, with the host ports as
    untagged members (``subnet_per_leaf``), or one routed /31 per host port (``p2p``)."""
    if plan["addressing_scheme"] == "subnet_per_leaf":
        gateway = leaf["gateway"]
        return [{"kind": "svi", "vlan": vlan, "address": "%s/%d" % (gateway["address"], gateway["prefixlen"]),
                 "members": [d["port"] for d in leaf["downlinks"]]}]
    return [{"kind": "routed", "port": d["port"], "address": "%s/31" % d["address"].split("/")[0]}
            for d in leaf["downlinks"]]


def assign(intent, plan):
    """Add ``bgp`` to every leaf and spine, ``host_interfaces`` to every leaf. Raises FabricError."""
    problems = underlay_problems(intent, plan)
    if problems:
        raise FabricError(problems)
    under = intent["underlay"]
    spine_asns = dict((name, spine_asn(intent, spine)) for name, spine in plan["spines"].items())
    spine_neighbors = dict((name, []) for name in plan["spines"])
    for name, leaf in plan["leafs"].items():
        asn = leaf_asn(intent, leaf)
        neighbors = []
        for uplink in leaf["uplinks"]:
            neighbors.append({"address": uplink["peer"], "remote_as": spine_asns[uplink["spine"]],
                              "port": uplink["port"], "peer": uplink["spine"]})
            spine_neighbors[uplink["spine"]].append({"address": uplink["address"], "remote_as": asn,
                                                     "port": uplink["spine_port"], "peer": name})
        leaf["host_interfaces"] = host_interfaces(plan, leaf, under["host_vlan"])
        networks = ["%s/32" % leaf["loopback"]] + [i["address"] for i in leaf["host_interfaces"]]
        leaf["bgp"] = _session(under, asn, leaf["loopback"], neighbors, sorted(set(_network_of(n) for n in networks)))
    for name, spine in plan["spines"].items():
        # allowas-in: the spines of a plane share an ASN, so without it a spine that lost its links to a
        # leaf refuses every other path to that leaf (they all crossed a sibling spine) and a PPD pin to
        # it blackholes; with 1, the detour leaf -> sibling spine is accepted (docs/underlay.md).
        spine["bgp"] = _session(under, spine_asns[name], spine["loopback"], spine_neighbors[name],
                                ["%s/32" % spine["loopback"]], under["spine_allowas_in"])


def _network_of(interface):
    """'10.100.0.6/29' -> '10.100.0.0/29' (what a `network` statement names)."""
    import ipaddress
    return str(ipaddress.ip_interface(interface).network)
