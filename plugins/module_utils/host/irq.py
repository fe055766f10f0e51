# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rail NIC completion-IRQ affinity: spread over the cores of the NIC's NUMA node.

Reads /sys/class/net/<if>/device/{msi_irqs,numa_node}, /sys/devices/system/node/node<N>/cpulist,
/proc/interrupts and /proc/irq/<n>/smp_affinity_list (Documentation/core-api/irq/irq-affinity.rst).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import fnmatch
import shlex

from ansible_collections.aifabric.roce.plugins.module_utils.host.names import glob_problem
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import parse_cpulist, format_cpulist

POLICY_SCRIPT = "/etc/aifabric/irqbalance-policy.sh"
REPLAY_SCRIPT = "/usr/local/sbin/aifabric-irq-affinity"
UNIT = "/etc/systemd/system/aifabric-irq-affinity.service"
IRQBALANCE_DEFAULTS = "/etc/default/irqbalance"


def irq_names(sysroot):
    """{irq: action name} from /proc/interrupts (last column, ``mlx5_comp0@pci:0000:18:00.0``)."""
    names = {}
    for line in (sysroot.read("/proc/interrupts") or "").splitlines():
        parts = line.split()
        if parts and parts[0].endswith(":") and parts[0][:-1].isdigit():
            names[int(parts[0][:-1])] = parts[-1].split("@")[0]
    return names


def node_cpus(sysroot, node):
    if node is None or node < 0:
        return parse_cpulist(sysroot.read("/sys/devices/system/cpu/online") or "")
    return parse_cpulist(sysroot.read("/sys/devices/system/node/node%d/cpulist" % node) or "")


def plan(sysroot, nics, reserved=(), name_glob="mlx5_comp*"):
    """Desired affinity of every completion IRQ of ``nics``.

    Returns (assignments, problems). assignments: [{netdev, pci, numa_node, irq, name, cpu}].
    NICs on one NUMA node start at staggered offsets so their first vectors do not share a core.
    """
    names = irq_names(sysroot)
    reserved = set(reserved)
    out, problems = [], []
    offsets = {}
    for netdev in nics:
        base = "/sys/class/net/%s/device" % netdev
        if not sysroot.exists("/sys/class/net/%s" % netdev):
            present = sorted(n for n in sysroot.listdir("/sys/class/net") if n != "lo")
            problems.append("%s: netdev not found (this host has: %s). Fix: name the NIC in fabric.servers.nics as the "
                            "host names it (ip -br link), or point host_irq_affinity_root at a tree that has it"
                            % (netdev, ", ".join(present) or "none"))
            continue
        node = sysroot.read_int(base + "/numa_node")
        cpus = [c for c in node_cpus(sysroot, node) if c not in reserved]
        if not cpus:
            problems.append("%s: no usable CPUs on NUMA node %s after reserving %s" % (netdev, node, format_cpulist(reserved)))
            continue
        irqs = sorted(int(x) for x in sysroot.listdir(base + "/msi_irqs") if x.isdigit())
        comp = [irq for irq in irqs if fnmatch.fnmatch(names.get(irq, ""), name_glob)]
        if not comp:
            problems.append("%s: no IRQs named %s" % (netdev, name_glob))
            continue
        start = offsets.get(node, 0)
        for idx, irq in enumerate(comp):
            out.append({"netdev": netdev, "pci": sysroot.link_name(base), "numa_node": node, "irq": irq,
                        "name": names.get(irq), "cpu": cpus[(start + idx) % len(cpus)]})
        offsets[node] = (start + len(comp)) % len(cpus)
    return out, problems


def policy_script(pci_addresses):
    # The PCI address part is quoted: literal in a case pattern, whatever sysfs returned.
    pattern = "|".join("*/%s" % shlex.quote(pci) for pci in sorted(set(pci_addresses)))
    return ("#!/bin/sh\n# Rendered by aifabric.roce.irq_affinity: irqbalance --policyscript that bans the IRQs of\n"
            "# the rail NICs (their affinity is pinned by aifabric-irq-affinity). Args: devpath irq.\n"
            "case \"$1\" in\n  %s) echo \"ban=true\" ;;\nesac\nexit 0\n" % (pattern or "__none__"))


def irqbalance_defaults(text, script):
    """/etc/default/irqbalance with ``--policyscript=<script>`` in IRQBALANCE_ARGS (other args kept)."""
    lines = (text or "").splitlines()
    wanted = "--policyscript=%s" % script
    for idx, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("IRQBALANCE_ARGS="):
            value = stripped.split("=", 1)[1].strip().strip('"')
            args = [a for a in value.split() if not a.startswith("--policyscript")]
            lines[idx] = 'IRQBALANCE_ARGS="%s"' % " ".join(args + [wanted])
            return "\n".join(lines) + "\n"
    lines.append('IRQBALANCE_ARGS="%s"' % wanted)
    return "\n".join(lines) + "\n"


def replay_script(reserved, name_glob, assignments):
    """Boot-time replay: same spread, recomputed from msi_irqs (IRQ numbers change across boots).

    The glob is a case pattern and cannot be quoted without losing its meaning, so it is refused
    unless it holds only name and glob characters; netdevs and CPUs are shell-quoted.
    """
    problem = glob_problem(name_glob)
    if problem:
        raise ValueError(problem)
    lines = ["#!/bin/sh",
             "# Rendered by aifabric.roce.irq_affinity from the fabric intent; do not edit.",
             "# Spreads each rail NIC's completion IRQs (%s) over its NUMA node's CPUs." % name_glob,
             "# reserved CPUs: %s" % (format_cpulist(reserved) or "none"),
             "spread() {",
             "  nic=$1; shift; n=$#; i=0",
             "  for irq in $(ls /sys/class/net/$nic/device/msi_irqs 2>/dev/null | sort -n); do",
             "    name=$(awk -v k=\"$irq:\" '$1 == k { print $NF }' /proc/interrupts)",
             "    case \"${name%%@*}\" in",
             "      %s)" % name_glob,
             "        idx=$(( i % n + 1 )); eval cpu=\\${$idx}",
             "        echo \"$cpu\" > /proc/irq/$irq/smp_affinity_list || echo \"aifabric: irq $irq ($nic) not set\" >&2",
             "        i=$((i + 1)) ;;",
             "    esac",
             "  done",
             "}"]
    order = []
    for item in assignments:
        if item["netdev"] not in order:
            order.append(item["netdev"])
    for netdev in order:
        mine = [str(a["cpu"]) for a in assignments if a["netdev"] == netdev]
        lines.append("spread %s %s" % (shlex.quote(netdev), " ".join(shlex.quote(cpu) for cpu in mine)))
    lines.append("exit 0")
    return "\n".join(lines) + "\n"
