#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: nccl_config
short_description: Write a GPU host's NCCL settings from the fabric plan to /etc/nccl.conf or a profile script
description:
  - Renders the plan slice's NCCL hints (C(NCCL_IB_HCA) in rail order with exact-match C(=),
    C(NCCL_IB_GID_INDEX), C(NCCL_IB_TC), C(NCCL_SOCKET_IFNAME)), C(NCCL_CROSS_NIC) chosen from the
    rail NICs' leafs (each NIC on its own leaf, a rail-optimized fabric, gives C(0)) and an optional
    C(NCCL_TOPO_FILE) into C(/etc/nccl.conf) (read by NCCL itself) and/or an
    C(/etc/profile.d) script (exported to login shells).
  - The files are owned by this module - their whole content is rendered; add more variables with O(extra).
  - Every name and value is checked before anything is written (NCCL reads a conf value verbatim to the
    end of the line, so no spaces, quotes or shell characters); a bad one fails the task naming the variable.
  - Returns per-variable RV(drift) items (expected vs actual) when a file differs, for the drift report.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  nccl:
    description: The plan slice's C(nccl) hints (variable name -> value).
    type: dict
    required: true
  nics:
    description: The plan slice's rail NICs (C(leaf) of each chooses C(NCCL_CROSS_NIC) when O(cross_nic=auto)).
    type: list
    elements: dict
    default: []
  qos:
    description: The plan's QoS profile; when given, C(NCCL_IB_TC) must carry its C(roce_dscp) (TC >> 2).
    type: dict
  cross_nic:
    description:
      - C(auto) chooses from the topology (0 rail-optimized, 1 all NICs on one switch, 2 otherwise; not
        written for a single NIC). C(none) leaves it out; C(0), C(1), C(2) force a value.
    type: str
    choices: [auto, none, "0", "1", "2"]
    default: auto
  topo_file:
    description: Absolute path written as C(NCCL_TOPO_FILE) (an NCCL topology XML already on the host).
    type: str
  extra:
    description: More C(NCCL_*) variables to write (may not repeat a plan-derived one).
    type: dict
    default: {}
  outputs:
    description: Files to write - C(conf) (O(conf_path)) and/or C(profile) (O(profile_path)).
    type: list
    elements: str
    choices: [conf, profile]
    default: [conf]
  conf_path:
    description: Path of the NCCL configuration file.
    type: str
    default: /etc/nccl.conf
  profile_path:
    description: Path of the profile script.
    type: str
    default: /etc/profile.d/aifabric-nccl.sh
  root:
    description: Filesystem root (C(/) on a host; a scratch directory in tests).
    type: path
    default: /
attributes:
  check_mode:
    support: full
    description: Reports what would change, writes nothing.
  diff_mode:
    support: full
    description: File before/after.
"""

EXAMPLES = r"""
- name: Write /etc/nccl.conf from this host's plan slice
  aifabric.roce.nccl_config:
    nccl: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).nccl }}"
    nics: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).nics }}"
    qos: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).qos }}"

- name: Also export the variables to login shells
  aifabric.roce.nccl_config:
    nccl: "{{ intent.nccl }}"
    nics: "{{ intent.nics }}"
    outputs: [conf, profile]
    topo_file: /etc/nccl/topo.xml
"""

RETURN = r"""
settings:
  description: The variables written, name -> value.
  returned: success
  type: dict
  sample: {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_GID_INDEX": "3", "NCCL_IB_TC": "106",
           "NCCL_SOCKET_IFNAME": "eno1", "NCCL_CROSS_NIC": "0"}
files:
  description: Paths managed (relative to O(root)).
  returned: success
  type: list
  elements: str
drift:
  description: Variables that differed from the plan, per file (item, expected, actual).
  returned: success
  type: list
  elements: dict
"""

import copy

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.host.apply_nccl import ARGUMENT_SPEC, run
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(argument_spec=copy.deepcopy(ARGUMENT_SPEC), supports_check_mode=True)  # the spec is shared: never let a run change it
    bounds.enforce(module, "nccl_config")
    try:
        result = run(module.params, module.check_mode)
    except RunError as exc:
        module.fail_json(msg=str(exc), **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
