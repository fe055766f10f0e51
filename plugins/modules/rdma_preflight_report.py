#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: rdma_preflight_report
short_description: Fleet summary of RDMA preflight findings (JSON and Markdown)
description:
  - Takes each host's facts and findings, adds the fleet-wide firmware consistency check
    (C(fw_fleet_mixed) - per NIC model, hosts off the fleet's most common version), and writes
    C(preflight.json), C(preflight.md) and one C(<host>.json) per host to O(dest).
  - Runs in the controller's own process (an action plugin, no Python start per run, as
    M(aifabric.roce.rdma_preflight) runs); give it C(run_once). The files are written on the controller.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  hosts:
    description:
      - Per host, a dict with C(findings) and C(nics) (the intent checked) - the registered result of
        M(aifabric.roce.rdma_preflight) is one - and optionally C(facts) (aifabric_rdma facts).
    type: dict
    required: true
  facts:
    description:
      - Per host, the aifabric_rdma facts, for the hosts whose O(hosts) entry has no C(facts).
      - The fleet firmware check reads them; a host with no facts is left out of it.
    type: dict
    default: {}
  dest:
    description: Directory for the report files (created when missing).
    type: path
    required: true
  strict:
    description: Hosts with error findings are C(fail) when true, C(warn) when false.
    type: bool
    default: true
  fleet_severity:
    description: Severity of C(fw_fleet_mixed) findings.
    type: str
    choices: [error, warning]
    default: warning
attributes:
  check_mode:
    support: full
    description: Computes the summary; writes no file in check mode.
  diff_mode:
    support: full
    description: Shows the Markdown summary before and after.
"""

EXAMPLES = r"""
- name: Write the fleet summary
  aifabric.roce.rdma_preflight_report:
    hosts: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'preflight_check'))) }}"
    facts: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, ['ansible_facts', 'aifabric_rdma']))) }}"
    dest: "{{ lookup('aifabric.roce.build_dir', 'preflight') }}"
  run_once: true
"""

RETURN = r"""
summary:
  description: C(hosts) (status, errors, warnings, findings per host), C(by_check) (who fails what), C(totals), C(strict).
  returned: always
  type: dict
  sample: {"totals": {"hosts": 3, "pass": 2, "warn": 0, "fail": 1}, "by_check": {"gdr_ready": ["broken"]}}
fleet_findings:
  description: Findings of the fleet-wide checks.
  returned: always
  type: list
  elements: dict
files:
  description: Paths written (or that would be written).
  returned: always
  type: list
  elements: str
"""

import copy

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError
from ansible_collections.aifabric.roce.plugins.module_utils.host.preflight_report import ARGUMENT_SPEC, run
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    # the role runs the action plugin of the same name (plugins/action/rdma_preflight_report.py: in the controller's
    # process); this module runs the same code where Ansible executes it as a module
    module = AnsibleModule(argument_spec=copy.deepcopy(ARGUMENT_SPEC), supports_check_mode=True)
    bounds.enforce(module, "rdma_preflight_report")
    try:
        result = run(module.params, module.check_mode)
    except RunError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
