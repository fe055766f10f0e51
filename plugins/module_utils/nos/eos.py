# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arista EOS driver (netmiko device_type arista_eos).

Transaction: EOS configuration session (``configure session``, ``commit`` / ``commit timer``,
``abort``). Command sources: docs/switch-commands-sources.md#arista-eos.

Sections: qos, mtu (physical ports), pbr (policy on the L3 ingress: the host SVI in scheme subnet_per_leaf, each
routed host port in scheme p2p), underlay (``ip routing``, Loopback0, routed fabric /31s, the host VLAN + SVI or
routed /31 host ports, and the default-VRF ``router bgp`` block, owned whole). Line forms follow pyavd's
eos_cli_config_gen (tests/unit/nos/test_eos_pyavd_oracle.py).
"""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import CliDriver, dump_tree, natural_key, parse_tree, sort_tree


# Arista's IP MTU ceiling (9214, platform table `mtu`): Driver.mtu() caps the switch MTU there. Sources:
# docs/platforms.md and docs/switches.md#mtu-per-platform.


def default_traffic_class(dscp):
    """EOS's default DSCP -> traffic-class map: TC = DSCP // 8, except DSCP 0-7 -> TC 1 and 8-15 -> TC 0
    (the "low-end inversion"). Source: docs/switch-commands-sources.md#eos-defaults-hidden-from-running-config."""
    tc = int(dscp) // 8
    return {0: 1, 1: 0}.get(tc, tc)


def _seconds(ms):
    """Milliseconds as EOS's watchdog timers take them: seconds, no trailing zeros (200 -> 0.2, 1000 -> 1)."""
    return ("%.3f" % (ms / 1000.0)).rstrip("0").rstrip(".")


_QOS_MAP = re.compile(r"^qos map dscp ((?:\d+ )+)to traffic-class (\d+)( drop-precedence \d+)?$")


UNDERLAY_GLOBAL = (r"ip routing$", r"vlan \d+$", r"router bgp \d+$")
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
    """What EOS prints in ``show running-config`` for a managed tree: EOS leaves out lines equal to its
    defaults and groups DSCPs that share a traffic class on one ``qos map dscp`` line. Both sides of a
    comparison go through here: the rendered intent and the parsed running config.
      * ``qos map dscp D.. to traffic-class T`` -> one line per DSCP; lines equal to the default map dropped;
      * ``tx-queue N`` / ``priority strict`` is the tx-queue default (the non-default form EOS shows is
        ``no priority``) -> dropped; a ``tx-queue N`` left without children is dropped too (EOS shows no
        empty tx-queue block)."""
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
    sections = SECTIONS + ("underlay",)   # switch_config accepts section underlay for this driver
    name = "eos"
    device_type = device_type_for(name)
    indent = 3
    hier_platform = "ARISTA_EOS"
    transaction = transactions.EosSessionTxn
    error_pattern = r"% ?(Invalid input|Incomplete command|Ambiguous command|Unavailable command|Error)"
    save_command = "copy running-config startup-config"
    pfc_counters_command = "show priority-flow-control counters"
    port_abbrev = (("Et", "Ethernet"),)
    owned_sections = {
        "qos": (r"qos map dscp (\d+ )+to traffic-class \d+( drop-precedence \d+)?$",
                r"priority-flow-control pause watchdog (default (timeout|recovery-time)|action) "),
        "pbr": (r"ip access-list %s" % PREFIX, r"class-map type pbr match-any %s" % PREFIX, r"policy-map type pbr %s" % PREFIX),
    }
    owned_lines = {}
    interface_children = {
        "mtu": (r"mtu \d+$",),
        "qos": (r"qos trust ", r"priority-flow-control ", r"(uc-)?tx-queue \d+$"),
        "pbr": (r"service-policy type pbr input ",),
        "underlay": (r"no switchport$", r"switchport$", r"switchport mode access$", r"switchport access vlan \d+$",
                     r"ip address \S+$"),
    }
    # children of the interfaces only the underlay creates (Loopback0, the host SVI): its MTU is the underlay's
    l3_children = {
        "underlay": (r"mtu \d+$", r"ip address \S+$"),
        "pbr": (r"service-policy type pbr input ",),
    }

    def canonical(self, nodes):
        """CliDriver's canonical order, except that an interface's switchport lines come first: EOS takes
        ``ip address`` only on a routed port, so ``no switchport`` must be sent before it."""
        glob = sorted([n for n in nodes if not re.match(self.interface_re, n[0])], key=lambda n: natural_key(n[0]))
        intfs = sorted([n for n in nodes if re.match(self.interface_re, n[0])], key=lambda n: natural_key(n[0]))
        intfs = [(line, sorted(kids, key=lambda k: 0 if re.match(r"(no )?switchport", k[0]) else 1))
                 for line, kids in sort_tree(intfs)]
        lines = dump_tree(sort_tree(glob) + intfs, self.indent)
        return "\n".join(lines) + ("\n" if lines else "")

    def render(self, intent, qos, sections=SECTIONS):
        """The managed config as EOS shows it (defaults left out, see _visible): what parse() returns
        once the config is applied, so a satisfied intent reads back equal."""
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
            elif self._owned_global(line, sections):
                out.append((line, children))
        return self.canonical(_visible(out))

    # --- what is ours in a full running config (parse above; fullconfig's outside view) -----------------
    @staticmethod
    def host_vlans(intent):
        return set(i["vlan"] for i in intent.get("host_interfaces") or [] if i["kind"] == "svi")

    def managed_child(self, interface, line, intent, sections):
        """Whether one child line of ``interface`` belongs to a managed section."""
        if interface in self.virtual_interfaces(intent):
            patterns = self.l3_children
        elif interface in set(self.port(p) for p in ports_of(intent)):
            patterns = self.interface_children
        else:
            return False
        return any(re.match(pat, line) for sec in sections for pat in patterns.get(sec, ()))

    def _owned_global(self, line, sections):
        if "underlay" in sections and any(re.match(pat, line) for pat in (UNDERLAY_GLOBAL[0], UNDERLAY_GLOBAL[2])):
            return True
        return self._owned(line, sections)

    def owns_interface(self, interface, intent):
        """Interfaces the underlay creates (Loopback0, the host SVI): ours whole, not part of the outside view."""
        return interface in self.virtual_interfaces(intent)

    def outside_global(self, line, intent, sections):
        """A top-level line as the outside view keeps it: None when it is managed; a ``vlan`` list without our
        VLAN (EOS prints ``vlan 10,100`` once VLAN 100 joins VLAN 10)."""
        if self._owned_global(line, sections):
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
        """Interfaces the underlay creates (not physical ports): Loopback0 and the host SVI."""
        out = ["Loopback0"] if intent.get("loopback") else []
        return out + [self.svi(i["vlan"]) for i in intent.get("host_interfaces") or [] if i["kind"] == "svi"]

    def pbr_ingress(self, intent):
        """{L3 interface: [bindings entering there]}: the policy sits where host packets are routed (EOS applies
        PBR on routed ports and SVIs, not on L2 members): the SVI in scheme subnet_per_leaf, each routed host
        port in p2p; without planned host interfaces, the binding's own port."""
        svis = [self.svi(i["vlan"]) for i in intent.get("host_interfaces") or [] if i["kind"] == "svi"]
        out = {}
        for b in intent.get("bindings") or []:
            out.setdefault(svis[0] if svis else self.port(b["ingress"]), []).append(b)
        return out

    def underlay_tree(self, intent):
        """(global nodes, {interface: children}) of the routed underlay; pyavd forms (explicit defaults)."""
        bgp = intent["bgp"]
        nodes = [("ip routing", [])]
        intfs = {"Loopback0": [("ip address %s/32" % intent["loopback"], [])]}
        routed = [(u["port"], u["address"], u["prefixlen"]) for u in intent.get("uplinks") or []]
        routed += [(d["port"], d["address"], d["prefixlen"]) for d in intent.get("downlinks") or [] if "leaf" in d]
        for iface in intent.get("host_interfaces") or []:
            if iface["kind"] == "svi":
                nodes.append(("vlan %d" % iface["vlan"], []))
                intfs[self.svi(iface["vlan"])] = [("mtu %d" % self.mtu(intent), []), ("ip address %s" % iface["address"], [])]
                for member in iface["members"]:
                    intfs[self.port(member)] = [("switchport access vlan %d" % iface["vlan"], []),
                                                ("switchport mode access", []), ("switchport", [])]
            else:
                address, prefixlen = iface["address"].split("/")
                routed.append((iface["port"], address, int(prefixlen)))
        for port, address, prefixlen in routed:
            intfs[self.port(port)] = [("no switchport", []), ("ip address %s/%d" % (address, prefixlen), [])]
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
        nodes.append(("router bgp %d" % bgp["asn"], lines))
        return nodes, intfs

    def diff(self, current, intended):
        """Remediation between visible forms. Where the running config holds a non-default value of a
        line whose intended value is the default (hidden), the explicit default is pushed: ``no priority``
        on a tx-queue is undone with ``priority strict`` (a ``no qos map dscp ...`` already restores the
        default map entry)."""
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
        cmds = CliDriver.diff(self, current, self.canonical(want))
        # hier_config negates `no priority` as a bare `priority` (not an EOS command); `priority strict` follows
        cmds = [c for c in cmds if c.strip() != "priority"]
        return self._drop_virtual_interfaces(cmds, current, want)

    def _drop_virtual_interfaces(self, cmds, current, want):
        """A Loopback/Vlan interface the intent no longer has is removed whole (``no interface VlanN``): negating
        its lines would leave an empty ``interface VlanN`` behind, which EOS keeps and prints."""
        wanted = set(line for line, _kids in want if line.startswith("interface "))
        gone = set(line for line, _kids in parse_tree(current)
                   if re.match(r"interface (Loopback|Vlan)\d+$", line) and line not in wanted)
        if not gone:
            return cmds
        out, skip = [], False
        for c in cmds:
            if not c.startswith(" "):
                skip = c in gone
                if skip:
                    continue
            elif skip:
                continue
            out.append(c)
        return ["no %s" % line for line in sorted(gone)] + out

    def render_tree(self, intent, qos, sections=SECTIONS):
        nodes = []
        if "qos" in sections:
            # the complete map (fabric/qos.py complete_dscp_map), grouped per traffic class as EOS prints it
            by_class = {}
            for dscp, prio in complete_dscp_map(qos):
                by_class.setdefault(prio, []).append(str(dscp))
            for prio in sorted(by_class):
                nodes.append(("qos map dscp %s to traffic-class %s" % (" ".join(by_class[prio]), prio), []))
            if qos.get("pfc_watchdog"):
                # global watchdog timers (seconds) and action: AVD priority-flow-control.j2
                nodes.append(("priority-flow-control pause watchdog default timeout %s" % _seconds(qos["pfc_watchdog_detect_ms"]), []))
                nodes.append(("priority-flow-control pause watchdog default recovery-time %s"
                              % _seconds(qos["pfc_watchdog_restore_ms"]), []))
                nodes.append(("priority-flow-control pause watchdog action drop", []))
        ingress = self.pbr_ingress(intent) if "pbr" in sections else {}
        extra = {}   # interface -> children from the underlay and pbr sections
        if "underlay" in sections and intent.get("bgp"):
            glob, extra = self.underlay_tree(intent)
            nodes += glob
        for l3, bound in sorted(ingress.items()):
            # local destinations first (normal routing), then one class per host source pinned to its uplink
            policy = "%sPBR-%s" % (PREFIX, safe_name(l3))
            classes = [("class %sLOCAL" % PREFIX, [])]
            for b in bound:
                name = "%sBIND-%s" % (PREFIX, safe_name(self.port(b["ingress"])))
                nodes.append(("ip access-list %s" % name, [("10 permit ip host %s any" % host_of(b["source"]), [])]))
                nodes.append(("class-map type pbr match-any %s" % name, [("match ip access-group %s" % name, [])]))
                classes.append(("class %s" % name, [("set nexthop %s" % b["next_hop"], [])]))
            nodes.append(("policy-map type pbr %s" % policy, classes))
            extra.setdefault(l3, []).append(("service-policy type pbr input %s" % policy, []))
        if ingress:
            local = sorted(set(local_destinations(intent)))
            nodes.append(("ip access-list %sLOCAL" % PREFIX,
                          [("%d permit ip any %s" % (10 * (i + 1), d), []) for i, d in enumerate(local)]))
            nodes.append(("class-map type pbr match-any %sLOCAL" % PREFIX, [("match ip access-group %sLOCAL" % PREFIX, [])]))
        for port in ports_of(intent):
            children = []
            if "mtu" in sections:
                children.append(("mtu %d" % self.mtu(intent), []))
            if "qos" in sections:
                children.append(("qos trust %s" % qos["trust"], []))
                children.append(("priority-flow-control on", []))
                for p in qos["lossless_priorities"]:
                    children.append(("priority-flow-control priority %d no-drop" % p, []))
                if qos.get("pfc_watchdog"):
                    children.append(("priority-flow-control pause watchdog", []))
            children += extra.pop(self.port(port), [])
            if "qos" in sections:
                # ETS: the RoCE queue and the best-effort queue leave strict priority (EOS's tx-queue default) for
                # round robin with the profile's shares; best effort (DSCP 0) rides traffic class 1 on EOS's
                # default map (default_traffic_class), whose tx-queue is 1
                ets = self.ets_queues(qos)
                children.append(("tx-queue %d" % qos["ecn_queue"], [(
                    "random-detect ecn minimum-threshold %d kbytes maximum-threshold %d kbytes max-mark-probability %d"
                    % (qos["ecn_min_kbytes"], qos["ecn_max_kbytes"], qos["ecn_probability_percent"]), [])]
                    + ets.pop(qos["ecn_queue"], [])))
                for queue, lines in sorted(ets.items()):
                    children.append(("tx-queue %d" % queue, lines))
                if qos.get("cnp_strict_priority"):
                    children.append(("tx-queue %d" % qos["cnp_priority"], [("priority strict", [])]))
            if children:
                nodes.append(("interface %s" % self.port(port), children))
        for name, children in sorted(extra.items()):
            nodes.append(("interface %s" % name, children))
        return nodes
