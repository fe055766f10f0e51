#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: rail_ip_plan
short_description: Compute the rail IP plan of a RoCE fabric (an address for every GPU NIC)
description:
  - From the fabric intent, computes for every GPU NIC on every rail its address and prefix,
    gateway, leaf and leaf port, routing table id and rule priority (the AID/IRM inputs).
  - Also returns the per-rail view (pool, per-leaf subnets and gateways) and the leaf-spine
    /31 fabric links.
  - Pure computation on the controller; bad input fails with every problem's key path and fix.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  hosts:
    description: Only return these GPU hosts (all when omitted).
    type: list
    elements: str
extends_documentation_fragment:
  - aifabric.roce.fabric
attributes:
  check_mode:
    support: full
    description: Same result in check mode; nothing is written.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to diff.
"""

EXAMPLES = r"""
- name: Rail addresses of two hosts
  aifabric.roce.rail_ip_plan:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    hosts: [gpu01, gpu02]
  delegate_to: localhost
  register: rail_plan

- name: Address of gpu01 on rail 0
  ansible.builtin.debug:
    msg: "{{ rail_plan.hosts.gpu01[0].address }}/{{ rail_plan.hosts.gpu01[0].prefixlen }}"
"""

RETURN = r"""
hosts:
  description: Per host, its rail NICs in rail order.
  returned: success
  type: dict
  sample: {"gpu01": [{"rail": 0, "netdev": "rail0", "rdma": "mlx5_0", "address": "10.100.0.1", "prefixlen": 29,
           "gateway": "10.100.0.6", "table": 100, "rule_priority": 1000, "leaf": "leaf0", "leaf_port": "Ethernet1"}]}
rails:
  description: Per rail, its pool and each leaf's subnet and gateway.
  returned: success
  type: list
  elements: dict
  sample: [{"rail": 0, "pool": "10.100.0.0/16", "leafs": [{"leaf": "leaf0", "subnet": "10.100.0.0/29", "gateway": "10.100.0.6"}]}]
fabric_links:
  description: Every leaf-spine link with its /31 ends.
  returned: success
  type: list
  elements: dict
  sample: [{"leaf": "leaf0", "leaf_port": "Ethernet9", "leaf_address": "10.254.0.1", "spine": "spine1", "spine_port": "Ethernet1",
            "spine_address": "10.254.0.0"}]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.views import fabric_links, rail_view
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(
        argument_spec=dict(PLAN_ARGUMENTS, hosts=dict(type="list", elements="str")),
        supports_check_mode=True,
        **PLAN_CONSTRAINTS)
    bounds.enforce(module, "rail_ip_plan")
    plan = plan_or_fail(module)
    names = module.params["hosts"] if module.params["hosts"] is not None else sorted(plan["hosts"])
    unknown = sorted(set(names) - set(plan["hosts"]))
    if unknown:
        module.fail_json(msg="hosts not in the fabric plan: %s" % ", ".join(unknown))
    module.exit_json(changed=False, hosts=dict((name, plan["hosts"][name]["nics"]) for name in names),
                     rails=rail_view(plan), fabric_links=fabric_links(plan))


if __name__ == "__main__":
    main()
