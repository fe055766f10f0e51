# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Enterprise SONiC klish CLI drivers: Asterfusion AsterNOS (asterfusion_asternos) and
Dell/Broadcom Enterprise SONiC (dell_sonic).

klish has no configuration session in the versions we target; the transaction is the computed
reverse of the applied remediation (hier_config rollback), re-verified after use.
Command sources: docs/switch-commands-sources.md#enterprise-sonic-klish.
"""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import CliDriver


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
    name = "sonic"
    device_type = device_type_for(name)
    # the klish command tree defines `show running-configuration` (sonic-mgmt-framework
    # CLI/clitree/cli-xml/enable_mode.xml); `show running-config` only works as an abbreviation
    show_running = "show running-configuration"
    indent = 1
    hier_platform = "GENERIC"
    transaction = transactions.KlishReverseTxn
    error_pattern = r"%\s*Error"
    save_command = "write memory"
    owned_sections = {
        "qos": (r"qos map dscp-tc %s" % PREFIX, r"qos wred-policy %s" % PREFIX, r"qos scheduler-policy %s" % PREFIX),
        "pbr": (r"ip access-list %s" % PREFIX, r"class-map %s" % PREFIX, r"policy-map %s" % PREFIX),
    }
    owned_lines = {"qos": (r"buffer init lossless$",)}
    interface_children = {
        "mtu": (r"mtu \d+$",),
        "qos": (r"qos-map dscp-tc ", r"priority-flow-control ", r"queue \d+ wred-policy ", r"scheduler-policy ",
                r"cable-length "),
        "pbr": (r"service-policy type forwarding in ",),
    }

    def parse(self, running, intent, sections=SECTIONS):
        return CliDriver.parse(self, normalize_running(running), intent, sections)

    def render_tree(self, intent, qos, sections=SECTIONS):
        nodes = []
        if "qos" in sections:
            # lossless buffer pools, profiles and priority groups from the platform defaults (dellemc sonic_qos_buffer);
            # Dell asks to save and reboot after the first `buffer init lossless`
            nodes.append(("buffer init lossless", []))
            nodes.append(("qos map dscp-tc %sDSCP-TC" % PREFIX, [
                ("dscp %s traffic-class %s" % (d, p), [])
                for d, p in complete_dscp_map(qos)]))   # every DSCP, none left to a platform default
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
                children.append(("mtu %d" % self.mtu(intent), []))
            if "qos" in sections:
                children.append(("qos-map dscp-tc %sDSCP-TC" % PREFIX, []))
                for p in qos["lossless_priorities"]:
                    children.append(("priority-flow-control priority %d" % p, []))
                if qos.get("pfc_watchdog"):
                    children += [("priority-flow-control watchdog action drop", []),
                                 ("priority-flow-control watchdog on detect-time %d" % qos["pfc_watchdog_detect_ms"], []),
                                 ("priority-flow-control watchdog restore-time %d" % qos["pfc_watchdog_restore_ms"], [])]
                # headroom follows the cable length (dellemc sonic_qos_interfaces: `cable-length 40m`)
                children.append(("cable-length %dm" % qos["cable_length_m"], []))
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
    device_type = device_type_for(name)
    # AsterNOS's own read command is not confirmed by a capture (docs/switch-commands-sources.md: unverified)
    show_running = "show running-config"
    save_command = "write"
