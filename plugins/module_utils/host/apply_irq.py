# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run of the rail NIC IRQ affinity on a host (module aifabric.roce.irq_affinity): plan the pinning from
sysfs/procfs, compare each IRQ's smp_affinity_list and the irqbalance/replay files, apply (or, in check mode,
only report) the difference. Also called in check mode by the host read (module aifabric.roce.host_state)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.aifabric.roce.plugins.module_utils.host import irq, names
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError, ensure_file, ensure_value, systemd_oneshot_unit
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot, parse_cpulist

ARGUMENT_SPEC = dict(nics=dict(type="list", elements="str", required=True),
                     reserved_cpus=dict(type="str", default=""),
                     irq_name_glob=dict(type="str", default="mlx5_comp*"),
                     irqbalance=dict(type="str", choices=["ban", "disable", "ignore"], default="ban"),
                     persist=dict(type="bool", default=True),
                     root=dict(type="path", default="/"))


def run(p, check_mode):
    """Converge (or in check mode compare) the IRQ affinity. Returns the module result; raises RunError(msg,
    result) where the module fails."""
    sysroot = SysRoot(p["root"])
    try:
        reserved = parse_cpulist(p["reserved_cpus"])
    except ValueError:
        raise RunError("reserved_cpus: %r is not a cpulist (e.g. 0-1,64-65)" % p["reserved_cpus"])
    # Netdevs become sysfs paths and boot-script words; the glob a case pattern: check both first.
    bad_input = [problem for problem in [names.netdev_problem(nic) for nic in p["nics"]] + [
        names.glob_problem(p["irq_name_glob"])] if problem]
    if bad_input:
        raise RunError("refusing unsafe input: %s" % "; ".join(bad_input), {"problems": bad_input})
    assignments, problems = irq.plan(sysroot, p["nics"], reserved, p["irq_name_glob"])
    if problems:
        raise RunError("cannot plan IRQ affinity: %s" % "; ".join(problems), {"problems": problems})
    changed = False
    before_lines, after_lines, failed = [], [], []
    for item in assignments:
        res = ensure_value(sysroot, "/proc/irq/%d/smp_affinity_list" % item["irq"], str(item["cpu"]), check_mode)
        item["before"] = res["before"]
        item["status"] = res["status"]
        label = "%s irq %d (%s)" % (item["netdev"], item["irq"], item["name"])
        before_lines.append("%s: %s" % (label, res["before"]))
        after_lines.append("%s: %s" % (label, item["cpu"]))
        if res["status"] == "missing" or res["status"].startswith("failed"):
            failed.append(dict(item))
        changed = changed or res["changed"]
    diff = [{"before_header": "irq affinity", "after_header": "irq affinity",
             "before": "\n".join(before_lines) + "\n", "after": "\n".join(after_lines) + "\n"}]
    files = []

    def put(rel, content, mode=0o644):
        this, d = ensure_file(sysroot, rel, content, mode, check_mode)
        files.append(rel)
        if this:
            diff.append(d)
        return this

    action = "ignored"
    if p["irqbalance"] == "ban":
        if sysroot.exists(irq.IRQBALANCE_DEFAULTS) or sysroot.exists("/usr/sbin/irqbalance") or sysroot.exists("/lib/systemd/system/irqbalance.service"):
            pcis = [a["pci"] for a in assignments if a["pci"]]
            changed = put(irq.POLICY_SCRIPT, irq.policy_script(pcis), 0o755) or changed
            changed = put(irq.IRQBALANCE_DEFAULTS, irq.irqbalance_defaults(sysroot.read(irq.IRQBALANCE_DEFAULTS), irq.POLICY_SCRIPT)) or changed
            action = "policyscript"
        else:
            action = "not installed"
    elif p["irqbalance"] == "disable":
        action = "disable requested"
    if p["persist"]:
        changed = put(irq.REPLAY_SCRIPT, irq.replay_script(reserved, p["irq_name_glob"], assignments), 0o755) or changed
        changed = put(irq.UNIT, systemd_oneshot_unit("aifabric.roce rail NIC IRQ affinity", irq.REPLAY_SCRIPT)) or changed
    result = dict(changed=changed, assignments=assignments, irqbalance_action=action, files=files, failed_irqs=failed, diff=diff)
    if failed:
        raise RunError("could not set the affinity of %d IRQ(s)" % len(failed), result)
    return result
