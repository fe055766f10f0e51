# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric sizing: switches per tier, links, optics, oversubscription and hop counts.

Two models: the classic k-ary fat tree (every tier full, half the ports down) and the
rail-optimized two-tier leaf/spine (one leaf per rail per server group). Optics count one
transceiver per cable end; a breakout cable has one transceiver at the broken-out end.
"""

from __future__ import annotations


def _ceil(a, b):
    return -(-a // b)


def gpu_nic_warnings(gpus_per_server, nics_per_server, nic_gpus=None):
    """Warnings when a server's GPUs outnumber its rail NICs (e.g. 8 GPUs, 2 NICs).

    A GPU without a NIC of its own reaches the fabric through another GPU's NIC (PCIe peer or
    NCCL PXN over NVLink), so it gets a share of that NIC's bandwidth and its traffic leaves on a
    rail it does not own. ``nic_gpus`` are the GPU indices the NICs declare (``nics[].gpu``);
    when none is declared, NIC i is taken to serve GPU i.
    """
    if gpus_per_server <= nics_per_server:
        return []
    served = set(g for g in (nic_gpus or []) if g is not None) or set(range(nics_per_server))
    without = [g for g in range(gpus_per_server) if g not in served]
    return ["%d GPUs per server share %d rail NICs (%s GPUs per NIC): GPU%s %s %s no NIC of %s own, so each "
            "NIC's bandwidth is split between its GPUs and rail-local traffic of those GPUs crosses NVLink/PCIe "
            "first. Fix: give every GPU a rail NIC (servers.nics, one per GPU) if the design expects one; "
            "otherwise size collective bandwidth per NIC, not per GPU"
            % (gpus_per_server, nics_per_server, _ratio(gpus_per_server, nics_per_server),
               "s" if len(without) > 1 else "", _ranges(without), "have" if len(without) > 1 else "has",
               "their" if len(without) > 1 else "its")]


def partial_group_warnings(servers, servers_per_group, uplinks_per_leaf, rails, fix):
    """A warning when the last server group is partly filled: leafs, their uplinks, the spines and the fabric-side
    optics are sized for full groups (room to grow without recabling the spine side), which counts links and optics
    for servers that do not exist yet. Says how many, so a buyer sizing today's servers only can take them off."""
    filled = servers % servers_per_group
    if not filled:
        return []
    missing = servers_per_group - filled
    return ["server group %d holds %d of its %d servers: its %d leafs, their %d uplinks each, the spines and the "
            "fabric-side optics are sized for the full group (growth to %d servers without recabling the spine side): "
            "%d of its %d leaf downlinks have no server yet. To size for today's servers only: %s"
            % (servers // servers_per_group + 1, filled, servers_per_group, rails, uplinks_per_leaf,
               (servers // servers_per_group + 1) * servers_per_group, missing * rails, servers_per_group * rails,
               fix % {"filled": filled})]


def _ratio(a, b):
    return ("%d" % (a // b)) if a % b == 0 else ("%.2f" % (float(a) / b)).rstrip("0")


def _ranges(numbers):
    runs, start = [], None
    for index, number in enumerate(numbers):
        if start is None:
            start = number
        if index + 1 == len(numbers) or numbers[index + 1] != number + 1:
            runs.append(str(start) if start == number else "%d-%d" % (start, number))
            start = None
    return ", ".join(runs)


def size_fat_tree(gpus, radix, tiers=3, gpus_per_server=None, nics_per_server=None):
    """Non-blocking fat tree of `radix`-port switches with one NIC port per GPU (or per NIC).

    Each lower tier uses radix/2 ports down and radix/2 up; the top tier uses all ports down.
    32,768 GPUs, radix 128, 3 tiers -> 512 + 512 + 256 = 1,280 switches, 196,608 optics.
    With fewer NICs than GPUs per server, the fabric connects the NICs and warns.
    """
    if tiers < 2 or radix < 2 or radix % 2:
        raise ValueError("fat tree needs tiers >= 2 and an even radix >= 2")
    warnings = []
    endpoints = gpus
    if gpus_per_server and nics_per_server:
        endpoints = _ceil(gpus, gpus_per_server) * nics_per_server
        warnings = gpu_nic_warnings(gpus_per_server, nics_per_server)
    half = radix // 2
    most = radix * half ** (tiers - 1)
    if endpoints > most:
        raise ValueError("%d NIC ports exceed what a %d-tier non-blocking fat tree of %d-port switches connects "
                         "(at most %d = radix x (radix/2)^(tiers-1)). Fix: more tiers, a larger radix, or fewer GPUs"
                         % (endpoints, tiers, radix, most))
    per_tier = []
    ports_below = endpoints
    for tier in range(tiers):
        down = radix if tier == tiers - 1 else half
        switches = _ceil(ports_below, down)
        per_tier.append(switches)
        ports_below = switches * half
    links = endpoints * tiers  # host-edge, then each tier pair carries the same bisection at 1:1
    return {
        "design": "fat_tree", "gpus": gpus, "nic_ports": endpoints, "radix": radix, "tiers": tiers,
        "switches_per_tier": per_tier, "switches": sum(per_tier), "links": links, "optics": 2 * links,
        "max_switch_hops": 2 * tiers - 1, "warnings": warnings,
    }


def size_rail_optimized(gpus, gpus_per_server, nic_gbps, leaf_ports, leaf_port_gbps,
                        spine_ports, spine_port_gbps, oversubscription=1, nics_per_server=None):
    """Two-tier rail-optimized fabric: rails = NICs per server (by default one per GPU).

    A leaf splits its bandwidth n:1 between servers and spines; servers per group is what the
    downlink share carries. 512 x 200G GPUs on 64 x 400G leafs and 64 x 800G spines at 1:1 ->
    8 leafs + 2 spines; 28,672 x 400G GPUs on 128 x 400G leafs at 7:1 -> 256 leafs + 32 spines.
    """
    rails = nics_per_server or gpus_per_server
    servers = _ceil(gpus, gpus_per_server)
    leaf_bw = leaf_ports * leaf_port_gbps
    down_bw = leaf_bw * oversubscription // (oversubscription + 1)
    servers_per_group = down_bw // nic_gbps
    if servers_per_group < 1:
        raise ValueError("a %dG NIC does not fit the downlink share of a %d x %dG leaf at %d:1"
                         % (nic_gbps, leaf_ports, leaf_port_gbps, oversubscription))
    groups = _ceil(servers, servers_per_group)
    if groups > spine_ports:
        # every spine of a rail must reach every leaf of that rail (3 hops leaf-spine-leaf), one port per leaf
        raise ValueError("%d leafs per rail exceed what a %d-port spine connects (one port per leaf of a rail): no "
                         "two-tier fabric can build it. Fix: spines with more ports, leafs with more ports, a three-"
                         "tier fat_tree design, or fewer GPUs" % (groups, spine_ports))
    leafs = groups * rails
    up_bw_per_leaf = _ceil(servers_per_group * nic_gbps, oversubscription)
    uplinks_per_leaf = _ceil(up_bw_per_leaf, leaf_port_gbps)
    spines = _ceil(leafs * uplinks_per_leaf * leaf_port_gbps, spine_ports * spine_port_gbps)
    host_links = servers * rails
    fabric_links = leafs * uplinks_per_leaf
    # Optics: NIC end one each; leaf down end shares a transceiver across a breakout.
    down_breakout = max(1, leaf_port_gbps // nic_gbps)
    up_breakout = max(1, spine_port_gbps // leaf_port_gbps)
    optics = host_links + _ceil(host_links, down_breakout) + fabric_links + _ceil(fabric_links, up_breakout)
    return {
        "design": "rail_optimized", "gpus": gpus, "servers": servers, "rails": rails,
        "servers_per_group": servers_per_group,
        "groups": groups, "leafs": leafs, "spines": spines, "switches": leafs + spines,
        "uplinks_per_leaf": uplinks_per_leaf, "host_links": host_links, "fabric_links": fabric_links,
        "optics": optics, "oversubscription": "%d:1" % oversubscription,
        "hops": rail_hops(),
        "warnings": gpu_nic_warnings(gpus_per_server, rails)
        + partial_group_warnings(servers, servers_per_group, uplinks_per_leaf, rails,
                                 "leafs with fewer ports (sizing_leaf_ports) or a higher oversubscription"),
    }


def rail_hops():
    """Switch hops between two GPUs of different servers in a two-tier rail-optimized fabric."""
    return {
        "same_rail_same_group": 1,
        "same_rail_other_group": 3,
        "cross_rail_without_pxn": 3,
        "cross_rail_with_pxn": 1,  # NCCL PXN moves data over NVLink to the same-rail GPU first
    }


def fabric_sizing(lay, intent):
    """Sizing figures of a concrete, validated fabric layout."""
    servers = len(lay.server_names)
    gpus = servers * intent["servers"]["gpus"]
    host_links = servers * lay.rails
    fabric_links = len(lay.leafs) * lay.uplinks_per_leaf
    down_bw = lay.servers_per_group * lay.nic_speed
    up_bw = lay.uplinks_per_leaf * lay.leaf_up.speed_gbps
    hops = rail_hops()
    if lay.planes > 1:
        hops["cross_plane_without_pxn"] = None  # no spine path between planes: PXN required
    return {
        "servers": servers, "gpus": gpus, "gpus_per_server": intent["servers"]["gpus"], "rails": lay.rails,
        "groups": lay.groups,
        "servers_per_group": lay.servers_per_group, "leafs": len(lay.leafs), "spines": len(lay.spines),
        "spine_planes": lay.planes, "uplinks_per_leaf": lay.uplinks_per_leaf,
        "host_links": host_links, "fabric_links": fabric_links,
        "optics": 2 * host_links + 2 * fabric_links,
        "leaf_down_gbps": down_bw, "leaf_up_gbps": up_bw,
        "oversubscription_effective": round(float(down_bw) / up_bw, 3),
        "hops": hops,
        "warnings": gpu_nic_warnings(intent["servers"]["gpus"], lay.rails,
                                     [nic.get("gpu") for nic in intent["servers"]["nics"]])
        + partial_group_warnings(servers, lay.servers_per_group, lay.uplinks_per_leaf, lay.rails,
                                 "fabric.servers.servers_per_group: %(filled)d, or fewer uplink ports in the leaf model")
        + list(getattr(lay, "naming_warnings", [])),
    }
