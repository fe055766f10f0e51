#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: switches_validate
short_description: Check every switch's BGP sessions and PPD paths against the plan, side by side, in one process
version_added: "1.1.0"
description:
  - The checks of M(aifabric.roce.switch_validate) - C(bgp_sessions) and C(ppd_paths), judged by the same code - for
    many switches in one controller process, at most O(workers) management sessions at once. C(playbooks/validate.yml)
    runs it once for the fabric instead of one module process (a Python start and a netmiko import) per switch.
  - C(failover) is not offered - it takes links down, one switch at a time; use M(aifabric.roce.switch_validate).
  - A switch whose checks could not run (not in the plan, no session, a dead session) gets C(failed=true) and C(msg)
    in its result; the others are checked all the same. The module itself fails only on bad arguments.
  - Never changes a switch's config.
author: aifabric.roce developers (@aifabric)
options:
  devices:
    description:
      - One entry per switch - C(device) (its name in the plan, normally the inventory hostname) and its connection
        arguments as M(aifabric.roce.switch_validate) takes them - C(host), C(port), C(username), C(device_type),
        C(known_hosts), C(host_key_checking), C(timeout) - except C(password) and C(secret) (O(credentials)).
    type: list
    elements: dict
    required: true
  credentials:
    description:
      - Per device, its C(password) and C(secret); kept apart from O(devices) so that only these values are hidden
        from the logs.
    type: dict
    default: {}
  checks:
    description: Checks to run on every switch.
    type: list
    elements: str
    choices: [bgp_sessions, ppd_paths]
    default: [bgp_sessions, ppd_paths]
  workers:
    description: At most this many switches are checked at once.
    type: int
    default: 16
extends_documentation_fragment:
  - aifabric.roce.fabric
attributes:
  check_mode:
    support: full
    description: Reads only.
  diff_mode:
    support: none
    description: Nothing changes.
requirements: [netmiko]
"""

EXAMPLES = r"""
- name: Check every switch once, side by side
  aifabric.roce.switches_validate:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    devices:
      - {device: leaf1, host: 192.0.2.11, username: admin}
      - {device: spine1, host: 192.0.2.21, username: admin}
    credentials:
      leaf1: {password: "{{ vault_switch_password }}"}
      spine1: {password: "{{ vault_switch_password }}"}
  delegate_to: localhost
  run_once: true
  register: validate_switches
"""

RETURN = r"""
switches:
  description:
    - Per device, what M(aifabric.roce.switch_validate) returns for it (C(platform), C(findings)), or C(failed=true)
      and C(msg) (and the findings so far) when its checks could not run.
  returned: always
  type: dict
  sample: {"leaf1": {"changed": false, "platform": "eos", "findings": [{"probe": "bgp_sessions", "status": "ok",
           "expected": "2 planned sessions Established", "actual": "2 of 2 Established", "message": ""}]},
           "leaf2": {"changed": false, "platform": "nvue", "findings": [], "failed": true,
                     "msg": "cannot connect to 192.0.2.12:22: timed out", "failed_step": "connect"}}
failed_devices:
  description: The devices whose checks could not run, sorted.
  returned: always
  type: list
  elements: str
  sample: ["leaf2"]
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    import netmiko  # noqa: F401 pylint: disable=unused-import
    HAS_NETMIKO = True
except ImportError:
    HAS_NETMIKO = False

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.aifabric.roce.plugins.module_utils.nos import switch_check
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import CONNECTION_ARGS, netmiko_factory, with_credentials
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def sessions_or_fail(module):
    """Each device's connection arguments, validated with switch_validate's spec, credentials put back."""
    try:
        entries = with_credentials(module.params["devices"], module.params["credentials"], "device", "devices")
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    spec = dict(CONNECTION_ARGS, device=dict(type="str", required=True))
    sessions = []
    for index, entry in enumerate(entries):
        checked = ArgumentSpecValidator(spec).validate(entry)
        if checked.error_messages:
            module.fail_json(msg="devices[%d] (%s): %s" % (index, entry.get("device"), "; ".join(checked.error_messages)))
        sessions.append(checked.validated_parameters)
    return sessions


def main():
    argument_spec = dict(
        devices=dict(type="list", elements="dict", required=True),
        credentials=dict(type="dict", default={}, no_log=True),
        checks=dict(type="list", elements="str", choices=["bgp_sessions", "ppd_paths"], default=["bgp_sessions", "ppd_paths"]),
        workers=dict(type="int", default=switch_check.DEFAULT_WORKERS),
    )
    argument_spec.update(PLAN_ARGUMENTS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True, **PLAN_CONSTRAINTS)
    bounds.enforce(module, "switches_validate")
    if module.params["workers"] < 1:
        module.fail_json(msg="workers must be 1 or more (got %d)" % module.params["workers"])
    sessions = sessions_or_fail(module)
    plan = plan_or_fail(module)
    try:
        results = switch_check.check_all(plan, sessions, module.params["checks"], module.check_mode,
                                         netmiko_factory if HAS_NETMIKO else None, missing_required_lib("netmiko"),
                                         module.params["workers"])
    except ValueError as exc:
        module.fail_json(msg="devices: %s" % exc)
    module.exit_json(changed=False, switches=results, failed_devices=sorted(n for n, r in results.items() if r.get("failed")))


if __name__ == "__main__":
    main()
