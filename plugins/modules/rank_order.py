#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: rank_order
short_description: Topology-affine rank order for a job's GPU hosts (controller side)
description:
  - From the fabric plan, orders a job's hosts by server group (pod) and leaf position so that the
    neighbours of NCCL's rings and trees share a leaf, and returns the MPI hostfile and rank list.
  - Also returns the spine-traffic model of one ring and double-binary-tree allreduce for the
    given (native) order, the mean of random orders, and the topology order (docs/rank-order.md).
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  hosts:
    description: The job's hosts in the order the scheduler gave them (names from the plan).
    type: list
    elements: str
    required: true
  message_bytes:
    description: Allreduce message size per rail used by the traffic model.
    type: int
    default: 1073741824
  slots:
    description: Ranks per host in the hostfile; default is the host's rail NIC count.
    type: int
extends_documentation_fragment:
  - aifabric.roce.pure
  - aifabric.roce.fabric
"""

EXAMPLES = r"""
- name: Order the job's hosts for NCCL
  aifabric.roce.rank_order:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    hosts: "{{ groups['job42'] }}"
  delegate_to: localhost
  run_once: true
  register: job_order

- name: Write the hostfile
  ansible.builtin.copy:
    content: "{{ job_order.hostfile }}"
    dest: /shared/job42/hostfile
    mode: "0644"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
order:
  description: The hosts in topology order.
  returned: success
  type: list
  elements: str
  sample: ["gpu01", "gpu02"]
hostfile:
  description: MPI hostfile text, one C(host slots=N) line per host in order.
  returned: success
  type: str
  sample: "gpu01 slots=4\ngpu02 slots=4\n"
ranks:
  description: One entry per rank (rank, host, local_rank, group).
  returned: success
  type: list
  elements: dict
traffic:
  description: Spine bytes for ring and tree allreduce, native versus random versus ours, and the reductions.
  returned: success
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils.gor.order import JobError, compare, hostfile
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(
        argument_spec=dict(PLAN_ARGUMENTS, hosts=dict(type="list", elements="str", required=True),
                           message_bytes=dict(type="int", default=1 << 30), slots=dict(type="int")),
        supports_check_mode=True,
        **PLAN_CONSTRAINTS)
    bounds.enforce(module, "rank_order")
    plan = plan_or_fail(module)
    try:
        report = compare(plan, module.params["hosts"], module.params["message_bytes"], samples=50)
    except JobError as exc:
        module.fail_json(msg=str(exc))
    order = report.pop("order")
    out = hostfile(plan, order, module.params["slots"])
    module.exit_json(changed=False, order=order, hostfile=out["hostfile"], ranks=out["ranks"], traffic=report)


if __name__ == "__main__":
    main()
