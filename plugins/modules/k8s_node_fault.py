#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: k8s_node_fault
short_description: kubectl commands that cordon and taint a Kubernetes node for a fabric fault, and undo only this collection's
description:
  - >-
    From the Node object (C(kubectl get node NAME -o json)) and GOM's faulty link, renders the C(kubectl) commands
    that cordon the node, taint it C(aifabric.io/fabric-fault=<netdev>:NoSchedule) and annotate it
    C(aifabric.io/drain-reason) with C(aifabric: <link> <event id>); or, once the link is repaired, that remove them and
    uncordon the node.
  - A node cordoned by someone else (no reason of this collection) is left alone and never uncordoned.
  - Renders only; no cluster is contacted (run the commands with ansible.builtin.command where kubectl is
    configured). Taint and annotation are checked against Kubernetes' documented syntax, not a live API server.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  node:
    description: The Node object as C(kubectl get node NAME -o json) prints it (metadata.name, spec, annotations).
    type: dict
    required: true
  state:
    description: C(cordoned) for a fault on O(link), C(uncordoned) once O(link) is repaired.
    type: str
    required: true
    choices: [cordoned, uncordoned]
  link:
    description: The faulty link as GOM names it (one word), e.g. C(gpu01:rail0>leaf0:Ethernet0).
    type: str
    required: true
  event_id:
    description: The id of the GOM event. Required with C(state=cordoned).
    type: str
  effect:
    description: Taint effect.
    type: str
    default: NoSchedule
    choices: [NoSchedule, PreferNoSchedule, NoExecute]
attributes:
  diff_mode:
    support: none
    description: Renders commands only.
extends_documentation_fragment:
  - aifabric.roce.pure
"""

EXAMPLES = r"""
- name: Read the node
  ansible.builtin.command: kubectl get node gpu01 -o json
  register: node_json
  changed_when: false

- name: Commands that cordon and taint it for the fault
  aifabric.roce.k8s_node_fault:
    node: "{{ node_json.stdout | from_json }}"
    state: cordoned
    link: "gpu01:rail0>leaf0:Ethernet0"
    event_id: gom-17
  register: fault

- name: Run them
  ansible.builtin.command: "{{ item }}"
  loop: "{{ fault.commands }}"
  changed_when: true
"""

RETURN = r"""
action:
  description: C(cordon), C(update_reason), C(uncordon) or null.
  returned: success
  type: str
why:
  description: Why, in words.
  returned: success
  type: str
commands:
  description: The kubectl commands to run, in order (empty when nothing is to be done).
  returned: success
  type: list
  elements: str
reason:
  description: The drain-reason annotation after the commands (null when removed or untouched).
  returned: success
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils import bounds
from ansible_collections.aifabric.roce.plugins.module_utils.gor.k8s_nodes import K8sNodeError, decide
from ansible_collections.aifabric.roce.plugins.module_utils.gor.slurm import SlurmError


def main():
    module = AnsibleModule(
        argument_spec=dict(
            node=dict(type="dict", required=True),
            state=dict(type="str", required=True, choices=["cordoned", "uncordoned"]),
            link=dict(type="str", required=True),
            event_id=dict(type="str"),
            effect=dict(type="str", default="NoSchedule", choices=["NoSchedule", "PreferNoSchedule", "NoExecute"]),
        ),
        required_if=[("state", "cordoned", ("event_id",))],
        supports_check_mode=True)
    bounds.enforce(module, "k8s_node_fault")
    params = module.params
    if not isinstance((params["node"].get("metadata") or {}).get("name"), str):
        module.fail_json(msg="node.metadata.name missing: pass the output of 'kubectl get node NAME -o json'")
    try:
        result = decide(params["node"], params["state"], params["link"], params["event_id"], params["effect"])
    except (K8sNodeError, SlurmError) as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
