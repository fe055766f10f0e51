#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: switch_validate
short_description: Check a switch's forwarding against the plan - BGP sessions, PPD paths per host port, failover
version_added: "1.1.0"
description:
  - Runs on the controller and reaches the switch over SSH with netmiko, as M(aifabric.roce.switch_config) does.
    Reads the device's record from the plan (O(plan), O(device)); never changes the switch config.
  - C(bgp_sessions) - every planned session is Established with the planned remote AS, and no unplanned session exists.
  - C(ppd_paths) (leafs) - for each host port, the kernel's forwarding decision towards a host on another leaf of the
    plane (C(ip route get DST from SRC iif INGRESS), PBR rules included) goes via the bound spine's /31 on the bound
    uplink; towards the next host of the same leaf (a ring, every host once as source and once as destination) it is
    not pinned.
  - C(failover) (leafs, only with O(failover)) - takes the first host port's bound uplink down, waits until the path
    leaves it for the ECMP set, brings it back and waits until the pin returns; both times are measured on the switch.
    The link goes down for real - run it in a maintenance window. The command runs under C(nohup) with a bounded
    wait, so a lost session still brings the link back.
  - On EOS, NX-OS and NVUE, C(ppd_paths) reads the switch's own PBR state instead of a route lookup - EOS
    C(show policy-map type pbr | json), NX-OS C(show route-map), NVUE C(nv show router pbr map <map> rule -o json) -
    and checks per host port that the policy holding its host source sends it to the planned next hop (EOS - the
    policy is configured on the L3 ingress; NVUE - the rule is installed). A command the switch refuses leaves the
    check C(skipped) (not run) with the reason.
  - C(bgp_sessions) reads the switch's own BGP summary - FRR C(vtysh -c 'show bgp ipv4 unicast summary json'), EOS
    C(show ip bgp summary vrf all | json), NX-OS C(show bgp all summary vrf all | json) (default VRF, IPv4 unicast),
    NVUE C(nv show vrf default router bgp neighbor) (the Cumulus Linux 5.12+ table), community SONiC
    C(show ip bgp summary) (sonic-utilities' table) - each parser tested on a real capture. An answer that is not
    the summary (a refused command, BGP not running) fails the check with the switch's answer; it never passes.
  - C(failover) and the route-lookup form of C(ppd_paths) are witnessed on FRR 8.4 on Linux only (the routed twin,
    docs/twin.md). A check a platform has no witnessed implementation of (every check on AsterNOS and Dell
    Enterprise SONiC; C(ppd_paths) and C(failover) on community SONiC; C(failover) on EOS, NX-OS and NVUE) is
    reported C(skipped) with C(unverified - not implemented for <platform>), without connecting when no check is
    left.
author: aifabric.roce developers (@aifabric)
options:
  device:
    description: The switch's name in the plan (normally C(inventory_hostname)).
    type: str
    required: true
  checks:
    description: Checks to run (C(failover) runs only when O(failover) is also true).
    type: list
    elements: str
    choices: [bgp_sessions, ppd_paths, failover]
    default: [bgp_sessions, ppd_paths, failover]
  failover:
    description: Run the failover check (takes a bound uplink down and up again).
    type: bool
    default: false
  failover_timeout_ms:
    description: How long the failover check waits for the path to move, each way, in milliseconds.
    type: int
    default: 5000
  username:
    description: SSH user (usually C(ansible_user)); C(failover) needs the right to set links down (root on Linux).
    type: str
    required: true
  device_type:
    description: netmiko device_type; defaults to the plan record's, then the driver's.
    type: str
extends_documentation_fragment:
  - aifabric.roce.switch_connection
  - aifabric.roce.fabric
attributes:
  check_mode:
    support: full
    description: Reads only; C(failover) is skipped in check mode (it sets a link down).
  diff_mode:
    support: none
    description: Nothing changes.
requirements: [netmiko]
notes:
  - The result's C(findings) are what playbooks/validate.yml puts in the validation report, one item per finding that is not ok.
"""

EXAMPLES = r"""
- name: Check BGP sessions and PPD paths of this switch
  aifabric.roce.switch_validate:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    device: "{{ inventory_hostname }}"
    host: "{{ ansible_host }}"
    port: "{{ ansible_port | default(22) }}"
    username: "{{ ansible_user }}"
    password: "{{ ansible_password }}"
  delegate_to: localhost
  register: validate_switch_result
"""

RETURN = r"""
platform:
  description: The switch's platform from the plan.
  returned: always
  type: str
  sample: frr
findings:
  description:
    - One per probe - C(probe), C(status) (ok, fail or skipped), C(expected), C(actual), C(message); C(required=false)
      on a check that does not apply (a spine has no host ports). The report reads them as passed, failed or not run
      (docs/playbooks.md, Results); a required check not run leaves the switch NOT VERIFIED.
  returned: always
  type: list
  elements: dict
failover_ms:
  description: With O(failover), the times measured on the switch - C(fallback) (uplink down to path off it) and C(back).
  returned: when the failover check ran
  type: dict
  sample: {"fallback": 9, "back": 1029}
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    import netmiko  # noqa: F401 pylint: disable=unused-import
    HAS_NETMIKO = True
except ImportError:
    HAS_NETMIKO = False

from ansible_collections.aifabric.roce.plugins.module_utils.nos import switch_check, validation
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import CONNECTION_ARGS, netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    argument_spec = dict(
        device=dict(type="str", required=True),
        checks=dict(type="list", elements="str", choices=list(validation.CHECKS), default=list(validation.CHECKS)),
        failover=dict(type="bool", default=False),
        failover_timeout_ms=dict(type="int", default=validation.FAILOVER_TIMEOUT_MS),
    )
    argument_spec.update(PLAN_ARGUMENTS)
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True, **PLAN_CONSTRAINTS)
    bounds.enforce(module, "switch_validate")
    p = module.params
    plan = plan_or_fail(module)
    try:
        result = switch_check.check_switch(plan, p["device"], p, p["checks"], p["failover"], p["failover_timeout_ms"],
                                           module.check_mode, netmiko_factory if HAS_NETMIKO else None,
                                           missing_required_lib("netmiko"))
    except switch_check.CheckError as exc:
        module.fail_json(msg=str(exc), **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
