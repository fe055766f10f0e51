# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arista EOS driver (netmiko device_type arista_eos).

Transaction: EOS configuration session (``configure session``, ``commit`` / ``commit timer``,
``abort``). Command sources: docs/switch-commands-sources.md#arista-eos.
"""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import CliDriver


class EosDriver(CliDriver):
    name = "eos"
    device_type = "arista_eos"
    indent = 3
    hier_platform = "ARISTA_EOS"
    transaction = "session"
    error_pattern = r"% ?(Invalid input|Incomplete command|Ambiguous command|Unavailable command|Error)"
    save_command = "copy running-config startup-config"
    pfc_counters_command = "show priority-flow-control counters"
    port_abbrev = (("Et", "Ethernet"),)
    owned_sections = {
        "qos": (r"qos map dscp \d+ to traffic-class \d+$",),
        "pbr": (r"ip access-list %s" % PREFIX, r"class-map type pbr match-any %s" % PREFIX, r"policy-map type pbr %s" % PREFIX),
    }
    owned_lines = {}
    interface_children = {
        "mtu": (r"mtu \d+$",),
        "qos": (r"qos trust ", r"priority-flow-control ", r"(uc-)?tx-queue \d+$"),
        "pbr": (r"service-policy type pbr input ",),
    }

    def render_tree(self, intent, qos, sections=SECTIONS):
        nodes = []
        if "qos" in sections:
            for dscp, prio in sorted(qos["dscp_to_priority"].items(), key=lambda kv: int(kv[0])):
                nodes.append(("qos map dscp %s to traffic-class %s" % (dscp, prio), []))
        bindings = {b["ingress"]: b for b in intent.get("bindings") or []} if "pbr" in sections else {}
        if bindings:
            local = sorted(set(local_destinations(intent)))
            nodes.append(("ip access-list %sLOCAL" % PREFIX,
                          [("%d permit ip any %s" % (10 * (i + 1), d), []) for i, d in enumerate(local)]))
            nodes.append(("class-map type pbr match-any %sLOCAL" % PREFIX, [("match ip access-group %sLOCAL" % PREFIX, [])]))
        for port in ports_of(intent):
            children = []
            if "mtu" in sections:
                children.append(("mtu %d" % intent["mtu"], []))
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
