# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cisco NX-OS driver (netmiko device_type cisco_nxos).

Transaction: ``checkpoint`` before the change, ``rollback running-config checkpoint`` on failure.
Sections: qos, mtu, pbr (policy on the L3 ingress: the host SVI or each routed host port) and underlay
(loopback0, fabric /31s, host SVI + VLAN members or routed host ports, ``router bgp``, ECMP hash).
Command sources: docs/switch-commands-sources.md#cisco-nx-os and #underlay-and-l3-ingress-pbr-nx-os-and-enterprise-sonic-klish.
"""

from __future__ import annotations


from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import CliDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.l3plan import fabric_links, pbr_groups, routed_host_ports, svis


def svi_name(vlan):
    return "Vlan%d" % vlan


class NxosDriver(CliDriver):
    name = "nxos"
    device_type = device_type_for(name)
    indent = 2
    hier_platform = "CISCO_NXOS"
    transaction = transactions.NxosCheckpointTxn
    sections = SECTIONS + ("underlay",)
    error_pattern = r"% ?(Invalid command|Incomplete command|Ambiguous command|Invalid number|Invalid range)|ERROR:"
    save_command = "copy running-config startup-config"
    pfc_counters_command = "show interface priority-flow-control"
    port_abbrev = (("Eth", "Ethernet"),)
    owned_sections = {
        "qos": (r"class-map type qos match-all %s" % PREFIX, r"policy-map type (qos|network-qos|queuing) %s" % PREFIX, r"system qos$",
                r"priority-flow-control watch-dog-interval "),
        "pbr": (r"feature pbr$", r"ip access-list %s" % PREFIX, r"route-map %s" % PREFIX),
        # the default-VRF BGP instance is the plan's, whole (NX-OS has one `router bgp`)
        "underlay": (r"feature (bgp|interface-vlan)$", r"ip load-sharing address ", r"router bgp \S+$"),
    }
    interface_children = {
        "mtu": (r"mtu \d+$",),
        "qos": (r"priority-flow-control ", r"service-policy type qos input "),
        "pbr": (r"ip policy route-map ",),
        "underlay": (r"ip address ", r"no switchport$", r"switchport$", r"switchport access vlan "),
    }

    def render_tree(self, intent, qos, sections=SECTIONS):
        nodes = []
        if "qos" in sections:
            classes = []
            for dscp, prio in sorted(qos["dscp_to_priority"].items(), key=lambda kv: int(kv[0])):
                cname = "%sDSCP%s" % (PREFIX, dscp)
                nodes.append(("class-map type qos match-all %s" % cname, [("match dscp %s" % dscp, [])]))
                classes.append(("class %s" % cname, [("set qos-group %d" % prio, [])]))
            nodes.append(("policy-map type qos %sQOS-IN" % PREFIX, classes))
            nq = []
            for p in qos["lossless_priorities"]:
                nq.append(("class type network-qos c-8q-nq%d" % p, [("pause pfc-cos %d" % p, []), ("mtu %d" % self.mtu(intent), [])]))
            # the default class carries jumbo frames too (Cisco roce_enable.py: c-8q-nq-default / mtu 9216)
            nq.append(("class type network-qos c-8q-nq-default", [("mtu %d" % self.mtu(intent), [])]))
            nodes.append(("policy-map type network-qos %sNQ" % PREFIX, nq))
            # ETS: DWRR shares of the RoCE queue and the default queue (roce_enable.py: 50 / 50); CNP strict
            queues = [("class type queuing c-out-8q-q%d" % qos["ecn_queue"], [
                ("bandwidth remaining percent %d" % qos["ets_roce_percent"], []),
                ("random-detect minimum-threshold %d kbytes maximum-threshold %d kbytes drop-probability %d weight 0 ecn"
                 % (qos["ecn_min_kbytes"], qos["ecn_max_kbytes"], qos["ecn_probability_percent"]), [])]),
                ("class type queuing c-out-8q-q-default", [("bandwidth remaining percent %d" % qos["ets_default_percent"], [])])]
            if qos.get("cnp_strict_priority"):
                queues.append(("class type queuing c-out-8q-q%d" % qos["cnp_priority"], [("priority level 1", [])]))
            nodes.append(("policy-map type queuing %sQ-OUT" % PREFIX, queues))
            if qos.get("pfc_watchdog"):
                # global switch of the PFC watchdog; the interface line alone leaves it off (Cisco RoCE examples)
                nodes.append(("priority-flow-control watch-dog-interval on", []))
            nodes.append(("system qos", [("service-policy type network-qos %sNQ" % PREFIX, []),
                                         ("service-policy type queuing output %sQ-OUT" % PREFIX, [])]))
        interfaces = {}
        if "underlay" in sections and intent.get("bgp"):
            nodes += self._underlay_globals(intent)
            for name, children in self._underlay_interfaces(intent):
                interfaces.setdefault(name, []).extend(children)
        if "pbr" in sections:
            groups = pbr_groups(intent, svi_name)
            if groups:
                nodes.append(("feature pbr", []))
            for ingress, bindings in groups:
                pbr_nodes, child = self._pbr(intent, ingress, bindings)
                nodes += pbr_nodes
                interfaces.setdefault(ingress, []).append(child)
        for port in ports_of(intent):
            children = []
            if "mtu" in sections:
                children.append(("mtu %d" % self.mtu(intent), []))
            if "qos" in sections:
                children.append(("priority-flow-control mode on", []))
                if qos.get("pfc_watchdog"):
                    children.append(("priority-flow-control watch-dog-interval on", []))
                children.append(("service-policy type qos input %sQOS-IN" % PREFIX, []))
            interfaces.setdefault(self.port(port), [])[0:0] = children
        for name, children in interfaces.items():
            if children:
                nodes.append(("interface %s" % name, children))
        return nodes

    # --- underlay ------------------------------------------------------------------------
    @staticmethod
    def _underlay_globals(intent):
        bgp = intent["bgp"]
        nodes = [("feature bgp", [])]
        vlans = svis(intent)
        if vlans:
            nodes.append(("feature interface-vlan", []))
        # ECMP hash on addresses and L4 ports: the RoCEv2 UDP source port varies per QP (Cisco N9K
        # Unicast Routing guide, "Configuring ECMP Load Balancing")
        nodes.append(("ip load-sharing address source-destination port source-destination", []))
        nodes += [("vlan %d" % v["vlan"], []) for v in vlans]
        router = [("router-id %s" % bgp["router_id"], [])]
        if bgp["multipath_relax"]:
            router.append(("bestpath as-path multipath-relax", []))
        router.append(("timers bgp %d %d" % (bgp["keepalive_seconds"], bgp["hold_seconds"]), []))
        router.append(("address-family ipv4 unicast",
                       [("network %s" % net, []) for net in bgp["networks"]] + [("maximum-paths %d" % bgp["maximum_paths"], [])]))
        for n in bgp["neighbors"]:
            # spines accept their plane ASN once from leafs (fabric.underlay.spine_allowas_in): a spine that lost a
            # leaf reaches it through another leaf instead of blackholing pinned traffic (docs/underlay.md)
            family = [("allowas-in %d" % bgp["allowas_in"], [])] if bgp.get("allowas_in") else []
            router.append(("neighbor %s" % n["address"], [("remote-as %d" % n["remote_as"], []),
                                                          ("address-family ipv4 unicast", family)]))
        nodes.append(("router bgp %d" % bgp["asn"], router))
        return nodes

    def _underlay_interfaces(self, intent):
        out = [("loopback0", [("ip address %s/32" % intent["loopback"], [])])]
        for port, address in fabric_links(intent):
            out.append((self.port(port), [("no switchport", []), ("ip address %s" % address, [])]))
        for svi in svis(intent):
            out.append((svi_name(svi["vlan"]), [("no shutdown", []), ("ip address %s" % svi["address"], [])]))
            for member in svi["members"]:
                out.append((self.port(member), [("switchport", []), ("switchport access vlan %d" % svi["vlan"], [])]))
        for host in routed_host_ports(intent):
            out.append((self.port(host["port"]), [("no switchport", []), ("ip address %s" % host["address"], [])]))
        return out

    def managed_interfaces(self, intent, sections):
        names = CliDriver.managed_interfaces(self, intent, sections)
        names.add("loopback0")
        names.update(svi_name(v["vlan"]) for v in svis(intent))
        return names

    def intent_owned(self, intent, sections):
        return [r"vlan %d$" % v["vlan"] for v in svis(intent)] if "underlay" in sections else []

    def _child_managed(self, line, sections, interface=None):
        # `no shutdown` is ours on the SVI only: a physical port's admin state is never touched
        if line in ("no shutdown", "shutdown"):
            return "underlay" in sections and bool(interface) and interface.startswith("Vlan")
        return CliDriver._child_managed(self, line, sections, interface)

    def child_rank(self, parent, child):
        # NX-OS takes a neighbor's address-family only once remote-as is set; router-id first
        if parent.startswith("neighbor "):
            return 0 if child.startswith("remote-as ") else 1
        if parent.startswith("router bgp "):
            order = ("router-id ", "bestpath ", "timers ", "address-family ", "neighbor ")
            return next((i for i, head in enumerate(order) if child.startswith(head)), len(order))
        if parent.startswith("interface "):
            order = ("no switchport", "switchport", "mtu ", "no shutdown", "ip address ")
            return next((i for i, head in enumerate(order) if child == head or child.startswith(head + " ") or
                         (head.endswith(" ") and child.startswith(head))), len(order))
        return 0

    # --- PBR on the L3 ingress -----------------------------------------------------------
    def _pbr(self, intent, ingress, bindings):
        """ACLs + one route-map for one L3 ingress interface, and the interface line binding it.

        An ACL matched by a PBR route-map must not hold deny ACEs (Cisco PBR guidelines): local
        destinations are excluded by a route-map *deny* sequence first, which routes normally. Plain
        ``set ip next-hop A`` (no ``drop-on-fail``) falls back to normal routing when A becomes
        unreachable (cisco.nxos nxos_route_maps: drop-on-fail "Drop packets instead of using default
        routing when the configured next hop becomes unreachable")."""
        name = "%sBIND-%s" % (PREFIX, safe_name(self.port(ingress))) if not ingress.startswith("Vlan") else \
            "%sPBR-%s" % (PREFIX, ingress)
        nodes = []
        local = local_destinations(intent)
        seq = 10
        if local:
            # scheme B (one host per port): the local ACL names the host; scheme A: any source on the SVI
            src = "%s/32" % host_of(bindings[0]["source"]) if len(bindings) == 1 and not ingress.startswith("Vlan") else "any"
            aces = [("%d permit ip %s %s" % (10 * (i + 1), src, d), []) for i, d in enumerate(local)]
            nodes.append(("ip access-list %s-LOCAL" % name, aces))
            nodes.append(("route-map %s deny %d" % (name, seq), [("match ip address %s-LOCAL" % name, [])]))
            seq += 10
        for b in bindings:
            acl = name if len(bindings) == 1 else "%sBIND-%s" % (PREFIX, safe_name(self.port(b["ingress"])))
            nodes.append(("ip access-list %s" % acl, [("10 permit ip %s/32 any" % host_of(b["source"]), [])]))
            nodes.append(("route-map %s permit %d" % (name, seq),
                          [("match ip address %s" % acl, []), ("set ip next-hop %s" % b["next_hop"], [])]))
            seq += 10
        return nodes, ("ip policy route-map %s" % name, [])
