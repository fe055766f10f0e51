# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Leaf port binding (PPD): each host-facing port is bound to exactly one uplink.

Traffic that enters a leaf from a host port and is bound for a destination that is not local to
that leaf is policy-routed to the port's bound uplink (next hop: the spine end of that link).
Traffic from the spines uses the default table. This pins every NIC's upstream path and avoids
ECMP hash polarisation (DIGEST 000, PPD).
"""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.ipmath import cidrs_for_range


def uplink_for(position, downlinks, uplinks):
    """0-based uplink index for 0-based downlink `position`.

    1:1 is identity; n:1 (downlinks = n * uplinks) maps downlink i (1-based) to uplink ceil(i/n);
    otherwise each uplink carries floor or ceil(downlinks/uplinks) downlinks, in port order.
    With more uplinks than downlinks (uplinks rounded up to a multiple of the spines) it stays
    identity: uplinks alternate spines, so the bound uplinks spread over every spine.
    `downlinks` is the leaf's downlink capacity (servers per group), never the number in use,
    so adding a server never moves an existing binding.
    """
    if not 0 <= position < downlinks:
        raise ValueError("position %d outside 0..%d" % (position, downlinks - 1))
    if uplinks >= downlinks:
        return position
    return position * uplinks // downlinks


def local_destinations(scheme, leaf, lay, group, rail):
    """Prefixes local to a leaf: traffic to these never takes the bound uplink."""
    if scheme == "subnet_per_leaf":
        return [leaf["gateway"]["subnet"]]
    base = int(lay.rail_pools[rail].network_address) + 2 * group * lay.servers_per_group
    return cidrs_for_range(base, base + 2 * lay.servers_per_group - 1)


def bind_downlinks(downlinks, uplinks, capacity, port_order):
    """Binding records for the leaf's in-use downlinks, in port order. The destinations a binding
    never pins are the leaf's ``local_destinations`` (one list per leaf, not repeated per binding)."""
    position_of = {}
    bindings = []
    for link in downlinks:
        if not position_of:
            position_of = dict((name, index) for index, name in enumerate(port_order[:capacity]))
        position = position_of[link["port"]]
        uplink = uplinks[uplink_for(position, capacity, len(uplinks))]
        bindings.append({
            "ingress": link["port"], "server": link["server"], "source": link["host_address"] + "/32",
            "uplink": uplink["port"], "uplink_index": uplink["index"], "spine": uplink["spine"],
            "next_hop": uplink["peer"],
        })
    return bindings
