#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: switch_config
short_description: Render, diff and atomically apply a switch's RoCE QoS, MTU, underlay and port-binding config
version_added: "1.0.0"
description:
  - Runs on the controller and reaches the switch with netmiko.
  - Reads the running config once, renders the intent with the NOS driver for O(platform), and computes
    the remediation (hier_config for CLI NOSes, a structured compare of C(nv set) commands for NVUE).
  - In check mode returns the diff without entering config mode.
  - Otherwise applies inside the NOS's transaction (EOS configuration session, NX-OS checkpoint,
    NVUE revision, computed reverse commands on klish; on C(frr) a C(vtysh -C -f) dry run, then C(vtysh -f) and the computed
    reverse on failure), re-reads and verifies the managed sections,
    saves, and on any failure rolls back and fails with the commands attempted and the device's error.
author: aifabric.roce developers (@aifabric)
options:
  platform:
    description: Switch platform name from the plan record.
    type: str
    required: true
    choices: [asternos, eos, frr, nvue, nxos, sonic]
  intent:
    description: The device's plan entry (C(aifabric_plan.leafs[name]) or C(aifabric_plan.spines[name])).
    type: dict
    required: true
  qos:
    description: The fabric QoS profile (C(aifabric_plan.qos)).
    type: dict
    required: true
  sections:
    description:
      - Managed sections to render and reconcile.
      - C(underlay) (interface addresses and eBGP from the plan's C(bgp)) is rendered by the C(frr) driver only;
        C(qos) and C(mtu) render nothing on C(frr).
    type: list
    elements: str
    choices: [qos, mtu, pbr, underlay]
    default: [qos, mtu, pbr]
  save:
    description: Save the running config to startup after a verified change.
    type: bool
    default: true
  commit_timer:
    description: EOS only. Commit the session with C(commit timer) of this many seconds and confirm after verification.
    type: int
    default: 0
  host:
    description: Switch address (usually C(ansible_host)).
    type: str
    required: true
  port:
    description: SSH port.
    type: int
    default: 22
  username:
    description: SSH user (usually C(ansible_user)).
    type: str
    required: true
  password:
    description: SSH password (usually C(ansible_password)).
    type: str
  device_type:
    description: netmiko device_type; defaults to the driver's.
    type: str
  host_key_checking:
    description: Verify the switch's SSH host key (against O(known_hosts) or the system known_hosts).
    type: bool
    default: true
  known_hosts:
    description: known_hosts file to verify host keys against.
    type: path
  timeout:
    description: Connection and authentication timeout in seconds.
    type: int
    default: 30
requirements: [netmiko, hier_config]
notes:
  - Supports check mode and diff mode.
"""

EXAMPLES = r"""
- name: Apply RoCE QoS and MTU to a leaf
  aifabric.roce.switch_config:
    platform: "{{ hostvars['localhost'].aifabric_plan.leafs[inventory_hostname].platform }}"
    intent: "{{ hostvars['localhost'].aifabric_plan.leafs[inventory_hostname] }}"
    qos: "{{ hostvars['localhost'].aifabric_plan.qos }}"
    sections: [qos, mtu]
    host: "{{ ansible_host }}"
    port: "{{ ansible_port | default(22) }}"
    username: "{{ ansible_user }}"
    password: "{{ ansible_password }}"
  delegate_to: localhost
"""

RETURN = r"""
commands:
  description: Remediation commands (sent unless in check mode).
  returned: always
  type: list
  elements: str
attempted:
  description: Commands actually sent to the device, including transaction commands.
  returned: always
  type: list
  elements: str
before:
  description: Managed sections of the running config before the run (canonical text).
  returned: always
  type: str
after:
  description: Managed sections as intended (canonical text).
  returned: always
  type: str
drift:
  description:
    - Differences between the running and the intended managed config, one entry per item.
    - A changed value pairs up under one item; C(actual) is null for a missing line, C(expected) null for an unexpected one.
  returned: always
  type: list
  elements: dict
  contains:
    item:
      description: Config path of the item (parent lines joined with C( > ), then the line without its value).
      type: str
    expected:
      description: Intended line(s) under the item.
      type: str
    actual:
      description: Running line(s) under the item.
      type: str
config_mode:
  description: Whether the run entered config mode on the device (never in check mode or when nothing differs).
  returned: always
  type: bool
diff:
  description: Before/after managed config (with C(--diff)).
  returned: when diff mode is on
  type: dict
rolled_back:
  description: On failure, whether the previous managed config was restored.
  returned: failure
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    import netmiko  # noqa: F401 pylint: disable=unused-import
    HAS_NETMIKO = True
except ImportError:
    HAS_NETMIKO = False

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier, ApplyError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import drift
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import HAS_HIER_CONFIG
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import CONNECTION_ARGS, netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.frr import FrrTransaction
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver


def main():
    argument_spec = dict(
        platform=dict(type="str", required=True, choices=sorted(DRIVERS)),
        intent=dict(type="dict", required=True),
        qos=dict(type="dict", required=True),
        sections=dict(type="list", elements="str", choices=["qos", "mtu", "pbr", "underlay"], default=["qos", "mtu", "pbr"]),
        save=dict(type="bool", default=True),
        commit_timer=dict(type="int", default=0),
    )
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_NETMIKO:
        module.fail_json(msg=missing_required_lib("netmiko"))
    if not HAS_HIER_CONFIG:
        module.fail_json(msg=missing_required_lib("hier_config"))
    driver = get_driver(module.params["platform"])
    if "underlay" in module.params["sections"] and driver.transaction != "frr":
        module.fail_json(msg="section underlay is rendered by the frr driver only so far, not by %s; "
                             "remove underlay from sections" % driver.name)
    # FRR has no NOS transaction: its driver brings its own (vtysh dry run, apply, verify, reverse)
    applier_class = FrrTransaction if driver.transaction == "frr" else Applier
    applier = applier_class(driver, netmiko_factory(module.params, driver), module.params["intent"], module.params["qos"],
                            module.params["sections"], commit_timer=module.params["commit_timer"])
    result = dict(changed=False, commands=[], attempted=[], drift=[], config_mode=False)
    try:
        try:
            before, after, cmds = applier.plan()
        except Exception as exc:  # noqa: BLE001 - connection/auth/host key problems
            module.fail_json(msg="cannot read running config from %s:%s: %s" % (module.params["host"], module.params["port"], exc), **result)
        result.update(before=before, after=after, commands=cmds, changed=bool(cmds), drift=drift(before, after))
        if module._diff:
            result["diff"] = dict(before=before, after=after)
        if cmds and not module.check_mode:
            result["config_mode"] = True
            try:
                applier.apply(before, after, cmds, save=module.params["save"])
            except ApplyError as exc:
                result.update(attempted=exc.attempted, rolled_back=exc.rolled_back, device_error=exc.device_error)
                module.fail_json(msg=str(exc), **result)
            result["attempted"] = applier.attempted
    finally:
        applier.close()
    module.exit_json(**result)


if __name__ == "__main__":
    main()
