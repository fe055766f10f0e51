# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: nos_waiting_sections
short_description: The sections a switch's NOS driver renders only under a fabric opt-in this switch has not set
version_added: "1.1.0"
author:
  - aifabric.roce developers (@aifabric)
description:
  - Takes a switch's plan record (its C(platform) and the fabric's opt-in keys the plan copies into it) and returns,
    per section its NOS driver renders only when a fabric key enables it (the driver's C(opt_ins)), the ones this switch
    has not enabled, each with the key, the value that enables it and why.
  - Used by the C(switch) role to leave such a section out of a run and say so, instead of sending it and being refused
    (a C(pbr) whose platform names its opt-in key in docs/platforms.md).
  - An unknown platform fails the template with the list of known ones.
options:
  _input:
    description: The switch's plan record (C(lookup('aifabric.roce.device_intent', inventory_hostname))).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Sections waiting for a fabric opt-in on this switch
  ansible.builtin.debug:
    msg: "{{ lookup('aifabric.roce.device_intent', inventory_hostname) | aifabric.roce.nos_waiting_sections }}"
"""

RETURN = r"""
_value:
  description: One entry per section left out, in the driver's order; empty when nothing waits.
  type: list
  elements: dict
  contains:
    section:
      description: The section (for example C(pbr)).
      type: str
    key:
      description: The fabric key that enables it.
      type: str
    value:
      description: The value that enables it.
      type: str
    why:
      description: Why the driver pushes it only then.
      type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver


def nos_waiting_sections(intent):
    try:
        driver = get_driver(intent["platform"])
    except KeyError as exc:
        raise AnsibleFilterError(str(exc.args[0]))
    out = []
    for section in driver.sections:
        need = (driver.opt_ins or {}).get(section)
        if need and intent.get(need[0]) != need[1]:
            out.append({"section": section, "key": need[0], "value": need[1], "why": need[2]})
    return out


class FilterModule(object):
    def filters(self):
        return {"nos_waiting_sections": nos_waiting_sections}
