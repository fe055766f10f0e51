# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cisco NX-OS driver (netmiko device_type cisco_nxos).

Transaction: ``checkpoint`` before the change, ``rollback running-config checkpoint`` on failure.
Sections: qos, mtu, pbr (policy on the L3 ingress: the host SVI or each routed host port) and underlay
(loopback0, fabric /31s, host SVI + VLAN members or routed host ports, ``router bgp``, ECMP hash).
Command sources: docs/switch-commands-sources.md#cisco-nx-os and #underlay-and-l3-ingress-pbr-nx-os-and-enterprise-sonic-klish.
"""

from __future__ import annotations


from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state, counters as roce_counters, ppd_state, sources, transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import ACL, CliDriver, MTU_SECTION
from ansible_collections.aifabric.roce.plugins.module_utils.nos.l3plan import fabric_links, pbr_groups, routed_host_ports, svis
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sections import Form, Section, attach
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drain import DrainLine
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Read


def svi_name(vlan):
    return "Vlan%d" % vlan


class NxosDriver(CliDriver):
    name = "nxos"
    device_type = device_type_for(name)
    indent = 2
    hier_platform = "CISCO_NXOS"
    transaction = transactions.NxosCheckpointTxn
    # cisco.nxos nxos_bgp_global graceful_shutdown.activate; Cisco Nexus 9000 Unicast Routing Guide, BGP graceful
    # shutdown (receivers honour it by default: `graceful-shutdown aware`)
    drain = DrainLine("graceful-shutdown activate")
    counters = [Read("show interface priority-flow-control", roce_counters.parse_nxos_pfc)]
    line_sources = sources.NXOS   # the public source of every line it renders (nos/sources.py)
    counter_evidence = dict(pfc_rx="verified", pfc_tx="verified")
    checks = ("bgp_sessions", "ppd_paths")
    bgp_summary = Read("show bgp all summary vrf all | json", bgp_state.parse_nxos)
    ppd_read = ppd_state.NxosRouteMap("`show route-map`: sequence matching the host's ACL, `ip next-hop`")
    sections = SECTIONS + ("underlay",)
    error_pattern = r"% ?(Invalid command|Incomplete command|Ambiguous command|Invalid number|Invalid range)|ERROR:"
    save_command = "copy running-config startup-config"
    pfc_counters_command = "show interface priority-flow-control"
    port_abbrev = (("Eth", "Ethernet"),)

    def ppd_pins(self, intent):
        """[{binding, ingress, policy, match}] as _pbr names them: the route-map on the L3 ingress and the ACL its
        sequence matches for each host source (nos/ppd_state.py reads them back from ``show route-map``)."""
        out = []
        for ingress, bindings in pbr_groups(intent, svi_name):
            name, acls = pbr_names(self, ingress, bindings)
            out += [{"binding": b, "ingress": ingress, "policy": name, "match": acl} for b, acl in zip(bindings, acls)]
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


# --- sections: each concern's render next to the line forms read back (nos/sections.py) ----------------
PFC = r"priority-flow-control "          # every PFC line of a port or the switch is the qos section's
PFC_MODE = Form("priority-flow-control mode on", owns=PFC)
PFC_WATCHDOG = Form("priority-flow-control watch-dog-interval on", owns=PFC)
PFC_WATCHDOG_GLOBAL = Form("priority-flow-control watch-dog-interval on", owns=r"priority-flow-control watch-dog-interval ")
QOS_CLASS = Form("class-map type qos match-all {name}", owns=r"class-map type qos match-all %s" % PREFIX)
QOS_POLICY = Form("policy-map type {kind} {name}", owns=r"policy-map type (qos|network-qos|queuing) %s" % PREFIX)
SYSTEM_QOS = Form("system qos")
QOS_INPUT = Form("service-policy type qos input {name}", owns=r"service-policy type qos input ")


def _qos(drv, intent, qos):
    nodes = []
    classes = []
    for dscp, prio in sorted(qos["dscp_to_priority"].items(), key=lambda kv: int(kv[0])):
        cname = "%sDSCP%s" % (PREFIX, dscp)
        nodes.append(QOS_CLASS.node([("match dscp %s" % dscp, [])], name=cname))
        classes.append(("class %s" % cname, [("set qos-group %d" % prio, [])]))
    nodes.append(QOS_POLICY.node(classes, kind="qos", name="%sQOS-IN" % PREFIX))
    nq = []
    for p in qos["lossless_priorities"]:
        nq.append(("class type network-qos c-8q-nq%d" % p, [("pause pfc-cos %d" % p, []), ("mtu %d" % drv.mtu(intent), [])]))
    # the default class carries jumbo frames too (Cisco roce_enable.py: c-8q-nq-default / mtu 9216)
    nq.append(("class type network-qos c-8q-nq-default", [("mtu %d" % drv.mtu(intent), [])]))
    nodes.append(QOS_POLICY.node(nq, kind="network-qos", name="%sNQ" % PREFIX))
    # ETS: DWRR shares of the RoCE queue and the default queue (roce_enable.py: 50 / 50); CNP strict
    queues = [("class type queuing c-out-8q-q%d" % qos["ecn_queue"], [
        ("bandwidth remaining percent %d" % qos["ets_roce_percent"], []),
        ("random-detect minimum-threshold %d kbytes maximum-threshold %d kbytes drop-probability %d weight 0 ecn"
         % (qos["ecn_min_kbytes"], qos["ecn_max_kbytes"], qos["ecn_probability_percent"]), [])]),
        ("class type queuing c-out-8q-q-default", [("bandwidth remaining percent %d" % qos["ets_default_percent"], [])])]
    if qos.get("cnp_strict_priority"):
        queues.append(("class type queuing c-out-8q-q%d" % qos["cnp_priority"], [("priority level 1", [])]))
    nodes.append(QOS_POLICY.node(queues, kind="queuing", name="%sQ-OUT" % PREFIX))
    if qos.get("pfc_watchdog"):
        # global switch of the PFC watchdog; the interface line alone leaves it off (Cisco RoCE examples)
        nodes.append(PFC_WATCHDOG_GLOBAL.node())
    nodes.append(SYSTEM_QOS.node([("service-policy type network-qos %sNQ" % PREFIX, []),
                                  ("service-policy type queuing output %sQ-OUT" % PREFIX, [])]))
    children = [PFC_MODE.node()]
    if qos.get("pfc_watchdog"):
        children.append(PFC_WATCHDOG.node())
    children.append(QOS_INPUT.node(name="%sQOS-IN" % PREFIX))
    return nodes, dict((drv.port(p), list(children)) for p in ports_of(intent))


FEATURE_PBR = Form("feature pbr")
ROUTE_MAP = Form("route-map {name} {action} {seq}", owns=r"route-map %s" % PREFIX)
POLICY_ROUTE_MAP = Form("ip policy route-map {name}", owns=r"ip policy route-map ")


def pbr_names(drv, ingress, bindings):
    """(route-map name, [ACL name per binding]) of one L3 ingress: one ACL per host source, named after its port
    (scheme B: the route-map's own name)."""
    name = "%sBIND-%s" % (PREFIX, safe_name(drv.port(ingress))) if not ingress.startswith("Vlan") else \
        "%sPBR-%s" % (PREFIX, ingress)
    return name, [name if len(bindings) == 1 else "%sBIND-%s" % (PREFIX, safe_name(drv.port(b["ingress"])))
                  for b in bindings]


def _pbr(drv, intent, qos):
    """Per L3 ingress interface ACLs + one route-map, and the interface line binding it.

    An ACL matched by a PBR route-map must not hold deny ACEs (Cisco PBR guidelines): local
    destinations are excluded by a route-map *deny* sequence first, which routes normally. Plain
    ``set ip next-hop A`` (no ``drop-on-fail``) falls back to normal routing when A becomes
    unreachable (cisco.nxos nxos_route_maps: drop-on-fail "Drop packets instead of using default
    routing when the configured next hop becomes unreachable")."""
    groups = pbr_groups(intent, svi_name)
    nodes = [FEATURE_PBR.node()] if groups else []
    interfaces = {}
    local = local_destinations(intent)
    for ingress, bindings in groups:
        name, acls = pbr_names(drv, ingress, bindings)
        seq = 10
        if local:
            # scheme B (one host per port): the local ACL names the host; scheme A: any source on the SVI
            src = "%s/32" % host_of(bindings[0]["source"]) if len(bindings) == 1 and not ingress.startswith("Vlan") else "any"
            aces = [("%d permit ip %s %s" % (10 * (i + 1), src, d), []) for i, d in enumerate(local)]
            nodes.append(ACL.node(aces, name="%s-LOCAL" % name))
            nodes.append(ROUTE_MAP.node([("match ip address %s-LOCAL" % name, [])], name=name, action="deny", seq=seq))
            seq += 10
        for b, acl in zip(bindings, acls):
            nodes.append(ACL.node([("10 permit ip %s/32 any" % host_of(b["source"]), [])], name=acl))
            nodes.append(ROUTE_MAP.node([("match ip address %s" % acl, []), ("set ip next-hop %s" % b["next_hop"], [])],
                                        name=name, action="permit", seq=seq))
            seq += 10
        interfaces.setdefault(ingress, []).append(POLICY_ROUTE_MAP.node(name=name))
    return nodes, interfaces


FEATURE = Form("feature {feature}", feature="bgp|interface-vlan")
LOAD_SHARING = Form("ip load-sharing address {fields}", owns=r"ip load-sharing address ")
VLAN = Form("vlan {vlan}", owns=False)   # read back per intent: NxosDriver.intent_owned
ROUTER_BGP = Form("router bgp {asn}")
IP_ADDRESS = Form("ip address {address}", owns=r"ip address ")
NO_SWITCHPORT = Form("no switchport")
SWITCHPORT = Form("switchport")
ACCESS_VLAN = Form("switchport access vlan {vlan}", owns=r"switchport access vlan ")
NO_SHUTDOWN = Form("no shutdown", owns=False)   # ours on the SVI only: NxosDriver._child_managed


def _underlay(drv, intent, qos):
    """loopback0, fabric /31s, host SVI + members or routed host ports, ECMP hash, ``router bgp``."""
    if not intent.get("bgp"):
        return [], {}
    bgp = intent["bgp"]
    nodes = [FEATURE.node(feature="bgp")]
    vlans = svis(intent)
    if vlans:
        nodes.append(FEATURE.node(feature="interface-vlan"))
    # ECMP hash on addresses and L4 ports: the RoCEv2 UDP source port varies per QP (Cisco N9K
    # Unicast Routing guide, "Configuring ECMP Load Balancing")
    nodes.append(LOAD_SHARING.node(fields="source-destination port source-destination"))
    nodes += [VLAN.node(vlan=v["vlan"]) for v in vlans]
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
    nodes.append(ROUTER_BGP.node(router, asn=bgp["asn"]))
    interfaces = {"loopback0": [IP_ADDRESS.node(address="%s/32" % intent["loopback"])]}
    for port, address in fabric_links(intent):
        interfaces.setdefault(drv.port(port), []).extend([NO_SWITCHPORT.node(), IP_ADDRESS.node(address=address)])
    for svi in vlans:
        interfaces.setdefault(svi_name(svi["vlan"]), []).extend([NO_SHUTDOWN.node(), IP_ADDRESS.node(address=svi["address"])])
        for member in svi["members"]:
            interfaces.setdefault(drv.port(member), []).extend([SWITCHPORT.node(), ACCESS_VLAN.node(vlan=svi["vlan"])])
    for host in routed_host_ports(intent):
        interfaces.setdefault(drv.port(host["port"]), []).extend([NO_SWITCHPORT.node(), IP_ADDRESS.node(address=host["address"])])
    return nodes, interfaces


attach(NxosDriver,
       Section("qos", _qos, top=(QOS_CLASS, QOS_POLICY, SYSTEM_QOS, PFC_WATCHDOG_GLOBAL),
               children=(PFC_MODE, PFC_WATCHDOG, QOS_INPUT)),
       MTU_SECTION,
       Section("pbr", _pbr, top=(FEATURE_PBR, ACL, ROUTE_MAP), children=(POLICY_ROUTE_MAP,)),
       # the default-VRF BGP instance is the plan's, whole (NX-OS has one `router bgp`)
       Section("underlay", _underlay, top=(FEATURE, LOAD_SHARING, VLAN, ROUTER_BGP),
               children=(IP_ADDRESS, NO_SWITCHPORT, SWITCHPORT, ACCESS_VLAN, NO_SHUTDOWN)))
