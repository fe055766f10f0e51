# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: switch_rollout
short_description: Order and serial batch sizes for changing switches in safe parallel batches
version_added: "1.1.0"
author:
  - aifabric.roce developers (@aifabric)
description:
  - Takes the plan's safe switch batches (C(hostvars['localhost'].aifabric_switch_batches), set by role
    C(aifabric.roce.plan)) and the switches in scope, and returns the play order and C(serial) sizes.
  - A safe batch never holds two leafs of one rail, two leafs of one server group or two spines of one
    plane; leafs go first, spines after. Keeping only the switches in scope keeps every batch safe.
options:
  _input:
    description: The plan's safe batches (list of lists of switch names).
    type: list
    elements: list
    required: true
  in_scope:
    description: Switch names in scope (inventory group intersected with C(--limit)), in inventory order.
    type: list
    elements: str
    required: true
  canary:
    description: The first this-many switches form a batch of their own (0 turns the canary off).
    type: int
    default: 1
  batch_max:
    description: Cap on every batch's size (0 = only the safety rules limit it).
    type: int
    default: 0
"""

EXAMPLES = r"""
- name: Compute the switch rollout
  ansible.builtin.set_fact:
    plan_switch_rollout: "{{ aifabric_switch_batches | aifabric.roce.switch_rollout(groups['switches']) }}"
"""

RETURN = r"""
_value:
  description: C(order) (switch names), C(serial) (batch sizes for the play keyword), C(batches).
  type: dict
"""

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.rollout import rollout


def switch_rollout(batches, in_scope, canary=1, batch_max=0):
    return rollout([list(batch) for batch in batches], list(in_scope), canary=int(canary), batch_max=int(batch_max))


class FilterModule(object):
    def filters(self):
        return {"switch_rollout": switch_rollout}
