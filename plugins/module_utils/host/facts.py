# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only RDMA readiness facts of one GPU host (sysfs/procfs/tool output).

Sources (documented kernel ABI): Documentation/ABI/stable/sysfs-class-infiniband (fw_ver,
board_id, hca_type, ports/<n>/{state,rate,link_layer,gids,gid_attrs}), sysfs-class-net
(operstate, speed, mtu), sysfs-bus-pci (numa_node, class, vendor, config, iommu_group),
sysfs-kernel-iommu_groups (type), /proc/modules, /lib/modules/<kernel>/modules.builtin,
/proc/interrupts, /sys/kernel/mm/memory_peers; tools: ``ethtool -i``, ``nvidia-smi topo -m``,
``nvidia-smi --query-gpu``, ``devlink dev info``, ``mlxfwmanager --query``, ``flint query``, ``lspci -vvv``.
Real captured output of each is under tests/fixtures/hosts/captures/ (one SOURCE.md per capture).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import gzip
import re

from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot, ToolRunner
from ansible_collections.aifabric.roce.plugins.module_utils.host import pcitopo
from ansible_collections.aifabric.roce.plugins.module_utils.host import stacks

RDMA_MODULES = ("ib_core", "ib_uverbs", "rdma_cm", "rdma_ucm", "mlx5_core", "mlx5_ib")

# hca_type (PCI device id) -> model, from the mlx5 device id table (drivers/net/ethernet/mellanox/mlx5/core/main.c)
HCA_MODELS = {"MT4115": "ConnectX-4", "MT4117": "ConnectX-4 Lx", "MT4119": "ConnectX-5",
              "MT4121": "ConnectX-5 Ex", "MT4123": "ConnectX-6", "MT4125": "ConnectX-6 Dx",
              "MT4127": "ConnectX-6 Lx", "MT4129": "ConnectX-7", "MT4131": "ConnectX-8",
              "MT41686": "BlueField-2", "MT41692": "BlueField-3"}
NVIDIA_VENDOR = "0x10de"
# kernel 5.12 added dma-buf import to RDMA (ib_umem_dmabuf); NVIDIA open kernel modules export dma-buf from R515
DMABUF_MIN_KERNEL = (5, 12)
DMABUF_MIN_DRIVER = 515


def ipv4_to_gid(address):
    """IPv4-mapped RoCE GID as sysfs prints it: 10.100.0.1 -> 0000:...:ffff:0a64:0001."""
    octets = [int(x) for x in address.split(".")]
    return "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(octets)


def gid_to_ipv4(gid):
    match = re.match(r"^0000:0000:0000:0000:0000:ffff:([0-9a-f]{2})([0-9a-f]{2}):([0-9a-f]{2})([0-9a-f]{2})$", gid or "")
    if not match:
        return None
    return ".".join(str(int(x, 16)) for x in match.groups())


def _version_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text or "")[:3])


def loaded_modules(sysroot):
    """Names of loadable modules currently loaded (/proc/modules)."""
    text = sysroot.read("/proc/modules")
    names = set()
    if text:
        names.update(line.split()[0] for line in text.splitlines() if line.strip())
    return names


# A built-in module without parameters has no /sys/module/<name> (the kernel creates it only for
# built-ins with parameters or a version); some leave a class or misc device behind instead.
# ib_uverbs: class attribute abi_version (drivers/infiniband/core/uverbs_main.c), seen in the real
# capture tests/fixtures/hosts/captures/h100-vm-2026-11-22; rdma_ucm: misc device "rdma_cm" (ucma.c).
BUILTIN_TRACES = {"ib_uverbs": "/sys/class/infiniband_verbs/abi_version", "rdma_ucm": "/sys/class/misc/rdma_cm"}


def builtin_modules(sysroot, kernel):
    """(names, path) from /lib/modules/<kernel>/modules.builtin (``kernel/.../ib_uverbs.ko`` lines);
    (empty set, None) when the file is not readable."""
    for base in ("/lib/modules", "/usr/lib/modules"):
        rel = "%s/%s/modules.builtin" % (base, kernel)
        text = sysroot.read(rel) if kernel else None
        if text is not None:
            names = set()
            for line in text.splitlines():
                name = line.strip().rsplit("/", 1)[-1]
                if name.endswith(".ko"):
                    names.add(name[:-3].replace("-", "_"))
            return names, rel
    return set(), None


# What the kernel's own build rules imply about a module whose state files cannot show. torvalds/linux
# drivers/infiniband/core/Makefile (at 0ac6f4056c4a, lines 2-5): ``infiniband-$(CONFIG_INFINIBAND_ADDR_TRANS) :=
# rdma_cm.o``, ``user_access-$(CONFIG_INFINIBAND_ADDR_TRANS) := rdma_ucm.o``, ``obj-$(CONFIG_INFINIBAND) += ib_core.o
# ... $(infiniband-y)``: rdma_ucm exists only when CONFIG_INFINIBAND_ADDR_TRANS (a bool, drivers/infiniband/Kconfig)
# is y, and then rdma_cm is built exactly like ib_core. So with rdma_ucm present, rdma_cm is built in when ib_core is
# built in; when ib_core is a loadable module, rdma_cm is one too, and a module absent from /proc/modules is not loaded.
MODULE_IMPLIED = {
    "rdma_cm": {"with": "rdma_ucm", "like": "ib_core",
                "source": "torvalds/linux drivers/infiniband/core/Makefile (0ac6f4056c4a) lines 2-5: rdma_cm.o and "
                          "rdma_ucm.o both exist only with CONFIG_INFINIBAND_ADDR_TRANS=y, and rdma_cm.o is built "
                          "with ib_core.o (obj-$(CONFIG_INFINIBAND))"},
}


def infer_modules(modules):
    """(states, inferred): ``unknown`` states settled by MODULE_IMPLIED; ``inferred`` names each one and why."""
    states = dict(modules)
    inferred = {}
    for name, rule in MODULE_IMPLIED.items():
        if states.get(name) != "unknown" or states.get(rule["with"]) not in ("builtin", "loaded"):
            continue
        like = states.get(rule["like"])
        if like in ("builtin", "loaded"):
            states[name] = "builtin" if like == "builtin" else "missing"
            inferred[name] = "%s: %s is %s and %s is present; %s" % (states[name], rule["like"], like, rule["with"], rule["source"])
    return states, inferred


# Modules NVIDIA ships outside the kernel tree (driver packages, DKMS): never in modules.builtin, so not in
# /proc/modules and not in /sys/module means not loaded, whether or not modules.builtin could be read.
OUT_OF_TREE = ("nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm", "nvidia_peermem", "nv_peer_mem")


def module_state(sysroot, name, loaded, builtin=frozenset(), builtin_known=True):
    """loaded (in /proc/modules), builtin (modules.builtin, /sys/module without /proc/modules, or a
    class the module registers), missing, or unknown: modules.builtin was not readable
    (``builtin_known`` False) and an in-tree module built in without parameters leaves no other trace
    (real capture h200-vm-2026-11-26: rdma_cm on a kernel without /lib/modules)."""
    if name in loaded:
        return "loaded"
    if name in builtin or sysroot.isdir("/sys/module/%s" % name):
        return "builtin"
    if name in BUILTIN_TRACES and sysroot.exists(BUILTIN_TRACES[name]):
        return "builtin"
    return "missing" if builtin_known or name in OUT_OF_TREE else "unknown"


def _numa(sysroot, rel):
    """NUMA node of a device; None for -1 (NUMA_NO_NODE: VMs and single-node firmware report it)."""
    node = sysroot.read_int(rel)
    return node if node is not None and node >= 0 else None


def pci_function_of(sysroot, rel):
    """PCI address behind a ``device`` link, walking up past non-PCI children: a virtio NIC's link
    resolves to ``.../0000:00:03.0/virtio2`` (real capture h100-vm-2026-11-22)."""
    real = sysroot.realpath(rel)
    for part in reversed((real or "").split("/")):
        if pcitopo.BDF_RE.match(part):
            return part
    return None


def parse_ethtool_i(text):
    info = {}
    for line in (text or "").splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            info[key.strip()] = value.strip()
    return info


def _read_gids(sysroot, base):
    gids = []
    for name in sysroot.listdir(base + "/gids"):
        if not name.isdigit():
            continue
        gid = sysroot.read("%s/gids/%s" % (base, name))
        if not gid or gid == "0000:0000:0000:0000:0000:0000:0000:0000":
            continue
        gid_type = sysroot.read("%s/gid_attrs/types/%s" % (base, name))
        if gid_type is None:
            continue
        gids.append({"index": int(name), "gid": gid, "type": gid_type,
                     "ndev": sysroot.read("%s/gid_attrs/ndevs/%s" % (base, name)),
                     "ipv4": gid_to_ipv4(gid)})
    return sorted(gids, key=lambda g: g["index"])


def read_rdma_devices(sysroot, runner):
    devices = {}
    for name in sysroot.listdir("/sys/class/infiniband"):
        base = "/sys/class/infiniband/%s" % name
        bdf = pci_function_of(sysroot, base + "/device")
        hca_type = sysroot.read(base + "/hca_type")
        dev = {"name": name, "pci": bdf, "hca_type": hca_type, "model": HCA_MODELS.get(hca_type, hca_type),
               "fw_ver": sysroot.read(base + "/fw_ver"), "board_id": sysroot.read(base + "/board_id"),
               "numa_node": _numa(sysroot, base + "/device/numa_node"),
               "netdevs": sysroot.listdir(base + "/device/net"), "ports": {}}
        for port in sysroot.listdir(base + "/ports"):
            pbase = "%s/ports/%s" % (base, port)
            rate = sysroot.read(pbase + "/rate")
            match = re.match(r"^(\d+)", rate or "")
            dev["ports"][port] = {"state": sysroot.read(pbase + "/state"),
                                  "phys_state": sysroot.read(pbase + "/phys_state"),
                                  "rate": rate, "rate_gbps": int(match.group(1)) if match else None,
                                  "link_layer": sysroot.read(pbase + "/link_layer"),
                                  "gids": _read_gids(sysroot, pbase)}
        dev["firmware"] = read_firmware(runner, dev)
        devices[name] = dev
    return devices


# --- firmware: devlink, mlxfwmanager, flint, sysfs ------------------------------------------------

# mlx5 reports a version it cannot read as all-ones (netdev-2026-mlx5-devlink-stored-unreadable capture)
UNREADABLE_VERSIONS = ("255.255.65535", "0.0.0")


def parse_devlink_info(text):
    """``devlink dev info`` -> {handle: {'info': {driver, serial_number, ...}, 'fixed'|'running'|'stored': {...}}}."""
    out = {}
    handle = None
    section = None
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        if not line[0].isspace() and line.rstrip().endswith(":"):
            handle = line.strip()[:-1]
            out[handle] = {"info": {}, "fixed": {}, "running": {}, "stored": {}}
            section = None
            continue
        if handle is None:
            continue
        stripped = line.strip()
        if stripped == "versions:":
            section = "versions"
        elif stripped[:-1] in ("fixed", "running", "stored") and stripped.endswith(":") and section:
            section = stripped[:-1]
        else:
            key, _sep, value = stripped.partition(" ")
            target = out[handle][section] if section in ("fixed", "running", "stored") else out[handle]["info"]
            target[key] = value.strip()
    return out


def parse_mlxfwmanager(text):
    """``mlxfwmanager --query`` / ``mlxup --query`` device blocks -> [{device_type, part_number, psid,
    pci_device_name, fw_current (the flashed image), fw_available, fw_running (only when a flashed image
    waits for a reset), status, ...}]."""
    devices = []
    current = None
    for line in (text or "").splitlines():
        if re.match(r"^Device #\d+:", line.strip()):
            current = {}
            devices.append(current)
            continue
        if current is None:
            continue
        # `FW (Running)`: the flashed image (the `FW` row) differs from the one running until a reset
        # (mstflint mlxfwops: the row is printed only then; real capture mlxup-cx7-fw-running)
        match = re.match(r"^\s+FW \(Running\)\s+(\S+)", line)
        if match:
            current["fw_running"] = match.group(1)
            continue
        match = re.match(r"^\s+FW\s+(\S+)\s+(\S+)?", line)
        if match:
            current["fw_current"], current["fw_available"] = match.group(1), match.group(2)
            continue
        match = re.match(r"^\s+([A-Za-z][A-Za-z ]+?):\s+(.*?)\s*$", line)
        if match and match.group(1) != "Versions":
            current[match.group(1).lower().replace(" ", "_")] = match.group(2)
    return devices


def mlxfw_versions(dev):
    """The one reading of a parsed mlxfwmanager/mlxup device block, shared by the facts (read_firmware) and the
    upgrade module (nic_firmware.device_state): ``running`` is what runs now, ``flashed`` the image in flash (the ``FW``
    row, what mlxfwmanager compares with ``available``), ``pending`` the flashed image while it waits for a reset (the
    ``FW (Running)`` row is printed only then; real capture mlxup-cx7-fw-running: FW 28.47.1026, FW (Running)
    28.46.3048), else None."""
    flashed = dev.get("fw_current")
    running = dev.get("fw_running") or flashed
    pending = flashed if running != flashed else None
    available = dev.get("fw_available")
    return {"running": running, "flashed": flashed, "pending": pending, "pending_reset": pending is not None,
            "available": None if available in (None, "N/A") else available}


def parse_flint_query(text):
    """``flint -d <dev> query`` -> {'fw_version', 'psid', 'product_version', ...} (``Key:   value`` lines)."""
    out = {}
    for line in (text or "").splitlines():
        match = re.match(r"^([A-Za-z][A-Za-z ]+?):\s+(.*?)\s*$", line)
        if match:
            out[match.group(1).lower().replace(" ", "_")] = match.group(2)
    return out


# Vendor suffixes ``ethtool -i`` appends to the firmware version, each with its source: bnxt_en ``/pkg <package>``
# (Linux commit 3ebf6f0a09a2 "bnxt_en: Add installed-package firmware version reporting via Ethtool GDRVINFO";
# real capture bnxt-en-ethtool-fw-pkg: ``229.2.52.0/pkg 22.92.06.10``).
FW_SUFFIXES = (("/pkg", "bnxt_en installed package (Linux 3ebf6f0a09a2)"),)


def ethtool_fw_package(text):
    """(version, package) of an ``ethtool -i`` firmware-version whose vendor suffix names a package, else (text, None)."""
    for suffix, _source in FW_SUFFIXES:
        version, sep, rest = (text or "").partition(suffix)
        if sep:
            return version.strip(), rest.strip() or None
    return text, None


def firmware_from_ethtool(info):
    """(version, psid) from ``ethtool -i`` ``firmware-version: 28.39.1002 (MT_0000000838)``; the inbox
    driver prints no PSID (ethq-8 capture); a vendor suffix (FW_SUFFIXES: bnxt_en ``/pkg``) is not the version."""
    text, _package = ethtool_fw_package((info or {}).get("firmware-version") or "")
    match = re.match(r"^(\S+)(?:\s+\((\S+)\))?", text)
    return (match.group(1), match.group(2)) if match else (None, None)


# The firmware version devlink reports, by name: mlx5 "fw.version" (netdev-2025-mlx5-devlink-info), else the generic
# "fw" ("Overall firmware version", Documentation/networking/devlink/devlink-info.rst; bnxt_en, ionic: capture
# netdev-2020-bnxt-en-devlink-info), else the generic "fw.bundle_id" ("Unique identifier of the entire firmware
# bundle"; ice reports neither of the others: capture iwl-2023-e810-ice-devlink-info).
DEVLINK_FW_KEYS = ("fw.version", "fw", "fw.bundle_id")


def _fw_devlink(runner, bdf):
    result = runner.run(["devlink", "dev", "info", "pci/%s" % bdf])
    entry = parse_devlink_info(result.stdout).get("pci/%s" % bdf) if result.ok else None
    key = next((k for k in DEVLINK_FW_KEYS if entry and entry["running"].get(k)), None)
    if key is None:
        return None
    stored = entry["stored"].get(key)
    # mlx5's fixed fw.psid is its board configuration id; bnxt_en's running fw.psid is a parameter-set version
    return {"version": entry["running"][key], "version_key": key, "psid": entry["fixed"].get("fw.psid"),
            "driver": entry["info"].get("driver"),
            "stored": None if stored in UNREADABLE_VERSIONS else stored,
            "stored_unreadable": stored in UNREADABLE_VERSIONS}


def _fw_mlxfwmanager(runner, bdf):
    result = runner.run(["mlxfwmanager", "--query", "-d", bdf])
    devices = parse_mlxfwmanager(result.stdout) if result.ok else []
    if not devices or not devices[0].get("fw_current"):
        return None
    dev = devices[0]
    versions = mlxfw_versions(dev)
    # version is what runs (as devlink's running fw.version); the flashed image is `stored`, `pending` while it waits
    return {"version": versions["running"], "psid": dev.get("psid"), "part_number": dev.get("part_number"),
            "stored": versions["flashed"], "pending": versions["pending"], "pending_reset": versions["pending_reset"],
            "available": versions["available"], "status": dev.get("status")}


def _fw_flint(runner, bdf):
    result = runner.run(["flint", "-d", bdf, "query"])
    info = parse_flint_query(result.stdout) if result.ok else {}
    if not info.get("fw_version"):
        return None
    return {"version": info["fw_version"], "psid": info.get("psid")}


FW_READERS = (("devlink", _fw_devlink), ("mlxfwmanager", _fw_mlxfwmanager), ("flint", _fw_flint))


def read_firmware(runner, dev):
    """Firmware of one RDMA device from the first tool that answers (devlink, mlxfwmanager, flint), else
    sysfs ``fw_ver``/``board_id``. ``source`` names the tool; ``tried`` lists the tools that did not answer."""
    tried = []
    if dev.get("pci"):
        for tool, reader in FW_READERS:
            found = reader(runner, dev["pci"])
            if found:
                found.update(source=tool, tried=tried, sysfs_fw_ver=dev.get("fw_ver"))
                found["psid"] = found.get("psid") or dev.get("board_id")
                return found
            tried.append(tool)
    return {"version": dev.get("fw_ver"), "psid": dev.get("board_id"), "source": "sysfs" if dev.get("fw_ver") else None,
            "tried": tried, "sysfs_fw_ver": dev.get("fw_ver")}


def read_netdev(sysroot, runner, name):
    base = "/sys/class/net/%s" % name
    if not sysroot.exists(base):
        return None
    speed = sysroot.read_int(base + "/speed")
    ethtool = runner.run(["ethtool", "-i", name])
    info = parse_ethtool_i(ethtool.stdout) if ethtool.ok else None
    fw_version, fw_psid = firmware_from_ethtool(info)
    return {"name": name, "operstate": sysroot.read(base + "/operstate"),
            "speed_mbps": speed if speed is not None and speed > 0 else None,
            "mtu": sysroot.read_int(base + "/mtu"), "address": sysroot.read(base + "/address"),
            "pci": pci_function_of(sysroot, base + "/device"),
            "bus_device": sysroot.link_name(base + "/device"),
            "driver": sysroot.link_name(base + "/device/driver"),
            "ethtool": info, "ethtool_firmware": {"version": fw_version, "psid": fw_psid,
                                                  "package": ethtool_fw_package((info or {}).get("firmware-version"))[1]}
            if info else None,
            "ethtool_status": "ok" if ethtool.ok else ("tool missing" if ethtool.missing else "rc=%s" % ethtool.rc)}


# PCI device id -> product, only for ids a real capture ties to a name (nvidia-smi and sysfs of the
# same machine): h100-vm-2026-11-22 (0x2330), h200-vm-2026-11-26 (0x2335, nvidia-smi "NVIDIA H200").
GPU_MODELS = {"0x2330": "NVIDIA H100 80GB HBM3", "0x2335": "NVIDIA H200",
              "0x2e12": "NVIDIA GB10"}  # lspci -nn "GB20B [GB10] [10de:2e12]" (capture gb10-dgx-spark)
NVSMI_QUERY = ["nvidia-smi", "--query-gpu=index,name,pci.bus_id,driver_version,vbios_version", "--format=csv"]


def normalize_bdf(bus_id):
    """nvidia-smi bus id ``00000000:00:06.0`` (32-bit domain) -> sysfs ``0000:00:06.0``."""
    match = re.match(r"^([0-9A-Fa-f]+):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$", (bus_id or "").strip())
    if not match:
        return None
    return ("%04x:%s:%s.%s" % ((int(match.group(1), 16),) + match.groups()[1:])).lower()


def parse_nvsmi_query(text):
    """``nvidia-smi --query-gpu=... --format=csv`` -> {bdf: {column: value}} (header names the columns)."""
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return {}
    header = [h.strip().split(" [")[0] for h in lines[0].split(",")]
    out = {}
    for line in lines[1:]:
        row = dict(zip(header, [v.strip() for v in line.split(",")]))
        bdf = normalize_bdf(row.get("pci.bus_id"))
        if bdf:
            out[bdf] = row
    return out


def parse_nvsmi_c2c(text):
    """``nvidia-smi -q`` -> {bdf: True|False} from each ``GPU <bus id>`` block's ``GPU C2C Mode : Enabled|Disabled``
    (real capture h200-vm-2026-11-26: ``GPU C2C Mode : Disabled`` on a PCIe-attached H200)."""
    out = {}
    bdf = None
    for line in (text or "").splitlines():
        match = re.match(r"^GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$", line)
        if match:
            bdf = normalize_bdf(match.group(1))
            continue
        match = re.match(r"^\s+GPU C2C Mode\s*:\s*(\S+)", line)
        if match and bdf:
            out[bdf] = match.group(1).lower() == "enabled"
    return out


def read_gpus(sysroot, runner=None):
    gpus = []
    for bdf in sysroot.listdir("/sys/bus/pci/devices"):
        base = "/sys/bus/pci/devices/%s" % bdf
        vendor = sysroot.read(base + "/vendor")
        if not stacks.is_gpu(vendor, sysroot.read(base + "/class")):
            continue
        gpus.append({"pci": bdf, "numa_node": _numa(sysroot, base + "/numa_node"),
                     "device_id": sysroot.read(base + "/device"), "vendor": stacks.gpu_vendor_of(vendor)})
    nvidia = any(g["vendor"] == "nvidia" for g in gpus)
    query = runner.run(NVSMI_QUERY) if runner is not None and nvidia else None
    named = parse_nvsmi_query(query.stdout) if query is not None and query.ok else {}
    full = runner.run(["nvidia-smi", "-q"]) if runner is not None and nvidia else None
    c2c = parse_nvsmi_c2c(full.stdout) if full is not None and full.ok else {}
    # index: PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID, nvidia-smi; ROCm enumerates by bus too)
    for index, gpu in enumerate(sorted(gpus, key=lambda g: g["pci"].lower())):
        gpu["index"] = index
        gpu["c2c"] = c2c.get(gpu["pci"].lower())
        row = named.get(gpu["pci"].lower())
        if row:
            gpu.update(name=row.get("name"), name_source="nvidia-smi", vbios=row.get("vbios_version"))
        else:
            model = GPU_MODELS.get(gpu["device_id"])
            gpu.update(name=model, name_source="pci id" if model else None, vbios=None)
    return sorted(gpus, key=lambda g: g["index"])


# NCCL's own test for GPUDirect RDMA through peer memory (NVIDIA/nccl src/transport/net_ib/gdr.cc,
# ibGdrSupportInitOnce; net_ib.cc before 2.23): any one of these files exists (access(F_OK)). A loaded module
# without one of them is not enough, and NCCL asks for nothing else (docs/host-rdma.md).
NCCL_PEERMEM_PROBES = ("/sys/kernel/mm/memory_peers/nv_mem/version", "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
                       "/sys/module/nvidia_peermem/version")
# dma-buf: NCCL decides at init (gdr.cc ibDmaBufSupportInitOnce: a test ibv_reg_dmabuf_mr with fd -1 must fail
# with EBADF, not EOPNOTSUPP/EPROTONOSUPPORT; init.cc dmaBufSupported: CUDA >= 11.7 and
# CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED). Files can only show the prerequisites, so that is what the facts say.
DMABUF_PREREQUISITES_MET = "prerequisites met"
DMABUF_PREREQUISITES_MISSING = "prerequisites missing"
# rdma-core v34 added ibv_reg_dmabuf_mr (user-space side of dma-buf import). The library file name
# carries the rdma-core release: libibverbs.so.1.14.50.0 = rdma-core 50 (Ubuntu 24.04 `dpkg -L libibverbs1`).
RDMA_CORE_DMABUF_MIN = 34
LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")


def rdma_core_release(sysroot):
    """(release, path) of the newest libibverbs found, or (None, None)."""
    best = (None, None)
    for folder in LIB_DIRS:
        for name in sysroot.listdir(folder):
            match = re.match(r"^libibverbs\.so\.1\.\d+\.(\d+)(?:\.\d+)*$", name)
            if match and (best[0] is None or int(match.group(1)) > best[0]):
                best = (int(match.group(1)), "%s/%s" % (folder, name))
    return best


def nvidia_driver(sysroot):
    """(major, the whole version, open_kernel_module) from /proc/driver/nvidia/version, or (None, None, False).
    The version is kept whole (``580.159.04`` in the real captures h200-vm-2026-11-26*: ``NVRM version: NVIDIA UNIX
    Open Kernel Module for x86_64  580.159.04  Release Build``), as nvidia-smi's driver_version prints it."""
    text = sysroot.read("/proc/driver/nvidia/version") or ""
    match = re.search(r"Kernel Module(?: for \S+)?\s+(\d+)((?:\.\d+)+)", text)
    if not match:
        return None, None, False
    return int(match.group(1)), match.group(1) + match.group(2), "Open Kernel Module" in text


def peermem_path(sysroot, state, probes=NCCL_PEERMEM_PROBES, name="NCCL"):
    """(ok, the probe file NCCL would find or None, reasons) of GPUDirect RDMA through peer memory, by NCCL's rule:
    any one of ``probes`` exists (the host's NCCL version's set, stacks.NCCL_RULES; the newest by default)."""
    for rel in probes:
        if sysroot.exists(rel):
            return True, rel, []
    if state == "missing":
        return False, None, ["nvidia_peermem not loaded"]
    return False, None, ["nvidia_peermem %s, but none of the files %s probes exists (%s): it would not use it"
                         % (state, name, ", ".join(probes))]


def dmabuf_path(sysroot, kernel, modules, rule=None, name="NCCL"):
    """(ok, detail, reasons) of NCCL's dma-buf path: an NCCL that tries it (2.13.4 on, stacks.NCCL_RULES), open kernel
    module >= R515, kernel >= 5.12, rdma-core >= 34, ib_uverbs present."""
    major, _driver, open_module = nvidia_driver(sysroot)
    reasons = []
    if rule is not None and not rule["dmabuf"]:
        reasons.append("%s has no dma-buf path (NCCL_DMABUF_ENABLE arrived in NCCL 2.13.4; %s)" % (name, rule["source"]))
    if major is None:
        reasons.append("NVIDIA driver not loaded (/proc/driver/nvidia/version missing)")
    else:
        if not open_module:
            reasons.append("dma-buf needs the NVIDIA open kernel modules")
        if major < DMABUF_MIN_DRIVER:
            reasons.append("dma-buf needs driver >= %d (have %d)" % (DMABUF_MIN_DRIVER, major))
    common, detail = _common_dmabuf_reasons(sysroot, kernel, modules)
    reasons += common
    return not reasons, detail, reasons


def kallsyms_has(sysroot, symbol):
    """True when /proc/kallsyms lists ``symbol`` as a text symbol (``t`` or ``T``), RCCL's test for a kernel with
    the peer-memory API (ROCm/rccl net_ib.cc: strstr of "t <symbol>" / "T <symbol>")."""
    for line in (sysroot.read("/proc/kallsyms") or "").splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in ("t", "T") and parts[2] == symbol:
            return True
    return False


def nccl_conf_value(sysroot, name, path="/etc/nccl.conf"):
    """Value of ``name`` in the library's config file, which it loads into the environment at init without
    overriding it (src/misc/param.cc initEnv: NCCL /etc/nccl.conf, RCCL /etc/rccl.conf)."""
    for line in (sysroot.read(path) or "").splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key.strip() == name:
            return value.strip()
    return None


def _common_dmabuf_reasons(sysroot, kernel, modules):
    release, lib = rdma_core_release(sysroot)
    reasons = []
    if kernel is None or _version_tuple(kernel)[:2] < DMABUF_MIN_KERNEL:
        reasons.append("dma-buf needs kernel >= %d.%d (have %s)" % (DMABUF_MIN_KERNEL + (kernel,)))
    if release is None:
        reasons.append("rdma-core (libibverbs) not found in %s" % ", ".join(LIB_DIRS))
    elif release < RDMA_CORE_DMABUF_MIN:
        reasons.append("dma-buf needs rdma-core >= %d (have %d: %s)" % (RDMA_CORE_DMABUF_MIN, release, lib))
    if modules.get("ib_uverbs", "missing") == "missing":
        reasons.append("ib_uverbs (user verbs) neither loaded nor built in")
    return reasons, {"rdma_core": release, "libibverbs": lib}


def amd_peer_path(sysroot):
    """(ok, what RCCL would find, reasons) by RCCL's rule: an amdkfd memory_peers file (ROCm/rccl net_ib.cc
    ncclIbGdrSupport), or - RCCL from ROCm/rocm-systems#9540 on - any client registered under
    /sys/kernel/mm/memory_peers. The older fallback, ``ib_register_peer_memory_client`` in /proc/kallsyms (skipped on
    Hyper-V), is not counted: ib_uverbs exports that symbol with no client loaded, and RCCL then registers memory
    that fails (``ibv_reg_mr_iova2: Bad address``), which is why #9540 removed it."""
    entry = stacks.GPU_VENDORS["amd"]
    for rel in entry["peermem_probes"]:
        if sysroot.exists(rel):
            return True, rel, []
    clients = [name for name in sysroot.listdir("/sys/kernel/mm/memory_peers")
               if sysroot.exists("/sys/kernel/mm/memory_peers/%s/version" % name)]
    if clients:
        rel = "/sys/kernel/mm/memory_peers/%s/version" % sorted(clients)[0]
        return True, rel, []
    why = "no peer-memory client under /sys/kernel/mm/memory_peers (RCCL probes %s)" % ", ".join(entry["peermem_probes"])
    hyperv = (sysroot.read("/sys/devices/virtual/dmi/id/bios_version") or "").startswith("Hyper-V UEFI Release")
    if not hyperv and kallsyms_has(sysroot, entry["peermem_symbol"]):
        why += ("; /proc/kallsyms has %s, which ib_uverbs exports without any client: RCCL before "
                "ROCm/rocm-systems#9540 takes it for peer memory and its registrations fail, so it is not counted"
                % entry["peermem_symbol"])
    return False, None, [why]


def _kernel_config(sysroot, path):
    """Text of one kernel-config file (``/proc/config.gz`` unzipped, as RCCL reads it through zcat), or None."""
    if path.endswith(".gz"):
        data = sysroot.read_bytes(path)
        if data is None:
            return None
        try:
            return gzip.decompress(data).decode("utf-8", "replace")
        except (IOError, OSError, EOFError):
            return None
    return sysroot.read(path)


def amd_dmabuf_path(sysroot, kernel, modules, rule=None):
    """(ok, detail, reasons) of RCCL's dma-buf path by the host's RCCL rule set (stacks.RCCL_RULES, the newest by
    default; rocmwrap.cc initOnceFunc): NCCL_DMABUF_ENABLE (default 0 before ROCm 7.12, 1 from it; /etc/rccl.conf),
    unless the rule's force variable (RCCL_FORCE_ENABLE_DMABUF, ROCm 7.1 on) skips the kernel checks; else the first
    readable kernel-config file of the rule must hold CONFIG_DMABUF_MOVE_NOTIFY=y and CONFIG_PCI_P2PDMA=y, or - where
    the rule has it and no file is readable - /proc/kallsyms must name dma_buf_move_notify and pci_p2pdma; plus the
    verbs side (kernel >= 5.12, rdma-core >= 34, ib_uverbs). ``env_needed`` is true when only the variable is missing."""
    rule = rule or stacks.RCCL_RULES[-1]
    conf = stacks.GPU_VENDORS["amd"]["conf_file"]
    reasons, detail = _common_dmabuf_reasons(sysroot, kernel, modules)
    env = nccl_conf_value(sysroot, "NCCL_DMABUF_ENABLE", conf)
    force = nccl_conf_value(sysroot, rule["force"], conf) if rule["force"] else None
    detail.update(dmabuf_env=env, env_needed=False, kernel_config=None, forced=False)
    if force not in (None, "", "0"):
        detail["forced"] = True
        return not reasons, detail, reasons
    paths = [path.format(r=kernel) for path in rule["kernel_config"]] if kernel else []
    found = next(((path, text) for path, text in ((p, _kernel_config(sysroot, p)) for p in paths) if text is not None), None)
    if found is not None:
        detail["kernel_config"] = found[0]
        lines = set(line.strip() for line in found[1].splitlines())
        missing = [opt for opt in stacks.GPU_VENDORS["amd"]["dmabuf_kernel_config"] if opt not in lines]
        if missing:
            reasons.append("kernel config %s lacks %s (RCCL needs both for dma-buf)" % (found[0], ", ".join(missing)))
    elif rule["kallsyms"]:
        names = set(line.split()[2] for line in (sysroot.read("/proc/kallsyms") or "").splitlines() if len(line.split()) >= 3)
        detail["kernel_config"] = "/proc/kallsyms"
        have = dict((sym, any(sym in n for n in names)) for sym in ("dma_buf_move_notify", "pci_p2pdma"))
        if not all(have.values()):
            reasons.append("no kernel config readable (%s) and /proc/kallsyms lacks %s (RCCL's fallback)"
                           % (", ".join(paths), ", ".join(k for k, v in sorted(have.items()) if not v)))
    else:
        reasons.append("kernel config not readable (%s; RCCL reads CONFIG_DMABUF_MOVE_NOTIFY and CONFIG_PCI_P2PDMA there)"
                       % ", ".join(paths or ["/boot/config-<release>"]))
    if (env if env is not None else rule["env_default"]) != "1":
        if not reasons:
            detail["env_needed"] = True
        reasons.append("RCCL uses dma-buf only with NCCL_DMABUF_ENABLE=1 (default %s for %s; %s has %s)"
                       % (rule["env_default"], rule["name"], conf,
                          "no NCCL_DMABUF_ENABLE" if env is None else "NCCL_DMABUF_ENABLE=%s" % env))
    return not reasons, detail, reasons


# Where the host shows its collective library's version. NCCL: the library file is libnccl.so.<major>.<minor>.<patch>
# (NVIDIA/nccl src/Makefile:83 at 5067397c2676, LIBTARGET) and nccl.h defines NCCL_VERSION_CODE (src/nccl.h.in:25;
# Makefile:131-132 "%d%02d%02d"). RCCL: rccl.h defines the same NCCL_VERSION_CODE (ROCm/rccl src/nccl.h.in:20-21,
# X*10000+Y*100+Z from 2.9 on), and the ROCm release is ${ROCM_PATH}/.info/version (ROCm/rccl CMakeLists.txt:171
# reads it to learn the ROCm it builds for; RCCL's own banner prints it: "ROCm version : 6.3.0.0-39-ce2be3b" in the real
# log azure-mi300x-rccl-log).
NCCL_HEADERS = ("/usr/include/nccl.h", "/usr/local/include/nccl.h", "/usr/local/cuda/include/nccl.h")
ROCM_ROOT = "/opt/rocm"


def decode_version_code(code):
    """NCCL_VERSION_CODE -> (x, y, z): X*10000+Y*100+Z from 2.9, X*1000+Y*100+Z before (nccl.h.in NCCL_VERSION)."""
    code = int(code)
    return (code // 10000, code % 10000 // 100, code % 100) if code >= 10000 else (code // 1000, code % 1000 // 100, code % 100)


def _header_version(sysroot, path):
    match = re.search(r"^#define\s+NCCL_VERSION_CODE\s+(\d+)\s*$", sysroot.read(path) or "", re.M)
    return decode_version_code(match.group(1)) if match else None


def parse_library_banner(text):
    """Versions from a collective library's own start banner (NCCL_DEBUG=VERSION or INFO): ``RCCL version : 2.21.5-HEAD:...``,
    ``ROCm version : 6.3.0.0-39-...`` (real capture azure-mi300x-rccl-log), ``NCCL version 2.21.5+cuda12.4``.
    Returns {library, version, rocm} (tuples or None)."""
    out = {"library": None, "version": None, "rocm": None}
    match = re.search(r"\b(RCCL|NCCL) version\s*:?\s*(\d+)\.(\d+)\.(\d+)", text or "")
    if match:
        out["library"], out["version"] = match.group(1), tuple(int(x) for x in match.groups()[1:])
    match = re.search(r"\bROCm version\s*:\s*(\d+)\.(\d+)\.(\d+)", text or "")
    if match:
        out["rocm"] = tuple(int(x) for x in match.groups())
    return out


def read_library_version(sysroot, gpu_vendor="nvidia"):
    """{library, version, rocm, source}: the collective library's version as installed files show it (NCCL: the newest
    libnccl.so.X.Y.Z in LIB_DIRS, else nccl.h; RCCL: rccl.h under /opt/rocm and /opt/rocm/.info/version), versions as
    lists, None when no file shows it."""
    if gpu_vendor == "amd":
        out = {"library": "RCCL", "version": None, "rocm": None, "source": []}
        header = ROCM_ROOT + "/include/rccl/rccl.h"
        version = _header_version(sysroot, header)
        if version:
            out["version"] = list(version)
            out["source"].append(header)
        match = re.match(r"^(\d+)\.(\d+)\.(\d+)", sysroot.read(ROCM_ROOT + "/.info/version") or "")
        if match:
            out["rocm"] = [int(x) for x in match.groups()]
            out["source"].append(ROCM_ROOT + "/.info/version")
        return out
    out = {"library": "NCCL", "version": None, "rocm": None, "source": []}
    best = None
    for folder in LIB_DIRS:
        for name in sysroot.listdir(folder):
            match = re.match(r"^libnccl\.so\.(\d+)\.(\d+)\.(\d+)$", name)
            if match and (best is None or tuple(int(x) for x in match.groups()) > best[0]):
                best = (tuple(int(x) for x in match.groups()), "%s/%s" % (folder, name))
    if best is None:
        for header in NCCL_HEADERS:
            version = _header_version(sysroot, header)
            if version:
                best = (version, header)
                break
    if best:
        out["version"], out["source"] = list(best[0]), [best[1]]
    return out


def library_rules(version_facts):
    """(rule set, facts to report) for read_library_version's answer (stacks.library_rules)."""
    version_facts = version_facts or {}
    library = version_facts.get("library") or "NCCL"
    rule, why = stacks.library_rules(library, version_facts.get("version"), version_facts.get("rocm"))
    return rule, {"library": library, "version": ".".join(str(x) for x in version_facts.get("version") or []) or None,
                  "rocm": ".".join(str(x) for x in version_facts.get("rocm") or []) or None,
                  "version_source": version_facts.get("source") or [], "rule_set": rule["name"], "chosen_by": why,
                  "source": rule["source"]}


def read_gdr(sysroot, loaded, rdma_devices=None, modules=None, gpu_vendor="nvidia", gpus=None, library_version=None):
    """GPUDirect RDMA readiness as the stack's collective library decides it (NCCL for NVIDIA, RCCL for AMD):
    ``ready`` is true when an RDMA device exists and one of the files the library probes for peer memory exists
    (``peer_registration`` names it). The dma-buf path cannot be proven from files (the library tests a
    registration at init): ``dmabuf`` reads ``prerequisites met`` (then ``ready`` is None, unknown, and ``mode``
    ``dmabuf``) or ``prerequisites missing``; ``reasons`` says what each path lacks. An NVIDIA GPU without
    GPUDirect RDMA at all (stacks.NVIDIA_NO_GDR: DGX Spark's GB10) makes ``ready`` False and ``unsupported``
    names it: NCCL disables GDR there whatever the files say."""
    modules = modules or {}
    kernel = sysroot.read("/proc/sys/kernel/osrelease")
    _major, driver, open_module = nvidia_driver(sysroot)
    has_rdma = bool(rdma_devices)
    if library_version is None:
        library_version = read_library_version(sysroot, gpu_vendor)
    rule, rules = library_rules(library_version)
    name = " ".join(x for x in (rules["library"], rules["version"]) if x)
    extra = {"rules": rules}
    if gpu_vendor == "amd":
        peermem = None
        peer_ok, registration, peer_why = amd_peer_path(sysroot)
        dmabuf_ok, dmabuf_detail, dmabuf_why = amd_dmabuf_path(sysroot, kernel, modules, rule)
        driver = sysroot.read("/sys/module/amdgpu/version")
        extra.update(dmabuf_env=dmabuf_detail["dmabuf_env"], dmabuf_env_needed=dmabuf_detail["env_needed"],
                     peermem_probes=list(stacks.GPU_VENDORS["amd"]["peermem_probes"]),
                     dmabuf_env_default=rule["env_default"], dmabuf_forced=dmabuf_detail["forced"],
                     kernel_config=dmabuf_detail["kernel_config"])
    else:
        peermem = modules.get("nvidia_peermem") or module_state(sysroot, "nvidia_peermem", loaded)
        peer_ok, registration, peer_why = peermem_path(sysroot, peermem, rule["peermem_probes"], name)
        dmabuf_ok, dmabuf_detail, dmabuf_why = dmabuf_path(sysroot, kernel, modules, rule, name)
        extra.update(dmabuf_env=None, dmabuf_env_needed=False, peermem_probes=list(rule["peermem_probes"]))
    unsupported = []
    if gpu_vendor != "amd":
        nvidia_gpus = [g for g in gpus or [] if g.get("vendor") == "nvidia"]
        unsupported = [g for g in nvidia_gpus if stacks.nvidia_gdr_unsupported(g)]
        if nvidia_gpus and len(unsupported) < len(nvidia_gpus):
            unsupported = []  # a mixed host: judged per GPU by the library, not here
    if unsupported:
        entry = stacks.nvidia_gdr_unsupported(unsupported[0])
        peer_ok = dmabuf_ok = False
        peer_why = dmabuf_why = []
        extra["unsupported"] = {"gpus": ["%s %s" % (g.get("pci"), g.get("name") or g.get("device_id")) for g in unsupported],
                                "platform": entry["name"], "source": entry["source"]}
    mode = "peermem" if peer_ok else ("dmabuf" if dmabuf_ok else None)
    reasons = []
    if not has_rdma:
        reasons.append("no RDMA device (/sys/class/infiniband is empty)")
    if unsupported:
        reasons.append("%s does not support GPUDirect RDMA: %s" % (extra["unsupported"]["platform"], extra["unsupported"]["source"]))
    elif not peer_ok and not dmabuf_ok:
        reasons += ["peermem path: %s" % w for w in peer_why] + ["dma-buf path: %s" % w for w in dmabuf_why]
    # dma-buf prerequisites met: the library falls back to dma-buf when it finds no peer memory (NCCL gdr.cc, RCCL from
    # ROCm 7.12), so the missing peer-memory module is not a reason to act on (nothing to load)
    if not has_rdma or mode is None:
        ready = False
    else:
        ready = True if peer_ok else None    # dma-buf: prerequisites met, registration not tested
    out = {"ready": ready, "mode": mode if has_rdma else None, "gpu_vendor": gpu_vendor,
           "library": stacks.GPU_VENDORS.get(gpu_vendor, stacks.GPU_VENDORS["nvidia"])["library"],
           "nvidia_peermem": peermem, "peer_registration": registration,
           "dmabuf": DMABUF_PREREQUISITES_MET if dmabuf_ok else DMABUF_PREREQUISITES_MISSING, "dmabuf_tested": False,
           "dmabuf_capable": dmabuf_ok, "rdma_core": dmabuf_detail["rdma_core"], "libibverbs": dmabuf_detail["libibverbs"],
           "driver_version": driver, "open_kernel_module": open_module, "kernel": kernel,
           "rdma_devices": len(rdma_devices or {}), "reasons": reasons}
    out.setdefault("unsupported", None)
    out.update(extra)
    return out


def read_iommu(sysroot, pci_devices):
    units = sysroot.listdir("/sys/class/iommu")
    cmdline = sysroot.read("/proc/cmdline") or ""
    groups = {}
    for bdf in pci_devices:
        group = sysroot.link_name("/sys/bus/pci/devices/%s/iommu_group" % bdf)
        if group is not None:
            groups[bdf] = sysroot.read("/sys/kernel/iommu_groups/%s/type" % group)
    types = sorted(set(t for t in groups.values() if t))
    if not units and not groups:
        mode = "off"
    elif types and all(t == "identity" for t in types):
        mode = "passthrough"
    elif types:
        mode = "translated"
    else:
        mode = "unknown"
    return {"mode": mode, "units": units, "domain_types": groups,
            "cmdline": [arg for arg in cmdline.split() if "iommu" in arg]}


def read_irqbalance(sysroot):
    running = False
    for pid in sysroot.listdir("/proc"):
        if pid.isdigit() and sysroot.read("/proc/%s/comm" % pid) == "irqbalance":
            running = True
            break
    config = {}
    for rel in ("/etc/default/irqbalance", "/etc/sysconfig/irqbalance"):
        text = sysroot.read(rel)
        if text is None:
            continue
        for line in text.splitlines():
            match = re.match(r'^\s*([A-Z_]+)\s*=\s*"?([^"]*)"?\s*$', line)
            if match:
                config[match.group(1)] = match.group(2)
    enabled = any(sysroot.exists("/etc/systemd/system/%s/irqbalance.service" % wants)
                  for wants in ("multi-user.target.wants", "default.target.wants"))
    return {"running": running, "enabled": enabled,
            "installed": sysroot.exists("/usr/sbin/irqbalance") or sysroot.exists("/lib/systemd/system/irqbalance.service"),
            "args": config.get("IRQBALANCE_ARGS", ""), "banned_cpulist": config.get("IRQBALANCE_BANNED_CPULIST", "")}


def detect_stack(sysroot, gpus, rdma, netdevs):
    """The host's stack as its devices show it: GPU vendor (NVIDIA or AMD; the first found when both), the NIC
    drivers of its RDMA devices (netdev driver, else RDMA name prefix, else PCI vendor), and whether an NVIDIA GPU
    reaches its CPU over C2C (nvidia-smi -q ``GPU C2C Mode: Enabled``, real capture h200-vm-2026-11-26 prints
    ``Disabled``) when that output was read."""
    vendors = [g["vendor"] for g in gpus]
    gpu_vendor = "nvidia" if "nvidia" in vendors else ("amd" if "amd" in vendors else None)
    drivers = []
    for name, dev in sorted(rdma.items()):
        nd_driver = None
        for nd in dev["netdevs"]:
            nd_driver = (netdevs.get(nd) or {}).get("driver") or nd_driver
        pci_vendor = sysroot.read("/sys/bus/pci/devices/%s/vendor" % dev["pci"]) if dev.get("pci") else None
        found = stacks.nic_driver_of(name, nd_driver, pci_vendor)
        dev["nic_driver"] = found
        if found and found not in drivers:
            drivers.append(found)
    return {"gpu_vendor": gpu_vendor, "gpu_vendors": sorted(set(vendors)), "nic_drivers": drivers}


def _run_topology(runner, argv, parse):
    """(parsed or None, status): ok, refused: <line and why>, tool missing, or unparsable or rc=N."""
    run = runner.run(argv)
    try:
        parsed = parse(run.stdout) if run.ok else None
    except pcitopo.TopoError as err:
        return None, "refused: %s" % err
    if parsed:
        return parsed, "ok"
    return None, "tool missing" if run.missing else "unparsable or rc=%s" % run.rc


def read_nvidia_topology(runner):
    """Topology facts from ``nvidia-smi topo -m`` (GPU-NIC relations, CPU/NUMA affinity); a refused or absent matrix
    leaves the relations to sysfs (gather)."""
    parsed, status = _run_topology(runner, ["nvidia-smi", "topo", "-m"], pcitopo.parse_topo_matrix)
    return {"source": "nvidia-smi" if parsed else "sysfs", "nvidia_smi": status,
            "gpu_nic": {}, "gpu_nic_sysfs": {}, "acs_path": {},
            "gpu_affinity": parsed["gpu_affinity"] if parsed else {},
            "gpu_numa_id": parsed["gpu_numa_id"] if parsed else {}, "_nvidia": parsed}


def read_amd_topology(runner):
    """Topology facts of an AMD host from ``rocm-smi --showtopo`` (pcitopo.parse_rocm_smi_topo): each GPU's NUMA node
    (Numa Affinity, else Numa Node), the link type, weight and hops between GPUs; GPU-NIC relations stay sysfs's
    (rocm-smi prints none). Its GPU numbers are taken as the readers' PCI-bus order (the 8-GPU capture's node lists
    GPUs 0-7 at ascending PCI addresses); ``numa_mismatch`` names any GPU whose rocm-smi NUMA differs from sysfs."""
    parsed, status = _run_topology(runner, ["rocm-smi", "--showtopo"], pcitopo.parse_rocm_smi_topo)
    affinity = {}
    for gpu, numa in sorted(((parsed or {}).get("numa") or {}).items()):
        node = numa.get("affinity", numa.get("node"))
        affinity[gpu] = {"cpus": None, "numa": str(node) if node is not None and node >= 0 else None}
    return {"source": "rocm-smi" if parsed else "sysfs", "rocm_smi": status, "nvidia_smi": "not run (AMD GPUs)",
            "gpu_nic": {}, "gpu_nic_sysfs": {}, "acs_path": {}, "gpu_affinity": affinity, "gpu_numa_id": {},
            "gpu_gpu": dict((kind, parsed[kind]) for kind in ("link_type", "weight", "hops")) if parsed else {}}


# module rdma_facts's arguments (also module host_state's option rdma_facts)
ARGUMENT_SPEC = dict(root=dict(type="path", default="/"), tool_output_dir=dict(type="path"),
                     netdevs=dict(type="list", elements="str", default=[]))


def gather(root="/", capture_dir=None, netdevs=()):
    """All RDMA readiness facts of the host under ``root``; ``netdevs`` (the planned rail NICs) are
    read even when no RDMA device claims them, so a NIC without RDMA is told apart from a missing one."""
    sysroot = SysRoot(root)
    runner = ToolRunner(capture_dir=capture_dir, live=sysroot.live)
    loaded = loaded_modules(sysroot)
    rdma = read_rdma_devices(sysroot, runner)
    netdev_facts = {}
    for name in sorted(set(n for dev in rdma.values() for n in dev["netdevs"]) | set(netdevs)):
        found = read_netdev(sysroot, runner, name)
        if found is not None:
            netdev_facts[name] = found
    gpus = read_gpus(sysroot, runner)
    amd_only = bool(gpus) and all(g["vendor"] == "amd" for g in gpus)
    topology = read_amd_topology(runner) if amd_only else read_nvidia_topology(runner)
    bridges = {}
    for gpu in gpus:
        key = str(gpu["index"])
        for name, dev in sorted(rdma.items()):
            if dev["pci"] is None:
                continue
            rel = pcitopo.relationship(sysroot, gpu["pci"], dev["pci"], gpu["numa_node"], dev["numa_node"])
            topology["gpu_nic_sysfs"].setdefault(key, {})[name] = rel
            path = pcitopo.bridges_between(sysroot, gpu["pci"], dev["pci"])
            topology["acs_path"].setdefault(key, {})[name] = path
            for bdf in path:
                if bdf not in bridges:
                    bridges[bdf] = pcitopo.read_acs_ats(sysroot, bdf)
    if topology.get("rocm_smi") == "ok":
        topology["numa_mismatch"] = sorted(
            str(g["index"]) for g in gpus if g["numa_node"] is not None
            and (topology["gpu_affinity"].get(str(g["index"])) or {}).get("numa") not in (None, str(g["numa_node"])))
    nvidia = topology.pop("_nvidia", None)
    topology["gpu_nic"] = nvidia["gpu_nic"] if nvidia else topology["gpu_nic_sysfs"]
    ats = {}
    links = {}
    for item in [g["pci"] for g in gpus] + [d["pci"] for d in rdma.values() if d["pci"]]:
        ats[item] = pcitopo.read_acs_ats(sysroot, item)["ats_enabled"]
        links[item] = pcitopo.read_link(sysroot, item, runner)
    kernel = sysroot.read("/proc/sys/kernel/osrelease")
    builtin, builtin_source = builtin_modules(sysroot, kernel)
    modules, inferred = infer_modules(dict((name, module_state(sysroot, name, loaded, builtin, builtin_source is not None))
                                           for name in stacks.all_modules() + ("nvidia", "nvidia_peermem", "amdgpu")))
    stack = detect_stack(sysroot, gpus, rdma, netdev_facts)
    return {"root": sysroot.root, "live": sysroot.live, "tool_output_dir": capture_dir or None, "kernel": kernel, "modules_builtin": builtin_source,
            "rdma_devices": rdma, "netdevs": netdev_facts, "gpus": gpus, "topology": topology, "stack": stack,
            "pci_bridges": bridges, "ats": ats, "pcie_links": links, "modules": modules, "modules_inferred": inferred,
            "gdr": read_gdr(sysroot, loaded, rdma, modules, stack["gpu_vendor"] or "nvidia", gpus,
                            read_library_version(sysroot, stack["gpu_vendor"] or "nvidia")),
            "iommu": read_iommu(sysroot, [d["pci"] for d in rdma.values() if d["pci"]] + [g["pci"] for g in gpus]),
            "irqbalance": read_irqbalance(sysroot)}
