#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: switch_facts
short_description: Read a switch's managed RoCE config state per section and its PFC counters
version_added: "1.0.0"
description:
  - Runs on the controller and reaches the switch with netmiko; never enters config mode.
  - Reads the running config once and returns the managed part of each section (qos, mtu, pbr) as the NOS driver
    for O(platform) parses it, in canonical text and as a structured view.
  - Where the NOS gives per-port PFC pause counters in one show command (EOS C(show priority-flow-control counters),
    NX-OS C(show interface priority-flow-control)), returns them for the plan's ports; elsewhere C(pfc_counters) is null
    and C(pfc_counters_command) says no single command gives them.
author: aifabric.roce developers (@aifabric)
options:
  platform:
    description: Switch platform name from the plan record.
    type: str
    required: true
    choices: [asternos, eos, frr, nvue, nxos, sonic]
  intent:
    description: The device's slice of the plan (lookup C(aifabric.roce.device_intent), C(devices/<name>.json)); selects the ports.
    type: dict
    required: true
  sections:
    description:
      - Managed sections to report.
      - C(underlay) (addresses, host VLAN/SVI or routed ports, eBGP) only for the drivers that render it
        (C(frr), C(eos), C(nvue)); other drivers refuse it.
    type: list
    elements: str
    choices: [qos, mtu, pbr, underlay]
    default: [qos, mtu, pbr]
  counters:
    description: Also read PFC counters where one show command gives them.
    type: bool
    default: true
extends_documentation_fragment:
  - aifabric.roce.switch_connection
requirements: [netmiko]
notes:
  - Supports check mode (it only reads).
"""

EXAMPLES = r"""
- name: Read managed QoS/MTU/PBR state and PFC counters of a switch
  aifabric.roce.switch_facts:
    platform: "{{ plan_record.platform }}"
    device_type: "{{ plan_record.device_type }}"
    intent: "{{ plan_record }}"
    host: "{{ ansible_host }}"
    port: "{{ ansible_port | default(22) }}"
    username: "{{ ansible_user }}"
    password: "{{ ansible_password }}"
  vars:
    plan_record: "{{ lookup('aifabric.roce.device_intent', inventory_hostname) }}"
  delegate_to: localhost
  register: switch_state
"""

RETURN = r"""
sections:
  description: Per managed section, the canonical text (C(config)) and the driver's structured view (C(state)).
  returned: always
  type: dict
  sample: {"mtu": {"config": "interface Ethernet1\n   mtu 9216\n", "state": {"interfaces": {"Ethernet1": ["mtu 9216"]}, "global": []}}}
pfc_counters:
  description: Per plan port, C(rx_pfc) and C(tx_pfc) pause frame counters; null where the NOS has no single show command.
  returned: always
  type: dict
pfc_counters_command:
  description: The show command the counters came from (null when none).
  returned: always
  type: str
ansible_facts:
  description: The same data as C(aifabric_switch) (sections, pfc_counters).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    import netmiko  # noqa: F401 pylint: disable=unused-import
    HAS_NETMIKO = True
except ImportError:
    HAS_NETMIKO = False

from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import ports_of
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import CONNECTION_ARGS, netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver


def collect(driver, conn, intent, sections, counters):
    """Managed state per section and PFC counters for the plan's ports, from one connection."""
    running = conn.send_command(driver.show_running)
    out = dict(sections={}, pfc_counters=None, pfc_counters_command=None)
    for sec in sections:
        managed = driver.parse(running, intent, (sec,))
        out["sections"][sec] = dict(config=managed, state=driver.state(managed))
    if counters and driver.pfc_counters_command:
        ports = set(driver.port(p) for p in ports_of(intent))
        table = driver.parse_pfc_counters(conn.send_command(driver.pfc_counters_command))
        out["pfc_counters"] = dict((p, c) for p, c in sorted(table.items()) if p in ports)
        out["pfc_counters_command"] = driver.pfc_counters_command
    return out


def main():
    argument_spec = dict(
        platform=dict(type="str", required=True, choices=sorted(DRIVERS)),
        intent=dict(type="dict", required=True),
        sections=dict(type="list", elements="str", choices=["qos", "mtu", "pbr", "underlay"], default=["qos", "mtu", "pbr"]),
        counters=dict(type="bool", default=True),
    )
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_NETMIKO:
        module.fail_json(msg=missing_required_lib("netmiko"))
    driver = get_driver(module.params["platform"])
    refused = [s for s in module.params["sections"] if s not in driver.sections]
    if refused:
        module.fail_json(msg="section(s) %s not rendered by the %s driver (it renders %s); remove them from sections"
                             % (", ".join(refused), driver.name, ", ".join(driver.sections)))
    conn = None
    try:
        conn = netmiko_factory(module.params, driver)()
        facts = collect(driver, conn, module.params["intent"], module.params["sections"], module.params["counters"])
    except Exception as exc:  # noqa: BLE001 - connection/auth/host key problems
        module.fail_json(msg="cannot read %s:%s: %s" % (module.params["host"], module.params["port"], exc))
    finally:
        if conn is not None:
            conn.disconnect()
    module.exit_json(changed=False, ansible_facts=dict(aifabric_switch=dict(facts)), **facts)


if __name__ == "__main__":
    main()
