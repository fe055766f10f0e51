# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arista EOS driver (netmiko arista_eos), applied in a configuration session (``configure session``, ``commit`` /
``commit timer``, ``abort``). Sections qos, mtu, pbr (on the L3 ingress), underlay (``ip routing``, Loopback0, fabric
/31s, the host VLAN + SVI or routed host ports, the default-VRF ``router bgp``, owned whole). Line forms follow pyavd's
eos_cli_config_gen (tests/unit/nos/test_eos_pyavd_oracle.py); sources: docs/switch-commands-sources.md#arista-eos."""

from __future__ import annotations

import copy
import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state, counters as roce_counters, ppd_state, sources, transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, l3_ingress, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Op
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import (
    ACL, CliDriver, MTU, MTU_SECTION, dump_tree, natural_key, parse_tree, sort_tree)
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sections import Form, Section, attach
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drain import NoDrain
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Read
from ansible_collections.aifabric.roce.plugins.module_utils.nos.l3plan import fabric_links


def default_traffic_class(dscp):
    """EOS's default DSCP -> traffic-class map: TC = DSCP // 8, except DSCP 0-7 -> TC 1 and 8-15 -> TC 0
    (the "low-end inversion"). Source: docs/switch-commands-sources.md#eos-defaults-hidden-from-running-config."""
    tc = int(dscp) // 8
    return {0: 1, 1: 0}.get(tc, tc)


def _seconds(ms):
    """Milliseconds as EOS's watchdog timers take them: seconds, no trailing zeros (200 -> 0.2, 1000 -> 1)."""
    return ("%.3f" % (ms / 1000.0)).rstrip("0").rstrip(".")


_QOS_MAP = re.compile(r"^qos map dscp ((?:\d+ )+)to traffic-class (\d+)( drop-precedence \d+)?$")


# EOS defaults it leaves out of `show running-config` (a real vEOS 4.21 config, tests/fixtures/switches/eos/):
# `switchport` and `switchport mode access` on an access port, and older releases print every neighbor's
# default `maximum-routes 12000` although nobody typed it.
_HIDDEN = (r"switchport$", r"switchport mode access$", r"neighbor \S+ maximum-routes 12000$")


def _vlan_ids(spec):
    """EOS prints VLANs range-compressed (``vlan 10,20``, ``vlan 100-102``): the ids of one ``vlan`` line."""
    out = []
    for item in spec.split(","):
        first, _sep, last = item.partition("-")
        if not (first.isdigit() and (not last or last.isdigit())):
            return []
        out += range(int(first), int(last or first) + 1)
    return out


def _visible(nodes):
    """A managed tree as EOS prints it (both the render and the parse go through here): ``qos map dscp`` one line per
    DSCP, entries equal to the default map dropped; ``priority strict`` (the tx-queue default; EOS shows the other
    form, ``no priority``) dropped, and a ``tx-queue`` left empty with it."""
    out = []
    for line, children in nodes:
        if any(re.match(pat, line) for pat in _HIDDEN):
            continue
        m = _QOS_MAP.match(line)
        if m:
            for dscp in m.group(1).split():
                if int(m.group(2)) != default_traffic_class(dscp) or m.group(3):
                    out.append(("qos map dscp %s to traffic-class %s%s" % (dscp, m.group(2), m.group(3) or ""), []))
            continue
        if re.match(r"(uc-)?tx-queue \d+$", line):
            children = [c for c in children if c[0] != "priority strict"]
            if not children:
                continue
        out.append((line, _visible(children)))
    return out


class EosDriver(CliDriver):
    sections = SECTIONS + ("underlay",)
    name = "eos"
    device_type = device_type_for(name)
    indent = 3
    hier_platform = "ARISTA_EOS"
    transaction = transactions.EosSessionTxn
    # drain: EOS drains through maintenance mode (Arista EOS User Manual, Maintenance Mode), a block outside the managed
    # router bgp; that mode is reported when found (`maintenance` / ` unit System` / `  quiesce`; no captured running
    # config seen: unverified)
    drain = NoDrain("EOS drains through maintenance mode (maintenance / unit System / quiesce), outside the managed "
                    "router bgp: not rendered yet")
    maintenance_drain = re.compile(r"^maintenance > unit System > quiesce$")
    counters = [Read("show priority-flow-control counters | json", roce_counters.parse_eos_pfc),
                Read("show qos interfaces ecn counters queue | json", roce_counters.parse_eos_ecn),
                Read("show priority-flow-control counters watchdog | json", roce_counters.parse_eos_pfc_watchdog)]
    line_sources = sources.EOS
    counter_evidence = dict(pfc_rx="verified", pfc_tx="verified", ecn_marked="verified", wd_storms="unverified",
                            wd_restores="unverified")
    checks = ("bgp_sessions", "ppd_paths")
    bgp_summary = Read("show ip bgp summary vrf all | json", bgp_state.parse_eos)
    ppd_read = ppd_state.EosPolicyMap("`show policy-map type pbr | json`: class per host source, `setNexthop`, policy on "
                                      "the L3 ingress")
    error_pattern = r"% ?(Invalid input|Incomplete command|Ambiguous command|Unavailable command|Error)"
    save_command = "copy running-config startup-config"
    pfc_counters_command = "show priority-flow-control counters | json"

    def parse_pfc_counters(self, text):
        """EOS's JSON (``interfaceCounters`` -> ``rxFrames`` / ``txFrames``, nos/counters.py ``parse_eos_pfc``)."""
        return dict((port, {"rx_pfc": prios["all"].get("pfc_rx", 0), "tx_pfc": prios["all"].get("pfc_tx", 0)})
                    for port, prios in roce_counters.parse_eos_pfc(text).items())

    def canonical(self, nodes):
        """CliDriver's order, an interface's switchport lines first (EOS takes ``ip address`` only on a routed port)."""
        glob = sorted([n for n in nodes if not re.match(self.interface_re, n[0])], key=lambda n: natural_key(n[0]))
        intfs = sorted([n for n in nodes if re.match(self.interface_re, n[0])], key=lambda n: natural_key(n[0]))
        intfs = [(line, sorted(kids, key=lambda k: 0 if re.match(r"(no )?switchport", k[0]) else 1))
                 for line, kids in sort_tree(intfs)]
        lines = dump_tree(sort_tree(glob) + intfs, self.indent)
        return "\n".join(lines) + ("\n" if lines else "")

    def render(self, intent, qos, sections=SECTIONS):
        """The managed config as EOS shows it (``_visible``): what ``parse`` reads once it is applied."""
        return self.canonical(_visible(self.render_tree(intent, qos, sections)))

    def render_explicit(self, intent, qos, sections=SECTIONS):
        """Every line of the intent, defaults included (what AVD renders; the pyavd oracle compares this)."""
        return self.canonical(self.render_tree(intent, qos, sections))

    def parse(self, running, intent, sections=SECTIONS):
        out = []
        for line, children in parse_tree(running):
            m = re.match(self.interface_re, line)
            if m:
                kept = [c for c in children if self.managed_child(m.group(1), c[0], intent, sections)]
                if kept:
                    out.append((line, kept))
            elif "underlay" in sections and re.match(r"vlan [\d,-]+$", line):
                # only our VLAN, whatever else the line lists; its children (name, state) are not ours
                vlans = self.host_vlans(intent)
                out += [("vlan %d" % v, []) for v in _vlan_ids(line.split()[1]) if v in vlans]
            elif self._owned(line, sections):
                out.append((line, children))
        return self.canonical(_visible(out))

    @staticmethod
    def host_vlans(intent):
        return set(i["vlan"] for i in intent.get("host_interfaces") or [] if i["kind"] == "svi")

    def managed_child(self, interface, line, intent, sections):
        if interface in self.virtual_interfaces(intent):
            patterns = self.l3_children
        elif interface in set(self.port(p) for p in ports_of(intent)):
            patterns = self.interface_children
        else:
            return False
        return any(re.match(pat, line) for sec in sections for pat in patterns.get(sec, ()))

    def owns_interface(self, interface, intent, sections=(), children=()):
        """Loopback0 and the host SVI: ours whole, not part of the outside view."""
        return interface in self.virtual_interfaces(intent)

    def outside_global(self, line, intent, sections):
        """A top-level line as the outside view keeps it (None: managed); a ``vlan`` list without our VLAN."""
        if self._owned(line, sections):
            return None
        if "underlay" in sections and re.match(r"vlan [\d,-]+$", line):
            ids = _vlan_ids(line.split()[1])
            rest = [v for v in ids if v not in self.host_vlans(intent)]
            if ids and not rest:
                return None
            if ids and len(rest) < len(ids):
                return "vlan " + ",".join(str(v) for v in rest)
        return line

    @staticmethod
    def ets_queues(qos):
        """{tx-queue: [lines]} of the ETS shares: RoCE queue and best-effort queue in round robin."""
        if not qos.get("ets_roce_percent"):
            return {}
        default_queue = default_traffic_class(0)
        return {qos["ecn_queue"]: [("no priority", []), ("bandwidth percent %d" % qos["ets_roce_percent"], [])],
                default_queue: [("no priority", []), ("bandwidth percent %d" % qos["ets_default_percent"], [])]}

    # --- underlay ----------------------------------------------------------------------
    @staticmethod
    def svi(vlan):
        return "Vlan%d" % vlan

    def virtual_interfaces(self, intent):
        out = ["Loopback0"] if intent.get("loopback") else []
        return out + [self.svi(i["vlan"]) for i in intent.get("host_interfaces") or [] if i["kind"] == "svi"]

    def pbr_ingress(self, intent):
        """EOS applies PBR on routed ports and SVIs, not on L2 members (base.l3_ingress)."""
        return l3_ingress(intent, self.svi, self.port)

    def ppd_pins(self, intent):
        """[{binding, ingress, policy, match}] as _pbr names them (nos/ppd_state.py reads them back)."""
        return [{"binding": b, "ingress": l3, "policy": "%sPBR-%s" % (PREFIX, safe_name(l3)),
                 "match": "%sBIND-%s" % (PREFIX, safe_name(self.port(b["ingress"])))}
                for l3, bound in sorted(self.pbr_ingress(intent).items()) for b in bound]

    def diff(self, current, intended):
        """Remediation between visible forms; a hidden default the switch does not hold is pushed explicitly: ``no
        priority`` on a tx-queue is undone with ``priority strict``."""
        if current == intended:
            return []
        want = parse_tree(intended)
        cur_intf = dict((node, kids) for node, kids in parse_tree(current) if node.startswith("interface "))
        for line, children in want:
            for qline, qkids in cur_intf.get(line, []):
                if re.match(r"(uc-)?tx-queue \d+$", qline) and any(k[0] == "no priority" for k in qkids):
                    mine = next((c for c in children if c[0] == qline), None)
                    if mine is None:
                        mine = (qline, [])
                        children.append(mine)
                    if not any(k[0].startswith("priority") or k[0] == "no priority" for k in mine[1]):
                        mine[1].append(("priority strict", []))
        ops = CliDriver.diff(self, current, self.canonical(want))
        # hier_config negates `no priority` as a bare `priority` (not an EOS command); `priority strict` follows
        ops = [op for op in ops if (op.kind, op.path[-1]) != ("set", "priority")]
        return self._drop_virtual_interfaces(ops, current, want)

    def _drop_virtual_interfaces(self, ops, current, want):
        """A Loopback/Vlan interface the intent no longer has goes whole (EOS keeps one emptied line by line)."""
        wanted = set(line for line, _kids in want if line.startswith("interface "))
        gone = set(line for line, _kids in parse_tree(current)
                   if re.match(r"interface (Loopback|Vlan)\d+$", line) and line not in wanted)
        if not gone:
            return ops
        kept = [op for op in ops if op.path[0] not in gone or (op.kind, len(op.path)) == ("unset", 1)]
        return [Op("unset", (line,)) for line in sorted(gone)] + kept


# --- sections: each concern's render next to the line forms read back (nos/sections.py) ----------------
QOS_MAP = Form("qos map dscp {dscps} to traffic-class {tc}", owns=_QOS_MAP.pattern[1:])
WATCHDOG_GLOBAL = r"priority-flow-control pause watchdog (default (timeout|recovery-time)|action) "
WATCHDOG_DEFAULT = Form("priority-flow-control pause watchdog default {timer} {seconds}", owns=WATCHDOG_GLOBAL)
WATCHDOG_ACTION = Form("priority-flow-control pause watchdog action drop", owns=WATCHDOG_GLOBAL)
PFC = r"priority-flow-control "          # every PFC line of a port is the qos section's
QOS_TRUST = Form("qos trust {trust}", owns=r"qos trust ")
PFC_ON = Form("priority-flow-control on", owns=PFC)
PFC_NO_DROP = Form("priority-flow-control priority {priority} no-drop", owns=PFC)
PFC_WATCHDOG = Form("priority-flow-control pause watchdog", owns=PFC)
TX_QUEUE = Form("tx-queue {queue}", owns=r"(uc-)?tx-queue \d+$")   # EOS may show a unicast queue as uc-tx-queue


def _qos(drv, intent, qos):
    nodes = []
    # the complete map (fabric/qos.py complete_dscp_map), grouped per traffic class as EOS prints it
    by_class = {}
    for dscp, prio in complete_dscp_map(qos):
        by_class.setdefault(prio, []).append(str(dscp))
    for prio in sorted(by_class):
        nodes.append(QOS_MAP.node(dscps=" ".join(by_class[prio]), tc=prio))
    if qos.get("pfc_watchdog"):
        # global watchdog timers (seconds) and action: AVD priority-flow-control.j2
        nodes.append(WATCHDOG_DEFAULT.node(timer="timeout", seconds=_seconds(qos["pfc_watchdog_detect_ms"])))
        nodes.append(WATCHDOG_DEFAULT.node(timer="recovery-time", seconds=_seconds(qos["pfc_watchdog_restore_ms"])))
        nodes.append(WATCHDOG_ACTION.node())
    children = [QOS_TRUST.node(trust=qos["trust"]), PFC_ON.node()]
    children += [PFC_NO_DROP.node(priority=p) for p in qos["lossless_priorities"]]
    if qos.get("pfc_watchdog"):
        children.append(PFC_WATCHDOG.node())
    # ETS: the RoCE queue and the best-effort queue leave strict priority (EOS's tx-queue default) for
    # round robin with the profile's shares; best effort (DSCP 0) rides traffic class 1 on EOS's
    # default map (default_traffic_class), whose tx-queue is 1
    ets = drv.ets_queues(qos)
    children.append(TX_QUEUE.node([(
        "random-detect ecn minimum-threshold %d kbytes maximum-threshold %d kbytes max-mark-probability %d"
        % (qos["ecn_min_kbytes"], qos["ecn_max_kbytes"], qos["ecn_probability_percent"]), [])]
        + ets.pop(qos["ecn_queue"], []), queue=qos["ecn_queue"]))
    for queue, lines in sorted(ets.items()):
        children.append(TX_QUEUE.node(lines, queue=queue))
    if qos.get("cnp_strict_priority"):
        children.append(TX_QUEUE.node([("priority strict", [])], queue=qos["cnp_priority"]))
    return nodes, dict((drv.port(p), copy.deepcopy(children)) for p in ports_of(intent))


PBR_CLASS = Form("class-map type pbr match-any {name}", owns=r"class-map type pbr match-any %s" % PREFIX)
PBR_POLICY = Form("policy-map type pbr {name}", owns=r"policy-map type pbr %s" % PREFIX)
PBR_INPUT = Form("service-policy type pbr input {name}", owns=r"service-policy type pbr input ")


def _pbr(drv, intent, qos):
    """Policy on the L3 ingress: local destinations first (normal routing), then a class per host source."""
    ingress = drv.pbr_ingress(intent)
    nodes, interfaces = [], {}
    for l3, bound in sorted(ingress.items()):
        policy = "%sPBR-%s" % (PREFIX, safe_name(l3))
        classes = [("class %sLOCAL" % PREFIX, [])]
        for b in bound:
            name = "%sBIND-%s" % (PREFIX, safe_name(drv.port(b["ingress"])))
            nodes.append(ACL.node([("10 permit ip host %s any" % host_of(b["source"]), [])], name=name))
            nodes.append(PBR_CLASS.node([("match ip access-group %s" % name, [])], name=name))
            classes.append(("class %s" % name, [("set nexthop %s" % b["next_hop"], [])]))
        nodes.append(PBR_POLICY.node(classes, name=policy))
        interfaces.setdefault(l3, []).append(PBR_INPUT.node(name=policy))
    if ingress:
        local = sorted(set(local_destinations(intent)))
        nodes.append(ACL.node([("%d permit ip any %s" % (10 * (i + 1), d), []) for i, d in enumerate(local)],
                              name="%sLOCAL" % PREFIX))
        nodes.append(PBR_CLASS.node([("match ip access-group %sLOCAL" % PREFIX, [])], name="%sLOCAL" % PREFIX))
    return nodes, interfaces


IP_ROUTING = Form("ip routing")
VLAN = Form("vlan {vlan}", owns=False)   # read back per intent from EOS's range-compressed list: EosDriver.parse
ROUTER_BGP = Form("router bgp {asn}", asn=r"\d+")   # the default-VRF instance, whole
IP_ADDRESS = Form("ip address {address}")
NO_SWITCHPORT = Form("no switchport")
SWITCHPORT = Form("switchport")
ACCESS_MODE = Form("switchport mode access")
ACCESS_VLAN = Form("switchport access vlan {vlan}", vlan=r"\d+")


def _underlay(drv, intent, qos):
    """The underlay in pyavd's forms (explicit defaults)."""
    if not intent.get("bgp"):
        return [], {}
    bgp = intent["bgp"]
    nodes = [IP_ROUTING.node()]
    intfs = {"Loopback0": [IP_ADDRESS.node(address="%s/32" % intent["loopback"])]}
    routed = fabric_links(intent)
    for iface in intent.get("host_interfaces") or []:
        if iface["kind"] == "svi":
            nodes.append(VLAN.node(vlan=iface["vlan"]))
            intfs[drv.svi(iface["vlan"])] = [MTU.node(mtu=drv.mtu(intent)), IP_ADDRESS.node(address=iface["address"])]
            for member in iface["members"]:
                intfs[drv.port(member)] = [ACCESS_VLAN.node(vlan=iface["vlan"]), ACCESS_MODE.node(), SWITCHPORT.node()]
        else:
            routed.append((iface["port"], iface["address"]))
    for port, address in routed:
        intfs[drv.port(port)] = [NO_SWITCHPORT.node(), IP_ADDRESS.node(address=address)]
    lines = [("router-id %s" % bgp["router_id"], []),
             ("timers bgp %d %d" % (bgp["keepalive_seconds"], bgp["hold_seconds"]), []),
             ("maximum-paths %d" % bgp["maximum_paths"], [])]
    if bgp["multipath_relax"]:
        lines.append(("bgp bestpath as-path multipath-relax", []))
    lines += [("neighbor %s remote-as %d" % (n["address"], n["remote_as"]), []) for n in bgp["neighbors"]]
    if bgp.get("allowas_in"):
        # spines take their plane ASN once from leafs (fabric.underlay.spine_allowas_in, docs/underlay.md)
        lines += [("neighbor %s allowas-in %d" % (n["address"], bgp["allowas_in"]), []) for n in bgp["neighbors"]]
    lines.append(("address-family ipv4", [("network %s" % net, []) for net in bgp["networks"]]))
    nodes.append(ROUTER_BGP.node(lines, asn=bgp["asn"]))
    return nodes, intfs


attach(EosDriver,
       Section("qos", _qos, top=(QOS_MAP, WATCHDOG_DEFAULT, WATCHDOG_ACTION),
               children=(QOS_TRUST, PFC_ON, PFC_NO_DROP, PFC_WATCHDOG, TX_QUEUE)),
       MTU_SECTION,
       # on the interfaces only the underlay creates (Loopback0, the host SVI) the policy is read back too
       Section("pbr", _pbr, top=(ACL, PBR_CLASS, PBR_POLICY), children=(PBR_INPUT,), l3_children=(PBR_INPUT,)),
       # the MTU of those interfaces is the underlay's
       Section("underlay", _underlay, top=(IP_ROUTING, VLAN, ROUTER_BGP),
               children=(NO_SWITCHPORT, SWITCHPORT, ACCESS_MODE, ACCESS_VLAN, IP_ADDRESS),
               l3_children=(MTU, IP_ADDRESS)))
