# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cisco NX-OS driver (netmiko device_type cisco_nxos).

Transaction: ``checkpoint`` before the change, ``rollback running-config checkpoint`` on failure.
Command sources: docs/switch-commands-sources.md#cisco-nx-os.
"""

from __future__ import annotations


from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import CliDriver


class NxosDriver(CliDriver):
    name = "nxos"
    device_type = device_type_for(name)
    indent = 2
    hier_platform = "CISCO_NXOS"
    transaction = transactions.NxosCheckpointTxn
    error_pattern = r"% ?(Invalid command|Incomplete command|Ambiguous command|Invalid number|Invalid range)|ERROR:"
    save_command = "copy running-config startup-config"
    pfc_counters_command = "show interface priority-flow-control"
    port_abbrev = (("Eth", "Ethernet"),)
    owned_sections = {
        "qos": (r"class-map type qos match-all %s" % PREFIX, r"policy-map type (qos|network-qos|queuing) %s" % PREFIX, r"system qos$",
                r"priority-flow-control watch-dog-interval "),
        "pbr": (r"feature pbr$", r"ip access-list %s" % PREFIX, r"route-map %s" % PREFIX),
    }
    interface_children = {
        "mtu": (r"mtu \d+$",),
        "qos": (r"priority-flow-control ", r"service-policy type qos input "),
        "pbr": (r"ip policy route-map ",),
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
        bindings = {b["ingress"]: b for b in intent.get("bindings") or []} if "pbr" in sections else {}
        if bindings:
            nodes.append(("feature pbr", []))
        for port in ports_of(intent):
            children = []
            if "mtu" in sections:
                children.append(("mtu %d" % self.mtu(intent), []))
            if "qos" in sections:
                children.append(("priority-flow-control mode on", []))
                if qos.get("pfc_watchdog"):
                    children.append(("priority-flow-control watch-dog-interval on", []))
                children.append(("service-policy type qos input %sQOS-IN" % PREFIX, []))
            b = bindings.get(port)
            if b:
                name = "%sBIND-%s" % (PREFIX, safe_name(self.port(port)))
                src = "%s/32" % host_of(b["source"])
                # An ACL matched by a PBR route-map must not hold deny ACEs (Cisco PBR guidelines); local
                # destinations are excluded by a route-map *deny* sequence instead, which forwards normally.
                local = [("%d permit ip %s %s" % (10 * (i + 1), src, d), []) for i, d in enumerate(local_destinations(intent))]
                seq = 10
                if local:
                    nodes.append(("ip access-list %s-LOCAL" % name, local))
                    nodes.append(("route-map %s deny %d" % (name, seq), [("match ip address %s-LOCAL" % name, [])]))
                    seq += 10
                nodes.append(("ip access-list %s" % name, [("10 permit ip %s any" % src, [])]))
                nodes.append(("route-map %s permit %d" % (name, seq),
                              [("match ip address %s" % name, []), ("set ip next-hop %s" % b["next_hop"], [])]))
                children.append(("ip policy route-map %s" % name, []))
            if children:
                nodes.append(("interface %s" % self.port(port), children))
        return nodes
