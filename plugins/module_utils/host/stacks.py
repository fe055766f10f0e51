# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU host stacks as data: GPU vendors (and their collective library) and RoCE NIC drivers.

Every rule here names its source; docs/host-rdma.md ("Host stacks") has the table with what is
verified on which real capture. Pure data and small lookups, no I/O.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

# --- GPU vendors ---------------------------------------------------------------------------------
# PCI vendor ids: PCI-SIG / pci.ids (0x10de NVIDIA, 0x1002 AMD/ATI). Classes: 0x0300 VGA, 0x0302 3D
# controller (NVIDIA data-centre GPUs, e.g. the H100/H200 captures), 0x0380 display controller (AMD
# Instinct MI200: pci.ids "Aldebaran"), 0x1200 processing accelerator (AMD Instinct MI300X: "Processing
# accelerators: ... Aqua Vanjaram [Instinct MI300X]", capture amd-mi300x-cx7-lspci).
GPU_VENDORS = {
    "nvidia": {
        "pci_vendor": "0x10de", "classes": ("0x0300", "0x0302"), "library": "NCCL",
        "driver_modules": ("nvidia",), "driver_version_file": "/proc/driver/nvidia/version",
        # NVIDIA/nccl src/transport/net_ib/gdr.cc ibGdrSupportInitOnce: any one file exists (access F_OK)
        "peermem_probes": ("/sys/kernel/mm/memory_peers/nv_mem/version", "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
                           "/sys/module/nvidia_peermem/version"),
        "peermem_source": "NVIDIA/nccl src/transport/net_ib/gdr.cc ibGdrSupportInitOnce",
        "peermem_symbol": None,
        # NVIDIA/nccl src/init.cc: NCCL_PARAM(DmaBufEnable, "DMABUF_ENABLE", 1) - dma-buf is tried by default
        "dmabuf_env_default": "1",
        "dmabuf_source": "NVIDIA/nccl src/init.cc dmaBufSupported (NCCL_DMABUF_ENABLE default 1, CUDA >= 11.7, "
                         "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) + gdr.cc ibDmaBufSupportInitOnce",
        "env_prefixes": ("NCCL_",),
        # NVIDIA/nccl src/misc/param.cc initEnv: ~/.nccl.conf, then /etc/nccl.conf (setenv without overwrite)
        "conf_file": "/etc/nccl.conf",
    },
    "amd": {
        "pci_vendor": "0x1002", "classes": ("0x0300", "0x0380", "0x1200"), "library": "RCCL",
        "driver_modules": ("amdgpu",), "driver_version_file": "/sys/module/amdgpu/version",
        # ROCm/rccl src/transport/net_ib.cc ncclIbGdrSupport (commit 0cbce2a7571c): any one of these files, else the
        # symbol ib_register_peer_memory_client (t or T) in /proc/kallsyms - a fallback ROCm/rocm-systems#9540
        # (merged 2026-07-31) replaced by "any client directory under memory_peers": ib_uverbs exports the symbol
        # with no client, a false positive that made registrations fail (facts.amd_peer_path)
        "peermem_probes": ("/sys/kernel/mm/memory_peers/amdkfd/version", "/sys/kernel/memory_peers/amdkfd/version",
                           "/sys/memory_peers/amdkfd/version"),
        "peermem_source": "ROCm/rccl src/transport/net_ib.cc ncclIbGdrSupport",
        "peermem_symbol": "ib_register_peer_memory_client",
        # ROCm/rccl src/misc/rocmwrap.cc: NCCL_PARAM(DmaBufEnable, "DMABUF_ENABLE", 0); "Dmabuf feature disabled
        # without NCCL_DMABUF_ENABLE=1"; then /boot/config-<release> must hold CONFIG_DMABUF_MOVE_NOTIFY=y and
        # CONFIG_PCI_P2PDMA=y
        "dmabuf_env_default": "0",
        "dmabuf_kernel_config": ("CONFIG_DMABUF_MOVE_NOTIFY=y", "CONFIG_PCI_P2PDMA=y"),
        "dmabuf_source": "ROCm/rccl src/misc/rocmwrap.cc (NCCL_DMABUF_ENABLE default 0; /boot/config-<release> "
                         "CONFIG_DMABUF_MOVE_NOTIFY=y and CONFIG_PCI_P2PDMA=y)",
        # RCCL reads NCCL_* (its NCCL_PARAM) and RCCL_* (RCCL_PARAM in src/include/param.h: "RCCL_" env)
        "env_prefixes": ("NCCL_", "RCCL_"),
        # ROCm/rccl src/misc/param.cc initEnv: ~/.rccl.conf, then /etc/rccl.conf - RCCL does not read /etc/nccl.conf
        "conf_file": "/etc/rccl.conf",
    },
}

# RCCL_* variables RCCL reads: RCCL_PARAM(name, "<ENV>", default) reads "RCCL_<ENV>" (ROCm/rccl
# src/include/param.h); this is every RCCL_PARAM of src/ at commit 0cbce2a7571c.
RCCL_VARIABLES = frozenset("RCCL_" + name for name in (
    "CLIQUE_ALLREDUCE_BYTE_LIMIT", "CLIQUE_IGNORE_TOPO", "ENABLE_CLIQUE", "ENABLE_INTRANET", "ENABLE_SIGNALHANDLER",
    "FORCE_ENABLE_GDRDMA", "INTRANET_THRESHOLD", "KERNEL_COLL_TRACE_ENABLE", "MODEL_MATCHING_DISABLE",
    "MSCCL_ENABLE_SINGLE_PROCESS", "MSCCL_ENABLE", "MSCCL_FORCE_ENABLE", "MSCCL_FORCE_FULLOPS",
    "MSCCL_WORK_FIFO_DEPTH", "MSCCLPP_ENABLE", "MSCCLPP_THRESHOLD", "NET_CONTIGUOUS_MEM", "PIVOT_ALLTOALL_ENABLE",
    "STACK_SIZE_OVERRIDE", "USE_ROCM_SMI_LIB"))

# NCCL >= 2.27.3 uses GPUDirect RDMA to a NIC behind the CPU a GPU reaches over C2C (Grace: GH200, GB200):
# src/graph/paths.cc NCCL_PARAM(NetGdrC2c, "NET_GDR_C2C", 1) (0 in 2.26.2) and mergePathType PHB + C2C -> P2C,
# accepted by ncclTopoCheckGdr (netGdrLevel P2C). nvidia-smi topo -m has no C2C/P2C legend: such pairs print SYS.
NCCL_GDR_C2C_SINCE = (2, 27, 3)

# NVIDIA GPUs without GPUDirect RDMA, by NVIDIA's word, and what NCCL then does. DGX Spark's GB10 iGPU (unified
# memory): "the GPUDirect RDMA technology is not supported, and the mechanisms for direct I/O based on that technology,
# for example nvidia-peermem (for DOCA-Host), dma-buf or GDRCopy, do not work"; CUDA reports
# CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED and CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED as 0
# (https://forums.developer.nvidia.com/t/dgx-spark-gpudirect-rdma/348787/6). PCI device ids: NVIDIA/NV-Kernels#396
# (the DGX Spark iGPU quirk covers 0x2E00-0x2E3F); real lspci 10de:2e12 "GB20B [GB10]" (capture gb10-dgx-spark).
# NCCL's rule (NVIDIA/nccl 5067397c): src/init.cc dmaBufSupported fails when CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
# is 0, so src/graph/topo.cc sets a NIC's gdr = (ptrSupport & NCCL_PTR_CUDA) || (dmaBufSupport && NCCL_PTR_DMABUF)
# = 0 without a peer-memory file (src/transport/net_ib/gdr.cc; nvidia_peermem does not load there) and logs
# "NET/IB : GPU Direct RDMA Disabled for HCA"; the GPU's own gdr is cudaDevAttrGPUDirectRDMASupported
# (src/plugin/net.cc ncclGpuGdrSupport), and ncclTopoCheckGdr (src/graph/paths.cc) needs both.
NVIDIA_NO_GDR = (
    {"name": "NVIDIA GB10 (DGX Spark iGPU)", "device_ids": (0x2E00, 0x2E3F), "nvsmi_names": ("NVIDIA GB10",),
     "source": "NVIDIA: GPUDirect RDMA is not supported on DGX Spark (nvidia-peermem and dma-buf do not work; "
               "forums.developer.nvidia.com/t/dgx-spark-gpudirect-rdma/348787); NCCL then marks every HCA "
               "'GPU Direct RDMA Disabled' (src/init.cc dmaBufSupported, src/graph/topo.cc, src/plugin/net.cc "
               "ncclGpuGdrSupport) and stages through host memory"},
)


def nvidia_gdr_unsupported(gpu):
    """The NVIDIA_NO_GDR entry of an NVIDIA GPU (facts.read_gpus item: device_id, name), or None."""
    if (gpu or {}).get("vendor") not in (None, "nvidia"):
        return None
    try:
        device = int(gpu.get("device_id") or "", 16)
    except ValueError:
        device = None
    for entry in NVIDIA_NO_GDR:
        low, high = entry["device_ids"]
        if (device is not None and low <= device <= high) or gpu.get("name") in entry["nvsmi_names"]:
            return entry
    return None


# --- RoCE NIC drivers ----------------------------------------------------------------------------
# modules: the netdev driver and its RDMA (ib_*) driver, both must be present (kernel drivers/infiniband/hw/*).
# rdma_prefix: the name the driver gives its ib_device before rdma-core's udev rename (rdma_rename).
NIC_DRIVERS = {
    "mlx5": {
        "vendor": "NVIDIA (Mellanox)", "pci_vendor": "0x15b3", "netdev_driver": "mlx5_core", "rdma_driver": "mlx5_ib",
        "modules": ("mlx5_core", "mlx5_ib"), "rdma_prefix": "mlx5_",
        "firmware": "devlink dev info (running/stored fw.version), mlxfwmanager/mlxup --query (FW, FW (Running)), "
                    "flint query, sysfs fw_ver",
        "qos_tool": "mlnx_qos (MLNX_OFED/DOCA) or iproute2 dcb; DCBX mode from mlnx_qos 'DCBX mode: OS controlled'",
        "congestion": "DCQCN: /sys/class/net/<if>/ecn/roce_{np,rp}/enable/<prio>, roce_np/cnp_dscp (MLNX_OFED "
                      "'Explicit Congestion Notification'); the inbox driver enables DCQCN by default",
        "congestion_configurable": True,
    },
    "bnxt_re": {
        "vendor": "Broadcom", "pci_vendor": "0x14e4", "netdev_driver": "bnxt_en", "rdma_driver": "bnxt_re",
        "modules": ("bnxt_en", "bnxt_re"), "rdma_prefix": "bnxt_re",
        "firmware": "ethtool -i firmware-version, devlink dev info (bnxt_en devlink info), niccli; sysfs fw_ver",
        # drivers/net/ethernet/broadcom/bnxt/bnxt_dcb.c bnxt_dcbnl_ieee_setpfc: -EINVAL unless dcbx_cap has
        # DCB_CAP_DCBX_HOST (the firmware LLDP/DCBX agent owns DCB otherwise); the same in FreeBSD's bnxt_dcb.c
        "qos_tool": "iproute2 dcb (host DCBX only); with the firmware DCBX agent the driver refuses host PFC/app "
                    "(bnxt_dcb.c -EINVAL): read it with dcb, set it with niccli or the switch's DCBX",
        "congestion": "DCQCN through Broadcom's out-of-tree bnxt_re configfs /sys/kernel/config/bnxt_re/<dev>/ports/1/cc "
                      "(ecn_enable, roce_dscp, cnp_dscp in hex, then apply); the upstream driver has no such interface "
                      "and turns CC on with ECN at probe (main.c bnxt_re_setup_cc)",
        "congestion_configurable": True,
        # Broadcom bnxt_re README.TXT "Congestion Control" + configfs.c (out-of-tree driver; copy in lykeioner/driver
        # be704352): mkdir /sys/kernel/config/bnxt_re/<ibdev> creates ports/1/cc; attributes are read and written as
        # hex (sscanf "%x", show "%#x"); nothing reaches the NIC until "echo -n 0x01 > apply"; while the directory
        # exists `rmmod bnxt_re` fails (README: rmdir it first).
        "cc": {"base": "/sys/kernel/config/bnxt_re", "dir": "ports/1/cc", "format": "hex", "apply": ("apply", 1),
               "attrs": (("ecn_enable", "ecn"), ("roce_dscp", "roce_dscp"), ("cnp_dscp", "cnp_dscp")),
               "source": "Broadcom bnxt_re README.TXT 'Congestion Control' and configfs.c (out-of-tree driver)",
               "missing": "no /sys/kernel/config/bnxt_re (Broadcom's out-of-tree driver) and no upstream debugfs "
                          "/sys/kernel/debug/bnxt_re/<pci>/cc_config to read back: upstream turns CC on with ECN at "
                          "probe (drivers/infiniband/hw/bnxt_re/main.c bnxt_re_setup_cc, commit bfb27ae 'Use the "
                          "default mode of congestion control'); nothing to read or set from the host (unverified)",
               # upstream bnxt_re (torvalds/linux drivers/infiniband/hw/bnxt_re/debugfs.c, at 0eaed89c): cc_config/<name>
               # per PCI function, each read queries the firmware (bnxt_qplib_query_cc_param) and prints "%d"; the files
               # are created 0400, so the upstream driver's values are read back and compared, never written here.
               # alt_vlan_dscp is the CMDQ_MODIFY_ROCE_CC_MODIFY_MASK_ALT_TOS_DSCP field (the CNP DSCP of configfs).
               "readback": {"base": "/sys/kernel/debug/bnxt_re", "by": "pci", "dir": "cc_config", "format": "dec",
                            "attrs": (("enable_cc", "ecn"), ("tos_dscp", "roce_dscp"), ("alt_vlan_dscp", "cnp_dscp")),
                            "source": "upstream bnxt_re debugfs.c cc_config (read-only, queried from the firmware)"}},
    },
    "irdma": {
        "vendor": "Intel (E810 ice)", "pci_vendor": "0x8086", "netdev_driver": "ice", "rdma_driver": "irdma",
        "modules": ("ice", "irdma"), "rdma_prefix": "irdma",
        "firmware": "ethtool -i firmware-version (NVM version, eetrack, combo), devlink dev info (ice: fw.mgmt, "
                    "fw.bundle_id); sysfs fw_ver",
        # kernel Documentation/networking/device_drivers/ethernet/intel/ice.rst "DCB" / "FW-LLDP": with the
        # fw-lldp-agent private flag on, the firmware runs DCBX (willing) and owns DCB
        "qos_tool": "iproute2 dcb or lldptool after `ethtool --set-priv-flags <if> fw-lldp-agent off`; with the "
                    "flag on the firmware's DCBX owns DCB (ice.rst)",
        "congestion": "DCQCN through Intel's out-of-tree irdma configfs /sys/kernel/config/irdma/<dev>/roce_dcqcn_enable "
                      "(default off); the upstream driver has no such interface",
        "congestion_configurable": True,
        # Intel irdma README (out-of-tree driver for E800/X722, "ECN Configuration"): mkdir /sys/kernel/config/irdma/<ibdev>,
        # then roce_dcqcn_enable 0/1 (default off, read back with cat); the driver does not unload while the directory
        # exists. DSCP comes from default_roce_tos (rdma_cm configfs), which the QoS role sets for every driver.
        "cc": {"base": "/sys/kernel/config/irdma", "dir": "", "format": "dec", "apply": None,
               "attrs": (("roce_dcqcn_enable", "ecn"),),
               "source": "Intel irdma README 'ECN Configuration' (out-of-tree driver)",
               "missing": "no /sys/kernel/config/irdma: the upstream irdma has no congestion-control interface (Intel's "
                          "out-of-tree driver adds configfs roce_dcqcn_enable); nothing reads it back from the host "
                          "(unverified)"},
    },
    "ionic": {
        "vendor": "AMD Pensando", "pci_vendor": "0x1dd8", "netdev_driver": "ionic", "rdma_driver": "ionic_rdma",
        "modules": ("ionic", "ionic_rdma"), "rdma_prefix": "ionic_",
        "firmware": "ethtool -i firmware-version, devlink dev info (ionic devlink info fw); sysfs fw_ver",
        "qos_tool": "iproute2 dcb where the driver implements dcbnl (unverified for ionic)",
        "congestion": "not configurable from the host through a kernel interface: AMD configures Pollara congestion "
                      "control with its nicctl tool (AMD Pensando UG1716, behind the customer portal); not run (unverified)",
        "congestion_configurable": False,
        "cc": {"base": None, "missing": "ionic_rdma (drivers/infiniband/hw/ionic) exposes no congestion-control "
                                        "interface; AMD's nicctl (UG1716, not public) configures it: not run (unverified)"},
    },
}

# Core RDMA modules every RoCE host needs (kernel drivers/infiniband/core: ib_core, ib_uverbs for user verbs,
# rdma_cm for RoCE connection setup; NCCL uses verbs, rdma_cm only through rdma_ucm tools).
CORE_MODULES = ("ib_core", "ib_uverbs", "rdma_cm")
NIC_ORDER = ("mlx5", "bnxt_re", "irdma", "ionic")


def all_modules():
    """Every module a stack can require (the facts read each one's state)."""
    out = list(CORE_MODULES) + ["rdma_ucm"]
    for name in NIC_ORDER:
        out += [m for m in NIC_DRIVERS[name]["modules"] if m not in out]
    return tuple(out)


def required_modules(nic_drivers):
    """Modules a host needs for its NIC drivers: the core RDMA modules + each driver's pair; mlx5 when none is known
    (the collection's historical default)."""
    out = list(CORE_MODULES)
    for name in (nic_drivers or ["mlx5"]):
        out += [m for m in NIC_DRIVERS[name]["modules"] if m not in out]
    return out


def gpu_vendor_of(pci_vendor):
    for name, entry in GPU_VENDORS.items():
        if entry["pci_vendor"] == pci_vendor:
            return name
    return None


def is_gpu(pci_vendor, pci_class):
    name = gpu_vendor_of(pci_vendor)
    return name is not None and any((pci_class or "").startswith(c) for c in GPU_VENDORS[name]["classes"])


def nic_driver_of(rdma_name=None, netdev_driver=None, pci_vendor=None):
    """NIC driver key from what the host shows: the netdev's driver (ethtool -i / sysfs driver link), the RDMA
    device name prefix, or the PCI vendor; None when nothing matches."""
    for name in NIC_ORDER:
        entry = NIC_DRIVERS[name]
        if netdev_driver and netdev_driver == entry["netdev_driver"]:
            return name
    for name in NIC_ORDER:
        if rdma_name and rdma_name.startswith(NIC_DRIVERS[name]["rdma_prefix"]):
            return name
    for name in NIC_ORDER:
        if pci_vendor and pci_vendor == NIC_DRIVERS[name]["pci_vendor"]:
            return name
    return None


def env_prefixes(gpu_vendor):
    return GPU_VENDORS.get(gpu_vendor or "nvidia", GPU_VENDORS["nvidia"])["env_prefixes"]


def version_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text or "")[:3])
