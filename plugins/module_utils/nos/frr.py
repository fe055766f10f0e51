# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""FRR 8.4 driver: a Linux router whose control plane is FRR (whitebox Linux, community SONiC's bgpd, Cumulus's
routing suite), reached with netmiko device_type ``linux``: a shell that runs ``vtysh``. Command sources:
docs/switch-commands-sources.md#frr-84.

Managed config, in FRR's own ``show running-config`` form (integrated config, ``frr defaults traditional``): underlay
(``interface`` addresses of loopback, fabric /31s and the host SVI or routed host ports; the default-VRF ``router bgp``,
owned whole) and pbr (``nexthop-group AIF-NH-*``, ``pbr-map AIF-PBR seq N``: the leaf's local destinations ``set vrf
unchanged`` first, then per host source ``set nexthop-group`` of the bound spine; ``pbr-policy`` on the host-facing L3
interface). qos and mtu render nothing: FRR has no QoS, and port MTU is the Linux/ASIC layer's.

FRR 8.4's vtysh has no candidate/commit, so ``transactions.FrrVtyshTxn`` dry-runs the change (``vtysh -C -f``),
applies it (``vtysh -f``), re-reads and compares, and on failure applies the computed reverse, proven by read-back."""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state, counters as roce_counters, ppd_state, sources, transactions
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import Driver, PREFIX, local_destinations
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command, Op
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import cli_op, flatten
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drain import DrainLine
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Read
from ansible_collections.aifabric.roce.plugins.module_utils.nos.l3plan import fabric_links

FRR_SECTIONS = ("underlay", "pbr")
PBR_MAP = PREFIX + "PBR"
# pbr-map seq is 1-700 in FRR 8.4: local-destination rules take 1-99, host pins 100-700
FIRST_BINDING_SEQ = 100
MAX_SEQ = 700
BLOCK_ORDER = ("interface", "nexthop-group", "router bgp", "pbr-map")


def nh_name(address):
    return "%sNH-%s" % (PREFIX, address.replace(".", "-"))


def svi_name(vlan):
    return "vlan%d" % vlan


def _ip_key(text):
    return int(ipaddress.ip_network(text, strict=False).network_address), text


class FrrDriver(Driver):
    name = "frr"
    device_type = "linux"
    # what switch_config accepts: qos and mtu render nothing here (FRR has neither), so a role asking for them is fine
    sections = ("qos", "mtu", "pbr", "underlay")
    transaction = transactions.FrrVtyshTxn
    # FRR user guide, BGP, "Graceful Shutdown" (accepted and printed by the twin's FRR 8.4.4 engine, after
    # `no bgp ebgp-requires-policy`); FRR receivers lower a GSHUT-tagged path to local-preference 0 by themselves
    drain = DrainLine("bgp graceful-shutdown", close="exit")
    # FRR forwards through the Linux kernel: its ECMP pick is the kernel's (gom/probes.py hash_models)
    ecmp_hash = ("Linux kernel ECMP with net.ipv4.fib_multipath_hash_policy=1 (L4: source and destination address, "
                 "protocol, source and destination port); the kernel hashes these flow keys with siphash under a key "
                 "drawn at boot (or derived from net.ipv4.fib_multipath_hash_seed, Linux 6.11+) and maps the hash to "
                 "a next hop by hash-threshold, so the pick cannot be computed offline: ask the device "
                 "(ip route get <dst> from <src> iif <port> ipproto udp sport <S> dport 4791)")
    counters = [Read("ip -s -j link show", roce_counters.parse_linux_ip_link), Read("tc -s qdisc show", roce_counters.parse_linux_tc)]
    line_sources = sources.FRR
    counter_evidence = dict(ecn_marked="verified", drops="verified")
    checks = ("bgp_sessions", "ppd_paths", "failover")
    bgp_summary = Read("vtysh -c 'show bgp ipv4 unicast summary json'", bgp_state.parse_frr)
    ppd_read = ppd_state.KernelRoute("`ip route get DST from SRC iif INGRESS` (the kernel's forwarding decision, PBR rules "
                                     "included)")
    show_running = "vtysh -c 'show running-config'"
    save_command = "vtysh -c 'write memory'"
    # vtysh prints "% Unknown command", "% Invalid input", "% Command incomplete", "% Ambiguous command",
    # and with -f "line N: ..." for a refused line: "line 2: % Unknown command[25]: ..." (a parse error)
    # or "line 5: Failure to communicate[13] to bgpd, line: router bgp 65001" (a daemon's refusal),
    # both seen on FRR 8.4.4 (tests/fixtures/switches/frr/vtysh-f-refusals.txt)
    error_pattern = r"^% |^line \d+: |command not found"

    # --- which interfaces are ours ---------------------------------------------------
    @staticmethod
    def host_l3_interfaces(intent):
        out = []
        for iface in intent.get("host_interfaces") or []:
            out.append((svi_name(iface["vlan"]) if iface["kind"] == "svi" else iface["port"], iface["address"]))
        return out

    def interface_addresses(self, intent):
        """(interface, address) the underlay puts on this router, in plan order."""
        return [("lo", "%s/32" % intent["loopback"])] + fabric_links(intent) + self.host_l3_interfaces(intent)

    def managed_interfaces(self, intent):
        return set(pair[0] for pair in self.interface_addresses(intent))

    # --- render ------------------------------------------------------------------------
    def render(self, intent, qos, sections=FRR_SECTIONS):
        blocks = {}
        if "underlay" in sections and intent.get("bgp"):
            for name, address in self.interface_addresses(intent):
                blocks.setdefault(("interface", name), []).append("ip address %s" % address)
            blocks[("router bgp", str(intent["bgp"]["asn"]))] = self._bgp_lines(intent["bgp"])
        bindings = intent.get("bindings") or [] if "pbr" in sections else []
        if bindings:
            ingress = self.pbr_ingress(intent)
            for hop in sorted(set(b["next_hop"] for b in bindings), key=_ip_key):
                blocks[("nexthop-group", nh_name(hop))] = ["nexthop %s" % hop]
            # Local destinations first, for every source (traffic between hosts of this leaf never
            # leaves it), then one pin per host source. Two seq ranges keep each stable when the
            # other grows; FRR 8.4 takes seq 1-700.
            local = local_destinations(intent)
            if len(local) >= FIRST_BINDING_SEQ or len(bindings) > MAX_SEQ - FIRST_BINDING_SEQ + 1:
                raise ValueError("%d local prefixes and %d bindings do not fit FRR's pbr-map seq range 1-%d"
                                 % (len(local), len(bindings), MAX_SEQ))
            for seq, dest in enumerate(local, 1):
                blocks[("pbr-map", "%s seq %d" % (PBR_MAP, seq))] = ["match dst-ip %s" % dest, "set vrf unchanged"]
            for seq, binding in enumerate(bindings, FIRST_BINDING_SEQ):
                blocks[("pbr-map", "%s seq %d" % (PBR_MAP, seq))] = [
                    "match src-ip %s" % binding["source"], "set nexthop-group %s" % nh_name(binding["next_hop"])]
            for port in ingress:
                blocks.setdefault(("interface", port), []).append("pbr-policy %s" % PBR_MAP)
        return self._text(blocks)

    def pbr_ingress(self, intent):
        """Where the policy binds: the SVI (scheme A; its members are L2), else each routed host port."""
        names = [pair[0] for pair in self.host_l3_interfaces(intent)]
        if names:
            return names
        return sorted(set(b["ingress"] for b in intent.get("bindings") or []))

    @staticmethod
    def _bgp_lines(bgp):
        lines = ["bgp router-id %s" % bgp["router_id"], "no bgp ebgp-requires-policy"]
        if bgp["multipath_relax"]:
            lines.append("bgp bestpath as-path multipath-relax")
        lines.append("timers bgp %d %d" % (bgp["keepalive_seconds"], bgp["hold_seconds"]))
        for n in bgp["neighbors"]:
            lines.append("neighbor %s remote-as %d" % (n["address"], n["remote_as"]))
        lines.append("address-family ipv4 unicast")
        for net in sorted(bgp["networks"], key=_ip_key):
            lines.append(" network %s" % net)
        if bgp.get("allowas_in"):
            # FRR prints these after the networks, in neighbor order (show running-config, FRR 8.4.4)
            for n in bgp["neighbors"]:
                lines.append(" neighbor %s allowas-in %d" % (n["address"], bgp["allowas_in"]))
        lines.append(" maximum-paths %d" % bgp["maximum_paths"])
        lines.append("exit-address-family")
        return lines

    @staticmethod
    def _sort_key(key):
        kind, name = key
        if kind == "interface":
            m = re.match(r"^(\D*)(\d*)(.*)$", name)
            return (0, m.group(1), int(m.group(2) or -1), m.group(3))
        if kind == "pbr-map":
            head, seq = name.rsplit(" seq ", 1)
            return (3, head, int(seq), "")
        return (BLOCK_ORDER.index(kind), name, 0, "")

    def _text(self, blocks):
        out = []
        for key in sorted(blocks, key=self._sort_key):
            if not blocks[key]:
                continue
            out.append("%s %s" % key)
            out += [" " + line for line in blocks[key]]
            out.append("exit")
        return "".join(line + "\n" for line in out)

    # --- parse -------------------------------------------------------------------------
    @staticmethod
    def blocks_of(text):
        """FRR config text -> {(kind, name): [child lines without the first indent]} of its ``exit``-ended blocks."""
        blocks, current = {}, None
        for raw in text.splitlines():
            line = raw.rstrip()
            if not line or line.strip() == "!":
                continue
            if not line.startswith(" "):
                if line == "exit":
                    current = None
                    continue
                kind = next((k for k in BLOCK_ORDER if line.startswith(k + " ")), None)
                current = (kind, line[len(kind) + 1:]) if kind else None
                if current:
                    blocks[current] = []
                continue
            if current is not None:
                blocks[current].append(line[1:])
        return blocks

    def parse(self, running, intent, sections=FRR_SECTIONS):
        managed = self.managed_interfaces(intent)
        out = {}
        for (kind, name), lines in self.blocks_of(running).items():
            if kind == "interface":
                keep = [ln for ln in lines if
                        ("underlay" in sections and ln.startswith("ip address ") and name in managed)
                        or ("pbr" in sections and ln.startswith("pbr-policy " + PREFIX))]
                if keep:
                    out[(kind, name)] = keep
            elif kind == "router bgp" and "underlay" in sections and name.isdigit():
                # the default-VRF instance is the plan's, whole (but a maintenance drain: nos/drain.py);
                # `router bgp ASN vrf NAME` is not ours
                out[(kind, name)] = [ln for ln in lines if not self.drain.is_child("router bgp " + name, ln)]
            elif kind in ("nexthop-group", "pbr-map") and "pbr" in sections and name.startswith(PREFIX):
                out[(kind, name)] = lines
        return self._text(out)

    def outside(self, running, intent, sections=FRR_SECTIONS):
        """Every line of the running config outside the managed view (``parse``), as ``header > child``
        paths, and top-level lines without children as themselves: apply.py proves a change or an undo
        left them alone (fullconfig.image). A header with children is represented only by them: FRR
        prints ``interface X`` only while X has config, so adding our first line there adds the header."""
        mine = set()
        for key, lines in self.blocks_of(self.parse(running, intent, sections)).items():
            mine.add("%s %s" % key)
            mine.update("%s %s > %s" % (key + (line,)) for line in lines)
        out, header, children = [], None, 0

        def close():
            if header is not None and not children and header not in mine:
                out.append(header)
        for raw in running.splitlines():
            line = raw.rstrip()
            if not line.strip() or line.strip() == "!":
                continue
            if line.startswith(" ") and header is not None:
                children += 1
                if "%s > %s" % (header, line[1:]) not in mine:
                    out.append("%s > %s" % (header, line[1:]))
                continue
            close()
            header, children = (None if line == "exit" else line), 0
        close()
        return sorted(out)

    # --- family hooks (nos/base.py Driver) --------------------------------------------
    def paths(self, managed):
        """Each line with its parents, FRR's indentation giving them (``exit`` closers skipped): nos/cli.py flatten."""
        return flatten(managed)

    def takeover_items(self, before_image, after, intent, sections=FRR_SECTIONS):
        from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover
        return (takeover.items(self, takeover.CLI_FORMS, before_image, after)
                + takeover.frr_pbr_items(self, after, before_image.outside))

    def protected(self, command):
        return transactions.removes_port(command)

    def port_mtus(self, managed):
        """Nothing: FRR holds no port MTU (the Linux/ASIC layer does), so the audit has none to compare."""
        return {}

    # FRR's diff negates an interface's lines inside ``interface X`` (never ``no interface X``)
    safe_reverse = Driver.checked_reverse

    # --- diff --------------------------------------------------------------------------
    @staticmethod
    def _negate(line):
        return line[3:] if line.startswith("no ") else "no " + line

    def diff(self, current, intended):
        """Ops: a block's header, then its lines; a block the intent lacks goes whole (an interface: line by line)."""
        cur, want = self.blocks_of(current), self.blocks_of(intended)
        removals, additions = [], []
        for key in sorted(cur, key=self._sort_key, reverse=True):
            head = "%s %s" % key
            if key not in want:
                if key[0] == "interface":
                    removals += [Op("set", (head,))] + [cli_op((head, self._negate(ln))) for ln in cur[key]]
                else:
                    removals.append(Op("unset", (head,)))
                continue
            gone = self._changes(head, cur[key], want[key])
            if gone:
                removals += [Op("set", (head,))] + gone
        for key in sorted(want, key=self._sort_key):
            new = self._changes("%s %s" % key, want[key], cur.get(key, []), add=True)
            if new:
                additions += [Op("set", ("%s %s" % key,))] + new
        return removals + additions

    def _changes(self, head, have, other, add=False):
        """Ops of the lines of ``have`` missing from ``other`` (negated unless ``add``), under their address-family."""
        out, context, context_open = [], None, False
        other_set = set(other)
        for line in have:
            if line.startswith("address-family "):
                context, context_open = line, False
                continue
            if line == "exit-address-family":
                context, context_open = None, False
                continue
            if line in other_set:
                continue
            if context and not context_open:
                out.append(Op("set", (head, context)))
                context_open = True
            out.append(cli_op((head,) + ((context,) if context else ()) + ((line if add else self._negate(line.strip())).strip(),)))
        return out

    def commands(self, ops):
        """vtysh config commands: one context per block, ``exit`` (``exit-address-family``) after each."""
        out, block, context = [], None, None

        def close(level):
            if context is not None:   # a line of the config as FRR prints it (under the block): an op of its own
                out.append(Command("exit-address-family", Op("set", (block, "exit-address-family"))))
            if level == 0 and block is not None:
                out.append(Command("exit"))
        for op in ops:
            text = ("no " if op.kind == "unset" else "") + op.path[-1]
            if len(op.path) == 1:
                close(0)
                block, context = (op.path[0] if op.kind == "set" else None), None
            elif len(op.path) == 2:
                close(1)
                context = op.path[1] if op.kind == "set" and op.path[1].startswith("address-family ") else None
            out.append(Command(text, op))
        close(0)
        return out

    def state(self, managed):
        return {"blocks": ["%s %s" % key for key in self.blocks_of(managed)]}
