#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_node
short_description: Drain a Slurm node for a fabric fault, and resume only the nodes this collection drained
description:
  - Runs C(scontrol) where Slurm's client is configured (the Slurm controller or a login node).
  - >-
    C(state=drained) drains the node with the reason C(aifabric: <link> <event id>). A node this collection
    already drained for another link gets the link added to its reason (C(aifabric: <link1> <ev1>; <link2> <ev2>)).
    A node someone else drained is left as it is, reason included.
  - C(state=resumed) is for a repaired link. It drops the link from the reason, and resumes the node when no
    fault of this collection is left on it. A node drained with any other reason (by someone else, or
    a reason edited by hand) is never resumed.
  - After a change it reads the node again and fails, naming what it found, if Slurm does not hold
    what it wrote (a concurrent C(scontrol update) by someone else).
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  node:
    description: Slurm node name (NodeName in slurm.conf).
    type: str
    required: true
  state:
    description: C(drained) for a fault on O(link), C(resumed) once O(link) is repaired.
    type: str
    required: true
    choices: [drained, resumed]
  link:
    description:
      - The faulty link as GOM names it (one word), e.g. C(gpu01:rail0>leaf0:Ethernet0).
    type: str
    required: true
  event_id:
    description: The id of the GOM event (one word). Required with C(state=drained).
    type: str
  scontrol:
    description: Path or name of the scontrol binary.
    type: str
    default: scontrol
  slurm_conf:
    description: slurm.conf to use (sets C(SLURM_CONF)); default is the client's own configuration.
    type: path
attributes:
  check_mode:
    support: full
    description: Reads the node and reports what it would do; runs no update.
  diff_mode:
    support: full
    description: Node state and reason before and after.
notes:
  - Slurm has no compare-and-swap for a node update; the module reads the node just before the update and
    verifies it after, so a concurrent change is reported, never silently overwritten on resume.
  - Written against Slurm 22.05 (Debian 12 slurm-wlm) and tested against a real slurmctld, slurmd and munge.
"""

EXAMPLES = r"""
- name: Drain the host whose rail link GOM localised
  aifabric.roce.slurm_node:
    node: gpu01
    state: drained
    link: "gpu01:rail0>leaf0:Ethernet0"
    event_id: "gom-1732800000-17"
  delegate_to: slurm-head

- name: Resume it after the link is repaired (only if this collection drained it)
  aifabric.roce.slurm_node:
    node: gpu01
    state: resumed
    link: "gpu01:rail0>leaf0:Ethernet0"
  delegate_to: slurm-head
"""

RETURN = r"""
action:
  description: What was (or in check mode would be) done, C(drain), C(update_reason), C(resume) or null.
  returned: success
  type: str
  sample: drain
why:
  description: Why, in words (names the owner of a drain this collection leaves alone).
  returned: success
  type: str
  sample: "drained for gpu01:rail0>leaf0:Ethernet0 (event gom-17)"
before:
  description: The node as read before (name, state, base, flags, drain, reason, reason_user, reason_time).
  returned: success
  type: dict
after:
  description: The node as read after the change (the same as RV(before) when nothing changed or in check mode).
  returned: success
  type: dict
command:
  description: The scontrol command run (or that check mode would run).
  returned: when an action is due
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils import bounds
from ansible_collections.aifabric.roce.plugins.module_utils.gor.slurm import SlurmError, command, decide, parse_node


def _read(module, name):
    rc, out, err = module.run_command([module.params["scontrol"], "-o", "show", "node", name])
    if rc != 0:
        module.fail_json(msg="scontrol show node %s failed (rc %d): %s. Fix: check the node name (option node) and "
                         "that Slurm's client reaches slurmctld (option slurm_conf)" % (name, rc, (err or out).strip()))
    try:
        return parse_node(out)
    except SlurmError as exc:
        module.fail_json(msg=str(exc))


def _view(node):
    return "State=%s\nReason=%s\n" % (node["state"], node["reason"] or "")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            node=dict(type="str", required=True),
            state=dict(type="str", required=True, choices=["drained", "resumed"]),
            link=dict(type="str", required=True),
            event_id=dict(type="str"),
            scontrol=dict(type="str", default="scontrol"),
            slurm_conf=dict(type="path"),
        ),
        supports_check_mode=True)
    bounds.enforce(module, "slurm_node")
    params = module.params
    if params["state"] == "drained" and not params["event_id"]:
        module.fail_json(msg="state drained needs event_id (it goes into the drain reason). Fix: pass the GOM event id")
    if params["slurm_conf"]:
        os.environ["SLURM_CONF"] = params["slurm_conf"]
    before = _read(module, params["node"])
    try:
        decision = decide(before, params["state"], params["link"], params["event_id"])
    except SlurmError as exc:
        module.fail_json(msg=str(exc))
    argv = command(before["name"], decision)
    result = dict(changed=argv is not None, action=decision["action"], why=decision["why"], before=before, after=before)
    if argv is None:
        module.exit_json(**result)
    argv[0] = params["scontrol"]
    result["command"] = argv
    predicted = dict(before, reason=decision["reason"],
                     state="%s+DRAIN" % before["base"] if decision["action"] == "drain" else before["state"])
    if decision["action"] == "resume":
        predicted["state"] = "+".join([before["base"]] + [f for f in before["flags"] if f != "DRAIN"])
    if module._diff:
        result["diff"] = dict(before=_view(before), after=_view(predicted),
                              before_header="slurm node %s" % before["name"], after_header="slurm node %s" % before["name"])
    if module.check_mode:
        module.exit_json(**result)
    rc, out, err = module.run_command(argv)
    if rc != 0:
        module.fail_json(msg="%s failed (rc %d): %s" % (" ".join(argv), rc, (err or out).strip()), **result)
    after = _read(module, params["node"])
    result["after"] = after
    if decision["action"] == "resume":
        ok = not after["drain"]
    else:
        ok = after["drain"] and after["reason"] == decision["reason"]
    if not ok:
        module.fail_json(msg="Slurm does not hold what this run wrote on node %s: wanted %s, found state %s reason %r "
                         "(set by %s at %s): a concurrent change; nothing more done"
                         % (before["name"], decision["action"], after["state"], after["reason"],
                            after["reason_user"], after["reason_time"]), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
