#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: rdma_preflight
short_description: Check RDMA readiness facts of a GPU host against the plan
description:
  - Pure check of facts from M(aifabric.roce.rdma_facts) against the host intent of the fabric plan.
    Returns findings C({id, severity, host, subject, expected, actual, message}); changes nothing.
  - "Checks: C(rdma_module), C(nic_present), C(link_up), C(link_speed), C(mtu), C(roce_gid), C(fw_host_mixed),
    C(fw_baseline), C(gdr_ready), C(gdr_unsupported), C(gpu_present), C(gpu_nic_affinity), C(acs_p2p), C(iommu_mode), C(pcie_link),
    C(pcie_gpu_speed), C(ats)."
  - Fleet-wide firmware consistency is checked by M(aifabric.roce.rdma_preflight_report).
  - Runs in the controller (an action plugin; no connection to the host is made), the facts being already gathered.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  facts:
    description: The C(aifabric_rdma) facts of the host.
    type: dict
    required: true
  host:
    description: Host name used in findings.
    type: str
    required: true
  nics:
    description: The host intent's C(nics) (C(netdev), C(rdma), C(speed_gbps), C(gpu) or C(gpus), C(address), C(mtu)).
    type: list
    elements: dict
    required: true
  gid_index:
    description: Expected RoCEv2 GID index of each rail IP (the plan's C(NCCL_IB_GID_INDEX)); not checked when omitted.
    type: int
  mtu:
    description: MTU expected where a NIC of O(nics) has none.
    type: int
  rdma_modules:
    description:
      - Kernel modules that must be loaded.
      - Omitted or empty, the modules of the host's stack (C(ib_core), C(ib_uverbs), C(rdma_cm) and each NIC driver's
        pair - C(mlx5_core)/C(mlx5_ib), C(bnxt_en)/C(bnxt_re), C(ice)/C(irdma), C(ionic)/C(ionic_rdma); mlx5 when no
        driver is declared or detected).
    type: list
    elements: str
  stack:
    description:
      - The host's declared stack (the plan's host intent C(stack)); empty keys are detected from the facts.
      - A declared value the host does not show is a C(stack) error finding.
    type: dict
    default: {}
    suboptions:
      gpu_vendor:
        description: GPU vendor; decides the collective library whose GPUDirect rules apply (NCCL or RCCL).
        type: str
        choices: [nvidia, amd]
      nic_driver:
        description: RoCE NIC driver; decides the required modules.
        type: str
        choices: [mlx5, bnxt_re, irdma, ionic]
  firmware_baseline:
    description:
      - Firmware baseline per NIC. Keys, most specific first - C(<model>/<PSID>) (C(ConnectX-7/MT_0000000838)),
        C(<hca_type>/<PSID>), C(<PSID>), C(<model>) (C(ConnectX-7)), C(<hca_type>) (C(MT4129)).
      - A value is a minimum version (C(28.39.1002)) or a dict with one of C(min) or C(exact).
      - The version compared is the one read by C(devlink), C(mlxfwmanager) or C(flint) when they answer, else
        sysfs C(fw_ver); findings name the source.
    type: dict
    default: {}
  gpu_nic_allowed:
    description:
      - GPU<->NIC relationships accepted for a rail NIC and its GPU.
      - C(P2C) is a NIC on the CPU a Grace GPU reaches over C2C (nvidia-smi prints it as C(SYS)); NCCL 2.27.3 and
        later use GPUDirect RDMA there by default.
    type: list
    elements: str
    default: [PIX, PXB, P2C]
  require_gdr:
    description: Require GPUDirect RDMA (nvidia_peermem or dma-buf).
    type: bool
    default: true
  require_acs_off:
    description: Require ACS redirect off on the bridges between each GPU and its rail NIC.
    type: bool
    default: true
  require_ats:
    description:
      - When ATS must be enabled on each rail NIC (ATS extended capability of its config space).
      - C(auto) requires it when the IOMMU translates DMA (facts C(iommu.mode) is C(translated)); C(always) and
        C(never) force the choice. Unreadable config space counts as not enabled where ATS is required.
    type: str
    choices: [auto, always, never]
    default: auto
  iommu_allowed:
    description: Accepted IOMMU modes (C(off), C(passthrough), C(translated)).
    type: list
    elements: str
    default: ['off', passthrough]
  severity:
    description: Severity override per check id (C(error) or C(warning)).
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    description: Pure computation.
  diff_mode:
    support: none
    description: Nothing changes.
"""

EXAMPLES = r"""
- name: Check this host against its plan
  aifabric.roce.rdma_preflight:
    facts: "{{ ansible_facts.aifabric_rdma }}"
    host: "{{ inventory_hostname }}"
    nics: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).nics }}"
    gid_index: 3
  delegate_to: localhost
"""

RETURN = r"""
findings:
  description: What differs from the expectation.
  returned: always
  type: list
  elements: dict
  sample: [{"id": "gdr_ready", "severity": "error", "host": "gpu01", "subject": "gpudirect_rdma",
            "expected": "nvidia_peermem or dma-buf", "actual": {"nvidia_peermem": "missing"}, "message": "GPUDirect RDMA not ready"}]
errors:
  description: Number of findings of severity error.
  returned: always
  type: int
warnings_count:
  description: Number of findings of severity warning.
  returned: always
  type: int
nics:
  description: The NICs checked (O(nics) as given), what M(aifabric.roce.rdma_preflight_report) needs beside the findings.
  returned: always
  type: list
  elements: dict
"""

import copy

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError
from ansible_collections.aifabric.roce.plugins.module_utils.host.preflight import ARGUMENT_SPEC, run
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(argument_spec=copy.deepcopy(ARGUMENT_SPEC), supports_check_mode=True)  # the spec is shared: never let a run change it
    bounds.enforce(module, "rdma_preflight")
    try:
        result = run(module.params)
    except RunError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
