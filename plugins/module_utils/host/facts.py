# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only RDMA readiness facts of one GPU host (sysfs/procfs/tool output).

Sources (documented kernel ABI): Documentation/ABI/stable/sysfs-class-infiniband (fw_ver,
board_id, hca_type, ports/<n>/{state,rate,link_layer,gids,gid_attrs}), sysfs-class-net
(operstate, speed, mtu), sysfs-bus-pci (numa_node, class, vendor, config, iommu_group),
sysfs-kernel-iommu_groups (type), /proc/modules, /proc/interrupts; tools: ``ethtool -i``,
``nvidia-smi topo -m``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot, ToolRunner
from ansible_collections.aifabric.roce.plugins.module_utils.host import pcitopo

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
    """Names of loaded kernel modules (/proc/modules) plus built-ins (/sys/module/<name> only)."""
    text = sysroot.read("/proc/modules")
    names = set()
    if text:
        names.update(line.split()[0] for line in text.splitlines() if line.strip())
    return names


def module_state(sysroot, name, loaded):
    if name in loaded:
        return "loaded"
    if sysroot.isdir("/sys/module/%s" % name):
        return "builtin"
    return "missing"


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
        bdf = sysroot.link_name(base + "/device")
        hca_type = sysroot.read(base + "/hca_type")
        dev = {"name": name, "pci": bdf, "hca_type": hca_type, "model": HCA_MODELS.get(hca_type, hca_type),
               "fw_ver": sysroot.read(base + "/fw_ver"), "board_id": sysroot.read(base + "/board_id"),
               "numa_node": sysroot.read_int(base + "/device/numa_node"),
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
        devices[name] = dev
    return devices


def read_netdev(sysroot, runner, name):
    base = "/sys/class/net/%s" % name
    if not sysroot.exists(base):
        return None
    speed = sysroot.read_int(base + "/speed")
    ethtool = runner.run(["ethtool", "-i", name])
    return {"name": name, "operstate": sysroot.read(base + "/operstate"),
            "speed_mbps": speed if speed is not None and speed > 0 else None,
            "mtu": sysroot.read_int(base + "/mtu"), "address": sysroot.read(base + "/address"),
            "pci": sysroot.link_name(base + "/device"),
            "driver": sysroot.link_name(base + "/device/driver"),
            "ethtool": parse_ethtool_i(ethtool.stdout) if ethtool.ok else None,
            "ethtool_status": "ok" if ethtool.ok else ("tool missing" if ethtool.missing else "rc=%s" % ethtool.rc)}


def read_gpus(sysroot):
    gpus = []
    for bdf in sysroot.listdir("/sys/bus/pci/devices"):
        base = "/sys/bus/pci/devices/%s" % bdf
        if sysroot.read(base + "/vendor") != NVIDIA_VENDOR:
            continue
        klass = sysroot.read(base + "/class") or ""
        if not (klass.startswith("0x0302") or klass.startswith("0x0300")):
            continue
        gpus.append({"pci": bdf, "numa_node": sysroot.read_int(base + "/numa_node"),
                     "device_id": sysroot.read(base + "/device")})
    for index, gpu in enumerate(sorted(gpus, key=lambda g: g["pci"].lower())):
        gpu["index"] = index
    return sorted(gpus, key=lambda g: g["index"])


def read_gdr(sysroot, loaded):
    version_text = sysroot.read("/proc/driver/nvidia/version") or ""
    match = re.search(r"Kernel Module(?: for \S+)?\s+(\d+)\.(\d+)", version_text)
    driver = "%s.%s" % match.groups() if match else None
    open_module = "Open Kernel Module" in version_text
    kernel = sysroot.read("/proc/sys/kernel/osrelease")
    peermem = module_state(sysroot, "nvidia_peermem", loaded)
    kernel_ok = kernel is not None and _version_tuple(kernel)[:2] >= DMABUF_MIN_KERNEL
    driver_ok = match is not None and int(match.group(1)) >= DMABUF_MIN_DRIVER
    dmabuf = bool(kernel_ok and driver_ok and open_module)
    if peermem != "missing":
        mode = "peermem"
    elif dmabuf:
        mode = "dmabuf"
    else:
        mode = None
    reasons = []
    if mode is None:
        reasons.append("nvidia_peermem not loaded")
        if not match:
            reasons.append("NVIDIA driver not loaded (/proc/driver/nvidia/version missing)")
        else:
            if not open_module:
                reasons.append("dma-buf needs the NVIDIA open kernel modules")
            if not driver_ok:
                reasons.append("dma-buf needs driver >= %d (have %s)" % (DMABUF_MIN_DRIVER, driver))
        if not kernel_ok:
            reasons.append("dma-buf needs kernel >= %d.%d (have %s)" % (DMABUF_MIN_KERNEL + (kernel,)))
    return {"ready": mode is not None, "mode": mode, "nvidia_peermem": peermem, "dmabuf_capable": dmabuf,
            "driver_version": driver, "open_kernel_module": open_module, "kernel": kernel, "reasons": reasons}


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
    gpus = read_gpus(sysroot)
    topo_run = runner.run(["nvidia-smi", "topo", "-m"])
    parsed = pcitopo.parse_topo_matrix(topo_run.stdout) if topo_run.ok else None
    topology = {"source": "nvidia-smi" if parsed else "sysfs",
                "nvidia_smi": "ok" if parsed else ("tool missing" if topo_run.missing else "unparsable or rc=%s" % topo_run.rc),
                "gpu_nic": {}, "gpu_nic_sysfs": {}, "acs_path": {}}
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
    topology["gpu_nic"] = parsed["gpu_nic"] if parsed else topology["gpu_nic_sysfs"]
    ats = {}
    for item in [g["pci"] for g in gpus] + [d["pci"] for d in rdma.values() if d["pci"]]:
        ats[item] = pcitopo.read_acs_ats(sysroot, item)["ats_enabled"]
    modules = dict((name, module_state(sysroot, name, loaded)) for name in RDMA_MODULES + ("nvidia", "nvidia_peermem"))
    return {"root": sysroot.root, "kernel": sysroot.read("/proc/sys/kernel/osrelease"),
            "rdma_devices": rdma, "netdevs": netdev_facts, "gpus": gpus, "topology": topology,
            "pci_bridges": bridges, "ats": ats, "modules": modules, "gdr": read_gdr(sysroot, loaded),
            "iommu": read_iommu(sysroot, [d["pci"] for d in rdma.values() if d["pci"]] + [g["pci"] for g in gpus]),
            "irqbalance": read_irqbalance(sysroot)}
