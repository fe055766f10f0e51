#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: validation_probes
short_description: Plan the post-bring-up probes of every GPU host (controller side)
description:
  - From the fabric plan, plans for each host in O(hosts) - DF pings at the planned MTU to the
    same-rail NICs of the next host(s) in a ring, C(ip route get) checks that same-rail and
    cross-rail destinations leave by the right NIC (via the rail gateway where they are not on-link),
    and the LLDP neighbour each rail NIC should see (leaf and port from the cabling plan).
  - A ring keeps the probe count linear in the number of hosts while covering every host and rail.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  hosts:
    description: GPU hosts taking part (normally C(ansible_play_hosts)); hosts not in the plan are ignored.
    type: list
    elements: str
    required: true
  peers_per_rail:
    description: How many next hosts in the ring each host probes on every rail.
    type: int
    default: 1
extends_documentation_fragment:
  - aifabric.roce.fabric
attributes:
  check_mode:
    support: full
    description: Pure computation; same result in check mode.
  diff_mode:
    support: none
    description: Nothing changes.
"""

EXAMPLES = r"""
- name: Plan validation probes once
  aifabric.roce.validation_probes:
    fabric: "{{ fabric }}"
    hosts: "{{ ansible_play_hosts }}"
  delegate_to: localhost
  run_once: true
  register: validation_plan
"""

RETURN = r"""
probes:
  description: Per host, its probes (C(kind) mtu_ping or route, C(dev), C(src), C(dst), C(peer), C(size) or C(via)).
  returned: success
  type: dict
  sample: {"gpu01": [{"kind": "mtu_ping", "rail": 0, "dev": "rail0", "src": "10.100.0.1", "dst": "10.100.0.2", "peer": "gpu02", "size": 8972}]}
lldp:
  description: Per host, netdev -> [leaf, leaf port] expected from the cabling plan.
  returned: success
  type: dict
  sample: {"gpu01": {"rail0": ["leaf0", "Ethernet1"]}}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils.validate.probes import expected_lldp, plan_probes


def main():
    module = AnsibleModule(
        argument_spec=dict(fabric=dict(type="dict", required=True), hosts=dict(type="list", elements="str", required=True),
                           peers_per_rail=dict(type="int", default=1)),
        supports_check_mode=True,
    )
    plan = plan_or_fail(module)
    hosts = [h for h in module.params["hosts"] if h in plan["hosts"]]
    probes = dict((h, plan_probes(plan, h, hosts, module.params["peers_per_rail"])) for h in hosts)
    lldp = dict((h, dict((k, list(v)) for k, v in expected_lldp(plan, h).items())) for h in hosts)
    module.exit_json(changed=False, probes=probes, lldp=lldp)


if __name__ == "__main__":
    main()
