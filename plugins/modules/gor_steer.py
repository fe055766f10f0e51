#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: gor_steer
short_description: Move PPD bindings off bad or congested leaf-spine links, and back after a hold-down (controller side)
description:
  - From the fabric plan, the state of the fabric links (GOM's names and states) and GOR's steer record, computes
    which leaf ports' PPD bindings move to which healthy uplink (balanced, each to the healthy uplink of its leaf
    with the fewest bindings), and which steered bindings go back to their planned uplink because the link they
    were moved for has been healthy for O(hold_down) seconds (docs/gor.md).
  - A bad leaf->spine link moves the bindings on that uplink. A bad spine->leaf link moves, on every other leaf of
    the destination leaf's plane, the bindings bound to that spine (PPD chooses the spine, not the spine's link).
  - C(state=planned) computes and returns the new record, the moves and the leafs to push; it writes nothing.
    Push each leaf's steered intent (filter C(aifabric.roce.gor_steered)) through the C(aifabric.roce.switch)
    role (switch_config, with its lock, compare-and-swap, verify and undo), then record what was pushed with
    C(state=recorded).
  - C(state=recorded) writes O(record_path) with the new record for O(pushed_leafs) and the old record for every
    other leaf (a leaf whose push failed keeps what its switch still holds). The plan is never changed.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  links:
    description:
      - Fabric link states, one per link GOM reports. Host links are ignored here (playbooks/gor_drain.yml).
      - Required with C(state=planned).
    type: list
    elements: dict
    suboptions:
      link:
        description: GOM's link name, C(leaf0:Ethernet8>spine1:Ethernet1) (leaf->spine) or C(spine1:Ethernet1>leaf0:Ethernet8).
        type: str
        required: true
      state:
        description: C(bad) (down or lossy), C(congested) (loss or RTT above baseline for the hold time) or C(healthy).
        type: str
        required: true
        choices: [bad, congested, healthy]
      since:
        description: Epoch seconds (a number) the link entered this state.
        type: raw
        required: true
      event:
        description: The GOM event id (kept in the record).
        type: str
  record_path:
    description: GOR's steer record on the controller (JSON; absent means nothing is steered).
    type: path
    required: true
  hold_down:
    description: Seconds a link must have been healthy before the bindings moved for it go back (0 to 86400).
    type: int
    default: 300
  now:
    description: Current epoch seconds (default the controller's clock).
    type: float
  state:
    description: C(planned) computes only; C(recorded) writes the record for O(pushed_leafs).
    type: str
    default: planned
    choices: [planned, recorded]
  planned_record:
    description: With C(state=recorded), RV(record) of the C(state=planned) run whose leafs were pushed.
    type: dict
  pushed_leafs:
    description: With C(state=recorded), the leafs whose steered intent the switch now holds (verified pushes).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - aifabric.roce.fabric
attributes:
  check_mode:
    support: full
    description: C(recorded) reports the change to the record without writing it.
  diff_mode:
    support: full
    description: The record before and after (C(recorded)).
"""

EXAMPLES = r"""
- name: What to steer
  aifabric.roce.gor_steer:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    links: [{link: "leaf0:Ethernet8>spine1:Ethernet1", state: bad, since: 1795900000, event: gom-17}]
    record_path: "{{ lookup('aifabric.roce.build_dir', 'gor', 'steer.json') }}"
  register: gor_plan
"""

RETURN = r"""
record:
  description: The new steer record (version, steered entries with leaf, ingress, source, planned_uplink, uplink,
    spine, next_hop, because, since, event).
  returned: success
  type: dict
moves:
  description: Each binding that moves (leaf, ingress, from, to, because, action steer, move or restore).
  returned: success
  type: list
  elements: dict
leafs:
  description: Leafs whose bindings change (to push).
  returned: success
  type: list
  elements: str
notes:
  description: Bindings that should move but cannot (no healthy uplink on their leaf).
  returned: success
  type: list
  elements: str
"""

import json
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils import bounds
from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import read_bytes, write_if_changed
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils.gor.steer import (
    SteerError, check_links, check_record, compute, leafs_changed, restrict)


def _dump(record):
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


def main():
    module = AnsibleModule(
        argument_spec=dict(
            PLAN_ARGUMENTS,
            links=dict(type="list", elements="dict", options=dict(
                link=dict(type="str", required=True),
                state=dict(type="str", required=True, choices=["bad", "congested", "healthy"]),
                since=dict(type="raw", required=True),
                event=dict(type="str"))),
            record_path=dict(type="path", required=True),
            hold_down=dict(type="int", default=300),
            now=dict(type="float"),
            state=dict(type="str", default="planned", choices=["planned", "recorded"]),
            planned_record=dict(type="dict"),
            pushed_leafs=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
        **PLAN_CONSTRAINTS)
    bounds.enforce(module, "gor_steer")
    params = module.params
    needs = "links" if params["state"] == "planned" else "planned_record"
    if params[needs] is None:
        module.fail_json(msg="state %s needs %s. Fix: pass %s" % (params["state"], needs, needs))
    plan = plan_or_fail(module)
    raw = read_bytes(params["record_path"])
    try:
        old = check_record(json.loads(raw) if raw else None)
        if params["state"] == "recorded":
            planned = check_record(params["planned_record"])
        else:
            links = check_links(plan, params["links"])
            now = params["now"] if params["now"] is not None else time.time()
            record, moves, notes = compute(plan, links, old, now, params["hold_down"])
    except SteerError as exc:
        module.fail_json(msg=str(exc))
    except ValueError as exc:   # a record file that is not JSON
        module.fail_json(msg="steer record %s is not JSON: %s. Fix: restore it, or remove it only once every leaf carries "
                         "its planned bindings" % (params["record_path"], exc))
    if params["state"] == "planned":
        module.exit_json(changed=False, record=record, moves=moves, leafs=leafs_changed(moves), notes=notes)
    unknown = sorted(set(params["pushed_leafs"]) - set(plan["leafs"]))
    if unknown:
        module.fail_json(msg="pushed_leafs: %s are not leafs of the plan" % ", ".join(unknown))
    written = restrict(planned, old, params["pushed_leafs"])
    before = _dump(old) if raw else ""
    after = _dump(written)
    changed = write_if_changed(params["record_path"], after, mode=0o644, check_mode=module.check_mode,
                               before=raw, durable=True)
    result = dict(changed=changed, record=written, moves=[], leafs=sorted(params["pushed_leafs"]), notes=[])
    if module._diff:
        result["diff"] = dict(before=before, after=after, before_header=params["record_path"],
                              after_header=params["record_path"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
