# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA Cumulus Linux 5.x NVUE driver (netmiko cumulus_linux: a Linux shell running ``nv``). Config is a flat list
of ``nv set`` commands (``nv config show -o commands``), staged in the pending revision and applied atomically with ``nv
config apply -y`` (``nv config detach`` drops it). Sections mtu, qos, pbr (on the L3 ingress), underlay (addresses,
the host VLAN in ``br_default``, ``router bgp`` with the default VRF's owned whole, ECMP hash fields). Paths of Cumulus
Linux 5.15+, checked against nvueschema (tests/unit/nos/test_nvue_schema_oracle.py); sources:
docs/switch-commands-sources.md#nvidia-cumulus-linux-nvue."""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state, counters as roce_counters, ppd_state, sources, transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map
from ansible_collections.aifabric.roce.plugins.module_utils.nos.flatpath import FlatPathDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, l3_ingress, local_destinations, ports_of, safe_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Op
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drain import FlatDrainLine
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Read
from ansible_collections.aifabric.roce.plugins.module_utils.nos.l3plan import fabric_links

# managed paths (regex on the text after "nv set "), per section
MANAGED = {
    "mtu": (r"interface (\S+) link mtu \d+$",),
    "qos": (r"qos mapping default-global trust ", r"qos mapping default-global dscp \d+ switch-priority ",
            r"qos pfc default-global switch-priority ", r"qos congestion-control default-global traffic-class ",
            r"qos egress-scheduler default-global traffic-class \d+ (?:mode|bw-percent) ", r"interface (\S+) qos pfc-watchdog$",
            r"qos traffic-pool default-(?:lossless|lossy) memory-percent ", r"qos pfc-watchdog (?:polling-interval|robustness) "),
    "pbr": (r"router pbr state ", r"router pbr map %s" % PREFIX, r"router nexthop group %s" % PREFIX,
            r"interface (\S+) router pbr map "),
    "underlay": (r"interface (\S+) ipv4 address \S+$", r"interface (\S+) bridge domain br_default access \d+$",
                 r"interface (vlan\d+) link mtu \d+$", r"bridge domain br_default vlan (\d+)$",
                 r"router bgp (?:autonomous-system|router-id|state) ", r"vrf default router bgp ",
                 r"system forwarding ecmp-hash "),
}
BRIDGE = "br_default"
# ECMP hash inputs: the 5-tuple, so RoCEv2 flows (UDP 4791, the source port varies per QP) spread over the uplinks
ECMP_HASH_FIELDS = ("source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port")
# how many trailing tokens of a managed line are the value (dropped to build the nv unset path)
VALUE_TOKENS = ((r"interface \S+ qos pfc-watchdog$", 0), (r"interface \S+ router pbr map ", 1),
                (r"interface \S+ ipv4 address ", 0), (r"bridge domain \S+ vlan ", 0),
                (r"vrf default router bgp address-family ipv4-unicast network ", 0), (r".*", 1))


_ITEM = re.compile(r"^([A-Za-z][A-Za-z_]*?)?(\d+(?:s\d+)?)(?:-([A-Za-z][A-Za-z_]*?)?(\d+(?:s\d+)?))?$")


def expand_names(spec):
    """A range-compressed NVUE interface key -> the interface names it stands for.

    ``nv config show`` groups identical settings under one key (real captures in
    tests/fixtures/switches/nvue/): ``swp1-3``, ``swp1-2,32`` (the prefix carries over), ``eth0,swp19-22``;
    breakout ports ``swp1s0-3`` range over the last number; ``swp1-swp8`` repeats the prefix. Names that
    are not ranges (``lo``, ``bond1``, ``swp7``) come back unchanged."""
    out, prefix = [], None
    for item in spec.split(","):
        m = _ITEM.match(item)
        if not m or not (m.group(1) or prefix):
            out.append(item)
            prefix = None
            continue
        prefix = m.group(1) or prefix
        first = m.group(2)
        if m.group(4) is None:
            out.append(prefix + first)
            continue
        last = m.group(4)
        head, a = first.rsplit("s", 1) if "s" in first else ("", first)
        if "s" in last:
            lhead, b = last.rsplit("s", 1)
            if lhead != head:
                out.append(item)   # a range across breakout parents: not a form NVUE prints, keep literally
                continue
        else:
            b = last
        for n in range(int(a), int(b) + 1):
            out.append(prefix + ("%ss%d" % (head, n) if head else str(n)))
    return out


def expand_numbers(spec):
    """``0-7``, ``3,4``, ``24-27,48`` -> the numbers as strings (NVUE's form for dscp / switch-priority keys)."""
    out = []
    for item in spec.split(","):
        m = re.match(r"^(\d+)(?:-(\d+))?$", item)
        if not m:
            return [spec]
        out += [str(n) for n in range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1)]
    return out


# paths whose key may come range-compressed from `nv config show -o commands`: (regex, expander)
RANGED = ((re.compile(r"^(interface )(\S+)( .*)?$"), expand_names),
          (re.compile(r"^(qos mapping \S+ dscp )(\S+)( .*)$"), expand_numbers),
          (re.compile(r"^(qos pfc \S+ switch-priority )(\S+)()$"), expand_numbers),
          (re.compile(r"^(qos (?:congestion-control|egress-scheduler) \S+ traffic-class )(\S+)( .*)$"), expand_numbers),
          (re.compile(r"^(qos traffic-pool \S+ switch-priority )(\S+)()$"), expand_numbers),
          (re.compile(r"^(bridge domain \S+ vlan )(\S+)()$"), expand_numbers))


def expand_path(path):
    """One ``nv set`` path (without ``nv set``) -> the paths it stands for, one per interface/number."""
    for regex, expander in RANGED:
        m = regex.match(path)
        if m:
            return [m.group(1) + key + (m.group(3) or "") for key in expander(m.group(2))]
    return [path]


# NVUE PBR rules: local destinations take 10, 20, .. (below 1000), host pins 1000, 1010, ..; CL allows 255 match rules
FIRST_BINDING_RULE = 1000
MAX_RULES = 255


def nh_name(address):
    return "%sNH-%s" % (PREFIX, address.replace(".", "-").replace(":", "-"))


class NvueDriver(FlatPathDriver):
    sections = SECTIONS + ("underlay",)
    name = "nvue"
    device_type = device_type_for(name)
    transaction = transactions.NvueRevisionTxn
    comment = "#"
    # NVIDIA NVUE command reference, BGP: `nv set router bgp graceful-shutdown on`
    drain = FlatDrainLine("nv set router bgp graceful-shutdown on", off="nv unset router bgp graceful-shutdown",
                          within="nv set router bgp ")
    counters = [Read("nv show interface {port} counters qos", roce_counters.parse_nvue_counters_qos, "port"),
                Read("nv show interface {port} qos pfc-watchdog", roce_counters.parse_nvue_pfc_watchdog, "port")]
    line_sources = sources.NVUE
    counter_evidence = dict(pfc_rx="verified", pfc_tx="verified", ecn_marked="verified", drops="verified",
                            drop_bytes="verified", wd_storms="verified")
    checks = ("bgp_sessions", "ppd_paths")
    bgp_summary = Read("nv show vrf default router bgp neighbor", bgp_state.parse_nvue)
    ppd_read = ppd_state.NvuePbrMap("`nv show router pbr map <map> rule -o json`: rule per host source, nexthop group, "
                                    "`installed`")
    show_running = "nv config show -o commands"
    error_pattern = r"^Error:|Invalid Command|command not found"
    save_command = "nv config save"
    set_prefix, unset_prefix = "nv set ", "nv unset "
    expand = staticmethod(expand_path)

    def takeover_items(self, before_image, after, intent, sections=SECTIONS):
        from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover
        return takeover.items(self, takeover.NVUE_FORMS, before_image, after, flat=True)

    def render(self, intent, qos, sections=SECTIONS):
        lines = []
        ports = [self.port(p) for p in ports_of(intent)]
        if "mtu" in sections:
            lines += ["interface %s link mtu %d" % (p, self.mtu(intent)) for p in ports]
        if "qos" in sections:
            lines.append("qos mapping default-global trust l3")
            for d, p in complete_dscp_map(qos):   # every DSCP: Cumulus's default maps DSCP 24-31 to priority 3
                lines.append("qos mapping default-global dscp %s switch-priority %s" % (d, p))
            for p in qos["lossless_priorities"]:
                lines.append("qos pfc default-global switch-priority %d" % p)
            tc = "qos congestion-control default-global traffic-class %d" % qos["ecn_queue"]
            lines += [tc + " min-threshold %d" % (qos["ecn_min_kbytes"] * 1024),
                      tc + " max-threshold %d" % (qos["ecn_max_kbytes"] * 1024),
                      tc + " probability %d" % qos["ecn_probability_percent"],
                      tc + " ecn enable"]
            if qos.get("cnp_strict_priority"):
                lines.append("qos egress-scheduler default-global traffic-class %d mode strict" % qos["cnp_priority"])
            # ETS: DWRR shares of the RoCE class and the default class (NVIDIA's RoCE default TC3 50 / TC0 50). The
            # complete DSCP map sends every other DSCP to the default priority, so only these two classes and the
            # strict CNP class carry traffic; the other classes' default-global weights stay, unused (DWRR shares
            # what is queued). Switch priority N -> traffic class N is the default egress-queue mapping.
            for tc, share in ((qos["ecn_queue"], qos["ets_roce_percent"]), (qos["dscp_default_priority"], qos["ets_default_percent"])):
                head = "qos egress-scheduler default-global traffic-class %d " % tc
                lines += [head + "mode dwrr", head + "bw-percent %d" % share]
            # lossless buffer pool before PFC (CL QoS guide, Flow Control Buffers: 100 % lossy by default)
            lines += ["qos traffic-pool default-lossless memory-percent %d" % qos["lossless_pool_percent"],
                      "qos traffic-pool default-lossy memory-percent %d" % (100 - qos["lossless_pool_percent"])]
            if qos.get("pfc_watchdog"):
                lines += ["interface %s qos pfc-watchdog" % p for p in ports]
                lines += ["qos pfc-watchdog polling-interval %d" % qos["pfc_watchdog_poll_ms"],
                          "qos pfc-watchdog robustness %d" % (qos["pfc_watchdog_detect_ms"] // qos["pfc_watchdog_poll_ms"])]
        if "underlay" in sections and intent.get("bgp"):
            lines += self.underlay_lines(intent)
        ingress = self.pbr_ingress(intent) if "pbr" in sections else {}
        if ingress:
            lines.append("router pbr state enabled")
            bindings = [b for bound in ingress.values() for b in bound]
            for nh in sorted(set(b["next_hop"] for b in bindings)):
                lines.append("router nexthop group %s via %s" % (nh_name(nh), nh))
            local = local_destinations(intent)
            if len(local) >= FIRST_BINDING_RULE // 10 or len(bindings) > MAX_RULES - len(local):
                raise ValueError("%d local prefixes and %d bindings do not fit NVUE's %d PBR rules"
                                 % (len(local), len(bindings), MAX_RULES))
            for l3, bound in sorted(ingress.items()):
                name = "%sPBR-%s" % (PREFIX, safe_name(l3))
                # local destinations first, for every source (routed normally), then one pin per host source
                for i, dest in enumerate(local, 1):
                    lines += ["router pbr map %s rule %d match destination-ip %s" % (name, 10 * i, dest),
                              "router pbr map %s rule %d action vrf default" % (name, 10 * i)]
                for i, b in enumerate(bound):
                    rule = FIRST_BINDING_RULE + 10 * i
                    lines += ["router pbr map %s rule %d match source-ip %s" % (name, rule, b["source"]),
                              "router pbr map %s rule %d action nexthop-group %s" % (name, rule, nh_name(b["next_hop"]))]
                lines.append("interface %s router pbr map %s" % (l3, name))
        return self._canonical(lines)

    # --- underlay and the L3 ingress ----------------------------------------------------
    @staticmethod
    def svi(vlan):
        return "vlan%d" % vlan

    def pbr_ingress(self, intent):
        """NVUE applies PBR to routed ports and SVIs, not L2 bridge members (base.l3_ingress)."""
        return l3_ingress(intent, self.svi, self.port)

    def ppd_pins(self, intent):
        """[{binding, ingress, policy, match, group}] as render names them (nos/ppd_state.py reads them back)."""
        return [{"binding": b, "ingress": l3, "policy": "%sPBR-%s" % (PREFIX, safe_name(l3)), "match": b["source"],
                 "group": nh_name(b["next_hop"])}
                for l3, bound in sorted(self.pbr_ingress(intent).items()) for b in bound]

    def underlay_lines(self, intent):
        bgp = intent["bgp"]
        lines = ["interface lo ipv4 address %s/32" % intent["loopback"]]
        routed = ["%s ipv4 address %s" % (self.port(port), address) for port, address in fabric_links(intent)]
        for iface in intent.get("host_interfaces") or []:
            if iface["kind"] == "svi":
                svi = self.svi(iface["vlan"])
                lines += ["bridge domain %s vlan %d" % (BRIDGE, iface["vlan"]),
                          "interface %s ipv4 address %s" % (svi, iface["address"]),
                          "interface %s link mtu %d" % (svi, self.mtu(intent))]
                lines += ["interface %s bridge domain %s access %d" % (self.port(m), BRIDGE, iface["vlan"]) for m in iface["members"]]
            else:
                routed.append("%s ipv4 address %s" % (self.port(iface["port"]), iface["address"]))
        lines += ["interface " + r for r in routed]
        lines += ["router bgp autonomous-system %d" % bgp["asn"], "router bgp router-id %s" % bgp["router_id"],
                  "router bgp state enabled", "vrf default router bgp state enabled",
                  "vrf default router bgp address-family ipv4-unicast state enabled",
                  "vrf default router bgp address-family ipv4-unicast multipaths ebgp %d" % bgp["maximum_paths"]]
        if bgp["multipath_relax"]:
            lines.append("vrf default router bgp path-selection multipath aspath-ignore enabled")
        lines += ["vrf default router bgp address-family ipv4-unicast network %s" % net for net in bgp["networks"]]
        for n in bgp["neighbors"]:
            head = "vrf default router bgp neighbor %s " % n["address"]
            lines += [head + "remote-as %d" % n["remote_as"], head + "type numbered",
                      head + "timers keepalive %d" % bgp["keepalive_seconds"], head + "timers hold %d" % bgp["hold_seconds"]]
            if bgp.get("allowas_in"):
                # spines take their plane ASN once from leafs (fabric.underlay.spine_allowas_in, docs/underlay.md)
                aspath = head + "address-family ipv4-unicast aspath allow-my-asn "
                lines += [aspath + "state enabled", aspath + "occurrences %d" % bgp["allowas_in"]]
        lines += ["system forwarding ecmp-hash %s enabled" % field for field in ECMP_HASH_FIELDS]
        return lines

    def names_of(self, intent, section):
        """Interface names (and, for the bridge VLAN, VLAN ids) a section manages on this switch."""
        ports = set(self.port(p) for p in ports_of(intent))
        if section == "pbr":
            return ports | set(self.pbr_ingress(intent))
        if section == "underlay":
            svis = [i["vlan"] for i in intent.get("host_interfaces") or [] if i["kind"] == "svi"]
            return ports | {"lo"} | set(self.svi(v) for v in svis) | set(str(v) for v in svis)
        return ports

    @staticmethod
    def _canonical(paths):
        return "".join("nv set %s\n" % p for p in sorted(set(paths)))

    def managed_path(self, path, intent, sections):
        """Whether one expanded ``nv set`` path belongs to a managed section of this switch."""
        return self._managed(path, dict((sec, self.names_of(intent, sec)) for sec in sections), sections)

    def created_paths(self, intent):
        """Paths NVUE prints for interfaces it creates (type / VLAN; ``type swp`` on a port first configured)."""
        out = {"interface lo type loopback"} | set("interface %s type swp" % self.port(p) for p in ports_of(intent))
        for vlan in sorted(int(v) for v in self.names_of(intent, "underlay") if v.isdigit()):
            out |= {"interface vlan%d type svi" % vlan, "interface vlan%d vlan %d" % (vlan, vlan)}
        return out

    @staticmethod
    def _managed(path, names, sections):
        for sec in sections:
            for pat in MANAGED[sec]:
                m = re.match(pat, path)
                if m and not (m.groups() and m.group(1) not in names[sec]):
                    return True
        return False

    def parse(self, running, intent, sections=SECTIONS):
        names = dict((sec, self.names_of(intent, sec)) for sec in sections)
        return self._canonical(p for p in self.paths(running) if self._managed(p, names, sections))

    @staticmethod
    def unset_path(path):
        for pat, n in VALUE_TOKENS:
            if re.match(pat, path):
                return " ".join(path.split()[:-n]) if n else path
        return path  # pragma: no cover

    def diff(self, current, intended):
        cur = set(current.splitlines())
        want = set(intended.splitlines())
        want_paths = set(self.unset_path(w[7:]) for w in want)
        # a BGP neighbor the intent no longer has goes with one unset of the whole entry
        gone = set(m.group(1) for m in (re.match(r"nv set (vrf default router bgp neighbor \S+) ", c) for c in cur - want) if m)
        gone -= set(m.group(1) for m in (re.match(r"nv set (vrf default router bgp neighbor \S+) ", w) for w in want) if m)
        ops = [Op("unset", (g,)) for g in sorted(gone)]
        for line in sorted(cur - want):
            if any(line.startswith("nv set %s " % g) for g in gone):
                continue
            path = self.unset_path(line[7:])
            # a changed leaf value is simply re-set; only unset what the intent no longer has
            if path not in want_paths or path == line[7:]:
                ops.append(Op("unset", (path,)))
        return ops + [Op("set", (line[7:],)) for line in sorted(want - cur)]

    def state(self, managed):
        return {"commands": managed.splitlines()}

    mtu_path = r"^interface (\S+) link mtu (\d+)$"   # paths of the managed MTU view (ranges expanded)
