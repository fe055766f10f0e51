# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Enterprise SONiC klish CLI drivers: Asterfusion AsterNOS (asterfusion_asternos) and
Dell/Broadcom Enterprise SONiC (dell_sonic).

klish has no configuration session in the versions we target; the transaction is the computed
reverse of the applied remediation (hier_config rollback), re-verified after use.
Command sources: docs/switch-commands-sources.md#enterprise-sonic-klish.
"""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import CliDriver


class KlishDriver(CliDriver):
    name = "sonic"
    device_type = "dell_sonic"
    indent = 1
    hier_platform = "GENERIC"
    transaction = "reverse"
    error_pattern = r"%\s*Error"
    save_command = "write memory"
    owned_sections = {
        "qos": (r"qos map dscp-tc %s" % PREFIX, r"qos wred-policy %s" % PREFIX, r"qos scheduler-policy %s" % PREFIX),
        "pbr": (r"ip access-list %s" % PREFIX, r"class-map %s" % PREFIX, r"policy-map %s" % PREFIX),
    }
    interface_children = {
        "mtu": (r"mtu \d+$",),
        "qos": (r"qos-map dscp-tc ", r"priority-flow-control ", r"queue \d+ wred-policy ", r"scheduler-policy "),
        "pbr": (r"service-policy type forwarding in ",),
    }

    def render_tree(self, intent, qos, sections=SECTIONS):
        nodes = []
        if "qos" in sections:
            nodes.append(("qos map dscp-tc %sDSCP-TC" % PREFIX, [
                ("dscp %s traffic-class %s" % (d, p), [])
                for d, p in sorted(qos["dscp_to_priority"].items(), key=lambda kv: int(kv[0]))]))
            nodes.append(("qos wred-policy %sECN" % PREFIX, [
                ("green minimum-threshold %d maximum-threshold %d drop-probability %d"
                 % (qos["ecn_min_kbytes"], qos["ecn_max_kbytes"], qos["ecn_probability_percent"]), []),
                ("ecn green", [])]))
            if qos.get("cnp_strict_priority"):
                nodes.append(("qos scheduler-policy %sSCHED" % PREFIX, [("queue %d" % qos["cnp_priority"], [("type strict", [])])]))
        bindings = {b["ingress"]: b for b in intent.get("bindings") or []} if "pbr" in sections else {}
        for port in ports_of(intent):
            children = []
            if "mtu" in sections:
                children.append(("mtu %d" % intent["mtu"], []))
            if "qos" in sections:
                children.append(("qos-map dscp-tc %sDSCP-TC" % PREFIX, []))
                for p in qos["lossless_priorities"]:
                    children.append(("priority-flow-control priority %d" % p, []))
                if qos.get("pfc_watchdog"):
                    children.append(("priority-flow-control watchdog on", []))
                children.append(("queue %d wred-policy %sECN" % (qos["ecn_queue"], PREFIX), []))
                if qos.get("cnp_strict_priority"):
                    children.append(("scheduler-policy %sSCHED" % PREFIX, []))
            b = bindings.get(port)
            if b:
                name = "%sBIND-%s" % (PREFIX, safe_name(port))
                src = host_of(b["source"])
                rules = [("seq %d deny ip host %s %s" % (10 * (i + 1), src, d), []) for i, d in enumerate(local_destinations(intent))]
                rules.append(("seq %d permit ip host %s any" % (10 * (len(rules) + 1), src), []))
                nodes.append(("ip access-list %s" % name, rules))
                nodes.append(("class-map %s match-type acl" % name, [("match access-group ip %s" % name, [])]))
                nodes.append(("policy-map %s type forwarding" % name, [
                    ("class %s priority 10" % name, [("set ip next-hop %s" % b["next_hop"], [])])]))
                children.append(("service-policy type forwarding in %s" % name, []))
            if children:
                nodes.append(("interface %s" % self.port(port), children))
        return nodes


class AsterNosDriver(KlishDriver):
    name = "asternos"
    device_type = "asterfusion_asternos"
    save_command = "write"
