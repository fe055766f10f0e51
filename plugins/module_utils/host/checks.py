# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight checks: facts + expectations -> findings. Pure functions, no I/O.

A finding is {id, severity, host, subject, expected, actual, message}; severity is ``error`` or
``warning``. Check ids (and default severities) are listed in CHECKS.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.aifabric.roce.plugins.module_utils.host.pcitopo import RANK, acs_redirects
from ansible_collections.aifabric.roce.plugins.module_utils.host import stacks

CHECKS = {
    "rdma_module": "error",       # an RDMA kernel module is not loaded
    "rdma_module_unknown": "warning",  # a module's state cannot be told (no modules.builtin, no other trace)
    "stack": "error",             # the host's GPU vendor or NIC driver is not the one the plan declares
    "nic_present": "error",       # planned netdev / RDMA device missing or not bound together
    "link_up": "error",           # netdev not up or RDMA port not ACTIVE
    "link_speed": "error",        # negotiated speed differs from the plan
    "mtu": "error",               # netdev MTU differs from the plan
    "roce_gid": "error",          # no RoCEv2 GID for the rail IP, or at another index than NCCL_IB_GID_INDEX
    "fw_host_mixed": "error",     # NICs of one model run different firmware on one host
    "fw_baseline": "error",       # firmware older than the per-model baseline
    "fw_fleet_mixed": "warning",  # the host's firmware differs from the fleet's most common version
    "gdr_ready": "error",         # no file NCCL probes for peer memory, and the dma-buf prerequisites are missing
    "gdr_dmabuf_untested": "warning",  # GPUDirect RDMA only through dma-buf: prerequisites met, registration untested
    "gdr_dmabuf_env": "error",    # RCCL: dma-buf is the only path, NCCL_DMABUF_ENABLE=1 not set, the host's RCCL defaults it to 0
    "gdr_unsupported": "error",   # the GPU has no GPUDirect RDMA at all (GB10): NCCL disables it, nothing on the host helps
    "gpu_present": "error",       # planned GPU index not found
    "gpu_nic_affinity": "error",  # rail NIC not close to its GPU (relationship worse than allowed)
    "acs_p2p": "error",           # ACS redirect enabled on a bridge between a GPU and its rail NIC
    "iommu_mode": "warning",      # IOMMU translates DMA (GDR wants off or passthrough)
    "pcie_link": "error",         # rail NIC or its GPU negotiated a narrower/slower PCIe link than it can run
    "pcie_gpu_speed": "warning",  # GPU link speed (only) below capability: GPUs lower it when idle
    "ats": "error",               # ATS off on a rail NIC where the platform needs it (require_ats)
    "synthetic_root": "warning",  # the facts come from a tree (root != /), not from the live system
}

DEFAULTS = {
    "rdma_modules": None,   # None: the modules of the host's stack (stacks.required_modules)
    "stack": {},            # declared {gpu_vendor: nvidia|amd, nic_driver: mlx5|bnxt_re|irdma|ionic}; empty: detected
    "gpu_nic_allowed": ["PIX", "PXB", "P2C"],
    "require_gdr": True,
    "require_acs_off": True,
    "iommu_allowed": ["off", "passthrough"],
    "firmware_baseline": {},
    "gid_index": None,
    "require_ats": "auto",
    "severity": {},
}
ATS_MODES = ("auto", "always", "never")


def version_key(text):
    return tuple(int(x) for x in re.findall(r"\d+", text or ""))


def fw_version(dev):
    """Firmware version as the best source read it (devlink/mlxfwmanager/flint), else sysfs fw_ver."""
    return (dev.get("firmware") or {}).get("version") or dev.get("fw_ver")


def fw_psid(dev):
    return (dev.get("firmware") or {}).get("psid") or dev.get("board_id")


def baseline_errors(baseline):
    """Shape errors of a firmware baseline: each value a version string (minimum) or {min: v} / {exact: v}."""
    errors = []
    for key, value in sorted((baseline or {}).items()):
        if isinstance(value, dict):
            if len(value) != 1 or list(value)[0] not in ("min", "exact"):
                errors.append("%s: a dict needs exactly one of min, exact (got %s)" % (key, ", ".join(sorted(value)) or "nothing"))
        elif not isinstance(value, (str, int, float)):
            errors.append("%s: a version string or {min|exact: version}" % key)
    return errors


def baseline_rule(baseline, dev):
    """(key, kind, version) of the most specific baseline entry for a device: <model>/<PSID>,
    <hca_type>/<PSID>, <PSID>, <model>, <hca_type>; (None, None, None) when none applies."""
    psid = fw_psid(dev)
    keys = ["%s/%s" % (dev.get("model"), psid), "%s/%s" % (dev.get("hca_type"), psid), psid] if psid else []
    for key in keys + [dev.get("model"), dev.get("hca_type")]:
        if key and key in (baseline or {}):
            value = baseline[key]
            if isinstance(value, dict):
                kind, version = list(value.items())[0]
                return key, kind, str(version)
            return key, "min", str(value)
    return None, None, None


def _baseline_check(dev, exp, host, out):
    key, kind, want = baseline_rule(exp["firmware_baseline"], dev)
    if key is None:
        return
    have = fw_version(dev)
    source = (dev.get("firmware") or {}).get("source") or "nothing"
    if have is None:
        bad, why = True, "firmware version unknown (no devlink/mlxfwmanager/flint answer, no sysfs fw_ver)"
    elif kind == "exact":
        bad, why = have != want, "firmware %s is not the baseline's %s" % (have, want)
    else:
        bad, why = version_key(have) < version_key(want), "firmware %s is older than the baseline %s" % (have, want)
    if bad:
        out.append(_finding(exp, "fw_baseline", host, dev["name"], "%s %s" % ("==" if kind == "exact" else ">=", want), have,
                            "%s (%s, PSID %s) %s (read with %s; baseline key %s)"
                            % (dev["name"], dev.get("model"), fw_psid(dev), why, source, key)))


def _finding(exp, check, host, subject, expected, actual, message):
    return {"id": check, "severity": exp["severity"].get(check, CHECKS[check]), "host": host,
            "subject": subject, "expected": expected, "actual": actual, "message": message}


def expectations(nics, **overrides):
    """Expectations with defaults filled in; ``nics`` is the plan's host intent ``nics`` list."""
    exp = dict(DEFAULTS)
    exp.update(dict((k, v) for k, v in overrides.items() if v is not None))
    exp["nics"] = list(nics or [])
    exp["severity"] = dict(exp.get("severity") or {})
    if exp.get("gid_index") not in (None, ""):
        exp["gid_index"] = int(exp["gid_index"])
    else:
        exp["gid_index"] = None
    return exp


def _link_text(link):
    def one(speed, width):
        return "%s GT/s x%s" % ("?" if speed is None else ("%g" % speed), "?" if width is None else width)
    return "%s (capable of %s, from %s)" % (one(link["speed_gts"], link["width"]),
                                            one(link["max_speed_gts"], link["max_width"]), link["source"])


def _pcie_checks(facts, exp, host, subject, bdf, is_gpu, out):
    """Negotiated PCIe link below capability. A GPU whose only shortfall is speed gets its own warning:
    GPUs train down to a lower rate when idle (tinygrad/open-gpu-kernel-modules#6: 2.5GT/s idle, full under load)."""
    link = (facts.get("pcie_links") or {}).get(bdf)
    if not link or not link.get("degraded"):
        return
    expected = {"speed_gts": link["max_speed_gts"], "width": link["max_width"]}
    actual = {"speed_gts": link["speed_gts"], "width": link["width"]}
    if is_gpu and link["degraded"] == ["speed"]:
        out.append(_finding(exp, "pcie_gpu_speed", host, subject, expected, actual,
                            "%s PCIe link runs at %s; GPUs lower the link speed when idle, re-check under load"
                            % (subject, _link_text(link))))
        return
    if link.get("limited_by") == "slot":
        def cap(speed, width):
            return "%s GT/s x%s" % ("?" if speed is None else "%g" % speed, "?" if width is None else width)
        where = "slot %s (port %s)" % (link["slot"], link["port"]) if link.get("slot") else "the slot at port %s" % link["port"]
        actual = dict(actual, limited_by="slot", slot=link.get("slot"), port=link["port"])
        out.append(_finding(exp, "pcie_link", host, subject, expected, actual,
                            "%s (%s) PCIe link %s: the slot is the limit - %s is capable of %s only; move the card to a slot "
                            "of its capability" % (subject, bdf, _link_text(link), where,
                                                   cap(link.get("port_max_speed_gts"), link.get("port_max_width")))))
        return
    out.append(_finding(exp, "pcie_link", host, subject, expected, actual,
                        "%s (%s) PCIe link degraded (%s): %s" % (subject, bdf, "+".join(link["degraded"]), _link_text(link))))


def _ats_needed(facts, exp):
    """ATS on the rail NICs matters where DMA is translated: with the IOMMU in DMA mode peer traffic
    is otherwise translated at the root complex (auto); always/never force it."""
    mode = exp.get("require_ats") or "auto"
    if mode == "auto":
        return facts["iommu"]["mode"] == "translated"
    return mode == "always"


def _ats_check(facts, exp, host, netdev, dev, out):
    if not _ats_needed(facts, exp):
        return
    enabled = (facts.get("ats") or {}).get(dev["pci"])
    if enabled is True:
        return
    why = ("ATS disabled in its ATS capability" if enabled is False else
           "ATS state unknown (no ATS capability or config space not readable: run as root)")
    out.append(_finding(exp, "ats", host, netdev, True, enabled,
                        "%s (%s, %s): %s; the IOMMU is %s (require_ats: %s)"
                        % (netdev, dev["name"], dev["pci"], why, facts["iommu"]["mode"], exp.get("require_ats") or "auto")))


def _synthetic_check(facts, exp, host, out):
    """Say so when the facts were read from a fixture tree: a pass there says nothing about the host."""
    root = facts.get("root", "/")
    if facts.get("live", root == "/"):
        return
    tools = facts.get("tool_output_dir")
    out.append(_finding(exp, "synthetic_root", host, "root", "/", root,
                        "checks ran against the tree %s, not the live system; tool output %s"
                        % (root, "from captured files in %s" % tools if tools else "not read (tools are not run against a tree)")))


def _numa_set(text):
    """'0,3-9,11-17' (nvidia-smi NUMA Affinity) -> {0, 3, ..., 17}; None when unreadable."""
    out = set()
    for part in (text or "").split(","):
        match = re.match(r"^(\d+)(?:-(\d+))?$", part.strip())
        if not match:
            return None
        low = int(match.group(1))
        out.update(range(low, int(match.group(2) or low) + 1))
    return out or None


def _c2c_relation(facts, gpu, gkey, dev, rel):
    """P2C where NCCL sees it: a GPU whose CPU link is C2C (Grace GH200/GB200) and a NIC on that CPU's NUMA node.
    C2C is read from nvidia-smi -q (``GPU C2C Mode: Enabled``), else inferred from topo -m's GPU NUMA ID (a number
    only where GPU memory is a NUMA node, i.e. coherent C2C). nvidia-smi topo -m prints such pairs as SYS; NCCL >= 2.27.3
    enables GPUDirect RDMA on P2C by default (NVIDIA/nccl src/graph/paths.cc NET_GDR_C2C=1, mergePathType PHB+C2C ->
    P2C; NVIDIA/nccl#1579: GDR on GH200/GB200 was off before, NCCL_NET_GDR_LEVEL=SYS enabled it)."""
    affinity = facts["topology"].get("gpu_affinity", {}).get(gkey) or {}
    c2c = gpu.get("c2c")
    if c2c is None:
        numa_id = (facts["topology"].get("gpu_numa_id") or {}).get(gkey)
        c2c = bool(numa_id and str(numa_id).isdigit())
    if not c2c or rel not in ("SYS", "NODE", "PHB"):
        return rel
    nodes = _numa_set(affinity.get("numa"))
    if nodes is not None and dev.get("numa_node") is not None and int(dev["numa_node"]) in nodes:
        return "P2C"
    return rel


def _nic_checks(facts, exp, host, nic, out, gpu_links_seen=None):
    gpu_links_seen = set() if gpu_links_seen is None else gpu_links_seen
    netdev, rdma_name = nic["netdev"], nic.get("rdma")
    nd = facts["netdevs"].get(netdev)
    dev = facts["rdma_devices"].get(rdma_name) if rdma_name else None
    if nd is None or (rdma_name and dev is None) or (dev is not None and netdev not in dev["netdevs"]):
        actual = {"netdev": nd is not None, "rdma": dev is not None,
                  "rdma_netdevs": dev["netdevs"] if dev else None}
        if nd is None:
            why = "netdev %s not found" % netdev
        elif dev is None:
            why = "netdev %s present but RDMA device %s missing (no RDMA on this NIC, or its driver not loaded)" % (netdev, rdma_name)
        else:
            why = "RDMA device %s is bound to %s, not %s" % (rdma_name, ", ".join(dev["netdevs"]) or "no netdev", netdev)
        out.append(_finding(exp, "nic_present", host, netdev, {"netdev": netdev, "rdma": rdma_name}, actual,
                            "planned NIC %s/%s: %s" % (netdev, rdma_name, why)))
        return
    if dev is not None and dev["pci"]:
        _pcie_checks(facts, exp, host, netdev, dev["pci"], False, out)
        _ats_check(facts, exp, host, netdev, dev, out)
    port = dev["ports"].get("1") if dev else None
    port_state = (port or {}).get("state") or ""
    if nd["operstate"] != "up" or (port is not None and "ACTIVE" not in port_state):
        out.append(_finding(exp, "link_up", host, netdev, "up/ACTIVE", "%s/%s" % (nd["operstate"], port_state),
                            "%s is not up (operstate %s, RDMA port %s)" % (netdev, nd["operstate"], port_state or "n/a")))
    elif nic.get("speed_gbps") and nd["speed_mbps"] != int(nic["speed_gbps"]) * 1000:
        out.append(_finding(exp, "link_speed", host, netdev, int(nic["speed_gbps"]) * 1000, nd["speed_mbps"],
                            "%s runs at %s Mb/s, plan says %d Gb/s" % (netdev, nd["speed_mbps"], int(nic["speed_gbps"]))))
    want_mtu = nic.get("mtu") or exp.get("mtu")
    if want_mtu and nd["mtu"] != int(want_mtu):
        out.append(_finding(exp, "mtu", host, netdev, int(want_mtu), nd["mtu"],
                            "%s MTU is %s, plan says %s" % (netdev, nd["mtu"], want_mtu)))
    if nic.get("address") and port is not None:
        v2 = [g for g in port["gids"] if g["ipv4"] == nic["address"] and g["type"] == "RoCE v2"]
        if not v2:
            out.append(_finding(exp, "roce_gid", host, netdev, {"address": nic["address"], "type": "RoCE v2"}, None,
                                "no RoCE v2 GID for %s on %s (address not configured?)" % (nic["address"], rdma_name)))
        elif exp["gid_index"] is not None and v2[0]["index"] != exp["gid_index"]:
            out.append(_finding(exp, "roce_gid", host, netdev, exp["gid_index"], v2[0]["index"],
                                "RoCE v2 GID of %s is at index %d, NCCL_IB_GID_INDEX is %d"
                                % (nic["address"], v2[0]["index"], exp["gid_index"])))
    gpus = nic.get("gpus") if nic.get("gpus") is not None else ([nic["gpu"]] if nic.get("gpu") is not None else [])
    known = dict((str(g["index"]), g) for g in facts["gpus"])
    for gpu in gpus:
        gkey = str(gpu)
        if gkey not in known:
            out.append(_finding(exp, "gpu_present", host, "GPU%s" % gkey, "present", "missing",
                                "GPU%s (paired with %s) not found on the PCI bus" % (gkey, netdev)))
            continue
        if gkey not in gpu_links_seen:
            gpu_links_seen.add(gkey)
            _pcie_checks(facts, exp, host, "GPU%s" % gkey, known[gkey]["pci"], True, out)
        rel = facts["topology"]["gpu_nic"].get(gkey, {}).get(rdma_name)
        rel = _c2c_relation(facts, known[gkey], gkey, dev, rel)
        allowed = exp["gpu_nic_allowed"]
        worst = max(RANK.get(x, 9) for x in allowed) if allowed else 0
        if rel is None or RANK.get(rel, 9) > worst:
            out.append(_finding(exp, "gpu_nic_affinity", host, "%s<->GPU%s" % (netdev, gkey), "|".join(allowed), rel,
                                "%s (%s, NUMA %s) is %s from GPU%s (NUMA %s)"
                                % (netdev, rdma_name, dev["numa_node"], rel, gkey, known[gkey]["numa_node"])))
            continue
        if exp["require_acs_off"]:
            path = facts["topology"]["acs_path"].get(gkey, {}).get(rdma_name, [])
            redirecting = [b for b in path if acs_redirects((facts["pci_bridges"].get(b) or {}).get("acs"))]
            if redirecting:
                out.append(_finding(exp, "acs_p2p", host, "%s<->GPU%s" % (netdev, gkey), "ReqRedir-/CmpltRedir-", redirecting,
                                    "ACS redirects peer-to-peer traffic on %s between GPU%s and %s" % (", ".join(redirecting), gkey, netdev)))


def host_stack(facts, exp):
    """(gpu_vendor, nic_drivers) of the host: what the plan declares, else what the facts detected."""
    declared = exp.get("stack") or {}
    seen = facts.get("stack") or {}
    gpu = declared.get("gpu_vendor") or seen.get("gpu_vendor") or "nvidia"
    nics = [declared["nic_driver"]] if declared.get("nic_driver") else list(seen.get("nic_drivers") or [])
    return gpu, nics


def required_modules(facts, exp):
    if exp.get("rdma_modules"):
        return list(exp["rdma_modules"])
    return stacks.required_modules(host_stack(facts, exp)[1])


def _stack_check(facts, exp, host, out):
    declared = exp.get("stack") or {}
    seen = facts.get("stack") or {}
    want_gpu = declared.get("gpu_vendor")
    if want_gpu and seen.get("gpu_vendors") and want_gpu not in seen["gpu_vendors"]:
        out.append(_finding(exp, "stack", host, "gpu_vendor", want_gpu, seen["gpu_vendors"],
                            "plan declares %s GPUs, the host shows %s (PCI vendor %s)" % (
                                want_gpu, ", ".join(seen["gpu_vendors"]), stacks.GPU_VENDORS[want_gpu]["pci_vendor"])))
    want_nic = declared.get("nic_driver")
    if want_nic and seen.get("nic_drivers") and want_nic not in seen["nic_drivers"]:
        out.append(_finding(exp, "stack", host, "nic_driver", want_nic, seen["nic_drivers"],
                            "plan declares %s NICs, the host's RDMA devices are %s" % (want_nic, ", ".join(seen["nic_drivers"]))))


def _gdr_check(facts, exp, host, out):
    gdr = facts["gdr"]
    library = gdr.get("library") or "NCCL"
    rules = gdr.get("rules") or {}
    actual = {"rdma_devices": gdr.get("rdma_devices"), "nvidia_peermem": gdr["nvidia_peermem"],
              "peer_registration": gdr.get("peer_registration"), "dmabuf": gdr.get("dmabuf")}
    if gdr.get("dmabuf_env_needed") and gdr.get("rdma_devices") and not gdr.get("peer_registration"):
        out.append(_finding(exp, "gdr_dmabuf_env", host, "gpudirect_rdma", "NCCL_DMABUF_ENABLE=1",
                            dict(actual, dmabuf_env=gdr.get("dmabuf_env")),
                            "GPUDirect RDMA: %s finds no peer-memory client and uses dma-buf only with "
                            "NCCL_DMABUF_ENABLE=1 (default %s for %s: %s); the other prerequisites are met: "
                            "set it in /etc/rccl.conf (host_nccl_extra: {NCCL_DMABUF_ENABLE: '1'}; RCCL reads /etc/rccl.conf, "
                            "not /etc/nccl.conf)" % (library, gdr.get("dmabuf_env_default"), rules.get("rule_set"),
                                                     rules.get("source"))))
        return
    if gdr.get("unsupported"):
        gone = gdr["unsupported"]
        out.append(_finding(exp, "gdr_unsupported", host, "gpudirect_rdma", "a GPU with GPUDirect RDMA",
                            dict(actual, gpus=gone["gpus"]),
                            "GPUDirect RDMA not ready, and it cannot be: %s (%s) does not support it - %s. "
                            "Collectives run without GDR (host-memory staging); to accept that for these hosts set "
                            "host_preflight_require_gdr: false" % (gone["platform"], ", ".join(gone["gpus"]), gone["source"])))
        return
    if gdr["ready"] is False:
        files = ("an RDMA device and a file %s probes for peer memory (%s), or the dma-buf prerequisites"
                 % (library, ", ".join(gdr.get("peermem_probes") or [])))
        out.append(_finding(exp, "gdr_ready", host, "gpudirect_rdma", files, actual,
                            "GPUDirect RDMA not ready: %s" % "; ".join(gdr["reasons"])))
    elif gdr["ready"] is None:
        # the library decides dma-buf at init with a test registration (ibv_reg_dmabuf_mr) and the GPU's
        # support attribute: files cannot show it
        if library == "RCCL":
            basis = "NCCL_DMABUF_ENABLE=%s, kernel %s, rdma-core %s" % (gdr.get("dmabuf_env"), gdr.get("kernel"), gdr.get("rdma_core"))
            log = "RCCL's INFO log prints 'DMA_BUF Support Enabled' when it uses it"
        else:
            basis = "driver %s open kernel module, kernel %s, rdma-core %s" % (gdr.get("driver_version"), gdr.get("kernel"), gdr.get("rdma_core"))
            log = "NCCL_DEBUG=INFO prints 'DMA-BUF is available on GPU device N' when NCCL uses it"
        out.append(_finding(exp, "gdr_dmabuf_untested", host, "gpudirect_rdma",
                            "a file %s probes for peer memory, or a tested dma-buf registration" % library, actual,
                            "GPUDirect RDMA only through dma-buf: prerequisites met (%s), registration not tested; %s (%s)"
                            % (basis, log, "; ".join(gdr["reasons"]) or "no peer-memory file")))


def host_findings(facts, exp, host):
    """All findings of one host."""
    out = []
    _synthetic_check(facts, exp, host, out)
    _stack_check(facts, exp, host, out)
    for mod in required_modules(facts, exp):
        state = facts["modules"].get(mod, "missing")
        if state == "missing":
            out.append(_finding(exp, "rdma_module", host, mod, "loaded", state, "kernel module %s is not loaded" % mod))
        elif state == "unknown":
            out.append(_finding(exp, "rdma_module_unknown", host, mod, "loaded", state,
                                "kernel module %s: state unknown - not in /proc/modules or /sys/module, no trace it leaves "
                                "when built in, and %s/modules.builtin not readable; install the kernel's modules package "
                                "(it holds modules.builtin) or run `modprobe -n -v %s` on the host to tell a built-in from "
                                "a missing module" % (mod, "/lib/modules/%s" % facts.get("kernel"), mod)))
    gpu_links_seen = set()  # a GPU shared by several NICs is reported once
    for nic in exp["nics"]:
        _nic_checks(facts, exp, host, nic, out, gpu_links_seen)
    planned = [n.get("rdma") for n in exp["nics"] if n.get("rdma") in facts["rdma_devices"]]
    by_model = {}
    for name in planned:
        dev = facts["rdma_devices"][name]
        by_model.setdefault(dev["model"], {}).setdefault(fw_version(dev), []).append(name)
    for model, versions in sorted(by_model.items()):
        if len(versions) > 1:
            out.append(_finding(exp, "fw_host_mixed", host, model, "one firmware version", versions,
                                "%s NICs run %d firmware versions: %s" % (model, len(versions), ", ".join(
                                    "%s on %s" % (v, ",".join(n)) for v, n in sorted(versions.items(), key=lambda kv: str(kv[0]))))))
    for name in planned:
        _baseline_check(facts["rdma_devices"][name], exp, host, out)
    if exp["require_gdr"] and exp["nics"]:
        _gdr_check(facts, exp, host, out)
    mode = facts["iommu"]["mode"]
    if exp["iommu_allowed"] and mode not in exp["iommu_allowed"] and mode != "unknown":
        out.append(_finding(exp, "iommu_mode", host, "iommu", "|".join(exp["iommu_allowed"]), mode,
                            "IOMMU is in %s mode (%s); GPUDirect RDMA wants it off or passthrough (iommu=pt)"
                            % (mode, " ".join(facts["iommu"]["cmdline"]) or "no iommu kernel arguments")))
    return out


def fleet_findings(facts_by_host, exp_by_host=None):
    """Cross-host firmware consistency: per NIC model, hosts off the most common version."""
    exp_by_host = exp_by_host or {}
    counts = {}
    per_host = {}
    for host, facts in sorted(facts_by_host.items()):
        exp = exp_by_host.get(host)
        planned = [n.get("rdma") for n in exp["nics"]] if exp else list(facts["rdma_devices"])
        for name in planned:
            dev = facts["rdma_devices"].get(name)
            if dev is None or not fw_version(dev):
                continue
            counts.setdefault(dev["model"], {}).setdefault(fw_version(dev), 0)
            counts[dev["model"]][fw_version(dev)] += 1
            per_host.setdefault(host, {}).setdefault(dev["model"], set()).add(fw_version(dev))
    out = []
    for model, versions in sorted(counts.items()):
        if len(versions) < 2:
            continue
        common = sorted(versions.items(), key=lambda kv: (-kv[1], [-x for x in version_key(kv[0])]))[0][0]
        for host in sorted(per_host):
            have = sorted(per_host[host].get(model, set()) - set([common]))
            if have:
                exp = exp_by_host.get(host) or expectations([])
                out.append(_finding(exp, "fw_fleet_mixed", host, model, common, have,
                                    "%s firmware %s differs from the fleet's %s (fleet: %s)" % (
                                        model, ", ".join(have), common,
                                        ", ".join("%s x%d" % kv for kv in sorted(versions.items())))))
    return out


def summarize(findings_by_host, fleet, strict=True):
    """Fleet summary: per host counts and status, plus who fails what."""
    hosts = {}
    by_check = {}
    for host, findings in sorted(findings_by_host.items()):
        mine = list(findings) + [f for f in fleet if f["host"] == host]
        errors = sum(1 for f in mine if f["severity"] == "error")
        warnings = sum(1 for f in mine if f["severity"] == "warning")
        status = "fail" if errors and strict else ("warn" if errors or warnings else "pass")
        hosts[host] = {"status": status, "errors": errors, "warnings": warnings, "findings": mine}
        for f in mine:
            by_check.setdefault(f["id"], [])
            if host not in by_check[f["id"]]:
                by_check[f["id"]].append(host)
    return {"strict": strict, "hosts": hosts, "by_check": by_check,
            "totals": {"hosts": len(hosts), "pass": sum(1 for h in hosts.values() if h["status"] == "pass"),
                       "warn": sum(1 for h in hosts.values() if h["status"] == "warn"),
                       "fail": sum(1 for h in hosts.values() if h["status"] == "fail")}}


def render_markdown(summary):
    lines = ["# RDMA preflight summary", "",
             "strict: %s; hosts: %d (pass %d, warn %d, fail %d)" % (
                 summary["strict"], summary["totals"]["hosts"], summary["totals"]["pass"],
                 summary["totals"]["warn"], summary["totals"]["fail"]), "",
             "| host | status | errors | warnings |", "|---|---|---|---|"]
    for host, item in sorted(summary["hosts"].items()):
        lines.append("| %s | %s | %d | %d |" % (host, item["status"], item["errors"], item["warnings"]))
    lines += ["", "## Who fails what", "", "| check | hosts |", "|---|---|"]
    for check, hosts in sorted(summary["by_check"].items()):
        lines.append("| %s | %s |" % (check, ", ".join(hosts)))
    lines += ["", "## Findings", ""]
    for host, item in sorted(summary["hosts"].items()):
        lines.append("### %s" % host)
        if not item["findings"]:
            lines.append("- no findings")
        for f in item["findings"]:
            lines.append("- **%s** `%s` %s: %s" % (f["severity"], f["id"], f["subject"], f["message"]))
        lines.append("")
    return "\n".join(lines) + "\n"
