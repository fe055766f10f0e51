# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: device_intent
author: aifabric.roce developers (@aifabric)
version_added: "1.1.0"
short_description: One device's slice of the fabric plan
description:
  - Returns the intent of one GPU host, leaf or spine as written by M(aifabric.roce.fabric_plan)
    (role C(aifabric.roce.plan)) to C(<plan dir>/devices/<name>.json), never the whole plan, so the
    controller's cost per device does not grow with the fabric.
  - A host slice holds its NICs, routes, rules, sysctls, NCCL hints, the QoS profile and the routing
    tables and rule priorities the fabric reserves for rails; a switch slice holds the leaf or spine
    record, the QoS profile and C(kind) (C(leaf) or C(spine)).
  - Fails with what to do when no plan was computed in this run, when the device is not in the plan,
    or when the slice belongs to another plan than the one this run computed.
  - Every slice is checked by the sha256 of its content against C(devices.sha256), whose own sha256 is the
    handle's C(slices_digest) (this run's plan); a slice edited on disk is refused even when it keeps its
    C(plan_digest) label. With O(plan_dir) the reference is the C(plan-handle.json) the plan wrote there.
options:
  _terms:
    description: Device names (usually C(inventory_hostname)).
    required: true
    type: list
    elements: str
  plan_dir:
    description:
      - The plan directory. Default is C(hostvars['localhost'].aifabric_plan.dir), set by role C(aifabric.roce.plan).
      - Slices read from it are checked against the C(devices.sha256) and C(plan-handle.json) written there.
    type: path
"""

EXAMPLES = r"""
- name: Show this host's rail NICs
  ansible.builtin.debug:
    msg: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).nics | map(attribute='netdev') }}"
"""

RETURN = r"""
_raw:
  description: One slice (dict) per term.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import load_slice

NO_PLAN = ("no fabric plan in this run: run role aifabric.roce.plan on localhost first "
           "(it sets hostvars['localhost'].aifabric_plan), or pass plan_dir")


class LookupModule(LookupBase):

    def _plan_handle(self, variables):
        try:
            handle = variables["hostvars"]["localhost"]["aifabric_plan"]
        except (KeyError, TypeError):
            return {}
        return handle if isinstance(handle, dict) else {}

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        plan_dir = self.get_option("plan_dir")
        expect = expect_slices = None  # with plan_dir: checked against the plan-handle.json written beside the slices
        if plan_dir is not None and not str(plan_dir).strip():
            raise AnsibleLookupError("plan_dir is empty, which would mean the current directory: pass the plan's "
                                     "directory or leave plan_dir out (the run's plan, set by role aifabric.roce.plan)")
        if not plan_dir:
            handle = self._plan_handle(variables or {})
            if not handle.get("dir"):
                raise AnsibleLookupError(NO_PLAN)
            plan_dir, expect, expect_slices = handle["dir"], handle.get("digest"), handle.get("slices_digest")
        out = []
        for name in terms:
            try:
                out.append(load_slice(plan_dir, str(name), expect_digest=expect, expect_slices=expect_slices))
            except (IOError, OSError, ValueError) as exc:
                raise AnsibleLookupError(str(exc))
        return out
