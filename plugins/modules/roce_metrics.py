#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: roce_metrics
short_description: Write the switches' RoCE counters and PPD paths as Prometheus text for node_exporter's textfile collector
version_added: "1.1.0"
description:
  - Runs on the controller and reads nothing from devices itself; it takes what M(aifabric.roce.switch_facts) returned
    for each switch (C(counters)) and what M(aifabric.roce.switch_validate) returned for each leaf (C(ppd_paths)
    findings), and writes them in the Prometheus text format to O(dest) (temporary file, then rename).
  - Series (docs/telemetry.md) - C(roce_switch_pfc_pause_frames_total), C(roce_switch_ecn_marked_packets_total),
    C(roce_switch_queue_drops_total), C(roce_switch_queue_drop_bytes_total), C(roce_switch_pfcwd_storms_total),
    C(roce_switch_pfcwd_restores_total), C(roce_switch_pfcwd_stormed) per switch port and priority, with the C(rail),
    C(host) and C(netdev) of the server NIC behind a leaf port (the labels of the host collector);
    C(roce_switch_counters_up) per switch; C(roce_ppd_binding_info) and C(roce_ppd_on_planned_uplink) per leaf host
    port (planned uplink against the live path); C(roce_switch_audit_timestamp_seconds).
  - Point node_exporter's C(--collector.textfile.directory) at the directory of O(dest), as for the host collector
    (role M(aifabric.roce.rdma_telemetry)).
author: aifabric.roce developers (@aifabric)
options:
  plan_path:
    description: The plan's C(plan.json) (C(aifabric_plan.path)).
    type: path
    required: true
  switches:
    description: Per switch name, its M(aifabric.roce.switch_facts) result (key C(counters) is read).
    type: dict
    default: {}
  ppd:
    description: Per leaf name, its M(aifabric.roce.switch_validate) result with the C(ppd_paths) check (key C(findings)).
    type: dict
    default: {}
  dest:
    description: The C(.prom) file to write (node_exporter reads C(*.prom) files of its textfile directory).
    type: path
    required: true
attributes:
  check_mode:
    support: full
    description: Renders and reports whether O(dest) would change; writes nothing.
  diff_mode:
    support: full
    description: Returns the file before and after.
"""

EXAMPLES = r"""
- name: Export the switches' RoCE counters and PPD paths for Prometheus
  aifabric.roce.roce_metrics:
    plan_path: "{{ aifabric_plan.path }}"
    switches: "{{ dict(groups['switches'] | zip(groups['switches'] | map('extract', hostvars, 'roce_switch_facts'))) }}"
    ppd: "{{ dict(groups['switches'] | zip(groups['switches'] | map('extract', hostvars, 'roce_switch_ppd'))) }}"
    dest: /var/lib/prometheus/node-exporter/aifabric_roce_switches.prom
"""

RETURN = r"""
dest:
  description: The file written.
  returned: always
  type: str
series:
  description: Number of samples in the file.
  returned: always
  type: int
  sample: 412
ppd:
  description: PPD bindings per status (on_plan, moved, no_route, unverified).
  returned: always
  type: dict
  sample: {"on_plan": 8, "unverified": 8}
"""

import json
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import read_bytes, write_if_changed
from ansible_collections.aifabric.roce.plugins.module_utils.telemetry import switch_metrics
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(argument_spec=dict(
        plan_path=dict(type="path", required=True),
        switches=dict(type="dict", default={}),
        ppd=dict(type="dict", default={}),
        dest=dict(type="path", required=True),
    ), supports_check_mode=True)
    bounds.enforce(module, "roce_metrics")
    p = module.params
    try:
        with open(p["plan_path"]) as fh:
            plan = json.load(fh)
    except (IOError, OSError, ValueError) as exc:
        module.fail_json(msg="cannot read the plan %s: %s (run the plan role first)" % (p["plan_path"], exc))
    text = switch_metrics.render(plan, p["switches"], p["ppd"])
    before = read_bytes(p["dest"])
    try:
        changed = write_if_changed(p["dest"], text, check_mode=module.check_mode, before=before)
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot write %s: %s" % (p["dest"], exc))
    ppd = {}
    for status in re.findall(r'^roce_ppd_binding_info\{.*status="([a-z_]+)"', text, re.M):
        ppd[status] = ppd.get(status, 0) + 1
    result = dict(changed=changed, dest=p["dest"], ppd=ppd,
                  series=sum(1 for line in text.splitlines() if line and not line.startswith("#")))
    if module._diff:
        result["diff"] = dict(before=(before or b"").decode("utf-8", "replace"), after=text,
                              before_header=p["dest"], after_header=p["dest"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
