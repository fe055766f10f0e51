#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: rdma_facts
short_description: Gather RDMA readiness facts of a GPU host
description:
  - Reads, without changing anything, what a RoCEv2 GPU host needs to be ready for NCCL over RDMA
    - RDMA devices with their netdevs, PCI address and NUMA node; link state, speed and MTU; the
    RoCE GID table (type and netdev of each entry); firmware version and PSID read with C(devlink dev info),
    C(mlxfwmanager --query) or C(flint query) when they answer, else sysfs C(fw_ver)/C(board_id) (the source is
    named), model; GPUs with their name (C(nvidia-smi --query-gpu)) and each GPU<->NIC PCIe relationship
    (PIX/PXB/PHB/NODE/SYS, from C(nvidia-smi topo -m) or computed from sysfs); negotiated vs capable PCIe link
    speed and width of every GPU and RDMA function (sysfs, else C(lspci -vvv)); ACS control of the bridges
    between each GPU and NIC and ATS of the endpoints (from PCIe config space); GPUDirect RDMA readiness by
    NCCL's own rule (an RDMA device plus any one of C(/sys/kernel/mm/memory_peers/nv_mem/version),
    C(.../nv_mem_nc/version), C(/sys/module/nvidia_peermem/version)); the dma-buf prerequisites (open kernel
    module >= R515, kernel >= 5.12, rdma-core >= 34, ib_uverbs), reported as C(prerequisites met) because NCCL
    decides dma-buf with a test registration at init (C(ready) is then null); IOMMU mode; irqbalance state;
    RDMA kernel modules (loaded, built in via C(modules.builtin), C(/sys/module) or the class they register).
  - Every read goes through O(root), so a fixture tree can stand in for C(/sys) and C(/proc). A missing
    tool or device is reported as such, never as a failure.
  - Runs on the GPU host; Python standard library only.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  root:
    description: Root of the filesystem to read (C(/) on a host; a fixture tree in tests).
    type: path
    default: /
  tool_output_dir:
    description:
      - Read tool output (C(nvidia-smi topo -m), C(nvidia-smi --query-gpu=...), C(ethtool -i <if>),
        C(devlink dev info pci/<bdf>), C(mlxfwmanager --query -d <bdf>), C(flint -d <bdf> query),
        C(lspci -vvv -s <bdf>)) from captured files in this directory (one file per invocation, named after
        the argv, e.g. C(nvidia-smi_topo_-m.txt), C(devlink_dev_info_pci_0000_1a_00.0.txt)) instead of running the tools.
      - When O(root) is not C(/) and this is unset, tools are reported missing (the live tools would describe
        this machine, not the tree).
    type: path
  netdevs:
    description:
      - Planned rail netdevs to read even when no RDMA device claims them, so a NIC without RDMA
        (or with the RDMA driver missing) is reported as such rather than as absent.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Read-only; the same facts in check mode.
  diff_mode:
    support: none
    description: Nothing changes.
  facts:
    support: full
    description: Returns C(ansible_facts.aifabric_rdma).
seealso:
  - module: aifabric.roce.rdma_preflight
notes:
  - Reading extended PCIe config space (ACS/ATS) needs root; otherwise those values are null.
"""

EXAMPLES = r"""
- name: Gather RDMA readiness facts
  aifabric.roce.rdma_facts:

- name: Read a fixture tree instead of the live system
  aifabric.roce.rdma_facts:
    root: /tmp/fixtures/h100-cx7/root
    tool_output_dir: /tmp/fixtures/h100-cx7/tools
"""

RETURN = r"""
ansible_facts:
  description: Facts under C(aifabric_rdma).
  returned: always
  type: complex
  contains:
    aifabric_rdma:
      description:
        - Keys C(rdma_devices) (each with C(firmware) - C(version) (what runs), C(psid), C(source), C(stored),
          C(pending) (a flashed image waiting for a reset), C(tried)),
          C(netdevs) (C(pci) is the PCI function even when the C(device) link is a virtio child; C(bus_device);
          C(ethtool_firmware) - version, PSID and vendor C(package) split from C(ethtool -i)),
          C(gpus) (C(name), C(name_source), C(vbios); C(numa_node) null when sysfs says -1),
          C(topology) (C(gpu_nic), C(gpu_nic_sysfs), C(acs_path), C(gpu_affinity), C(source) - C(nvidia-smi),
          C(rocm-smi) on AMD hosts, or C(sysfs); C(nvidia_smi)/C(rocm_smi) say ok, tool missing, or refused with the
          malformed line), C(pci_bridges), C(ats), C(pcie_links) (per PCI function C(speed_gts), C(max_speed_gts),
          C(width), C(max_width), C(degraded), C(source)), C(modules), C(modules_builtin), C(modules_inferred) (states
          settled by the kernel's own build rules, e.g. rdma_cm), C(gdr) (with C(rules) - the collective library's
          version, where it was read, the rule set applied and its source), C(iommu), C(irqbalance),
          C(kernel), C(root), C(live) (false when O(root) is not C(/)), C(tool_output_dir).
      type: dict
      returned: always
      sample: {"gdr": {"ready": null, "mode": "dmabuf", "dmabuf": "prerequisites met", "rdma_core": 50}, "iommu": {"mode": "passthrough"}, "live": true}
"""

import copy

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.host.facts import ARGUMENT_SPEC, gather
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(argument_spec=copy.deepcopy(ARGUMENT_SPEC), supports_check_mode=True)
    bounds.enforce(module, "rdma_facts")
    facts = gather(module.params["root"], module.params["tool_output_dir"], module.params["netdevs"])
    module.exit_json(changed=False, ansible_facts={"aifabric_rdma": facts})


if __name__ == "__main__":
    main()
