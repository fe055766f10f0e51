# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which public source backs each line a NOS driver renders (docs/switch-commands-sources.md): one list per NOS of
(regex on the stripped line, status, source), declared by its driver as ``line_sources``. A unit test fails on any
rendered line no entry matches, so no line ships without a source or an explicit ``unverified``."""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import UNVERIFIED, VERIFIED

_N = r"\d+"
_NAME = r"AIF-[\w-]+"
_IP = r"[\d.]+"
_NET = r"[\d.]+/\d+"

_AVD = "AVD eos_cli_config_gen templates + pyavd oracle test"
_CISCO = "paregupt/nx-os utils/roce_enable.py [R]; Cisco N9K QoS guide"
_NXAPI = "Cisco NX-API REST SDK 9.3x/10.5x examples [V]"
_DELL = "dellemc.enterprise_sonic module examples [R]"
_HLD = "sonic-net/SONiC doc/qos/SONiC_ROCEv2_support.md [R]"
_FBS = "dellemc sonic_fbs_* / Broadcom FBS HLD [R]"
_CLQ = "Cumulus Linux QoS guide / NVUE reference [V] + nvueschema oracle test"
_CLP = "NVUE reference PBR / Router Nexthop [V] + nvueschema oracle test"
_VEOS = "real vEOS 4.21 running-config (tests/fixtures/switches/eos/veos-4.21-leaf-running-config.txt) [V]"
_NVS = "nvueschema CL 5.18 oracle test"
_CLCAP = "real `nv config show -o commands` (tests/fixtures/switches/nvue/cl-dci-borderleaf01-nv-config-show-commands.txt) [V]"
_CLB = "Cumulus Linux BGP guide / NVUE reference Router BGP, VRF BGP [V] + " + _NVS
_NXC = "cisco.nxos 11.1.0 (ansible package)"
_DELLC = "dellemc.enterprise_sonic 3.2.0 (ansible package)"

EOS = [
    (r"interface Ethernet[\d/]+", VERIFIED, "Arista EOS Layer 1 Profiles (port names) [V]"),
    (r"mtu " + _N, VERIFIED, _AVD + "; 9214 ceiling: AVD p2p_uplinks_mtu default [R]"),
    (r"qos trust dscp", VERIFIED, _AVD),
    (r"priority-flow-control on", VERIFIED, _AVD),
    (r"priority-flow-control priority \d no-drop", VERIFIED, _AVD),
    (r"priority-flow-control pause watchdog", VERIFIED, _AVD),
    (r"priority-flow-control pause watchdog default (timeout|recovery-time) [\d.]+", VERIFIED,
     _AVD + "; real EOS 4.35.1F output (tests/fixtures/switches/eos/) [V]"),
    (r"priority-flow-control pause watchdog action drop", VERIFIED,
     _AVD + "; real EOS 4.35.1F output (tests/fixtures/switches/eos/) [V]"),
    (r"qos map dscp (%s )+to traffic-class \d" % _N, VERIFIED, _AVD + "; grouped form: real EOS 4.35.1F (tests/fixtures/switches/eos/) [V]"),
    (r"tx-queue \d", VERIFIED, _AVD),
    (r"random-detect ecn minimum-threshold %s kbytes maximum-threshold %s kbytes max-mark-probability %s" % (_N, _N, _N),
     VERIFIED, _AVD),
    (r"priority strict", VERIFIED, _AVD + "; hardware session diff in avd PR #6318 [V]"),
    (r"ip access-list " + _NAME, VERIFIED, _AVD),
    (r"%s permit ip (any %s|host %s any)" % (_N, _NET, _IP), VERIFIED, _AVD),
    (r"class-map type pbr match-any " + _NAME, VERIFIED, _AVD),
    (r"match ip access-group " + _NAME, VERIFIED, _AVD),
    (r"policy-map type pbr " + _NAME, VERIFIED, _AVD),
    (r"class " + _NAME, VERIFIED, _AVD),
    (r"set nexthop " + _IP, VERIFIED, _AVD),
    (r"service-policy type pbr input " + _NAME, VERIFIED, _AVD),
    # EOS underlay + PBR on the L3 ingress (section underlay; docs/switch-commands-sources.md#eos-underlay)
    (r"interface (Loopback0|Vlan%s)" % _N, VERIFIED, _AVD + " (loopback_interfaces, vlan_interfaces); " + _VEOS),
    (r"ip routing", VERIFIED, _AVD + " (ip_routing); " + _VEOS),
    (r"vlan %s" % _N, VERIFIED, _AVD + " (vlans); " + _VEOS),
    (r"no switchport", VERIFIED, _AVD + " (ethernet_interfaces switchport.enabled false); " + _VEOS),
    (r"switchport( mode access| access vlan %s)?" % _N, VERIFIED, _AVD + " (switchport access_vlan/mode); " + _VEOS),
    (r"ip address %s" % _NET, VERIFIED, _AVD + "; " + _VEOS),
    (r"router bgp %s" % _N, VERIFIED, _AVD + " (router_bgp); " + _VEOS),
    (r"router-id %s" % _IP, VERIFIED, _AVD + " (router_bgp.router_id); " + _VEOS),
    (r"timers bgp %s %s" % (_N, _N), VERIFIED, _AVD + " (router_bgp.timers)"),
    (r"maximum-paths %s" % _N, VERIFIED, _AVD + " (router_bgp.maximum_paths); " + _VEOS),
    (r"bgp bestpath as-path multipath-relax", UNVERIFIED, "no Arista source found (pyavd has no key for it)"),
    (r"neighbor %s remote-as %s" % (_IP, _N), VERIFIED, _AVD + " (router_bgp.neighbors); " + _VEOS),
    (r"neighbor %s allowas-in %s" % (_IP, _N), VERIFIED, _AVD + " (router_bgp.neighbors[].allowas_in.times) + pyavd oracle test"),
    (r"address-family ipv4", VERIFIED, _AVD + " (router_bgp.address_family_ipv4); " + _VEOS),
    (r"network %s" % _NET, VERIFIED, _AVD + " (address_family_ipv4.networks)"),
    # ETS shares (qos section): round robin with a bandwidth share on the RoCE and the best-effort tx-queue
    (r"no priority", VERIFIED, _AVD + " (qos_profiles tx_queues priority); hardware session diff in avd PR #6318; "
     "real EOS 4.34 running-config (tests/fixtures/switches/eos/eos-4.34.2.1f-7804-interface-tx-queue-excerpt.txt) [V]"),
    (r"bandwidth percent %s" % _N, VERIFIED, _AVD + " (qos_profiles tx_queues bandwidth_percent); real EOS 4.34 running-config "
     "(tests/fixtures/switches/eos/eos-4.34.2.1f-7804-interface-tx-queue-excerpt.txt) [V]"),
]
NXOS = [
    (r"interface Ethernet1/\d+(/\d+)?", VERIFIED, "Cisco NX-API reference 7.x breakout (port names) [V]"),
    (r"mtu " + _N, VERIFIED, _CISCO + "; Cisco TechNote 118994 [V]"),
    (r"class-map type qos match-all " + _NAME, VERIFIED, "Azure/AzureLocal-Supportability TOR QoS reference [R]"),
    (r"match dscp " + _N, VERIFIED, _CISCO),
    (r"policy-map type (qos|network-qos|queuing) " + _NAME, VERIFIED, _CISCO),
    (r"class " + _NAME, VERIFIED, _CISCO),
    (r"set qos-group \d", VERIFIED, _CISCO),
    (r"class type network-qos c-8q-nq(\d|-default)", VERIFIED, _CISCO),
    (r"pause pfc-cos \d", VERIFIED, _CISCO),
    (r"class type queuing c-out-8q-q(\d|-default)", VERIFIED, _CISCO),
    (r"bandwidth remaining percent " + _N, VERIFIED, _CISCO),
    (r"random-detect minimum-threshold %s kbytes maximum-threshold %s kbytes drop-probability %s weight 0 ecn"
     % (_N, _N, _N), VERIFIED, _CISCO),
    (r"priority level 1", VERIFIED, _CISCO),
    (r"priority-flow-control watch-dog-interval on", VERIFIED, _CISCO),
    (r"system qos", VERIFIED, _CISCO),
    (r"service-policy type network-qos " + _NAME, VERIFIED, _CISCO),
    (r"service-policy type queuing output " + _NAME, VERIFIED, _CISCO),
    (r"priority-flow-control mode on", VERIFIED, "Cisco N9K QoS guide 7.x (manualslib 2396766 p.172) [V]"),
    (r"service-policy type qos input " + _NAME, VERIFIED, "Cisco N9K QoS guide 7.x (manualslib 2396766 p.172) [V]"),
    (r"feature pbr", UNVERIFIED, "Cisco NX-OS Unicast Routing guides, PBR chapter 'Enabling the Policy-Based Routing "
     "Feature' (section seen, literal line only in a third-party quote)"),
    (r"ip access-list " + _NAME, VERIFIED, _NXAPI),
    (r"%s permit ip %s (%s|any)" % (_N, _NET, _NET), VERIFIED, _NXAPI),
    (r"route-map %s (deny|permit) %s" % (_NAME, _N), VERIFIED, _NXAPI + "; N9K Unicast Routing guide PBR [V]"),
    (r"set ip next-hop " + _IP, VERIFIED, _NXAPI),
    (r"match ip address " + _NAME, VERIFIED, "cisco.nxos nxos_route_maps rm_template `match ip address ACL` [R]"),
    (r"ip policy route-map " + _NAME, UNVERIFIED, "Cisco NX-OS Unicast Routing guides, PBR chapter (section seen, "
     "literal line only in community configs)"),
    # routed underlay + PBR on the L3 ingress (docs/underlay.md#nx-os-and-enterprise-sonic-klish)
    (r"feature bgp", VERIFIED, _NXC + " nxos_feature (`feature {name}`) [R]"),
    (r"feature interface-vlan", UNVERIFIED, "nxos_feature form; the feature name only in community NX-OS configs"),
    (r"ip load-sharing address source-destination port source-destination", VERIFIED,
     "Cisco N9K Unicast Routing guide 'Configuring ECMP Load Balancing' (ip load-sharing address ... port source-destination) [V]"),
    (r"vlan %s" % _N, VERIFIED, _NXC + " nxos_vlans (`vlan N`) [R]"),
    (r"interface (Vlan%s|loopback0)" % _N, VERIFIED, _NXC + " nxos_interfaces examples (`interface Vlan42`); loopback0 naming [R]"),
    (r"no shutdown", VERIFIED, _NXC + " rm_templates/interfaces.py (enabled -> [no] shutdown) [R]"),
    (r"(no )?switchport", VERIFIED, _NXC + " rm_templates/interfaces.py (mode layer2/layer3) [R]"),
    (r"switchport access vlan %s" % _N, VERIFIED, _NXC + " rm_templates/l2_interfaces.py [R]"),
    (r"ip address %s" % _NET, VERIFIED, _NXC + " nxos_l3_interfaces [R]"),
    (r"router bgp %s" % _N, VERIFIED, _NXC + " nxos_bgp_global EXAMPLES (show running-config | section ^router bgp) [R]"),
    (r"router-id %s" % _IP, VERIFIED, _NXC + " nxos_bgp_global EXAMPLES [R]"),
    (r"bestpath as-path multipath-relax", VERIFIED, _NXC + " nxos_bgp_global EXAMPLES [R]"),
    (r"timers bgp %s %s" % (_N, _N), VERIFIED, _NXC + " rm_templates/bgp_global.py timers.bgp [R]"),
    (r"address-family ipv4 unicast", VERIFIED, _NXC + " nxos_bgp_address_family / nxos_bgp_neighbor_address_family [R]"),
    (r"network %s" % _NET, VERIFIED, _NXC + " rm_templates/bgp_address_family.py networks [R]"),
    (r"maximum-paths %s" % _N, VERIFIED, _NXC + " rm_templates/bgp_address_family.py maximum_paths [R]"),
    (r"neighbor %s" % _IP, VERIFIED, _NXC + " nxos_bgp_global EXAMPLES [R]"),
    (r"remote-as %s" % _N, VERIFIED, _NXC + " nxos_bgp_global EXAMPLES [R]"),
    (r"allowas-in %s" % _N, VERIFIED, _NXC + " nxos_bgp_neighbor_address_family rm_template `allowas-in N` [R]"),
    (r"%s permit ip any %s" % (_N, _NET), VERIFIED, _NXAPI),
]
DELL_SONIC = [
    (r"interface Eth1/\d+", VERIFIED, _DELL + " (`interface Eth1/5`)"),
    (r"interface Eth1/\d+/\d+", VERIFIED, "dellemc sonic_port_breakout EXAMPLES (`show interface breakout`: Eth1/1/1) [R]"),
    (r"mtu " + _N, VERIFIED, _DELL),
    (r"buffer init lossless", VERIFIED, "dellemc sonic_qos_buffer example [R]"),
    (r"qos map dscp-tc " + _NAME, VERIFIED, _HLD),
    (r"dscp %s traffic-class \d" % _N, VERIFIED, _HLD),
    (r"qos wred-policy " + _NAME, VERIFIED, _HLD),
    (r"green minimum-threshold %s maximum-threshold %s drop-probability %s" % (_N, _N, _N), VERIFIED,
     _HLD + "; sonic-mgmt spytest wred.py [R]"),
    (r"ecn green", VERIFIED, "sonic-mgmt spytest wred.py; sonic-mgmt-framework show_config_qos.py [R]"),
    (r"qos scheduler-policy " + _NAME, VERIFIED, _HLD),
    (r"queue \d", VERIFIED, _HLD),
    (r"type strict", VERIFIED, _HLD),
    (r"type dwrr", VERIFIED, _HLD + " ETS example; dellemc sonic_qos_scheduler"),
    (r"weight %s" % _N, VERIFIED, _HLD + " ETS example (`weight 40`); dellemc sonic_qos_scheduler"),
    (r"qos-map dscp-tc " + _NAME, VERIFIED, _DELL),
    (r"priority-flow-control priority \d", VERIFIED, _DELL),
    (r"priority-flow-control watchdog (action drop|on detect-time %s|restore-time %s)" % (_N, _N), VERIFIED, _DELL),
    (r"cable-length %sm" % _N, VERIFIED, _DELL),
    (r"queue \d wred-policy " + _NAME, VERIFIED, _DELL),
    (r"scheduler-policy " + _NAME, VERIFIED, _DELL),
    (r"ip access-list " + _NAME, VERIFIED, _FBS),
    (r"seq %s (deny|permit) ip host %s (%s|any)" % (_N, _IP, _NET), VERIFIED, _FBS),
    (r"class-map %s match-type acl" % _NAME, VERIFIED, _FBS),
    (r"match access-group ip " + _NAME, VERIFIED, _FBS),
    (r"policy-map %s type forwarding" % _NAME, VERIFIED, _FBS),
    (r"class %s priority %s" % (_NAME, _N), VERIFIED, _FBS),
    (r"set ip next-hop " + _IP, VERIFIED, _FBS),
    (r"service-policy type forwarding in " + _NAME, VERIFIED, _FBS),
    # routed underlay + PBR on the L3 ingress (docs/underlay.md#nx-os-and-enterprise-sonic-klish)
    (r"ip load-share hash ipv4 ipv4-(src-ip|dst-ip|ip-proto|l4-src-port|l4-dst-port)", VERIFIED,
     _DELLC + " sonic_ecmp_load_share EXAMPLES (show running-configuration | grep load-share) [R]"),
    (r"interface Vlan%s" % _N, VERIFIED, _DELLC + " sonic_l3_interfaces EXAMPLES (`interface Vlan501`) [R]"),
    (r"interface Loopback0", UNVERIFIED, "Dell klish loopback name: no example read"),
    (r"ip address %s" % _NET, VERIFIED, _DELLC + " sonic_l3_interfaces EXAMPLES [R]"),
    (r"switchport access Vlan %s" % _N, UNVERIFIED, "Dell klish access-VLAN line: no running-configuration example read"),
    (r"router bgp %s" % _N, VERIFIED, _DELLC + " sonic_bgp / sonic_bgp_af EXAMPLES [R]"),
    (r"router-id %s" % _IP, VERIFIED, _DELLC + " sonic_bgp_af EXAMPLES [R]"),
    (r"timers %s %s" % (_N, _N), VERIFIED, _DELLC + " sonic_bgp_af / sonic_bgp_neighbors EXAMPLES (`timers 60 180`) [R]"),
    (r"bestpath as-path multipath-relax", UNVERIFIED, _DELLC + " sonic_bgp option as_path.multipath_relax; line form not shown"),
    (r"address-family ipv4 unicast", VERIFIED, _DELLC + " sonic_bgp_af / sonic_bgp_neighbors_af EXAMPLES [R]"),
    (r"maximum-paths %s" % _N, VERIFIED, _DELLC + " sonic_bgp_af EXAMPLES [R]"),
    (r"network %s" % _NET, VERIFIED, _DELLC + " sonic_bgp_af EXAMPLES [R]"),
    (r"neighbor %s" % _IP, VERIFIED, _DELLC + " sonic_bgp_neighbors EXAMPLES (`neighbor 192.168.1.4`) [R]"),
    (r"remote-as %s" % _N, VERIFIED, _DELLC + " sonic_bgp_neighbors EXAMPLES [R]"),
    (r"activate", VERIFIED, _DELLC + " sonic_bgp_neighbors_af EXAMPLES [R]"),
    (r"allowas-in %s" % _N, VERIFIED, _DELLC + " sonic_bgp_neighbors running-configuration example (`allowas-in 5` under the neighbor's address-family) [R]"),
]
NVUE = [
    (r"nv set interface swp\d+(s\d+)? link mtu " + _N, VERIFIED, "Cumulus Linux Interface Configuration [V]"),
    (r"nv set interface swp\d+(s\d+)? qos pfc-watchdog", VERIFIED, _CLQ),
    (r"nv set interface swp\d+(s\d+)? router pbr map " + _NAME, VERIFIED, _CLP),
    (r"nv set qos mapping default-global trust l3", VERIFIED, _CLQ),
    (r"nv set qos mapping default-global dscp %s switch-priority \d" % _N, VERIFIED, _CLQ),
    (r"nv set qos pfc default-global switch-priority \d", VERIFIED, _CLQ),
    (r"nv set qos congestion-control default-global traffic-class \d (min-threshold|max-threshold|probability) " + _N,
     VERIFIED, _CLQ),
    (r"nv set qos congestion-control default-global traffic-class \d ecn enable", VERIFIED, _CLQ),
    (r"nv set qos egress-scheduler default-global traffic-class \d mode (strict|dwrr)", VERIFIED, _CLQ),
    (r"nv set qos egress-scheduler default-global traffic-class \d bw-percent \d+", VERIFIED,
     _CLQ + "; RoCE default ETS TC3 50 / TC0 50 (docs/qos.md); path /qos/egress-scheduler/{profile}/traffic-class/{tc} bw-percent"),
    (r"nv set qos traffic-pool default-(lossless|lossy) memory-percent " + _N, VERIFIED,
     "CL QoS guide, Flow Control Buffers [V] + nvueschema oracle test"),
    (r"nv set qos pfc-watchdog (polling-interval|robustness) " + _N, VERIFIED, _CLQ),
    (r"nv set router pbr state enabled", VERIFIED, _CLP),
    (r"nv set router nexthop group %s via %s" % (_NAME, _IP), VERIFIED, _CLP),
    (r"nv set router pbr map %s rule %s match (source|destination)-ip %s" % (_NAME, _N, _NET), VERIFIED, _CLP),
    (r"nv set router pbr map %s rule %s action nexthop-group %s" % (_NAME, _N, _NAME), VERIFIED, _CLP),
    (r"nv set router pbr map %s rule %s action vrf default" % (_NAME, _N), UNVERIFIED,
     _CLP + "; but the CL 5.15 PBR guide says setting the VRF works in a virtual environment only, "
     "not on an NVIDIA switch (docs/underlay.md#pbr-fallback-per-nos)"),
    # NVUE underlay + PBR on the SVI (CL 5.15+ paths; docs/switch-commands-sources.md#nvue-underlay)
    (r"nv set interface (lo|swp\d+(s\d+)?|vlan%s) ipv4 address %s" % (_N, _NET), VERIFIED,
     _NVS + "; `ip address` form (CL <= 5.14) in " + _CLCAP),
    (r"nv set interface vlan%s link mtu %s" % (_N, _N), VERIFIED, "Cumulus Linux Interface Configuration [V] + " + _NVS),
    (r"nv set interface vlan%s router pbr map %s" % (_N, _NAME), VERIFIED, _CLP + "; PBR on SVIs: CL PBR guide [V]"),
    (r"nv set interface swp\d+(s\d+)? bridge domain br_default access %s" % _N, VERIFIED,
     "Cumulus Linux Ethernet Bridging - VLAN-aware (access ports) [V] + " + _NVS),
    (r"nv set bridge domain br_default vlan %s" % _N, VERIFIED, "Cumulus Linux Ethernet Bridging - VLAN-aware [V] + " + _NVS),
    (r"nv set router bgp (autonomous-system %s|router-id %s)" % (_N, _IP), VERIFIED, _CLB + "; " + _CLCAP),
    (r"nv set (vrf default )?router bgp state enabled", VERIFIED, _CLB + "; `enable on` form (CL <= 5.14) in " + _CLCAP),
    (r"nv set vrf default router bgp address-family ipv4-unicast state enabled", VERIFIED, _CLB),
    (r"nv set vrf default router bgp address-family ipv4-unicast network %s" % _NET, VERIFIED, _CLB + "; " + _CLCAP),
    (r"nv set vrf default router bgp address-family ipv4-unicast multipaths ebgp %s" % _N, VERIFIED, _CLB),
    (r"nv set vrf default router bgp path-selection multipath aspath-ignore enabled", VERIFIED, _CLB),
    (r"nv set vrf default router bgp neighbor %s address-family ipv4-unicast aspath allow-my-asn (state enabled|occurrences %s)" % (_IP, _N),
     VERIFIED, "NVUE schema /vrf/{vrf-id}/router/bgp/neighbor/{neighbor-id}/address-family/ipv4-unicast/aspath/allow-my-asn "
     "(state, occurrences 1-10; nvueschema 5.18) + nvueschema oracle test"),
    (r"nv set vrf default router bgp neighbor %s (remote-as %s|type numbered|timers (keepalive|hold) %s)" % (_IP, _N, _N),
     VERIFIED, _CLB),
    (r"nv set system forwarding ecmp-hash (source-ip|destination-ip|ip-protocol|source-port|destination-port) enabled",
     VERIFIED, "Cumulus Linux Equal Cost Multipath Load Sharing (custom hashing) [V] + " + _NVS),
]
# FRR 8.4 (docs.frrouting.org/en/stable-8.4/): the routed twin runs these on FRR 8.4.4 from Debian.
_FRR = "FRR 8.4 user guide [V]"
FRR = [
    (r"interface (lo|vlan%s|[A-Za-z][\w./:-]*)" % _N, VERIFIED, _FRR + ", zebra: interface"),
    (r"ip address %s" % _NET, VERIFIED, _FRR + ", zebra: ip address"),
    (r"exit", VERIFIED, _FRR + ", vtysh node exit"),
    (r"pbr-policy %s" % _NAME, VERIFIED, _FRR + ", PBR: pbr-policy"),
    (r"nexthop-group %s" % _NAME, VERIFIED, _FRR + ", Nexthop groups"),
    (r"nexthop %s" % _IP, VERIFIED, _FRR + ", Nexthop groups: nexthop"),
    (r"router bgp %s" % _N, VERIFIED, _FRR + ", BGP: router bgp"),
    (r"bgp router-id %s" % _IP, VERIFIED, _FRR + ", BGP: bgp router-id"),
    (r"no bgp ebgp-requires-policy", VERIFIED, _FRR + ", BGP: bgp ebgp-requires-policy"),
    (r"bgp bestpath as-path multipath-relax", VERIFIED, _FRR + ", BGP: bgp bestpath as-path multipath-relax"),
    (r"timers bgp %s %s" % (_N, _N), UNVERIFIED, "no FRR docs entry found; accepted and shown by FRR 8.4.4 (twin)"),
    (r"neighbor %s remote-as %s" % (_IP, _N), VERIFIED, _FRR + ", BGP: neighbor PEER remote-as"),
    (r"address-family ipv4 unicast", VERIFIED, _FRR + ", BGP: address-family"),
    (r"network %s" % _NET, VERIFIED, _FRR + ", BGP: network"),
    (r"maximum-paths %s" % _N, VERIFIED, _FRR + ", BGP: maximum-paths"),
    (r"neighbor %s allowas-in %s" % (_IP, _N), VERIFIED, _FRR + ", BGP: neighbor PEER allowas-in (1-10)"),
    (r"exit-address-family", VERIFIED, _FRR + ", BGP: exit-address-family"),
    (r"pbr-map %s seq %s" % (_NAME, _N), VERIFIED, _FRR + ", PBR: pbr-map NAME seq"),
    (r"match (src|dst)-ip %s" % _NET, VERIFIED, _FRR + ", PBR: match src-ip / dst-ip"),
    (r"set nexthop-group %s" % _NAME, VERIFIED, _FRR + ", PBR: set nexthop-group"),
    (r"set vrf unchanged", VERIFIED, _FRR + ", PBR: set vrf unchanged"),
]
# AsterNOS: one line per Easy RoCE REST leaf of our profile (nos/asternos.py). The paths, the POST body and the
# leaves' names and value forms are the REST manual's; what it does not show is one of the two platform items
# `port_naming` and `transaction` (fabric/platforms.py), named in the note.
_ER = "Easy RoCE REST manual (docs.asternos.com/zh/aidc/restapi-manual/easy-roce/, AsterNOS v3.1 R0500)"
ASTERNOS = [
    (r"roce-profiles aif_roce mode lossless", VERIFIED, _ER + ": POST roce-profiles {\"name\", \"mode\": \"lossless\"}"),
    (r"roce-profiles aif_roce cable-length CABLE_5m", VERIFIED, _ER + ": GET sample \"cable-length\": \"CABLE_5m\""),
    (r"roce-profiles aif_roce cable-length CABLE_\d+m", UNVERIFIED,
     "transaction: the leaf is the manual's, the value form generalises its only sample (CABLE_5m)"),
    (r"roce-profiles aif_roce bind-interfaces Ethernet\S+", UNVERIFIED,
     "port_naming: the leaf is the manual's (bind-interfaces*), the port names are the plan's guess (manual samples "
     "Ethernet1, Ethernet4:4; Asterfusion's community-SONiC CX532P-M-H port_config.ini: Ethernet1, Ethernet5, ...)"),
]


def config_db_rows(tables):
    """A CONFIG_DB driver's rows from its Table declarations (nos/sonic_tables.py ``TABLES``): one per table key form and
    per owned field, so a table cannot ship without its source."""
    rows = []
    for table in tables:
        rows.append((re.escape(table.name) + r"\|\S+", table.key_source[0], table.key_source[1]))
        if not table.fields:   # a map or list-of-ports table: every field of an owned key is the key's
            rows.append((re.escape(table.name) + r"\|\S+ \S+ \S+", table.key_source[0], table.key_source[1]))
        for field, (status, source) in sorted(table.fields.items()):
            rows.append((r"%s\|\S+ %s \S+" % (re.escape(table.name), re.escape(field)), status, source))
    return rows


_COMPILED = {}


def _compiled(driver):
    rows = driver.line_sources
    key = id(rows)
    if key not in _COMPILED:
        _COMPILED[key] = (rows, [(re.compile(regex + r"$"), status, source) for regex, status, source in rows])
    return _COMPILED[key][1]


def source_of(driver, line):
    """(status, source) of one rendered line (the driver's ``line_sources``), or None when no entry covers it."""
    text = line.strip()
    for regex, status, source in _compiled(driver):
        if regex.match(text):
            return status, source
    return None


def audit(driver, config):
    """Rendered config -> (lines without a source, unverified lines)."""
    missing, unverified = [], []
    for line in config.splitlines():
        if not line.strip() or line.strip() == "!":
            continue
        found = source_of(driver, line)
        if found is None:
            missing.append(line.strip())
        elif found[0] != VERIFIED:
            unverified.append(line.strip())
    return missing, unverified
