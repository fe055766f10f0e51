#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: rdma_qos
short_description: Apply the fabric's RoCE QoS profile to a GPU host's rail NICs
description:
  - From the fabric QoS profile shared with the switches - trust DSCP, DSCP->priority map and PFC on the
    lossless priorities through iproute2 C(dcb) (vendor neutral) or C(mlnx_qos) when present; ECN (DCQCN)
    enable on the RoCE priority, CNP DSCP and CNP 802.1p priority through the mlx5 C(ecn) sysfs; the default
    RoCE ToS of rdma_cm connections through configfs (C(default_roce_tos)).
  - A knob whose interface is absent (no C(dcb)/C(mlnx_qos), no ECN sysfs with the inbox driver) is reported
    per interface as C(tool missing) / C(missing), never as a traceback; O(require) turns chosen gaps into failures.
  - When the NIC's firmware runs DCBX (C(mlnx_qos) "DCBX mode - Firmware controlled", C(dcb dcbx show) C(lld-managed)),
    trust and PFC are read back and reported (RV(interfaces) C(dcbx_report)), never set - Broadcom's driver refuses
    host PFC then (bnxt_dcb.c) and a host setting would take DCB away from the switch's DCBX; a read-back that
    differs from the profile is a C(dcbx) gap.
  - Congestion control on Broadcom (C(bnxt_re)) and Intel (C(irdma)) NICs goes through their drivers' configfs
    interfaces, read back and set where they differ - C(/sys/kernel/config/bnxt_re/<dev>/ports/1/cc) (C(ecn_enable),
    C(roce_dscp), C(cnp_dscp) in hex, then C(apply); Broadcom's bnxt_re README) and
    C(/sys/kernel/config/irdma/<dev>/roce_dcqcn_enable) (Intel's irdma README). The device group is created with
    C(mkdir) when missing (not in check mode, which then reports it not run); while it exists the driver cannot be
    unloaded (both READMEs). The upstream C(bnxt_re) shows its firmware's values read-only in debugfs
    (C(/sys/kernel/debug/bnxt_re/<pci>/cc_config)) - read back and compared, a difference is an C(ecn) gap. Where the
    driver has no interface at all (the upstream C(irdma), C(ionic)) the C(ecn) gap says so and why
    (RV(interfaces) C(congestion)); docs/host-rdma.md, "Host stacks".
  - With O(persist), writes a boot-time replay script and systemd unit (the role enables it). Every word in
    the script is shell-quoted.
  - Refuses netdev or RDMA names that are not plain device names (letters, digits, C(.), C(_), C(-); netdevs
    at most 15 characters) and a profile C(trust) other than C(dscp) or C(pcp), before anything is run or written.
  - Every path is under O(root). When O(root) is not C(/), tools are never run live; with O(tool_output_dir)
    their state is read from captured output and the commands that would fix it are returned in
    RV(pending_commands), not run (captured output is read-only).
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  interfaces:
    description: Rail NICs, each with C(netdev) and C(rdma) (the plan's host intent C(nics) works as is).
    type: list
    elements: dict
    required: true
  profile:
    description:
      - The fabric QoS profile (plan C(qos)) - C(trust), C(roce_priority), C(lossless_priorities),
        C(dscp_to_priority), C(cnp_dscp), C(cnp_priority), C(roce_tos).
    type: dict
    required: true
  tool:
    description: Tool for trust/PFC/DSCP map. C(auto) uses C(dcb) when present, else C(mlnx_qos).
    type: str
    choices: [auto, dcb, mlnx_qos, none]
    default: auto
  require:
    description: Knobs whose absence fails the task (C(tool), C(ecn), C(roce_tos), C(dcbx) - a firmware-managed DCBX that differs).
    type: list
    elements: str
    default: []
  persist:
    description: Write the replay script and systemd unit.
    type: bool
    default: true
  root:
    description: Filesystem root (C(/) on a host; a fixture copy in tests).
    type: path
    default: /
  tool_output_dir:
    description: Captured tool output to read instead of running tools (see M(aifabric.roce.rdma_facts)).
    type: path
attributes:
  check_mode:
    support: full
    description: Reports every change and command without writing or running.
  diff_mode:
    support: full
    description: Per attribute before/after and file diffs.
"""

EXAMPLES = r"""
- name: Apply the fabric QoS profile to the rail NICs
  aifabric.roce.rdma_qos:
    interfaces: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).nics }}"
    profile: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).qos }}"
"""

RETURN = r"""
interfaces:
  description:
    - Per netdev - C(tool), C(tool_state), C(commands), C(sysfs) (path, before, after, status); C(dcbx) and C(dcbx_report)
      when the firmware runs DCBX; C(congestion) on non-ConnectX NICs (driver, status ok/set/would change/differs/not_run,
      why, interface, before, after, source, read_only).
  returned: always
  type: dict
commands:
  description: Tool commands run.
  returned: always
  type: list
  elements: list
pending_commands:
  description: Tool commands needed but not run (check mode, or captured tool output under an alternate root).
  returned: always
  type: list
  elements: list
gaps:
  description: Knobs that could not be handled on this host, per interface.
  returned: always
  type: list
  elements: str
"""

import copy

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.host.apply_qos import ARGUMENT_SPEC, run
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(argument_spec=copy.deepcopy(ARGUMENT_SPEC), supports_check_mode=True)  # the spec is shared: never let a run change it
    bounds.enforce(module, "rdma_qos")
    try:
        result = run(module.params, module.check_mode, module.run_command)
    except RunError as exc:
        module.fail_json(msg=str(exc), **exc.result)
    for gap in result.pop("warnings"):
        module.warn(gap)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
