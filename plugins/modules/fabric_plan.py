#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_plan
short_description: Compute the whole plan of a rail-optimized RoCE fabric
description:
  - Validates the fabric intent (see the fabric schema reference) and computes the plan - sizing,
    cabling, rail IP plan, fabric links, leaf port binding (PPD) and per-host route maps (IRM).
  - Pure computation on the controller; nothing on any device changes. Same input gives the same
    plan, and growing the fabric never renumbers existing assignments.
  - Bad input fails with one message listing every problem, each with its key path and the fix.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  hosts:
    description:
      - Only return these GPU hosts under C(plan.hosts) (all when omitted). Keeps results small
        for large fabrics; validation always covers the whole fabric.
    type: list
    elements: str
  as_fact:
    description:
      - Return the plan as the fact C(aifabric_plan) (under C(ansible_facts)) instead of RV(plan).
        With O(as_fact=true), C(delegate_to=localhost) and C(delegate_facts=true), every role reads
        C(hostvars['localhost'].aifabric_plan) - the plan is computed once and stored once.
    type: bool
    default: false
extends_documentation_fragment:
  - aifabric.roce.fabric
attributes:
  check_mode:
    support: full
    description: Computes the same plan in check mode; nothing is written in either mode.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to diff.
notes:
  - Runs on the controller; use C(delegate_to=localhost) or a play on C(localhost).
"""

EXAMPLES = r"""
- name: Plan the fabric once, on the controller
  aifabric.roce.fabric_plan:
    fabric: "{{ fabric }}"
  delegate_to: localhost
  run_once: true
  register: fabric_plan_result

- name: Show the NCCL hints of one host
  ansible.builtin.debug:
    var: fabric_plan_result.plan.hosts['gpu01'].nccl
"""

RETURN = r"""
plan:
  description: The plan. Keys C(hosts), C(leafs), C(spines), C(cabling), C(qos), C(sizing); see docs/plan-format.md.
  returned: success and O(as_fact=false)
  type: dict
  sample: {"fabric": "lab", "schema_version": 1, "sizing": {"gpus": 16, "leafs": 4, "spines": 2}}
ansible_facts:
  description: The fact C(aifabric_plan) holding the plan.
  returned: success and O(as_fact=true)
  type: dict
  contains:
    aifabric_plan:
      description: The plan, as RV(plan) would be.
      type: dict
      returned: success and O(as_fact=true)
      sample: {"fabric": "lab", "schema_version": 1}
problems:
  description: On bad input, every problem with its key path and fix.
  returned: failure
  type: list
  elements: dict
  sample: [{"path": "fabric.rails", "message": "rails is 8 but servers.nics lists 4 NICs", "fix": "list one NIC per rail or correct rails"}]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import plan_or_fail


def main():
    module = AnsibleModule(
        argument_spec=dict(fabric=dict(type="dict", required=True),
                           hosts=dict(type="list", elements="str"),
                           as_fact=dict(type="bool", default=False)),
        supports_check_mode=True,
    )
    plan = plan_or_fail(module)
    wanted = module.params["hosts"]
    if wanted is not None:
        unknown = sorted(set(wanted) - set(plan["hosts"]))
        if unknown:
            module.fail_json(msg="hosts not in the fabric plan: %s" % ", ".join(unknown))
        plan["hosts"] = dict((name, plan["hosts"][name]) for name in wanted)
    if module.params["as_fact"]:
        module.exit_json(changed=False, ansible_facts={"aifabric_plan": plan})
    module.exit_json(changed=False, plan=plan)


if __name__ == "__main__":
    main()
