#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: scheduler_topology
short_description: The plan's topology for the job scheduler (Slurm topology.conf, Kubernetes node labels)
description:
  - From the fabric plan, renders Slurm's C(topology.conf) for C(TopologyPlugin=topology/tree), one switch per
    server group (the group's rail leafs) under one switch for the spine layer, so that Slurm places a job that
    fits in a group inside one group.
  - Renders Kubernetes node labels per server group and rail leaf (C(aifabric.io/group), C(aifabric.io/rail<r>-leaf),
    C(aifabric.io/fabric)), each checked against Kubernetes' label syntax, and the C(kubectl label node) commands.
  - Slurm 22.05 (Debian 12) has no C(topology.yaml) (Slurm 25.05 added it); only C(topology.conf) is rendered.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  node_names:
    description: Scheduler node name per plan host name, where they differ (default the plan's host name).
    type: dict
    default: {}
extends_documentation_fragment:
  - aifabric.roce.pure
  - aifabric.roce.fabric
attributes:
  diff_mode:
    support: none
    description: Nothing changes; write the text with ansible.builtin.copy.
"""

EXAMPLES = r"""
- name: Topology of the fabric for Slurm and Kubernetes
  aifabric.roce.scheduler_topology:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
  delegate_to: localhost
  run_once: true
  register: sched

- name: Install topology.conf next to slurm.conf (then scontrol reconfigure)
  ansible.builtin.copy:
    content: "{{ sched.topology_conf }}"
    dest: /etc/slurm/topology.conf
    mode: "0644"
  delegate_to: slurm-head
  run_once: true
"""

RETURN = r"""
topology_conf:
  description: topology.conf text for the tree plugin.
  returned: success
  type: str
  sample: "SwitchName=lab-g1 Nodes=gpu[01-04]\nSwitchName=lab-spine Switches=lab-g1\n"
tree:
  description: The same tree as data (groups with switch, nodes and rail leafs; the top switch with the spines).
  returned: success
  type: dict
node_labels:
  description: Kubernetes labels per node.
  returned: success
  type: dict
  sample: {"gpu01": {"aifabric.io/fabric": "lab", "aifabric.io/group": "1", "aifabric.io/rail0-leaf": "leaf0"}}
label_commands:
  description: One C(kubectl label node ... --overwrite) command per node.
  returned: success
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils import bounds
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils.gor.k8s_nodes import K8sNodeError, label_commands, node_labels
from ansible_collections.aifabric.roce.plugins.module_utils.gor.slurm import topology, topology_conf


def main():
    module = AnsibleModule(
        argument_spec=dict(PLAN_ARGUMENTS, node_names=dict(type="dict", default={})),
        supports_check_mode=True,
        **PLAN_CONSTRAINTS)
    bounds.enforce(module, "scheduler_topology")
    plan = plan_or_fail(module)
    names = module.params["node_names"]
    unknown = sorted(set(names) - set(plan["hosts"]))
    if unknown:
        module.fail_json(msg="node_names: %s not in the plan's hosts. Fix: key node_names by the plan's host names"
                         % ", ".join(unknown[:10]))
    try:
        labels = node_labels(plan, names)
    except K8sNodeError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, topology_conf=topology_conf(plan, names), tree=topology(plan, names),
                     node_labels=labels, label_commands=label_commands(labels))


if __name__ == "__main__":
    main()
