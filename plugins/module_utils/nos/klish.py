# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Enterprise SONiC klish CLI drivers: Asterfusion AsterNOS (asterfusion_asternos) and
Dell/Broadcom Enterprise SONiC (dell_sonic).

klish has no configuration session in the versions we target; the transaction is the computed
reverse of the applied remediation (hier_config rollback), re-verified after use.
Sections: qos, mtu, pbr (FBS forwarding policy on the L3 ingress: the host SVI or each routed host port)
and underlay (Loopback0, fabric /31s, host SVI + VLAN members or routed host ports, ``router bgp``, ECMP hash).
Command sources: docs/switch-commands-sources.md#enterprise-sonic-klish and
#underlay-and-l3-ingress-pbr-nx-os-and-enterprise-sonic-klish.
"""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, host_of, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import CliDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.l3plan import fabric_links, pbr_groups, routed_host_ports, svis

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
    name = "sonic"
    device_type = device_type_for(name)
    # the klish command tree defines `show running-configuration` (sonic-mgmt-framework
    # CLI/clitree/cli-xml/enable_mode.xml); `show running-config` only works as an abbreviation
    show_running = "show running-configuration"
    indent = 1
    hier_platform = "GENERIC"
    transaction = transactions.KlishReverseTxn
    sections = SECTIONS + ("underlay",)
    error_pattern = r"%\s*Error"
    save_command = "write memory"
    owned_sections = {
        "qos": (r"qos map dscp-tc %s" % PREFIX, r"qos wred-policy %s" % PREFIX, r"qos scheduler-policy %s" % PREFIX),
        "pbr": (r"ip access-list %s" % PREFIX, r"class-map %s" % PREFIX, r"policy-map %s" % PREFIX),
        # the default-VRF BGP instance is the plan's, whole (`router bgp N vrf V` is not ours)
        "underlay": (r"router bgp \d+$",),
    }
    owned_lines = {"qos": (r"buffer init lossless$",), "underlay": (r"ip load-share hash ipv4 ",)}
    interface_children = {
        "mtu": (r"mtu \d+$",),
        "qos": (r"qos-map dscp-tc ", r"priority-flow-control ", r"queue \d+ wred-policy ", r"scheduler-policy ",
                r"cable-length "),
        "pbr": (r"service-policy type forwarding in ",),
        "underlay": (r"ip address ", r"switchport access Vlan "),
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
            # ETS: DWRR weights of the RoCE queue and the default queue (TC0 -> queue 0), CNP strict; the
            # `queue N` / `type dwrr` / `weight W` form is the SONiC ROCEv2 HLD's ETS example (3.6.2.3.5)
            queues = [("queue %d" % qos["ecn_queue"], [("type dwrr", []), ("weight %d" % qos["ets_roce_percent"], [])]),
                      ("queue 0", [("type dwrr", []), ("weight %d" % qos["ets_default_percent"], [])])]
            if qos.get("cnp_strict_priority"):
                queues.append(("queue %d" % qos["cnp_priority"], [("type strict", [])]))
            nodes.append(("qos scheduler-policy %sSCHED" % PREFIX, queues))
        interfaces = {}
        if "underlay" in sections and intent.get("bgp"):
            nodes += self._underlay_globals(intent)
            for name, children in self._underlay_interfaces(intent):
                interfaces.setdefault(name, []).extend(children)
        if "pbr" in sections:
            for ingress, bindings in pbr_groups(intent, svi_name):
                pbr_nodes, child = self._pbr(intent, ingress, bindings)
                nodes += pbr_nodes
                interfaces.setdefault(self.port(ingress), []).append(child)
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
                children.append(("scheduler-policy %sSCHED" % PREFIX, []))
            interfaces.setdefault(self.port(port), [])[0:0] = children
        for name, children in interfaces.items():
            if children:
                nodes.append(("interface %s" % name, children))
        return nodes

    # --- underlay ------------------------------------------------------------------------
    @staticmethod
    def _underlay_globals(intent):
        bgp = intent["bgp"]
        # ECMP hash: addresses, protocol and both L4 ports (the RoCEv2 UDP source port varies per QP);
        # dellemc sonic_ecmp_load_share shows these lines in `show running-configuration`
        nodes = [("ip load-share hash ipv4 ipv4-%s" % field, []) for field in ECMP_HASH_FIELDS]
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
        nodes.append(("router bgp %d" % bgp["asn"], router))
        return nodes

    def _underlay_interfaces(self, intent):
        # SONiC ports are routed unless they are VLAN members: no `no switchport` line exists
        out = [("Loopback0", [("ip address %s/32" % intent["loopback"], [])])]
        for port, address in fabric_links(intent):
            out.append((self.port(port), [("ip address %s" % address, [])]))
        for svi in svis(intent):
            out.append((svi_name(svi["vlan"]), [("ip address %s" % svi["address"], [])]))
            for member in svi["members"]:
                out.append((self.port(member), [("switchport access Vlan %d" % svi["vlan"], [])]))
        for host in routed_host_ports(intent):
            out.append((self.port(host["port"]), [("ip address %s" % host["address"], [])]))
        return out

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

    # --- PBR (Flow Based Services, forwarding policy) on the L3 ingress --------------------
    def _pbr(self, intent, ingress, bindings):
        """Per binding an ACL (deny ACEs exclude the local destinations: FBS takes no action on a
        classifier's DROP rules, Broadcom FBS HLD 2.2.2.1.1.2) and a class; one forwarding policy per
        L3 ingress (the SVI in scheme A, the routed port in scheme B). No ``set interface null``: FBS
        drops on unreachable next hops only with that explicit "default drop action" (HLD 2.3.4)."""
        name = "%sBIND-%s" % (PREFIX, safe_name(ingress)) if len(bindings) == 1 and not ingress.startswith("Vlan") \
            else "%sPBR-%s" % (PREFIX, ingress)
        nodes, classes = [], []
        for i, b in enumerate(bindings):
            cname = name if len(bindings) == 1 and not ingress.startswith("Vlan") else "%sBIND-%s" % (PREFIX, safe_name(b["ingress"]))
            src = host_of(b["source"])
            rules = [("seq %d deny ip host %s %s" % (10 * (j + 1), src, d), []) for j, d in enumerate(local_destinations(intent))]
            rules.append(("seq %d permit ip host %s any" % (10 * (len(rules) + 1), src), []))
            nodes.append(("ip access-list %s" % cname, rules))
            nodes.append(("class-map %s match-type acl" % cname, [("match access-group ip %s" % cname, [])]))
            classes.append(("class %s priority %d" % (cname, 10 + i), [("set ip next-hop %s" % b["next_hop"], [])]))
        nodes.append(("policy-map %s type forwarding" % name, classes))
        return nodes, ("service-policy type forwarding in %s" % name, [])


class AsterNosDriver(KlishDriver):
    name = "asternos"
    device_type = device_type_for(name)
    # AsterNOS's own read command is not confirmed by a capture (docs/switch-commands-sources.md: unverified)
    show_running = "show running-config"
    save_command = "write"
