#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: roce_health
short_description: Fabric-wide RoCE check - one QoS profile and MTU chain everywhere, and healthy switch counters
version_added: "1.1.0"
description:
  - Runs on the controller, reads nothing from devices itself; it takes what M(aifabric.roce.switch_facts) returned for
    each switch (managed C(qos)/C(mtu) sections and C(counters)) and, optionally, the hosts' rail NIC MTUs.
  - Consistency - every switch's managed QoS (lossless priority, DSCP map, ECN thresholds, PFC watchdog) equals the
    fabric's one QoS profile rendered for it and fitted to the switch as M(aifabric.roce.switch_config) fits it (from
    switch_facts' C(fit_view); on community SONiC, the lossless PGs buffermgrd writes in the traditional buffer model,
    a PFC watchdog without a PFC_WD table), what is left to the switch named in C(left_to_switch); on every RoCE path
    the host NIC MTU is the plan's and no leaf or spine port MTU is below it.
  - Counter health - against the counters kept from the previous audit in O(state) (the build dir), a pause storm
    (PFC pause frames on a lossless priority rising by more than O(pause_threshold)), a PFC watchdog event or drops
    on a lossless queue is a finding with the switch, port, priority and the GPUs behind that port (from the plan),
    ranked by GPUs affected.
  - Writes the current counters to O(state) for the next audit (not in check mode).
author: aifabric.roce developers (@aifabric)
options:
  plan_path:
    description: The plan's C(plan.json) (C(aifabric_plan.path)).
    type: path
    required: true
  switches:
    description: Per switch name, its M(aifabric.roce.switch_facts) result (keys C(sections) and C(counters) are read).
    type: dict
    default: {}
  host_mtus:
    description: Per host name, a mapping of rail netdev to MTU as read on the host (optional).
    type: dict
    default: {}
  state:
    description: JSON file with the previous audit's counters; read, then replaced by the current ones.
    type: path
    required: true
  pause_threshold:
    description: Pause frames on a lossless priority since the previous audit above which a port is in a pause storm.
    type: int
    default: 1000
attributes:
  check_mode:
    support: full
    description: Evaluates and returns the findings; the counters snapshot in O(state) is not written.
  diff_mode:
    support: none
    description: The findings are the report.
"""

EXAMPLES = r"""
- name: Check RoCE health fabric-wide
  aifabric.roce.roce_health:
    plan_path: "{{ aifabric_plan.path }}"
    switches: "{{ dict(groups['switches'] | zip(groups['switches'] | map('extract', hostvars, 'roce_switch_facts'))) }}"
    state: "{{ lookup('aifabric.roce.build_dir', 'audit') }}/roce-counters.json"
  register: roce
"""

RETURN = r"""
roce:
  description:
    - The report section - C(status) (ok, warn, fail), C(counters) and C(consistency) findings, C(gpus_affected).
    - C(read) - per switch read, what was read (its managed sections, C(counters)); C(not_read) - per switch of the
      plan given in O(switches) but not read (its read failed or was skipped), why. A switch not read is never
      counted healthy; the report names it.
    - C(left_to_switch) - per switch, what the fit of the profile left to the switch's own machinery and why (the
      same notes as M(aifabric.roce.switch_config)'s C(fitted)); not compared, named in the report.
  returned: always
  type: dict
  sample: {"status": "fail", "gpus_affected": ["gpu02:gpu0"], "consistency": [],
           "counters": [{"kind": "watchdog", "severity": "fail", "switch": "leaf0", "port": "Ethernet1", "priority": "3",
                         "count": 1, "gpus": ["gpu02:gpu0"], "message": "PFC watchdog: 1 storm(s) since the last audit"}]}
entries:
  description: drift_report entries (category readiness, check C(roce_health)), one per device with findings.
  returned: always
  type: list
  elements: dict
previous:
  description: Whether counters from a previous audit were found in O(state) (false - the first audit compares with zero).
  returned: always
  type: bool
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import write_if_changed
from ansible_collections.aifabric.roce.plugins.module_utils.audit import roce_health
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def evaluate(plan, switches, host_mtus, previous, pause_threshold):
    """(report section, drift_report entries, snapshot to keep) for switch_facts results of the plan's switches."""
    intents = dict(list((plan.get("leafs") or {}).items()) + list((plan.get("spines") or {}).items()))
    current, have, want, mtus, read, not_read, left = {}, {}, {}, {}, {}, {}, {}
    for name, facts in sorted((switches or {}).items()):
        if name not in intents:
            continue
        facts = facts if isinstance(facts, dict) else {}
        if facts.get("failed"):
            not_read[name] = facts.get("msg") or "read failed"
            continue
        if facts.get("skipped") or "sections" not in facts:
            not_read[name] = "not read (its switch check could not read it)"
            continue
        read[name] = sorted(facts["sections"] or {}) + (["counters"] if facts.get("counters") is not None else [])
        if facts.get("counters") is not None:
            current[name] = facts["counters"]
        sections = facts.get("sections") or {}
        if sections:
            drv = get_driver(intents[name]["platform"])
            # only what the driver renders is compared (AsterNOS renders qos alone: MTU is not configured there)
            have[name] = dict((s, (sections.get(s) or {}).get("config", "")) for s in ("qos", "mtu")
                              if s in sections and s in drv.sections)
            want[name] = dict((s, drv.render(intents[name], plan["qos"], (s,))) for s in have[name])
            if facts.get("fit_view") is not None:
                # what switch_config wants on this switch: the render fitted to its own machinery (Driver.fit), with
                # what that leaves to the switch named
                for s in sorted(want[name]):
                    want[name][s], notes = drv.fit_to(want[name][s], facts["fit_view"])
                    seen = left.setdefault(name, [])
                    seen += [n for n in notes if n not in seen]
            if "mtu" in have[name]:
                mtus[name] = drv.port_mtus(have[name]["mtu"])   # the driver's typed read of its own MTU view
    section = roce_health.report_section(
        roce_health.counter_findings(plan, current, previous, pause_threshold),
        roce_health.consistency_findings(plan, have, want, host_mtus, mtus), read, not_read,
        dict((k, v) for k, v in left.items() if v))
    return section, roce_health.entries(section), roce_health.snapshot(current)


def main():
    module = AnsibleModule(argument_spec=dict(
        plan_path=dict(type="path", required=True),
        switches=dict(type="dict", default={}),
        host_mtus=dict(type="dict", default={}),
        state=dict(type="path", required=True),
        pause_threshold=dict(type="int", default=1000),
    ), supports_check_mode=True)
    bounds.enforce(module, "roce_health")
    try:
        with open(module.params["plan_path"]) as fh:
            plan = json.load(fh)
    except (IOError, OSError, ValueError) as exc:
        module.fail_json(msg="cannot read the plan %s: %s (run the plan role first)" % (module.params["plan_path"], exc))
    previous = None
    if os.path.exists(module.params["state"]):
        try:
            with open(module.params["state"]) as fh:
                previous = json.load(fh)
        except (IOError, OSError, ValueError):
            module.warn("previous RoCE counters in %s unreadable: compared with zero" % module.params["state"])
    section, entries, snap = evaluate(plan, module.params["switches"], module.params["host_mtus"], previous,
                                      module.params["pause_threshold"])
    changed = False
    if snap:
        os.makedirs(os.path.dirname(os.path.abspath(module.params["state"])), exist_ok=True)
        changed = write_if_changed(module.params["state"], json.dumps(snap, indent=1, sort_keys=True) + "\n",
                                   check_mode=module.check_mode)
    module.exit_json(changed=changed, roce=section, entries=entries, previous=previous is not None)


if __name__ == "__main__":
    main()
