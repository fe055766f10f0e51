#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_plan
short_description: Compute the plan of a rail-optimized RoCE fabric once and write it with one slice per device
description:
  - Validates the fabric intent (see the fabric schema reference) and computes the plan - sizing,
    rail IP plan, fabric links, leaf port binding (PPD) and per-host route maps (IRM).
  - Runs as an action plugin in the controller process (no module round trip of the plan). Writes
    C(plan.json) and one slice per device, C(devices/<name>.json), under O(dest) (only files whose
    bytes change, each atomically; slices of devices that left the plan are removed), and returns a
    small handle - paths, digests, sizing, QoS profile, device counts - plus the safe switch batches.
  - Same input gives byte-identical files; growing the fabric never renumbers existing assignments.
  - Run again in the same play run with the same intent and O(dest), it reuses the plan (nothing is
    re-planned).
  - Bad input fails with one message listing every problem, each with its key path and the fix.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  fabric:
    description:
      - The fabric intent, normally the inventory variable C(fabric) (docs/fabric-schema.md).
      - It is validated as a whole first; bad input fails with one line per problem in C(msg) and the
        list C(problems) (C(path), C(message), C(fix)), and nothing is written.
    type: dict
    required: true
  dest:
    description: Directory of C(plan.json), C(plan-handle.json) and C(devices/); created when missing.
    type: path
    required: true
  as_fact:
    description:
      - Return the handle as the fact C(aifabric_plan) and the batches as C(aifabric_switch_batches) (under
        C(ansible_facts)) instead of RV(plan) and RV(switch_batches). With C(delegate_to=localhost) and
        C(delegate_facts=true), every role finds the plan through C(hostvars['localhost'].aifabric_plan).
    type: bool
    default: false
attributes:
  action:
    support: full
    description: Runs as an action plugin on the controller.
  check_mode:
    support: full
    description:
      - The plan files are controller-side working data that every later step of the run reads, so they are
        written in check mode too; no device is touched in either mode.
  diff_mode:
    support: full
    description: When the files change, a before/after summary of the handle (digest, device counts, sizing).
notes:
  - Runs on the controller whatever the task's host is.
"""

EXAMPLES = r"""
- name: Plan the fabric once, on the controller
  aifabric.roce.fabric_plan:
    fabric: "{{ fabric }}"
    dest: "{{ lookup('aifabric.roce.build_dir', fabric.name) }}"
    as_fact: true
  delegate_to: localhost
  delegate_facts: true
  run_once: true

- name: Show the NCCL hints of one host (its slice, not the whole plan)
  ansible.builtin.debug:
    var: lookup('aifabric.roce.device_intent', 'gpu01').nccl
"""

RETURN = r"""
plan:
  description: The handle of the plan written to O(dest) (see docs/plan-format.md).
  returned: success and O(as_fact=false)
  type: dict
  sample: {"fabric": "lab", "path": "/srv/build/lab/plan.json", "dir": "/srv/build/lab", "digest": "3f1c...",
           "counts": {"hosts": 4, "leafs": 4, "spines": 2}, "sizing": {"gpus": 16}}
switch_batches:
  description: Safe parallel switch batches (no two leafs of a rail or of a group, no two spines of a plane); leafs first.
  returned: success and O(as_fact=false)
  type: list
  elements: list
  sample: [["leaf0"], ["leaf1"], ["spine1"], ["spine2"]]
ansible_facts:
  description: C(aifabric_plan) (the handle) and C(aifabric_switch_batches).
  returned: success and O(as_fact=true)
  type: dict
  contains:
    aifabric_plan:
      description: The handle, as RV(plan) would be.
      type: dict
      returned: success and O(as_fact=true)
      sample: {"fabric": "lab", "path": "/srv/build/lab/plan.json"}
    aifabric_switch_batches:
      description: The batches, as RV(switch_batches) would be.
      type: list
      elements: list
      returned: success and O(as_fact=true)
      sample: [["leaf0"], ["spine1"]]
written:
  description: Files written under O(dest) (plan.json, plan-handle.json, devices/<name>.json).
  returned: success
  type: list
  elements: str
  sample: ["plan.json", "devices/gpu05.json"]
removed:
  description: Slices of devices that left the plan, removed.
  returned: success
  type: list
  elements: str
  sample: ["devices/gpu09.json"]
reused:
  description: Whether the plan computed earlier in this run for the same intent was reused.
  returned: success
  type: bool
  sample: false
problems:
  description: On bad input, every problem with its key path and fix.
  returned: failure
  type: list
  elements: dict
  sample: [{"path": "fabric.rails", "message": "rails is 8 but servers.nics lists 4 NICs", "fix": "list one NIC per rail or correct rails"}]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import EMPTY_DEST, intent_digest, write_plan
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    # Normally the action plugin of the same name runs instead; this keeps the module usable on its own.
    module = AnsibleModule(
        argument_spec=dict(fabric=dict(type="dict", required=True), dest=dict(type="path", required=True),
                           as_fact=dict(type="bool", default=False)),
        supports_check_mode=True,
    )
    bounds.enforce(module, "fabric_plan")
    if not (module.params["dest"] or "").strip():
        module.fail_json(msg=EMPTY_DEST)
    plan = plan_or_fail(module)
    handle, batches, written, removed = write_plan(plan, module.params["dest"], input_digest=intent_digest(module.params["fabric"]))
    result = dict(changed=bool(written or removed), written=written, removed=removed, reused=False)
    for warning in plan["sizing"].get("warnings", []):
        module.warn(warning)
    if module.params["as_fact"]:
        result["ansible_facts"] = {"aifabric_plan": handle, "aifabric_switch_batches": batches}
    else:
        result.update(plan=handle, switch_batches=batches)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
