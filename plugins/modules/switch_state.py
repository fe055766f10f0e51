#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: switch_state
short_description: Read every switch once, side by side, and say which ones drifted from the plan
description:
  - Runs on the controller. For each switch it is given, with the arguments M(aifabric.roce.switch_config) takes
    (the role aifabric.roce.switch passes both modules the same values), it does what switch_config does first - one
    login, one read of the running config, the plan rendered for the switch's sections, the diff, any drain on the
    switch - over up to O(workers) sessions at once in one process.
  - A switch is in sync when that read finds nothing to send, no drain line, no object the plan would take over. Any
    other outcome - commands to send, a drain, a takeover, a reviewed digest to verify (C(expected_config_digest)),
    arguments or a request the driver refuses, a read that failed - makes it drifted with the reason, and
    switch_config then runs for it and reports as always. C(playbooks/site.yml) ends the switch play early for the
    switches in sync, so a no-op run costs one process for the fabric instead of one per switch.
  - Changes nothing on any switch, in check mode or not, and takes no device lock (switch_config re-reads under its
    lock before it changes anything).
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  switches:
    description:
      - One entry per switch - C(name) (its inventory hostname) and the arguments of M(aifabric.roce.switch_config),
        validated by that module's argument spec, except C(password) and C(secret) (O(credentials)).
    type: list
    elements: dict
    required: true
  credentials:
    description:
      - Per switch name, its C(password) and C(secret) (as switch_config takes them); kept apart from O(switches) so
        that only these values are hidden from the logs.
    type: dict
    default: {}
  workers:
    description: At most this many switches are read at once.
    type: int
    default: 16
attributes:
  check_mode:
    support: full
    description: The read is the same in check mode; it never writes.
  diff_mode:
    support: none
    description: switch_config shows the diff of the switches that drifted.
requirements:
  - netmiko
  - hier_config
notes:
  - A switch that changes between this read and its batch of the switch play is not reconciled by that run; the
    next run sees it. switch_config itself re-reads before every change.
seealso:
  - module: aifabric.roce.switch_config
"""

EXAMPLES = r"""
- name: Read every switch once
  aifabric.roce.switch_state:
    switches:
      - name: leaf1
        platform: eos
        intent: "{{ lookup('aifabric.roce.device_intent', 'leaf1') }}"
        qos: "{{ lookup('aifabric.roce.device_intent', 'leaf1').qos }}"
        sections: [qos, mtu, pbr]
        host: 192.0.2.11
        username: admin
    credentials:
      leaf1: {password: "{{ vault_switch_password }}"}
  delegate_to: localhost
  run_once: true
  register: aifabric_switch_state
"""

RETURN = r"""
switches:
  description: Per switch, whether it is in sync, why it was judged so, the commands a reconcile would send and the
    digest of the running config read (as switch_config returns it).
  returned: always
  type: dict
  sample: {"leaf1": {"in_sync": true, "reason": "in sync", "commands": 0, "config_digest": "9c1f..."},
           "leaf2": {"in_sync": false, "reason": "3 command(s) to send", "commands": 3, "config_digest": "77ab..."}}
in_sync:
  description: The switches found in sync, sorted.
  returned: always
  type: list
  elements: str
  sample: ["leaf1", "spine1"]
drifted:
  description: The switches switch_config must run for, sorted.
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

from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import HAS_HIER_CONFIG
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import netmiko_factory, with_credentials
from ansible_collections.aifabric.roce.plugins.module_utils.nos import switch_read
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(argument_spec=dict(switches=dict(type="list", elements="dict", required=True),
                                              credentials=dict(type="dict", default={}, no_log=True),
                                              workers=dict(type="int", default=switch_read.DEFAULT_WORKERS)),
                           supports_check_mode=True)
    bounds.enforce(module, "switch_state")
    if not HAS_NETMIKO:
        module.fail_json(msg=missing_required_lib("netmiko"))
    if not HAS_HIER_CONFIG:
        module.fail_json(msg=missing_required_lib("hier_config"))
    if module.params["workers"] < 1:
        module.fail_json(msg="workers must be 1 or more (got %d)" % module.params["workers"])
    try:
        entries = with_credentials(module.params["switches"], module.params["credentials"], "name", "switches")
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    try:
        verdicts = switch_read.read_all(entries, netmiko_factory, module.params["workers"])
    except ValueError as exc:
        module.fail_json(msg="switches: %s" % exc)
    module.exit_json(changed=False, switches=verdicts,
                     in_sync=sorted(n for n, v in verdicts.items() if v["in_sync"]),
                     drifted=sorted(n for n, v in verdicts.items() if not v["in_sync"]))


if __name__ == "__main__":
    main()
