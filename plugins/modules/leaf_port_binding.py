#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: leaf_port_binding
short_description: Compute leaf port binding (PPD) - each host port bound to one uplink
description:
  - For every leaf, binds each host-facing port to exactly one uplink. 1:1 is identity; n:1 maps
    downlink i to uplink ceil(i/n); when the counts do not divide, each uplink carries floor or
    ceil(downlinks/uplinks) ports. Bindings use the leaf's downlink capacity, so adding a server
    never moves an existing binding.
  - Each binding carries the policy it implies - match ingress port and the host NIC's source
    address, skip destinations local to the leaf, next hop the spine end of the bound uplink.
    Traffic from the spines uses the default table.
  - Pure computation on the controller; the switch roles push the result.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  leafs:
    description: Only return these leafs (all when omitted).
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
- name: Port bindings of one leaf
  aifabric.roce.leaf_port_binding:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    leafs: [leaf0]
  delegate_to: localhost
  register: ppd

- name: Print ingress port -> uplink
  ansible.builtin.debug:
    msg: "{{ ppd.bindings.leaf0 | map(attribute='ingress') | zip(ppd.bindings.leaf0 | map(attribute='uplink')) | list }}"
"""

RETURN = r"""
bindings:
  description: Per leaf, one record per in-use host port, in port order.
  returned: success
  type: dict
  sample: {"leaf0": [{"ingress": "Ethernet1", "server": "gpu01", "source": "10.100.0.1/32", "uplink": "Ethernet9",
           "uplink_index": 0, "spine": "spine1", "next_hop": "10.254.0.0"}]}
local_destinations:
  description: Per leaf, the destinations its bindings never pin (the leaf's own host subnets), routed normally.
  returned: success
  type: dict
  sample: {"leaf0": ["10.100.0.0/29"]}
ratio:
  description: Leaf downlink capacity and uplink count the binding used.
  returned: success
  type: dict
  sample: {"downlinks": 4, "uplinks": 4}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(
        argument_spec=dict(PLAN_ARGUMENTS, leafs=dict(type="list", elements="str")),
        supports_check_mode=True,
        **PLAN_CONSTRAINTS)
    bounds.enforce(module, "leaf_port_binding")
    plan = plan_or_fail(module)
    names = module.params["leafs"] if module.params["leafs"] is not None else sorted(plan["leafs"])
    unknown = sorted(set(names) - set(plan["leafs"]))
    if unknown:
        module.fail_json(msg="leafs not in the fabric plan: %s" % ", ".join(unknown))
    module.exit_json(changed=False, bindings=dict((name, plan["leafs"][name]["bindings"]) for name in names),
                     local_destinations=dict((name, plan["leafs"][name]["local_destinations"]) for name in names),
                     ratio={"downlinks": plan["sizing"]["servers_per_group"], "uplinks": plan["sizing"]["uplinks_per_leaf"]})


if __name__ == "__main__":
    main()
