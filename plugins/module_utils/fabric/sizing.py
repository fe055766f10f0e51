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


def size_fat_tree(gpus, radix, tiers=3):
    """Non-blocking fat tree of `radix`-port switches with one NIC port per GPU.

    Each lower tier uses radix/2 ports down and radix/2 up; the top tier uses all ports down.
    32,768 GPUs, radix 128, 3 tiers -> 512 + 512 + 256 = 1,280 switches, 196,608 optics.
    """
    if tiers < 2 or radix < 2 or radix % 2:
        raise ValueError("fat tree needs tiers >= 2 and an even radix >= 2")
    half = radix // 2
    per_tier = []
    ports_below = gpus
    for tier in range(tiers):
        down = radix if tier == tiers - 1 else half
        switches = _ceil(ports_below, down)
        per_tier.append(switches)
        ports_below = switches * half
    links = gpus * tiers  # host-edge, then each tier pair carries the same bisection at 1:1
    return {
        "gpus": gpus, "radix": radix, "tiers": tiers, "switches_per_tier": per_tier,
        "switches": sum(per_tier), "links": links, "optics": 2 * links,
        "max_switch_hops": 2 * tiers - 1,
    }


def size_rail_optimized(gpus, gpus_per_server, nic_gbps, leaf_ports, leaf_port_gbps,
                        spine_ports, spine_port_gbps, oversubscription=1):
    """Two-tier rail-optimized fabric: rails = NICs per server = GPUs per server.

    A leaf splits its bandwidth n:1 between servers and spines; servers per group is what the
    downlink share carries. 512 x 200G GPUs on 64 x 400G leafs and 64 x 800G spines at 1:1 ->
    8 leafs + 2 spines; 28,672 x 400G GPUs on 128 x 400G leafs at 7:1 -> 256 leafs + 32 spines.
    """
    rails = gpus_per_server
    servers = _ceil(gpus, gpus_per_server)
    leaf_bw = leaf_ports * leaf_port_gbps
    down_bw = leaf_bw * oversubscription // (oversubscription + 1)
    servers_per_group = down_bw // nic_gbps
    groups = _ceil(servers, servers_per_group)
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
        "gpus": gpus, "servers": servers, "rails": rails, "servers_per_group": servers_per_group,
        "groups": groups, "leafs": leafs, "spines": spines, "switches": leafs + spines,
        "uplinks_per_leaf": uplinks_per_leaf, "host_links": host_links, "fabric_links": fabric_links,
        "optics": optics, "oversubscription": "%d:1" % oversubscription,
        "hops": rail_hops(),
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
        "servers": servers, "gpus": gpus, "rails": lay.rails, "groups": lay.groups,
        "servers_per_group": lay.servers_per_group, "leafs": len(lay.leafs), "spines": len(lay.spines),
        "spine_planes": lay.planes, "uplinks_per_leaf": lay.uplinks_per_leaf,
        "host_links": host_links, "fabric_links": fabric_links,
        "optics": 2 * host_links + 2 * fabric_links,
        "leaf_down_gbps": down_bw, "leaf_up_gbps": up_bw,
        "oversubscription_effective": round(float(down_bw) / up_bw, 3),
        "hops": hops,
    }
