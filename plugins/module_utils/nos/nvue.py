# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA Cumulus Linux 5.x NVUE driver (netmiko device_type cumulus_linux: a Linux shell running ``nv``).

Config is a flat list of ``nv set`` commands (``nv config show -o commands``); changes are staged in
the pending revision and applied atomically with ``nv config apply -y``; ``nv config detach`` drops
a pending revision. Command sources: docs/switch-commands-sources.md#nvidia-cumulus-linux-nvue.
"""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import Driver, PREFIX, SECTIONS, local_destinations, ports_of, safe_name

# managed paths (regex on the text after "nv set "), per section
MANAGED = {
    "mtu": (r"interface (\S+) link mtu \d+$",),
    "qos": (r"qos mapping default-global trust ", r"qos mapping default-global dscp \d+ switch-priority ",
            r"qos pfc default-global switch-priority ", r"qos congestion-control default-global traffic-class ",
            r"qos egress-scheduler default-global traffic-class \d+ mode ", r"interface (\S+) qos pfc-watchdog$",
            r"qos traffic-pool default-(?:lossless|lossy) memory-percent ", r"qos pfc-watchdog (?:polling-interval|robustness) "),
    "pbr": (r"router pbr state ", r"router pbr map %s" % PREFIX, r"router nexthop group %s" % PREFIX,
            r"interface (\S+) router pbr map "),
}
# how many trailing tokens of a managed line are the value (dropped to build the nv unset path)
VALUE_TOKENS = ((r"interface \S+ qos pfc-watchdog$", 0), (r"interface \S+ router pbr map ", 1), (r".*", 1))


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
          (re.compile(r"^(qos traffic-pool \S+ switch-priority )(\S+)()$"), expand_numbers))


def expand_path(path):
    """One ``nv set`` path (without ``nv set``) -> the paths it stands for, one per interface/number."""
    for regex, expander in RANGED:
        m = regex.match(path)
        if m:
            return [m.group(1) + key + (m.group(3) or "") for key in expander(m.group(2))]
    return [path]


def nh_name(address):
    return "%sNH-%s" % (PREFIX, address.replace(".", "-").replace(":", "-"))


class NvueDriver(Driver):
    name = "nvue"
    device_type = device_type_for(name)
    transaction = transactions.NvueRevisionTxn
    show_running = "nv config show -o commands"
    error_pattern = r"^Error:|Invalid Command|command not found"
    save_command = "nv config save"

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
            # No ETS shares here: NVIDIA's 50/50 (TC3/TC0) goes with remapping every other switch priority to TC0
            # (egress-queue-mapping), which this driver does not render; docs/platforms.md lists it as a gap.
            # lossless buffer pool before PFC (CL QoS guide, Flow Control Buffers: 100 % lossy by default)
            lines += ["qos traffic-pool default-lossless memory-percent %d" % qos["lossless_pool_percent"],
                      "qos traffic-pool default-lossy memory-percent %d" % (100 - qos["lossless_pool_percent"])]
            if qos.get("pfc_watchdog"):
                lines += ["interface %s qos pfc-watchdog" % p for p in ports]
                lines += ["qos pfc-watchdog polling-interval %d" % qos["pfc_watchdog_poll_ms"],
                          "qos pfc-watchdog robustness %d" % (qos["pfc_watchdog_detect_ms"] // qos["pfc_watchdog_poll_ms"])]
        bindings = intent.get("bindings") or [] if "pbr" in sections else []
        if bindings:
            lines.append("router pbr state enabled")
            for nh in sorted(set(b["next_hop"] for b in bindings)):
                lines.append("router nexthop group %s via %s" % (nh_name(nh), nh))
            local = local_destinations(intent)
            for b in bindings:
                port = self.port(b["ingress"])
                name = "%sBIND-%s" % (PREFIX, safe_name(port))
                rule = 10
                for dest in local:
                    lines += ["router pbr map %s rule %d match source-ip %s" % (name, rule, b["source"]),
                              "router pbr map %s rule %d match destination-ip %s" % (name, rule, dest),
                              "router pbr map %s rule %d action vrf default" % (name, rule)]
                    rule += 10
                lines += ["router pbr map %s rule %d match source-ip %s" % (name, rule, b["source"]),
                          "router pbr map %s rule %d action nexthop-group %s" % (name, rule, nh_name(b["next_hop"])),
                          "interface %s router pbr map %s" % (port, name)]
        return self._canonical(lines)

    @staticmethod
    def _canonical(paths):
        return "".join("nv set %s\n" % p for p in sorted(set(paths)))

    def _managed(self, path, ports, sections):
        for sec in sections:
            for pat in MANAGED[sec]:
                m = re.match(pat, path)
                if m:
                    return not (m.groups() and m.group(1) not in ports)
        return False

    def parse(self, running, intent, sections=SECTIONS):
        ports = set(self.port(p) for p in ports_of(intent))
        paths = []
        for line in running.splitlines():
            line = line.strip()
            if not line.startswith("nv set "):
                continue
            for path in expand_path(line[7:]):
                if self._managed(path, ports, sections):
                    paths.append(path)
        return self._canonical(paths)

    @staticmethod
    def unset_path(path):
        for pat, n in VALUE_TOKENS:
            if re.match(pat, path):
                return " ".join(path.split()[:-n]) if n else path
        return path  # pragma: no cover

    def diff(self, current, intended):
        cur = set(current.splitlines())
        want = set(intended.splitlines())
        cmds = []
        want_paths = set(self.unset_path(w[7:]) for w in want)
        for line in sorted(cur - want):
            path = self.unset_path(line[7:])
            # a changed leaf value is simply re-set; only unset what the intent no longer has
            if path not in want_paths or path == line[7:]:
                cmds.append("nv unset %s" % path)
        cmds += sorted(want - cur)
        return cmds

    def state(self, managed):
        return {"commands": managed.splitlines()}
