# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: gor_steered
short_description: A leaf's slice of the plan with GOR's steered PPD bindings applied
version_added: "0.1.0"
author:
  - aifabric.roce developers (@aifabric)
description:
  - Takes a switch's slice of the plan (lookup C(aifabric.roce.device_intent)) and returns a copy whose PPD bindings
    listed in GOR's steer record for that leaf carry the steered uplink, spine and next hop. Other switches, and a
    record with nothing for this leaf, get the slice unchanged. The plan itself is never changed.
  - C(playbooks/gor_steer.yml) pushes the result through the C(aifabric.roce.switch) role; C(playbooks/audit.yml)
    audits each leaf against it, so a steered binding is not reported as drift (docs/gor.md).
options:
  _input:
    description: The switch's slice of the plan.
    type: dict
    required: true
  record:
    description: GOR's steer record (module M(aifabric.roce.gor_steer)); empty or null means nothing is steered.
    type: dict
    required: true
  leaf:
    description: The switch's name (inventory_hostname).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Push the steered bindings of this leaf
  ansible.builtin.include_role:
    name: aifabric.roce.switch
  vars:
    switch_intent: "{{ lookup('aifabric.roce.device_intent', inventory_hostname) | aifabric.roce.gor_steered(gor_record, inventory_hostname) }}"
    switch_sections: [pbr]
"""

RETURN = r"""
_value:
  description: The slice, with steered bindings.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.aifabric.roce.plugins.module_utils.gor.steer import SteerError, steered_intent


def gor_steered(intent, record, leaf):
    try:
        return steered_intent(intent, leaf, record or None)
    except SteerError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {"gor_steered": gor_steered}
