#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: drift_report
short_description: Write the fabric drift report (JSON, Markdown, self-contained HTML)
description:
  - Takes one entry per device and check (built from check-mode task results) and writes
    C(drift-report.json), C(drift-report.md) and C(drift-report.html) under O(dest) - a fleet summary
    and, per device, every drifted item with its expected and actual value.
  - The headline (RV(verdict)) says C(DRIFT) or C(IN SYNC) for configuration (C(NOT AUDITED) when no device
    could be reached), adds C(NOT READY) when
    readiness checks (preflight) found errors and C(N UNREACHABLE) when devices could not be audited.
    Unreachable devices are listed; checks that ran on a synthetic tree (a O(entries) C(root) other
    than C(/), or a preflight C(synthetic_root) finding) are disclosed in a note.
  - Every probe or check is a result - C(passed), C(failed) or C(not_run) with why (docs/playbooks.md, Results);
    the report lists what passed as well as what failed. A device with a required check that did not run is
    C(NOT VERIFIED), never clean. A finding shared by many devices is one row with the devices collapsed; drift
    comes first, and with O(plan_path) each drift item names the GPUs behind its port or NIC.
  - With O(fail_on_drift=true) the task fails after writing the report when any device drifted,
    failed a check or was unreachable, so cron and CI jobs can alert on it.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  entries:
    description:
      - Report entries. Each has C(device), C(kind) (host or switch), C(check), C(status) (ok, drift, takeover,
        fail, unreachable, warn, skipped), C(items) (list of C(item), C(expected), C(actual)), C(message),
        optionally C(category) (C(config) or C(readiness)) and C(root) (the tree a host check read).
      - A C(takeover) entry (a switch_config result with a non-empty C(takeover) list - objects someone else configured
        that the plan would replace whole) also has C(takeover), the list of those objects; the report lists them
        under Takeovers, apart from ordinary drift, and the headline adds C(N TAKEOVER).
      - Give O(results) instead to have entries built from registered task results.
    type: list
    elements: dict
    default: []
  results:
    description:
      - Registered check-mode results by device, then by check (a mapping of device name to a mapping of check name to task result), with
        O(kinds) telling whether a device is a host or a switch. Drift items come from each result's
        C(drift) list or its before/after C(diff).
    type: dict
    default: {}
  kinds:
    description: Device kind by device name for O(results); devices not listed are C(host).
    type: dict
    default: {}
  fabric:
    description: Fabric name for the report title.
    type: str
    default: ""
  title:
    description: Report title (the validation playbook uses this module for its report too).
    type: str
    default: Drift audit
  generated:
    description:
      - Timestamp text to print in the report (the audit playbook passes the UTC time of the run).
      - Empty prints none, which keeps reruns byte-identical.
    type: str
    default: ""
  plan_digest:
    description: Digest of the plan the devices were audited against (C(aifabric_plan.digest)), printed in the headline.
    type: str
    default: ""
  plan_path:
    description: Path of that plan's C(plan.json), printed beside the digest.
    type: str
    default: ""
  dest:
    description: Directory for the report files; created when missing.
    type: path
    required: true
  fail_on_drift:
    description:
      - Fail (after writing the report) when any device drifted, failed a check, was unreachable or is not verified
        (a required check did not run).
    type: bool
    default: false
  purpose:
    description:
      - C(audit) words the verdict C(DRIFT) / C(IN SYNC); C(validation) words it C(FAILED) / C(PASSED).
      - Either way a device with a required check that did not run is C(NOT VERIFIED), never clean, and the
        headline counts the checks that ran, passed, failed and did not run.
    type: str
    choices: [audit, validation]
    default: audit
  roce:
    description:
      - The RoCE health section (RV(aifabric.roce.roce_health#module:roce)), shown in the report as "RoCE health" - pause
        storms, PFC watchdog events and lossless drops since the last audit and RoCE configuration differences, each
        with the port, the priority and the GPUs behind it, ranked by GPUs affected. Omitted - no such section.
    type: dict
attributes:
  check_mode:
    support: full
    description: Builds the report and returns it; writes no file.
  diff_mode:
    support: none
    description: The report itself is the diff.
"""

EXAMPLES = r"""
- name: Write the drift report from check-mode results collected on localhost
  aifabric.roce.drift_report:
    results: "{{ audit_results }}"
    kinds: "{{ audit_kinds }}"
    fabric: "{{ fabric.name }}"
    generated: "{{ now(utc=true, fmt='%Y-%m-%dT%H:%M:%SZ') }}"
    plan_digest: "{{ aifabric_plan.digest }}"
    plan_path: "{{ aifabric_plan.path }}"
    dest: "{{ aifabric_build_dir | default(lookup('ansible.builtin.env', 'PWD') ~ '/build') }}/audit"
    fail_on_drift: "{{ audit_fail_on_drift | default(false) }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
summary:
  description: Fleet summary - device count, drifted item count, device names per worst status.
  returned: always
  type: dict
  sample: {"devices": 6, "drifted_items": 2, "devices_drift": ["gpu02", "leaf1"], "devices_unreachable": ["leaf3"],
           "devices_not_ready": [], "devices_ok": ["gpu01"]}
verdict:
  description:
    - The report's headline - C(DRIFT) (C(FAILED)), C(NOT VERIFIED) or C(IN SYNC) (C(PASSED)), then C(N NOT VERIFIED),
      C(N TAKEOVER), C(NOT READY) and C(N UNREACHABLE) when they apply.
  returned: always
  type: str
  sample: DRIFT / 1 UNREACHABLE
drift:
  description: Whether any device drifted, failed a check or holds objects the plan would take over.
  returned: always
  type: bool
  sample: true
verified:
  description: Whether every device ran all its required checks (false - the verdict says C(NOT VERIFIED)).
  returned: always
  type: bool
  sample: false
files:
  description: Paths of the report files.
  returned: always
  type: list
  elements: str
  sample: ["/srv/audit/drift-report.json", "/srv/audit/drift-report.md", "/srv/audit/drift-report.html"]
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import write_if_changed
from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import (
    build_report, entry_from_result, gpus_by_object, render_html, render_json, render_markdown)
from ansible_collections.aifabric.roce.plugins.module_utils import bounds

REQUIRED_ENTRY_KEYS = ("device", "kind", "check", "status")


def _entries(module):
    entries = []
    for index, entry in enumerate(module.params["entries"]):
        missing = [key for key in REQUIRED_ENTRY_KEYS if key not in entry]
        if missing:
            module.fail_json(msg="entries[%d] lacks %s" % (index, ", ".join(missing)))
        entries.append(dict({"items": [], "message": ""}, **entry))
    kinds = module.params["kinds"]
    for device, checks in sorted(module.params["results"].items()):
        if not isinstance(checks, dict):
            module.fail_json(msg="results.%s must map check names to task results" % device)
        for check, result in sorted(checks.items()):
            entries.append(entry_from_result(device, kinds.get(device, "host"), check, result))
    return entries


def _gpus(module):
    """The GPUs behind each port and NIC, from the plan the devices were audited against (none without it)."""
    path = module.params["plan_path"]
    if not path or not os.path.isfile(path):
        return None
    try:
        with open(path) as handle:
            return gpus_by_object(json.load(handle))
    except (OSError, ValueError) as exc:
        module.warn("cannot read %s for the GPUs behind each port: %s" % (path, exc))
        return None


def main():
    module = AnsibleModule(
        argument_spec=dict(entries=dict(type="list", elements="dict", default=[]), results=dict(type="dict", default={}),
                           kinds=dict(type="dict", default={}), fabric=dict(type="str", default=""),
                           generated=dict(type="str", default=""), plan_digest=dict(type="str", default=""),
                           plan_path=dict(type="str", default=""), title=dict(type="str", default="Drift audit"), dest=dict(type="path", required=True),
                           fail_on_drift=dict(type="bool", default=False), roce=dict(type="dict"),
                           purpose=dict(type="str", default="audit", choices=["audit", "validation"])),
        supports_check_mode=True,
    )
    bounds.enforce(module, "drift_report")
    report = build_report(_entries(module), fabric=module.params["fabric"], generated=module.params["generated"],
                          title=module.params["title"], plan_digest=module.params["plan_digest"],
                          plan_path=module.params["plan_path"], roce=module.params["roce"],
                          purpose=module.params["purpose"], gpus=_gpus(module))
    dest = module.params["dest"]
    if not module.check_mode and not os.path.isdir(dest):
        os.makedirs(dest)
    renders = (("drift-report.json", render_json), ("drift-report.md", render_markdown), ("drift-report.html", render_html))
    files, changed = [], False
    for name, render in renders:
        path = os.path.join(dest, name)
        files.append(path)
        changed = write_if_changed(path, render(report), check_mode=module.check_mode) or changed
    result = dict(changed=changed, summary=report["summary"], drift=report["drift"], verdict=report["verdict"],
                  verified=report["verified"], files=files)
    summary = report["summary"]
    bad = sorted(set(summary["devices_fail"] + summary["devices_unreachable"] + summary["devices_drift"]
                     + summary["devices_takeover"] + summary["devices_not_verified"]))
    if module.params["fail_on_drift"] and bad:
        module.fail_json(msg="%s on %d device(s): %s; report: %s" % (report["verdict"], len(bad), ", ".join(bad), files[2]), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
