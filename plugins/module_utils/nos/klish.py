# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Enterprise SONiC klish CLI driver: Dell/Broadcom Enterprise SONiC (dell_sonic). (AsterNOS has its own driver,
nos/asternos.py: Asterfusion documents none of these lines.)

klish has no configuration session in the versions we target; the transaction is the computed
reverse of the applied remediation (hier_config rollback), re-verified after use.
Sections: qos, mtu, pbr (FBS forwarding policy on the L3 ingress: the host SVI or each routed host port)
and underlay (Loopback0, fabric /31s, host SVI + VLAN members or routed host ports, ``router bgp``, ECMP hash).
Command sources: docs/switch-commands-sources.md#enterprise-sonic-klish and
#underlay-and-l3-ingress-pbr-nx-os-and-enterprise-sonic-klish.
"""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import counters as roce_counters, sources, transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import ACL, CliDriver, MTU_SECTION
from ansible_collections.aifabric.roce.plugins.module_utils.nos.l3plan import fabric_links, pbr_groups, routed_host_ports, svis
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sections import Form, Section, attach
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drain import NoDrain
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Unsupported

ECMP_HASH_FIELDS = ("src-ip", "dst-ip", "ip-proto", "l4-src-port", "l4-dst-port")


def svi_name(vlan):
    return "Vlan%d" % vlan


def _kbytes(value):
    """A WRED threshold as the running config prints it -> our unit (KBytes of 1000 bytes, as klish takes it).

    The mgmt-framework renderer divides the stored bytes: by 1000 in current builds (Python 3 prints
    ``150.0``), by 1024 in older ones (``146.484375`` for 150000 bytes); sources in
    docs/switch-commands-sources.md#enterprise-sonic-klish. A value neither way maps back to whole KBytes
    stays as printed, so it shows up as drift."""
    try:
        num = float(value)
    except ValueError:
        return value
    if num == int(num):
        return str(int(num))
    as_bytes = num * 1024
    if as_bytes == int(as_bytes) and int(as_bytes) % 1000 == 0:
        return str(int(as_bytes) // 1000)
    return value


_WRED = re.compile(r"^(\s*(?:green|yellow|red) minimum-threshold )(\S+)( maximum-threshold )(\S+)( drop-probability .*)$")


def normalize_running(text):
    """Dell/Broadcom klish running-configuration -> the forms the driver renders: WRED thresholds in whole
    KBytes, and the older renderer's ``pfc priority N`` as ``priority-flow-control priority N``."""
    out = []
    for line in text.splitlines():
        m = _WRED.match(line)
        if m:
            line = m.group(1) + _kbytes(m.group(2)) + m.group(3) + _kbytes(m.group(4)) + m.group(5)
        m = re.match(r"^(\s*)pfc priority (\d+)\s*$", line)
        if m:
            line = "%spriority-flow-control priority %s" % (m.group(1), m.group(2))
        out.append(line)
    return "\n".join(out) + "\n"


class KlishDriver(CliDriver):
    name = "dell_sonic"
    device_type = device_type_for(name)
    # the klish command tree defines `show running-configuration` (sonic-mgmt-framework
    # CLI/clitree/cli-xml/enable_mode.xml); `show running-config` only works as an abbreviation
    show_running = "show running-configuration"
    indent = 1
    hier_platform = "GENERIC"
    transaction = transactions.KlishReverseTxn
    drain = NoDrain("no vendor source for a BGP graceful-shutdown line in Enterprise SONiC klish")
    # sonic-utilities' tables in the Linux shell under klish; every capture is community SONiC's (sonic-utilities'
    # tests; the Dell Z9332 outputs ran community SONiC 202012, `show version` in sonic-buildimage #9453); no Dell
    # Enterprise SONiC page or capture shows these tables in its Linux shell
    counters = roce_counters.SONIC
    line_sources = sources.DELL_SONIC   # the public source of every line it renders (nos/sources.py)
    counter_evidence = roce_counters.ALL_UNVERIFIED
    bgp_summary = Unsupported("no captured klish `show bgp ipv4 unicast summary` of Dell Enterprise SONiC")
    ppd_read = Unsupported("no captured PBR show output of dell_sonic to test a parser on")
    normalize_running = staticmethod(normalize_running)
    sections = SECTIONS + ("underlay",)
    error_pattern = r"%\s*Error"
    save_command = "write memory"

    def after_login(self, conn):
        """netmiko's dell_sonic checks config mode with timing reads: read up to the klish prompt (nos/connection.py)."""
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import prompt_config_checks
        prompt_config_checks(conn)

    def parse(self, running, intent, sections=SECTIONS):
        return CliDriver.parse(self, normalize_running(running), intent, sections)

    def managed_interfaces(self, intent, sections):
        names = CliDriver.managed_interfaces(self, intent, sections)
        names.add("Loopback0")
        names.update(svi_name(v["vlan"]) for v in svis(intent))
        return names

    def interface_rank(self, name):
        # `interface VlanN` creates the VLAN on SONiC: it goes before `switchport access Vlan N` on members
        return 0 if name.startswith("Vlan") else 1

    def child_rank(self, parent, child):
        if parent.startswith("neighbor "):
            return 0 if child.startswith("remote-as ") else 1
        if parent.startswith("router bgp "):
            order = ("router-id ", "timers ", "bestpath ", "address-family ", "neighbor ")
            return next((i for i, head in enumerate(order) if child.startswith(head)), len(order))
        return 0


# --- sections: each concern's render next to the line forms read back (nos/sections.py) ----------------
BUFFER_INIT = Form("buffer init lossless")
DSCP_TC = Form("qos map dscp-tc {name}", owns=r"qos map dscp-tc %s" % PREFIX)
WRED = Form("qos wred-policy {name}", owns=r"qos wred-policy %s" % PREFIX)
SCHEDULER = Form("qos scheduler-policy {name}", owns=r"qos scheduler-policy %s" % PREFIX)
PFC = r"priority-flow-control "          # every PFC line of a port is the qos section's
PORT_DSCP_TC = Form("qos-map dscp-tc {name}", owns=r"qos-map dscp-tc ")
PORT_PFC = Form("priority-flow-control priority {priority}", owns=PFC)
PORT_WATCHDOG = Form("priority-flow-control watchdog {setting}", owns=PFC)
CABLE_LENGTH = Form("cable-length {length}m", owns=r"cable-length ")
PORT_WRED = Form("queue {queue} wred-policy {name}", owns=r"queue \d+ wred-policy ")
PORT_SCHEDULER = Form("scheduler-policy {name}", owns=r"scheduler-policy ")


def _qos(drv, intent, qos):
    # lossless buffer pools, profiles and priority groups from the platform defaults (dellemc sonic_qos_buffer);
    # Dell asks to save and reboot after the first `buffer init lossless`
    nodes = [BUFFER_INIT.node()]
    nodes.append(DSCP_TC.node([("dscp %s traffic-class %s" % (d, p), [])
                               for d, p in complete_dscp_map(qos)],   # every DSCP, none left to a platform default
                              name="%sDSCP-TC" % PREFIX))
    nodes.append(WRED.node([("green minimum-threshold %d maximum-threshold %d drop-probability %d"
                             % (qos["ecn_min_kbytes"], qos["ecn_max_kbytes"], qos["ecn_probability_percent"]), []),
                            ("ecn green", [])], name="%sECN" % PREFIX))
    # ETS: DWRR weights of the RoCE queue and the default queue (TC0 -> queue 0), CNP strict; the
    # `queue N` / `type dwrr` / `weight W` form is the SONiC ROCEv2 HLD's ETS example (3.6.2.3.5)
    queues = [("queue %d" % qos["ecn_queue"], [("type dwrr", []), ("weight %d" % qos["ets_roce_percent"], [])]),
              ("queue 0", [("type dwrr", []), ("weight %d" % qos["ets_default_percent"], [])])]
    if qos.get("cnp_strict_priority"):
        queues.append(("queue %d" % qos["cnp_priority"], [("type strict", [])]))
    nodes.append(SCHEDULER.node(queues, name="%sSCHED" % PREFIX))
    children = [PORT_DSCP_TC.node(name="%sDSCP-TC" % PREFIX)]
    children += [PORT_PFC.node(priority=p) for p in qos["lossless_priorities"]]
    if qos.get("pfc_watchdog"):
        children += [PORT_WATCHDOG.node(setting="action drop"),
                     PORT_WATCHDOG.node(setting="on detect-time %d" % qos["pfc_watchdog_detect_ms"]),
                     PORT_WATCHDOG.node(setting="restore-time %d" % qos["pfc_watchdog_restore_ms"])]
    # headroom follows the cable length (dellemc sonic_qos_interfaces: `cable-length 40m`)
    children.append(CABLE_LENGTH.node(length=qos["cable_length_m"]))
    children.append(PORT_WRED.node(queue=qos["ecn_queue"], name="%sECN" % PREFIX))
    children.append(PORT_SCHEDULER.node(name="%sSCHED" % PREFIX))
    return nodes, dict((drv.port(p), list(children)) for p in ports_of(intent))


CLASS_MAP = Form("class-map {name} match-type acl", owns=r"class-map %s" % PREFIX)
POLICY_MAP = Form("policy-map {name} type forwarding", owns=r"policy-map %s" % PREFIX)
FORWARDING_IN = Form("service-policy type forwarding in {name}", owns=r"service-policy type forwarding in ")


def _pbr(drv, intent, qos):
    """(Flow Based Services, forwarding policy) per binding an ACL (deny ACEs exclude the local destinations:
    FBS takes no action on a classifier's DROP rules, Broadcom FBS HLD 2.2.2.1.1.2) and a class; one forwarding
    policy per L3 ingress (the SVI in scheme A, the routed port in scheme B). No ``set interface null``: FBS
    drops on unreachable next hops only with that explicit "default drop action" (HLD 2.3.4)."""
    nodes, interfaces = [], {}
    for ingress, bindings in pbr_groups(intent, svi_name):
        name = "%sBIND-%s" % (PREFIX, safe_name(ingress)) if len(bindings) == 1 and not ingress.startswith("Vlan") \
            else "%sPBR-%s" % (PREFIX, ingress)
        classes = []
        for i, b in enumerate(bindings):
            cname = name if len(bindings) == 1 and not ingress.startswith("Vlan") else "%sBIND-%s" % (PREFIX, safe_name(b["ingress"]))
            src = host_of(b["source"])
            rules = [("seq %d deny ip host %s %s" % (10 * (j + 1), src, d), []) for j, d in enumerate(local_destinations(intent))]
            rules.append(("seq %d permit ip host %s any" % (10 * (len(rules) + 1), src), []))
            nodes.append(ACL.node(rules, name=cname))
            nodes.append(CLASS_MAP.node([("match access-group ip %s" % cname, [])], name=cname))
            classes.append(("class %s priority %d" % (cname, 10 + i), [("set ip next-hop %s" % b["next_hop"], [])]))
        nodes.append(POLICY_MAP.node(classes, name=name))
        interfaces.setdefault(drv.port(ingress), []).append(FORWARDING_IN.node(name=name))
    return nodes, interfaces


LOAD_SHARE = Form("ip load-share hash ipv4 ipv4-{field}", owns=r"ip load-share hash ipv4 ")
ROUTER_BGP = Form("router bgp {asn}", asn=r"\d+")   # the default-VRF instance, whole (`router bgp N vrf V` is not ours)
IP_ADDRESS = Form("ip address {address}", owns=r"ip address ")
ACCESS_VLAN = Form("switchport access Vlan {vlan}", owns=r"switchport access Vlan ")


def _underlay(drv, intent, qos):
    """Loopback0, fabric /31s, host SVI + members or routed host ports, ECMP hash, ``router bgp``."""
    if not intent.get("bgp"):
        return [], {}
    bgp = intent["bgp"]
    # ECMP hash: addresses, protocol and both L4 ports (the RoCEv2 UDP source port varies per QP);
    # dellemc sonic_ecmp_load_share shows these lines in `show running-configuration`
    nodes = [LOAD_SHARE.node(field=field) for field in ECMP_HASH_FIELDS]
    router = [("router-id %s" % bgp["router_id"], [])]
    router.append(("timers %d %d" % (bgp["keepalive_seconds"], bgp["hold_seconds"]), []))
    if bgp["multipath_relax"]:
        router.append(("bestpath as-path multipath-relax", []))
    router.append(("address-family ipv4 unicast",
                   [("maximum-paths %d" % bgp["maximum_paths"], [])] + [("network %s" % net, []) for net in bgp["networks"]]))
    for n in bgp["neighbors"]:
        # spine_allowas_in: see docs/underlay.md "When a spine loses a leaf"
        family = [("activate", [])] + ([("allowas-in %d" % bgp["allowas_in"], [])] if bgp.get("allowas_in") else [])
        router.append(("neighbor %s" % n["address"], [("remote-as %d" % n["remote_as"], []),
                                                      ("address-family ipv4 unicast", family)]))
    nodes.append(ROUTER_BGP.node(router, asn=bgp["asn"]))
    # SONiC ports are routed unless they are VLAN members: no `no switchport` line exists
    interfaces = {"Loopback0": [IP_ADDRESS.node(address="%s/32" % intent["loopback"])]}
    for port, address in fabric_links(intent):
        interfaces.setdefault(drv.port(port), []).append(IP_ADDRESS.node(address=address))
    for svi in svis(intent):
        interfaces.setdefault(svi_name(svi["vlan"]), []).append(IP_ADDRESS.node(address=svi["address"]))
        for member in svi["members"]:
            interfaces.setdefault(drv.port(member), []).append(ACCESS_VLAN.node(vlan=svi["vlan"]))
    for host in routed_host_ports(intent):
        interfaces.setdefault(drv.port(host["port"]), []).append(IP_ADDRESS.node(address=host["address"]))
    return nodes, interfaces


attach(KlishDriver,
       Section("qos", _qos, top=(BUFFER_INIT, DSCP_TC, WRED, SCHEDULER),
               children=(PORT_DSCP_TC, PORT_PFC, PORT_WATCHDOG, CABLE_LENGTH, PORT_WRED, PORT_SCHEDULER)),
       MTU_SECTION,
       Section("pbr", _pbr, top=(ACL, CLASS_MAP, POLICY_MAP), children=(FORWARDING_IN,)),
       Section("underlay", _underlay, top=(LOAD_SHARE, ROUTER_BGP), children=(IP_ADDRESS, ACCESS_VLAN)))
