# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric planner: intent -> plan (plain, JSON-serialisable, deterministic dicts).

Order of work: schema (types, defaults) -> layout (cross-key rules, counts, names) -> QoS profile
-> rail IP plan + cabling -> fabric links -> leaf port binding (PPD) -> host route map (IRM).
No Ansible imports, no I/O. Each fact is stored once: the cabling list is a view
(views.cabling) over host NICs and leaf uplinks, and a leaf's local destinations live on the leaf,
not on each of its bindings.
"""

from __future__ import annotations

import gc

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import qos as qos_profiles
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.binding import bind_downlinks, local_destinations
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.ipmath import ip
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.layout import build_layout
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for, opt_in
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.routes import host_route_map, nccl_env, rail_sysctls
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.schema import normalize
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.sizing import fabric_sizing
from ansible_collections.aifabric.roce.plugins.module_utils.fabric import underlay

PLAN_SCHEMA_VERSION = 1


def _switch_identity(role_intent, platform, intent):
    device_type = role_intent.get("device_type") if platform == role_intent["platform"] else None
    record = {"platform": platform, "device_type": device_type or device_type_for(platform)}
    if opt_in(platform):   # the platform's opt-in (fabric/platforms.py), with its default
        key, default = opt_in(platform)
        record[key] = intent.get(key) or default
    return record


def _leaf_record(lay, intent, name, group, rail, qos):
    overrides = intent["leafs"]["platform_overrides"]
    platform = overrides.get(name, intent["leafs"]["platform"])
    slot = group * lay.max_rails + rail
    record = {
        "group": group + 1, "rail": rail, "plane": rail // lay.rail_slots_per_plane + 1, "slot": slot,
        "model": intent["leafs"]["model"],
        "loopback": ip(int(lay.leaf_loopback_pool.network_address) + 1 + slot),
        "mtu": qos["switch_mtu"], "downlinks": [], "uplinks": [], "bindings": [], "gateway": None,
    }
    record.update(_switch_identity(intent["leafs"], platform, intent))
    return record


def _assign_hosts(lay, intent, plan, leaf_by_key):
    """Rail IP plan, host<->leaf cabling and the leaf side of every host port."""
    servers = intent["servers"]
    stack = dict((k, v) for k, v in sorted((servers.get("stack") or {}).items()) if v)
    scheme = intent["addressing"]["scheme"]
    gateway_last = intent["addressing"]["gateway"] == "last"
    spg = lay.servers_per_group
    nics = servers["nics"]
    qos = plan["qos"]
    routing = intent["routing"]
    pool_bases = [int(pool.network_address) for pool in lay.rail_pools]
    pool_texts = [str(pool) for pool in lay.rail_pools]
    block = lay.block
    prefixlen = 32 - (block.bit_length() - 1) if scheme == "subnet_per_leaf" else 31

    # Leaf gateways (scheme A) are per (group, rail) and do not depend on the servers present.
    if scheme == "subnet_per_leaf":
        for (group, rail), (_name, leaf) in leaf_by_key.items():
            base = pool_bases[rail] + group * block
            gateway = base + block - 2 if gateway_last else base + 1
            leaf["gateway"] = {"address": ip(gateway), "prefixlen": prefixlen,
                               "subnet": "%s/%d" % (ip(base), prefixlen)}

    subnet_cache = {}
    for slot, server in enumerate(lay.server_names):
        group, position = divmod(slot, spg)
        host_nics = []
        for rail, nic in enumerate(nics):
            leaf_name, leaf = leaf_by_key[(group, rail)]
            port = lay.leaf_down.names_for(leaf["platform"])[position]
            if scheme == "subnet_per_leaf":
                base = pool_bases[rail] + group * block
                address = base + 1 + position if gateway_last else base + 2 + position
                if (group, rail) not in subnet_cache:  # formatted once per leaf subnet
                    subnet_cache[(group, rail)] = (ip(base + block - 2 if gateway_last else base + 1),
                                                   "%s/%d" % (ip(base), prefixlen))
                gateway_text, subnet = subnet_cache[(group, rail)]
                leaf_port_address = None
            else:
                base = pool_bases[rail] + 2 * slot
                address, gateway_text = base + 1, ip(base)
                subnet = leaf_port_address = "%s/31" % gateway_text
            host_nics.append({
                "rail": rail, "netdev": nic["netdev"], "rdma": nic["rdma"], "speed_gbps": nic["speed_gbps"],
                "gpu": nic["gpu"], "address": ip(address), "prefixlen": prefixlen, "subnet": subnet,
                "gateway": gateway_text, "rail_pool": pool_texts[rail],
                "table": routing["table_base"] + rail, "rule_priority": routing["rule_priority_base"] + rail,
                "mtu": qos["host_mtu"], "leaf": leaf_name, "leaf_port": port,
            })
            leaf["downlinks"].append({"port": port, "server": server, "netdev": nic["netdev"],
                                      "host_address": ip(address), "address": leaf_port_address})
        mgmt = servers["mgmt_interface"]
        routes, rules = host_route_map(host_nics)
        plan["hosts"][server] = {
            "group": group + 1, "slot": slot, "mgmt_interface": mgmt, "nics": host_nics,
            "routes": routes, "rules": rules, "sysctls": rail_sysctls(host_nics),
            "nccl": nccl_env(host_nics, intent["nccl"], mgmt, qos),
        }
        if stack:  # only when declared: plans of fabrics that declare none stay byte-identical
            plan["hosts"][server]["stack"] = stack


def _assign_fabric_links(lay, intent, plan, leaf_by_key):
    """Leaf uplink <-> spine port cabling and /31 addresses (spine even, leaf odd)."""
    link_base = int(lay.link_pool.network_address)
    spines = lay.spines
    spine_records = plan["spines"]
    per_spine = lay.uplinks_per_spine
    for (group, rail), (leaf_name, leaf) in sorted(leaf_by_key.items()):
        plane = rail // lay.rail_slots_per_plane
        block = group * lay.rail_slots_per_plane + rail % lay.rail_slots_per_plane
        for uplink in range(lay.uplinks_per_leaf):
            spine_name = spines[plane * lay.spines_per_plane + uplink % lay.spines_per_plane][0]
            spine_port = lay.spine_down.names_for(spine_records[spine_name]["platform"])[
                block * per_spine + uplink // lay.spines_per_plane]
            pair = link_base + 2 * (leaf["slot"] * lay.uplinks_per_leaf + uplink)
            leaf_port = lay.leaf_up.names_for(leaf["platform"])[uplink]
            leaf["uplinks"].append({"port": leaf_port, "index": uplink, "spine": spine_name, "spine_port": spine_port,
                                    "address": ip(pair + 1), "peer": ip(pair), "prefixlen": 31,
                                    "speed_gbps": lay.leaf_up.speed_gbps})
            spine_records[spine_name]["downlinks"].append({"port": spine_port, "leaf": leaf_name, "leaf_port": leaf_port,
                                                           "address": ip(pair), "peer": ip(pair + 1), "prefixlen": 31})
    # Leafs are walked in (group, rail) order, so each spine's ports come out in port order.


def _assign_bindings(lay, intent, plan, leaf_by_key):
    scheme = intent["addressing"]["scheme"]
    for (group, rail), (leaf_name, leaf) in leaf_by_key.items():
        local = local_destinations(scheme, leaf, lay, group, rail)
        leaf["local_destinations"] = local
        leaf["bindings"] = bind_downlinks(leaf["downlinks"], leaf["uplinks"], lay.servers_per_group,
                                          lay.leaf_down.names_for(leaf["platform"]))


def build_plan(fabric_intent):
    """Validate ``fabric_intent`` and return the plan dict. Raises FabricError on bad input."""
    # The plan is an acyclic tree of dicts: the cyclic GC only rescans it over and over
    # (131K GPUs: 2.1 s -> 1.5 s with it paused), so pause it while building.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _build_plan(fabric_intent)
    finally:
        if was_enabled:
            gc.enable()


def _build_plan(fabric_intent):
    intent = normalize(fabric_intent)
    lay = build_layout(intent)
    qos = qos_profiles.resolve(intent["qos"])
    plan = {
        "schema_version": PLAN_SCHEMA_VERSION,
        "fabric": intent["name"],
        "addressing_scheme": intent["addressing"]["scheme"],
        "qos": qos,
        # Table ids and rule priorities reserved for rails (max_rails of them): hosts own exactly these.
        "routing": {
            "tables": list(range(intent["routing"]["table_base"], intent["routing"]["table_base"] + lay.max_rails)),
            "rule_priorities": list(range(intent["routing"]["rule_priority_base"],
                                          intent["routing"]["rule_priority_base"] + lay.max_rails)),
        },
        "hosts": {},
        "leafs": {},
        "spines": {},
    }
    leaf_by_key = {}
    for name, group, rail in lay.leafs:
        record = _leaf_record(lay, intent, name, group, rail, qos)
        plan["leafs"][name] = record
        leaf_by_key[(group, rail)] = (name, record)
    for name, plane, index in lay.spines:
        record = {"plane": plane + 1, "index": index + 1, "model": intent["spines"]["model"],
                  "loopback": ip(int(lay.spine_loopback_pool.network_address) + 1 + plane * lay.spines_per_plane + index),
                  "mtu": qos["switch_mtu"], "downlinks": []}
        record.update(_switch_identity(intent["spines"], intent["spines"]["platform"], intent))
        plan["spines"][name] = record
    _assign_hosts(lay, intent, plan, leaf_by_key)
    _assign_fabric_links(lay, intent, plan, leaf_by_key)
    _assign_bindings(lay, intent, plan, leaf_by_key)
    underlay.assign(intent, plan)
    plan["sizing"] = fabric_sizing(lay, intent)
    return plan


def host_intent(plan, host):
    """The part of the plan one GPU host needs (what host modules consume)."""
    record = plan["hosts"][host]
    return dict(record, qos=plan["qos"], name=host)


def leaf_intent(plan, leaf):
    return dict(plan["leafs"][leaf], qos=plan["qos"], name=leaf)
