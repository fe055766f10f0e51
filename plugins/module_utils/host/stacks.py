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
        # peer-memory probe files and the dma-buf path: by NCCL version (NCCL_RULES); dma-buf also needs CUDA >= 11.7
        # and CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (src/init.cc dmaBufSupported) + gdr.cc ibDmaBufSupportInitOnce
        "peermem_symbol": None,
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
        # dma-buf: by RCCL version (RCCL_RULES); every version needs both options in the kernel config it reads
        # (rocmwrap.cc kernel_opt1/kernel_opt2)
        "dmabuf_kernel_config": ("CONFIG_DMABUF_MOVE_NOTIFY=y", "CONFIG_PCI_P2PDMA=y"),
        # RCCL reads NCCL_* (its NCCL_PARAM) and RCCL_* (RCCL_PARAM in src/include/param.h: "RCCL_" env)
        "env_prefixes": ("NCCL_", "RCCL_"),
        # ROCm/rccl src/misc/param.cc initEnv: ~/.rccl.conf, then /etc/rccl.conf - RCCL does not read /etc/nccl.conf
        "conf_file": "/etc/rccl.conf",
    },
}

# RCCL_* variables RCCL reads: RCCL_PARAM(name, "<ENV>", default) reads "RCCL_<ENV>" (ROCm/rccl
# src/include/param.h). RCCL_VARIABLES_CHECKED_AT is the list's source: every RCCL_PARAM of src/ at that commit
# (`git grep RCCL_PARAM`: 24 names, among them CLIQUE_ALLREDUCE_NCHANNELS clique/CliqueManager.cc:52,
# P2P_NET_DISABLE init.cc:461, LL128_FORCE_ENABLE init.cc:463, P2P_NET_THRESHOLD enqueue.cc:951), plus
# FORCE_ENABLE_DMABUF (ROCm/rocm-systems 018c383d7607 projects/rccl/src/misc/rocmwrap.cc:24; RCCL 2.27.7 for ROCm
# 7.1.0). The list is open: a name outside it is written with a warning naming this version (nccl.variable_warnings),
# since a newer RCCL reads more (its CHANGELOG adds RCCL_* variables in nearly every release).
RCCL_VARIABLES_CHECKED_AT = "ROCm/rccl 0cbce2a7571c (RCCL 2.21.5, ROCm 6.3) + RCCL_FORCE_ENABLE_DMABUF (ROCm 7.1)"
RCCL_VARIABLES = frozenset("RCCL_" + name for name in (
    "CLIQUE_ALLREDUCE_BYTE_LIMIT", "CLIQUE_ALLREDUCE_NCHANNELS", "CLIQUE_IGNORE_TOPO", "ENABLE_CLIQUE",
    "ENABLE_INTRANET", "ENABLE_SIGNALHANDLER", "FORCE_ENABLE_DMABUF", "FORCE_ENABLE_GDRDMA", "INTRANET_THRESHOLD",
    "KERNEL_COLL_TRACE_ENABLE", "LL128_FORCE_ENABLE", "MODEL_MATCHING_DISABLE", "MSCCL_ENABLE_SINGLE_PROCESS",
    "MSCCL_ENABLE", "MSCCL_FORCE_ENABLE", "MSCCL_FORCE_FULLOPS", "MSCCL_WORK_FIFO_DEPTH", "MSCCLPP_ENABLE",
    "MSCCLPP_THRESHOLD", "NET_CONTIGUOUS_MEM", "P2P_NET_DISABLE", "P2P_NET_THRESHOLD", "PIVOT_ALLTOALL_ENABLE",
    "STACK_SIZE_OVERRIDE", "USE_ROCM_SMI_LIB"))

# --- Collective library rules by version -----------------------------------------------------------
# Each rule set holds for a version range of the library (NCCL by its own version; RCCL by the ROCm release it ships
# in, because one RCCL version spans several ROCm releases with different rules, e.g. "RCCL 2.28.3 for ROCm 7.11" and
# "for ROCm 7.12"), and cites its source at a commit. The host's version picks the set (facts.read_library_version);
# an unknown version gets the newest set, and the facts say so.
# NVIDIA/nccl: peer-memory probe files (any one exists, access F_OK) and whether dma-buf is tried (NCCL_DMABUF_ENABLE,
# default 1, from 2.13.4).
NCCL_RULES = (
    {"name": "NCCL 2.9.8 - 2.12", "since": (2, 9, 8), "until": (2, 13, 4),
     "peermem_probes": ("/sys/kernel/mm/memory_peers/nv_mem/version", "/sys/kernel/mm/memory_peers/nvidia-peermem/version"),
     "dmabuf": False,
     "source": "NVIDIA/nccl ca8485b0 (2.9.8-1) src/transport/net_ib.cc ncclIbGdrSupport: nv_mem or memory_peers/"
               "nvidia-peermem; no NCCL_DMABUF_ENABLE before 19ab67d1727d (2.13.4-1)"},
    {"name": "NCCL 2.13.4 - 2.21", "since": (2, 13, 4), "until": (2, 22, 3),
     "peermem_probes": ("/sys/kernel/mm/memory_peers/nv_mem/version", "/sys/kernel/mm/memory_peers/nvidia-peermem/version"),
     "dmabuf": True,
     "source": "NVIDIA/nccl ab2b89c4c339 (v2.21.5-1) src/transport/net_ib.cc:562-564 (nv_mem or memory_peers/"
               "nvidia-peermem); src/init.cc:260 NCCL_PARAM(DmaBufEnable, \"DMABUF_ENABLE\", 1), since 19ab67d1727d "
               "(2.13.4-1) src/init.cc:272"},
    {"name": "NCCL 2.22", "since": (2, 22, 3), "until": (2, 23, 4),
     "peermem_probes": ("/sys/kernel/mm/memory_peers/nv_mem/version", "/sys/kernel/mm/memory_peers/nv_mem_nc/version"),
     "dmabuf": True,
     "source": "NVIDIA/nccl 178b6b759074 (2.22.3-1) src/transport/net_ib.cc:614-616 (nv_mem or nv_mem_nc)"},
    {"name": "NCCL 2.23.4 and newer", "since": (2, 23, 4), "until": None,
     "peermem_probes": ("/sys/kernel/mm/memory_peers/nv_mem/version", "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
                        "/sys/module/nvidia_peermem/version"),
     "dmabuf": True,
     "source": "NVIDIA/nccl 68b542363f9a (2.23.4-1) src/transport/net_ib.cc:694-696; at 5067397c2676 (2.30.x) "
               "src/transport/net_ib/gdr.cc:18-20 ibGdrSupportInitOnce (nv_mem, nv_mem_nc, /sys/module/nvidia_peermem)"},
)

# ROCm/rccl and ROCm/rocm-systems projects/rccl: the dma-buf path (rocmwrap.cc initOnceFunc). ``env_default`` is
# NCCL_DMABUF_ENABLE's default, ``force`` the variable that skips the kernel checks, ``kernel_config`` the files read
# in order (the first readable one decides; {r} is the kernel release), ``kallsyms`` whether /proc/kallsyms
# (dma_buf_move_notify and pci_p2pdma) stands in when none is readable. Version facts: projects/rccl/CHANGELOG.md at
# ROCm/rocm-systems 0005e8e83d9e ("RCCL 2.27.7 for ROCm 7.1.0: Added RCCL_FORCE_ENABLE_DMABUF"; "RCCL 2.28.3 for
# ROCm 7.11: Added support for additional paths when loading the RCCL DMABUF kernel configuration file"; "RCCL 2.28.3
# for ROCm 7.12: NCCL_DMABUF_ENABLE now defaults to 1 (previously 0) ... prefer peermem ... fall back to DMAbuf").
RCCL_CONFIG_PATHS_2024 = ("/boot/config-{r}",)
# ROCm/rocm-systems 018c383d7607 projects/rccl/src/misc/rocmwrap.cc initOnceFunc possiblePaths[] (9 places; the
# first readable one decides; /proc/config.gz through zcat)
RCCL_CONFIG_PATHS = ("/proc/config.gz", "/boot/config-{r}", "/usr/src/linux-{r}/.config", "/usr/src/linux/.config",
                     "/usr/lib/modules/{r}/config", "/usr/lib/ostree-boot/config-{r}", "/usr/lib/kernel/config-{r}",
                     "/usr/src/linux-headers-{r}/.config", "/lib/modules/{r}/build/.config")
RCCL_RULES = (
    {"name": "RCCL 2024 (ROCm before 7.1, RCCL up to 2.26)", "rocm_since": None, "rocm_until": (7, 1, 0),
     "env_default": "0", "force": None, "kernel_config": RCCL_CONFIG_PATHS_2024, "kallsyms": False,
     "source": "ROCm/rccl 0cbce2a7571c (RCCL 2.21.5 for ROCm 6.3.0) src/misc/rocmwrap.cc:21 NCCL_PARAM(DmaBufEnable, "
               "\"DMABUF_ENABLE\", 0), :104 'Dmabuf feature disabled without NCCL_DMABUF_ENABLE=1', :122-148 "
               "/boot/config-<release> CONFIG_DMABUF_MOVE_NOTIFY=y and CONFIG_PCI_P2PDMA=y"},
    {"name": "RCCL 2.27.7 (ROCm 7.1 - 7.10)", "rocm_since": (7, 1, 0), "rocm_until": (7, 11, 0),
     "env_default": "0", "force": "RCCL_FORCE_ENABLE_DMABUF", "kernel_config": RCCL_CONFIG_PATHS_2024,
     "kallsyms": False,
     "source": "projects/rccl/CHANGELOG.md (ROCm/rocm-systems 0005e8e83d9e) 'RCCL 2.27.7 for ROCm 7.1.0': "
               "RCCL_FORCE_ENABLE_DMABUF added; NCCL_DMABUF_ENABLE still 0 until ROCm 7.12"},
    {"name": "RCCL 2.28.3 for ROCm 7.11", "rocm_since": (7, 11, 0), "rocm_until": (7, 12, 0),
     "env_default": "0", "force": "RCCL_FORCE_ENABLE_DMABUF", "kernel_config": RCCL_CONFIG_PATHS,
     "kallsyms": False,
     "source": "projects/rccl/CHANGELOG.md (ROCm/rocm-systems 0005e8e83d9e) 'RCCL 2.28.3 for ROCm 7.11': additional "
               "kernel-config paths (taken as the 9 of 018c383d7607; the entry does not list them, and the /proc/kallsyms "
               "fallback is not assumed: unverified for this release)"},
    {"name": "RCCL 2.28.3 for ROCm 7.12 and newer", "rocm_since": (7, 12, 0), "rocm_until": None,
     "env_default": "1", "force": "RCCL_FORCE_ENABLE_DMABUF", "kernel_config": RCCL_CONFIG_PATHS,
     "kallsyms": True,
     "source": "ROCm/rocm-systems 018c383d7607 projects/rccl/src/misc/rocmwrap.cc:23-24 NCCL_PARAM(DmaBufEnable, "
               "\"DMABUF_ENABLE\", 1), RCCL_PARAM(ForceEnableDMABUF, \"FORCE_ENABLE_DMABUF\", 0); initOnceFunc "
               "possiblePaths[] (9 kernel-config places) and the /proc/kallsyms fallback (dma_buf_move_notify + "
               "pci_p2pdma); CHANGELOG 'RCCL 2.28.3 for ROCm 7.12' (default 1, peermem preferred, dma-buf fallback)"},
)


def _in(version, since, until):
    return version is not None and (since is None or version >= since) and (until is None or version < until)


def library_rules(library, version=None, rocm=None):
    """(rule set, why) for ``library`` (NCCL or RCCL) at the host's ``version`` (and, for RCCL, ``rocm``), as tuples.
    RCCL is chosen by its ROCm release when known, else by its own version; a version no set covers, or none, gets the
    newest set and ``why`` says so."""
    if library == "RCCL":
        if rocm:
            found = [r for r in RCCL_RULES if _in(tuple(rocm), r["rocm_since"], r["rocm_until"])]
            if found:
                return found[0], "ROCm %s" % ".".join(str(x) for x in rocm)
        if version:
            version = tuple(version)
            if version < (2, 27, 7):
                return RCCL_RULES[0], "RCCL %s (before 2.27.7, ROCm 7.1)" % ".".join(str(x) for x in version)
            if version < (2, 28, 3):
                return RCCL_RULES[1], "RCCL %s (ROCm 7.1 - 7.10)" % ".".join(str(x) for x in version)
            return RCCL_RULES[-1], ("RCCL %s without its ROCm release: RCCL 2.28.3 ships in ROCm 7.11 (old rules) and 7.12 "
                                    "on (new rules), so the newest rules are applied" % ".".join(str(x) for x in version))
        return RCCL_RULES[-1], "RCCL version unknown: the newest rules are applied"
    if version:
        found = [r for r in NCCL_RULES if _in(tuple(version), r["since"], r["until"])]
        if found:
            return found[0], "NCCL %s" % ".".join(str(x) for x in version)
        return NCCL_RULES[-1], "NCCL %s is older than every rule set: the newest rules are applied" % ".".join(str(x) for x in version)
    return NCCL_RULES[-1], "NCCL version unknown: the newest rules are applied"


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
# bnxt_re congestion control at probe, by kernel (the line the rules and the docs give)
BNXT_CC_AT_PROBE = ("which chips upstream bnxt_re enables CC on at probe depends on the kernel "
                    "(main.c bnxt_re_setup_cc: Gen P5 only at torvalds/linux 00d0427fd8ce; later Gen P5 and P7 with tos_ecn"
                    "; per the turn-5 review the newest leaves CC enable on P7/Thor2 to the firmware and sets only DSCP - not re-read here, unverified)")
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
                      "(ecn_enable, roce_dscp, cnp_dscp in hex, then apply); the upstream driver has no such interface; "
                      + BNXT_CC_AT_PROBE + "; its debugfs cc_config is writable by root (debugfs.c .write = "
                      "bnxt_re_cc_config_set) but this "
                      "collection only reads it back",
        "congestion_configurable": True,
        # Broadcom bnxt_re README.TXT "Congestion Control" + configfs.c (out-of-tree driver; copy in lykeioner/driver
        # be704352): mkdir /sys/kernel/config/bnxt_re/<ibdev> creates ports/1/cc; attributes are read and written as
        # hex (sscanf "%x", show "%#x"); nothing reaches the NIC until "echo -n 0x01 > apply"; while the directory
        # exists `rmmod bnxt_re` fails (README: rmdir it first).
        "cc": {"base": "/sys/kernel/config/bnxt_re", "dir": "ports/1/cc", "format": "hex", "apply": ("apply", 1),
               "attrs": (("ecn_enable", "ecn"), ("roce_dscp", "roce_dscp"), ("cnp_dscp", "cnp_dscp")),
               "source": "Broadcom bnxt_re README.TXT 'Congestion Control' and configfs.c (out-of-tree driver)",
               "missing": "no /sys/kernel/config/bnxt_re (Broadcom's out-of-tree driver) and no upstream debugfs "
                          "/sys/kernel/debug/bnxt_re/<pci>/cc_config to read back (debugfs not mounted, or a kernel "
                          "before it); " + BNXT_CC_AT_PROBE + "; nothing read from the host (unverified)",
               # upstream bnxt_re (torvalds/linux drivers/infiniband/hw/bnxt_re/debugfs.c, at 0eaed89c): cc_config/<name>
               # per PCI function, each read queries the firmware (bnxt_qplib_query_cc_param) and prints "%d"; the files
               # are created 0400 but have a write handler (bnxt_re_cc_config_set: kstrtou32 -> bnxt_qplib_modify_cc),
               # so root can write them: not writing is this collection's choice (debugfs is a debugging interface
               # with no stability promise), the values are read back and compared.
               # alt_vlan_dscp is the CMDQ_MODIFY_ROCE_CC_MODIFY_MASK_ALT_TOS_DSCP field (the CNP DSCP of configfs).
               "readback": {"base": "/sys/kernel/debug/bnxt_re", "by": "pci", "dir": "cc_config", "format": "dec",
                            "attrs": (("enable_cc", "ecn"), ("tos_dscp", "roce_dscp"), ("alt_vlan_dscp", "cnp_dscp")),
                            "source": "upstream bnxt_re debugfs.c cc_config (queried from the firmware; writable by root, "
                                      "read only by this collection)"}},
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


# --- generated docs: the rule sets as a table in docs/host-rdma.md (tools/gen_docs.py) ---------------
RULES_BEGIN = "<!-- begin generated: collective library rules (stacks.py, tools/gen_docs.py) -->"
RULES_END = "<!-- end generated: collective library rules -->"


def _range(since, until, what):
    low = ".".join(str(x) for x in since) if since else None
    high = ".".join(str(x) for x in until) if until else None
    if low and high:
        return "%s %s to before %s" % (what, low, high)
    return "%s %s and newer" % (what, low) if low else "%s before %s" % (what, high)


def rules_doc():
    """The generated block of docs/host-rdma.md: every NCCL and RCCL rule set, the versions it covers, its source."""
    lines = [RULES_BEGIN, "",
             "Generated from `plugins/module_utils/host/stacks.py` (NCCL_RULES, RCCL_RULES) by `tools/gen_docs.py`; do "
             "not edit. The host's library version picks the row (facts `gdr.rules`); an unknown version gets the last "
             "row of its library, and `gdr.rules.chosen_by` says so.", "",
             "| library | rule set | covers | peer-memory files (any one) | dma-buf | source |", "|---|---|---|---|---|---|"]
    for rule in NCCL_RULES:
        lines.append("| NCCL | %s | %s | %s | %s | %s |" % (
            rule["name"], _range(rule["since"], rule["until"], "NCCL"), ", ".join("`%s`" % p for p in rule["peermem_probes"]),
            "tried (NCCL_DMABUF_ENABLE default 1)" if rule["dmabuf"] else "none", rule["source"]))
    for rule in RCCL_RULES:
        dmabuf = "NCCL_DMABUF_ENABLE default %s; %s; kernel config from %s%s" % (
            rule["env_default"], "`%s=1` skips the kernel checks" % rule["force"] if rule["force"] else "no force flag",
            ", ".join("`%s`" % p.replace("{r}", "<release>") for p in rule["kernel_config"]),
            ", else `/proc/kallsyms`" if rule["kallsyms"] else "")
        lines.append("| RCCL | %s | %s | %s | %s | %s |" % (
            rule["name"], _range(rule["rocm_since"], rule["rocm_until"], "ROCm"),
            "amdkfd files or any memory_peers client (facts.amd_peer_path)", dmabuf, rule["source"]))
    lines += ["", RULES_END]
    return "\n".join(lines)


def with_rules_doc(text):
    """``text`` (docs/host-rdma.md) with its generated rules block replaced by rules_doc()."""
    start, end = text.index(RULES_BEGIN), text.index(RULES_END) + len(RULES_END)
    return text[:start] + rules_doc() + text[end:]
