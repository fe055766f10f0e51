# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-host route map (IRM): one routing table and one source rule per rail NIC.

Without them, a reply sourced from rail r's address can leave through another rail's NIC (the
main table picks one), the leaf of that rail drops or misroutes it, and RDMA connections fail.
"""

from __future__ import annotations

# Reasons are documented in docs/host-networking.md.
RAIL_SYSCTLS = (
    ("arp_ignore", "1"),    # answer ARP only for addresses on the asking interface
    ("arp_announce", "2"),  # use the best local address for the outgoing interface in ARP
    ("rp_filter", "2"),     # loose: strict drops replies on sibling-subnet NICs
)


def host_route_map(nics):
    """Routes and rules for a host's rail NICs.

    Per NIC, in its own table: the connected subnet with `src`, and a default via the rail
    gateway (reaches other groups and other rails). In the main table: the rail's pool via the
    rail gateway, so unbound sockets to rail addresses leave on the right rail.
    """
    routes, rules = [], []
    for nic in nics:
        table, dev = nic["table"], nic["netdev"]
        routes.append({"table": table, "dst": nic["subnet"], "dev": dev, "src": nic["address"], "scope": "link"})
        routes.append({"table": table, "dst": "default", "dev": dev, "via": nic["gateway"]})
        routes.append({"table": "main", "dst": nic["rail_pool"], "dev": dev, "via": nic["gateway"]})
        rules.append({"priority": nic["rule_priority"], "from": nic["address"] + "/32", "table": table})
    return routes, rules


def rail_sysctls(nics):
    out = {}
    for nic in nics:
        for key, value in RAIL_SYSCTLS:
            out["net.ipv4.conf.%s.%s" % (nic["netdev"], key)] = value
    return out


def nccl_env(nics, nccl, mgmt_interface, qos):
    """NCCL environment for jobs on this host, in rail order.

    NCCL_SOCKET_IFNAME: the management interface with ``=``, NCCL's exact match (without it the name is a prefix:
    ``eth0`` would also take ``eth0.100``; NVIDIA/nccl src/misc/utils.cc matchIf); a ``socket_ifname`` from the
    intent is taken as written. NCCL_IB_GID_INDEX only when the intent sets ``gid_index``: NCCL >= 2.21 picks the
    RoCEv2 GID of the interface address itself (src/transport/net_ib connect.cc ncclIbGetGidIndex, default -1;
    2.20 defaulted to 0)."""
    env = {
        "NCCL_IB_HCA": "=" + ",".join(nic["rdma"] for nic in nics),
        "NCCL_SOCKET_IFNAME": nccl.get("socket_ifname") or "=" + mgmt_interface,
        "NCCL_IB_TC": str(qos["roce_tos"]),
    }
    if nccl.get("gid_index") is not None:
        env["NCCL_IB_GID_INDEX"] = str(nccl["gid_index"])
    return env
