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
  - Runs on the controller (C(delegate_to=localhost), C(run_once)).
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  hosts:
    description: Per host, a dict with C(facts) (aifabric_rdma facts), C(findings) and C(nics) (the intent checked).
    type: dict
    required: true
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
    hosts: "{{ preflight_by_host }}"
    dest: "{{ lookup('aifabric.roce.build_dir', 'preflight') }}"
  delegate_to: localhost
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

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import inside
from ansible_collections.aifabric.roce.plugins.module_utils.host import checks
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import ensure_file
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot


def main():
    module = AnsibleModule(
        argument_spec=dict(hosts=dict(type="dict", required=True), dest=dict(type="path", required=True),
                           strict=dict(type="bool", default=True),
                           fleet_severity=dict(type="str", choices=["error", "warning"], default="warning")),
        supports_check_mode=True,
    )
    hosts = module.params["hosts"]
    facts_by_host = dict((h, v["facts"]) for h, v in hosts.items() if v.get("facts"))
    exp_by_host = dict((h, checks.expectations(v.get("nics") or [], severity={"fw_fleet_mixed": module.params["fleet_severity"]}))
                       for h, v in hosts.items())
    fleet = checks.fleet_findings(facts_by_host, exp_by_host)
    summary = checks.summarize(dict((h, v.get("findings") or []) for h, v in hosts.items()), fleet, module.params["strict"])
    dest = module.params["dest"]
    files = {os.path.join(dest, "preflight.json"): json.dumps(summary, indent=2, sort_keys=True) + "\n",
             os.path.join(dest, "preflight.md"): checks.render_markdown(summary)}
    for host, item in summary["hosts"].items():
        try:
            path = inside(dest, "%s.json" % host)
        except ValueError as exc:
            module.fail_json(msg="refusing to write a host report outside %s: %s" % (dest, exc))
        files[path] = json.dumps(dict(item, host=host), indent=2, sort_keys=True) + "\n"
    changed = False
    diff = []
    root = SysRoot("/")
    for path, content in sorted(files.items()):
        this, d = ensure_file(root, path, content, check_mode=module.check_mode, durable=False)
        changed = changed or this
        if this and path.endswith(".md"):
            diff.append(d)
    module.exit_json(changed=changed, summary=summary, fleet_findings=fleet, files=sorted(files), diff=diff)


if __name__ == "__main__":
    main()
