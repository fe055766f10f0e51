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
    for O(platform) parses it, in canonical text and as a structured view, and any drain it shows (RV(drain)).
  - Where the NOS gives per-port PFC pause counters in one show command (EOS C(show priority-flow-control counters | json),
    NX-OS C(show interface priority-flow-control)), returns them for the plan's ports; elsewhere C(pfc_counters) is null
    and C(pfc_counters_command) says no single command gives them.
  - With O(counters), also returns C(counters) - per plan port and priority, PFC pause frames rx/tx, ECN-marked
    packets, drops on the queues, PFC watchdog storm/restore events - read from each NOS's own show commands
    (SONiC/AsterNOS C(show pfc counters), C(show queue counters), C(show queue wredcounters), C(show pfcwd stats)
    in the Linux shell; NVUE C(nv show interface PORT counters qos) and C(qos pfc-watchdog); EOS
    C(show priority-flow-control counters | json), C(show qos interfaces ecn counters queue | json) and
    C(show priority-flow-control counters watchdog | json); NX-OS C(show interface priority-flow-control);
    FRR/Linux C(ip -s -j link show) and C(tc -s qdisc show)), and C(counters_evidence), which of them were
    tested on real captured output (C(verified)) and which were not (C(unverified)); see docs/roce-health.md.
author: aifabric.roce developers (@aifabric)
options:
  intent:
    description: The device's slice of the plan (lookup C(aifabric.roce.device_intent), C(devices/<name>.json)); selects the ports.
    type: dict
    required: true
  sections:
    description:
      - Managed sections to report.
      - Only the sections the platform's driver renders (its C(sections); filter C(aifabric.roce.nos_sections) gives
        them); any other is refused by name. C(asternos) renders C(qos) alone; C(underlay) (addresses, host VLAN/SVI or
        routed ports, eBGP) is rendered by every driver but C(asternos).
    type: list
    elements: str
    choices: [qos, mtu, pbr, underlay]
    default: [qos, mtu, pbr]
  counters:
    description: Also read the RoCE counters (C(counters), C(pfc_counters)).
    type: bool
    default: true
extends_documentation_fragment:
  - aifabric.roce.switch_connection
  - aifabric.roce.switch_platform
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
counters:
  description:
    - Per plan port, per priority (C("0")..C("7"), or C(all) where the NOS counts per port only) the counters the NOS
      gives - C(pfc_rx), C(pfc_tx) (pause frames), C(ecn_marked), C(drops), C(drop_bytes), C(wd_storms),
      C(wd_restores) (PFC watchdog events), C(wd_state). Null when O(counters) is false.
    - C(counters_evidence) says per counter C(verified), C(unverified) or null (not given by this NOS).
  returned: always
  type: dict
  sample: {"Ethernet1": {"3": {"pfc_rx": 12, "pfc_tx": 0, "drops": 0, "ecn_marked": 4, "wd_storms": 1, "wd_restores": 1,
           "wd_state": "operational"}}}
counters_evidence:
  description: >-
    Per counter name, C(verified) (the parser is tested on real captured output or the vendor's own printed output),
    C(unverified) (no captured output was found) or null (the NOS's commands do not give it).
    EOS (all), AsterNOS PFC/ECN/watchdog and NX-OS counters other than PFC pause frames are C(unverified).
  returned: always
  type: dict
drain:
  description:
    - Every drain the running config shows, ours or an engineer's - the BGP GRACEFUL_SHUTDOWN line of the NOS (FRR, NX-OS,
      NVUE) or EOS maintenance mode C(quiesce) (unverified) - as config paths; empty when the switch is not drained.
      A drained spine still forwards, but its neighbours prefer every other path.
  returned: always
  type: list
  elements: str
  sample: ["router bgp 65001 > graceful-shutdown activate"]
fit_view:
  description:
    - What the driver's fit of its render reads of this switch, as data (community_sonic - the CONFIG_DB tables of its
      buffer model, buffers, PFC maps and watchdog); null where the driver keeps its render as it is.
    - M(aifabric.roce.roce_health) fits the plan's render with it, so it judges the switch against what
      M(aifabric.roce.switch_config) wants there, and names what is left to the switch.
  returned: always
  type: dict
counters_commands:
  description: The show commands the counters came from, in the order sent.
  returned: always
  type: list
  elements: str
ansible_facts:
  description: The same data as C(aifabric_switch) (sections, pfc_counters, counters).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    import netmiko  # noqa: F401 pylint: disable=unused-import
    HAS_NETMIKO = True
except ImportError:
    HAS_NETMIKO = False

from ansible_collections.aifabric.roce.plugins.module_utils.nos import counters as roce_counters
from ansible_collections.aifabric.roce.plugins.module_utils.nos import drain
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import image
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import klish_shell
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import ports_of
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import CONNECTION_ARGS, netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def collect(driver, conn, intent, sections, counters):
    """Managed state per section and PFC counters for the plan's ports, from one connection."""
    running = conn.send_command(driver.show_running)
    img = whole_image(driver, running, intent)
    out = dict(sections={}, pfc_counters=None, pfc_counters_command=None, counters=None,
               counters_evidence=roce_counters.evidence(driver), counters_commands=[],
               # any drain the running config shows, ours or an engineer's (nos/drain.py): a spine left drained
               # halves its plane
               drain=drain.drained_by_anyone(driver, img.outside) if img is not None else [],
               fit_view=driver.fit_view(img) if img is not None else None)
    for sec in sections:
        managed = driver.parse(running, intent, (sec,))
        out["sections"][sec] = dict(config=managed, state=driver.state(managed))
    if counters and driver.pfc_counters_command:
        ports = set(driver.port(p) for p in ports_of(intent))
        table = driver.parse_pfc_counters(conn.send_command(driver.pfc_counters_command))
        out["pfc_counters"] = dict((p, c) for p, c in sorted(table.items()) if p in ports)
        out["pfc_counters_command"] = driver.pfc_counters_command
    if counters:
        out["counters"], out["counters_commands"] = read_counters(driver, conn, intent)
    return out


def whole_image(driver, running, intent):
    """The switch's Image over every section the driver renders (None: the running config does not parse). The drain
    line sits under a BGP the underlay section owns; the fit view reads the whole config."""
    try:
        return image(driver, running, intent, tuple(driver.sections))
    except ValueError:
        return None


def _shell_reads(conn, todo):
    """Each show command of ``todo`` read to the Linux shell's ``$`` prompt."""
    return dict((cmd, conn.send_command(cmd, expect_string=r"\$\s*$", cmd_verify=False, read_timeout=60))
                for cmd, dummy_parser, dummy_where, dummy_port in todo)


def read_counters(driver, conn, intent):
    """The RoCE counters of the plan's ports (nos/counters.py), one show command after another on this session.
    dell_sonic's counter commands live in the Linux shell: leave klish (``exit``), come back (``sonic-cli``);
    AsterNOS's session already works there."""
    ports = [driver.port(p) for p in ports_of(intent)]
    todo = roce_counters.commands(driver, ports)
    answers = {}
    shell = [c for c in todo if c[2] == "shell"]
    for cmd, dummy_parser, where, dummy_port in todo:
        if where != "shell":
            answers[cmd] = conn.send_command(cmd, read_timeout=60)
    if shell and driver.home == "bash":   # AsterNOS: the session already is in the Linux shell
        answers.update(_shell_reads(conn, shell))
    elif shell:
        with klish_shell(conn):
            answers.update(_shell_reads(conn, shell))
    return roce_counters.parse(driver, answers, ports), [c[0] for c in todo]


def main():
    argument_spec = dict(
        platform=dict(type="str", required=True, choices=sorted(DRIVERS)),
        intent=dict(type="dict", required=True),
        sections=dict(type="list", elements="str", choices=["qos", "mtu", "pbr", "underlay"], default=["qos", "mtu", "pbr"]),
        counters=dict(type="bool", default=True),
    )
    argument_spec.update(CONNECTION_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    bounds.enforce(module, "switch_facts")
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
