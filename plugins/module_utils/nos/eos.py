# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arista EOS driver (netmiko device_type arista_eos).

Transaction: EOS configuration session (``configure session``, ``commit`` / ``commit timer``,
``abort``). Command sources: docs/switch-commands-sources.md#arista-eos.
"""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import CliDriver, parse_tree


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
    }

    def render(self, intent, qos, sections=SECTIONS):
        """The managed config as EOS shows it (defaults left out, see _visible): what parse() returns
        once the config is applied, so a satisfied intent reads back equal."""
        return self.canonical(_visible(self.render_tree(intent, qos, sections)))

    def render_explicit(self, intent, qos, sections=SECTIONS):
        """Every line of the intent, defaults included (what AVD renders; the pyavd oracle compares this)."""
        return self.canonical(self.render_tree(intent, qos, sections))

    def parse(self, running, intent, sections=SECTIONS):
        return self.canonical(_visible(parse_tree(CliDriver.parse(self, running, intent, sections))))

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
        return [c for c in cmds if c.strip() != "priority"]

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
        bindings = {b["ingress"]: b for b in intent.get("bindings") or []} if "pbr" in sections else {}
        if bindings:
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
            b = bindings.get(port)
            if b:
                name = "%sBIND-%s" % (PREFIX, safe_name(port))
                children.append(("service-policy type pbr input %s" % name, []))
                nodes.append(("ip access-list %s" % name, [("10 permit ip host %s any" % host_of(b["source"]), [])]))
                nodes.append(("class-map type pbr match-any %s" % name, [("match ip access-group %s" % name, [])]))
                nodes.append(("policy-map type pbr %s" % name, [
                    ("class %sLOCAL" % PREFIX, []),
                    ("class %s" % name, [("set nexthop %s" % b["next_hop"], [])]),
                ]))
            if "qos" in sections:
                children.append(("tx-queue %d" % qos["ecn_queue"], [(
                    "random-detect ecn minimum-threshold %d kbytes maximum-threshold %d kbytes max-mark-probability %d"
                    % (qos["ecn_min_kbytes"], qos["ecn_max_kbytes"], qos["ecn_probability_percent"]), [])]))
                if qos.get("cnp_strict_priority"):
                    children.append(("tx-queue %d" % qos["cnp_priority"], [("priority strict", [])]))
            if children:
                nodes.append(("interface %s" % self.port(port), children))
        return nodes
