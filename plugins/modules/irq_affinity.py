#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: irq_affinity
short_description: Pin rail NIC completion IRQs to the cores of the NIC's NUMA node
description:
  - Spreads each rail NIC's completion IRQs (by name, e.g. C(mlx5_comp*)) round-robin over the CPUs of
    the NIC's NUMA node, minus O(reserved_cpus), by writing C(/proc/irq/<n>/smp_affinity_list).
    NICs sharing a node start at staggered CPUs.
  - Keeps irqbalance from undoing it - O(irqbalance=ban) installs an irqbalance C(--policyscript) that bans
    the rail NICs' IRQs (by PCI address, so it survives IRQ renumbering) and adds it to C(IRQBALANCE_ARGS)
    in C(/etc/default/irqbalance); O(irqbalance=disable) only reports it (the role stops and disables the service).
  - With O(persist), writes a boot-time replay script and a systemd unit (the role enables it) that recompute
    the same spread from C(msi_irqs) at boot.
  - Every netdev and CPU in the written scripts is shell-quoted. Netdevs that are not Linux interface names
    (letters, digits, C(.), C(_), C(-), at most 15 characters) and an O(irq_name_glob) with characters other
    than name and glob characters are refused before anything is read or written.
  - Every path is under O(root), so tests can act on a fixture copy of C(/proc) and C(/sys).
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  nics:
    description: Rail netdevs whose IRQs to pin.
    type: list
    elements: str
    required: true
  reserved_cpus:
    description: CPUs never used for these IRQs (kernel cpulist, e.g. C(0-1,64-65)).
    type: str
    default: ''
  irq_name_glob:
    description: Shell glob selecting the completion IRQs by their C(/proc/interrupts) name (part before C(@)).
    type: str
    default: mlx5_comp*
  irqbalance:
    description: How to keep irqbalance off these IRQs.
    type: str
    choices: [ban, disable, ignore]
    default: ban
  persist:
    description: Write the replay script and systemd unit.
    type: bool
    default: true
  root:
    description: Filesystem root (C(/) on a host; a fixture copy in tests).
    type: path
    default: /
attributes:
  check_mode:
    support: full
    description: Computes and reports every change without writing.
  diff_mode:
    support: full
    description: IRQ affinity before/after and file diffs.
notes:
  - Some IRQs are kernel-managed and refuse affinity changes; such IRQs are reported in RV(failed_irqs) and the task fails.
"""

EXAMPLES = r"""
- name: Pin rail NIC IRQs, keep irqbalance off them, persist
  aifabric.roce.irq_affinity:
    nics: [rail0, rail1]
    reserved_cpus: "0,64"
"""

RETURN = r"""
assignments:
  description: Completion IRQs and their CPU.
  returned: always
  type: list
  elements: dict
  sample: [{"netdev": "rail0", "irq": 101, "name": "mlx5_comp0", "cpu": 0, "before": "0-127", "status": "changed"}]
irqbalance_action:
  description: What was done about irqbalance (C(policyscript), C(disable requested), C(ignored), C(not installed)).
  returned: always
  type: str
files:
  description: Files written or checked (policy script, irqbalance defaults, replay script, unit).
  returned: always
  type: list
  elements: str
failed_irqs:
  description: IRQs whose affinity could not be written.
  returned: always
  type: list
  elements: dict
"""

import copy

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.host.apply_irq import ARGUMENT_SPEC, run
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(argument_spec=copy.deepcopy(ARGUMENT_SPEC), supports_check_mode=True)  # the spec is shared: never let a run change it
    bounds.enforce(module, "irq_affinity")
    try:
        result = run(module.params, module.check_mode)
    except RunError as exc:
        module.fail_json(msg=str(exc), **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
