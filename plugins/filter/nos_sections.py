# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: nos_sections
short_description: The managed sections a switch platform's NOS driver renders
version_added: "1.1.0"
author:
  - aifabric.roce developers (@aifabric)
description:
  - Takes a platform name of the plan (C(asternos), C(eos), C(nxos), ...) and returns the sections its NOS driver
    renders, reads back and diffs (the driver's C(sections)), the list M(aifabric.roce.switch_config) and
    M(aifabric.roce.switch_facts) accept for it; any other section is refused by name.
  - Given a switch's plan record (its C(platform) and the fabric keys it carries) instead, returns the sections its
    driver takes under those keys (the driver's C(sections_for); AsterNOS adds the SONiC-native ones under
    C(asternos_config=config_db)); the switch role plans no other.
  - Used by C(playbooks/audit.yml) to ask each switch only for what its driver has (AsterNOS renders C(qos) alone).
  - An unknown platform fails the template with the list of known ones.
options:
  _input:
    description: Platform name from the plan record (C(platform)), or the plan record itself.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Read only the QoS and MTU sections this switch's driver renders
  aifabric.roce.switch_facts:
    platform: "{{ plan_record.platform }}"
    intent: "{{ plan_record }}"
    sections: "{{ ['qos', 'mtu'] | select('in', plan_record.platform | aifabric.roce.nos_sections) | list }}"
    host: "{{ ansible_host }}"
  vars:
    plan_record: "{{ lookup('aifabric.roce.device_intent', inventory_hostname) }}"
  delegate_to: localhost
"""

RETURN = r"""
_value:
  description: The driver's sections, in its order (for example C([qos]) for C(asternos), C([qos, mtu, pbr, underlay]) for C(nxos)).
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver


def nos_sections(platform):
    record = platform if isinstance(platform, dict) else None
    try:
        driver = get_driver(record["platform"] if record is not None else platform)
    except KeyError as exc:
        raise AnsibleFilterError(str(exc.args[0]))
    return list(driver.sections_for(record) if record is not None else driver.sections)


class FilterModule(object):
    def filters(self):
        return {"nos_sections": nos_sections}
