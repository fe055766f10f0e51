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
  - Also plans the RDMA bandwidth mesh (C(rdma_bw) probes, run by M(aifabric.roce.rail_validate) only when asked)
    over the same ring - on every rail, each host runs an C(ib_write_bw) client towards the next host's
    same-rail NIC and a server for the previous host, so every rail NIC is a client once and a server once.
    The server of rail r listens on TCP port O(rdma_bw_base_port) + r, so a host's servers (one per rail NIC)
    run at once. The expected rate is the lower C(speed_gbps) of the two NICs (plan, else
    C(fabric.servers.nics)); a probe passes at O(rdma_bw_threshold) x that rate.
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
  rdma_bw_threshold:
    description: Fraction of the line rate an RDMA bandwidth probe must reach (average Gb/s).
    type: float
    default: 0.9
  rdma_bw_duration:
    description: Seconds each C(ib_write_bw) test runs (C(-D)).
    type: int
    default: 5
  rdma_bw_base_port:
    description: TCP port of the rail 0 servers (perftest's default port); rail r uses this + r.
    type: int
    default: 18515
  rdma_bw_qps:
    description: Queue pairs per C(ib_write_bw) test (C(-q)); more can be needed to fill 400G links.
    type: int
    default: 1
extends_documentation_fragment:
  - aifabric.roce.pure
  - aifabric.roce.fabric
"""

EXAMPLES = r"""
- name: Plan validation probes once
  aifabric.roce.validation_probes:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    hosts: "{{ ansible_play_hosts }}"
  delegate_to: localhost
  run_once: true
  register: validation_plan
"""

RETURN = r"""
probes:
  description:
    - Per host, its probes - C(kind) mtu_ping or route (C(dev), C(src), C(dst), C(peer), C(size) or C(via)),
      or rdma_bw (C(role) server or client, C(rail), C(rdma), C(dev), C(address), C(peer), C(peer_address),
      C(port), C(duration), C(qps), C(threshold), C(line_rate_gbps)).
  returned: success
  type: dict
  sample: {"gpu01": [{"kind": "mtu_ping", "rail": 0, "dev": "rail0", "src": "10.100.0.1", "dst": "10.100.0.2", "peer": "gpu02", "size": 8972},
                     {"kind": "rdma_bw", "role": "client", "rail": 0, "rdma": "mlx5_0", "dev": "rail0", "address": "10.100.0.1",
                      "peer": "gpu02", "peer_address": "10.100.0.2", "port": 18515, "duration": 5, "qps": 1, "threshold": 0.9,
                      "line_rate_gbps": 100}]}
lldp:
  description: Per host, netdev -> [leaf, leaf port] expected from the cabling plan.
  returned: success
  type: dict
  sample: {"gpu01": {"rail0": ["leaf0", "Ethernet1"]}}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils.validate.probes import expected_lldp, plan_probes, plan_rdma_bw
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(
        argument_spec=dict(PLAN_ARGUMENTS, hosts=dict(type="list", elements="str", required=True),
                           peers_per_rail=dict(type="int", default=1), rdma_bw_threshold=dict(type="float", default=0.9),
                           rdma_bw_duration=dict(type="int", default=5), rdma_bw_base_port=dict(type="int", default=18515),
                           rdma_bw_qps=dict(type="int", default=1)),
        supports_check_mode=True,
        **PLAN_CONSTRAINTS)
    bounds.enforce(module, "validation_probes")
    plan = plan_or_fail(module)
    params = module.params
    if not 0 < params["rdma_bw_threshold"] <= 1:
        module.fail_json(msg="rdma_bw_threshold must be in (0, 1], got %s" % params["rdma_bw_threshold"])
    hosts = [h for h in params["hosts"] if h in plan["hosts"]]
    # Plan NICs carry speed_gbps; the intent's NIC list is only a fallback when planning standalone.
    speeds = dict((nic["netdev"], nic.get("speed_gbps")) for nic in ((params["fabric"] or {}).get("servers") or {}).get("nics") or [])
    probes = dict((h, plan_probes(plan, h, hosts, params["peers_per_rail"])
                   + plan_rdma_bw(plan, h, hosts, threshold=params["rdma_bw_threshold"], duration=params["rdma_bw_duration"],
                                  base_port=params["rdma_bw_base_port"], qps=params["rdma_bw_qps"], fallback_speeds=speeds))
                  for h in hosts)
    lldp = dict((h, dict((k, list(v)) for k, v in expected_lldp(plan, h).items())) for h in hosts)
    module.exit_json(changed=False, probes=probes, lldp=lldp)


if __name__ == "__main__":
    main()
