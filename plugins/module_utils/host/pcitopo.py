# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCIe topology: device paths, GPU<->NIC relationship, ACS/ATS from config space, nvidia-smi topo.

Relationship names follow the ``nvidia-smi topo -m`` legend: X (self), PIX (at most one PCIe
bridge / one switch), PXB (several bridges, no host bridge), PHB (through a PCIe host bridge),
NODE (between host bridges of one NUMA node), SYS (across the SMP interconnect between NUMA
nodes), NV# (NVLink, GPU<->GPU only).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import struct

BDF_RE = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
RANK = {"X": 0, "PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}
# NCCL's own path types order P2C (GPU -C2C-> CPU -PCIe-> NIC, Grace platforms) after PXB and before PHB
# (NVIDIA/nccl src/graph/topo.h PATH_PIX < PATH_PXB < PATH_P2C < PATH_PXN < PATH_PHB); nvidia-smi prints such
# a pair as SYS, so P2C is derived (checks.py), never parsed.
RANK["P2C"] = 2.5

# PCIe extended capability IDs (PCI Express Base Specification, "Extended Capabilities")
EXT_CAP_ACS = 0x000D
EXT_CAP_ATS = 0x000F
ACS_BITS = (("SrcValid", 0), ("TransBlk", 1), ("ReqRedir", 2), ("CmpltRedir", 3),
            ("UpstreamFwd", 4), ("EgressCtrl", 5), ("DirectTrans", 6))


def device_path(sysroot, bdf):
    """``/sys/devices/pci0000:15/0000:15:01.0/.../0000:18:00.0`` -> (domain_root, [bdf, ...])."""
    real = sysroot.realpath("/sys/bus/pci/devices/%s" % bdf)
    if real is None:
        return None, []
    parts = real.split("/")
    domain = None
    chain = []
    for part in parts:
        if part.startswith("pci") and ":" in part:
            domain = part
        elif BDF_RE.match(part):
            chain.append(part)
    return domain, chain


def relationship(sysroot, bdf_a, bdf_b, numa_a=None, numa_b=None):
    """nvidia-smi style relationship between two PCI functions, computed from sysfs."""
    if bdf_a == bdf_b:
        return "X"
    dom_a, chain_a = device_path(sysroot, bdf_a)
    dom_b, chain_b = device_path(sysroot, bdf_b)
    if not chain_a or not chain_b:
        return None
    if dom_a != dom_b:
        if numa_a is not None and numa_b is not None and numa_a >= 0 and numa_b >= 0 and numa_a != numa_b:
            return "SYS"
        return "NODE"
    common = 0
    for left, right in zip(chain_a[:-1], chain_b[:-1]):
        if left != right:
            break
        common += 1
    if common == 0:
        return "PHB"
    below_a = len(chain_a) - common - 1
    below_b = len(chain_b) - common - 1
    if below_a <= 1 and below_b <= 1:
        return "PIX"
    return "PXB"


def bridges_between(sysroot, bdf_a, bdf_b):
    """Switch ports a peer-to-peer TLP enters or leaves between two functions: the bridges below
    their deepest common ancestor (the downstream ports, where ACS acts); empty across host bridges."""
    dom_a, chain_a = device_path(sysroot, bdf_a)
    dom_b, chain_b = device_path(sysroot, bdf_b)
    if not chain_a or not chain_b or dom_a != dom_b:
        return []
    common = 0
    for left, right in zip(chain_a[:-1], chain_b[:-1]):
        if left != right:
            break
        common += 1
    if common == 0:
        return []
    seen = []
    for bdf in chain_a[common:-1] + chain_b[common:-1]:
        if bdf not in seen:
            seen.append(bdf)
    return seen


def _ext_caps(config):
    """Yield (cap_id, offset) of the PCIe extended capability list of a config-space dump."""
    if config is None or len(config) < 0x104:
        return
    offset = 0x100
    visited = set()
    while offset and offset not in visited and offset + 4 <= len(config):
        visited.add(offset)
        header = struct.unpack_from("<I", config, offset)[0]
        if header in (0, 0xFFFFFFFF):
            return
        yield header & 0xFFFF, offset
        offset = (header >> 20) & 0xFFC


def read_acs_ats(sysroot, bdf):
    """ACS control bits and ATS enable of one function from its config space.

    Returns {'config_readable': bool, 'acs': None|{bit: bool}, 'ats_enabled': None|bool}.
    Extended config space is readable only by root; otherwise config_readable is False.
    """
    config = sysroot.read_bytes("/sys/bus/pci/devices/%s/config" % bdf)
    result = {"config_readable": bool(config) and len(config) > 0x100, "acs": None, "ats_enabled": None}
    for cap_id, offset in _ext_caps(config):
        if cap_id == EXT_CAP_ACS and offset + 8 <= len(config):
            ctl = struct.unpack_from("<H", config, offset + 6)[0]
            result["acs"] = dict((name, bool(ctl & (1 << bit))) for name, bit in ACS_BITS)
        elif cap_id == EXT_CAP_ATS and offset + 8 <= len(config):
            ctl = struct.unpack_from("<H", config, offset + 6)[0]
            result["ats_enabled"] = bool(ctl & 0x8000)
    return result


def _gts(text):
    """``16.0 GT/s PCIe`` / ``8 GT/s`` / ``16GT/s`` -> 16.0; ``Unknown`` / ``unknown`` -> None."""
    match = re.search(r"([0-9.]+)\s*GT/s", text or "")
    return float(match.group(1)) if match else None


def _width(text):
    match = re.search(r"(\d+)", text or "")
    return int(match.group(1)) if match else None


def parse_lspci_link(text):
    """LnkCap/LnkSta of ``lspci -vvv`` -> {speed_gts, max_speed_gts, width, max_width, lspci_degraded}.

    ``Speed 16GT/s, Width x16`` (LnkCap) and ``Speed 2.5GT/s (downgraded), Width x16 (ok)`` (LnkSta);
    ``Speed unknown`` reads as None (pciutils/pciutils#128 capture). ``lspci_degraded`` lists what lspci
    itself marks ``(downgraded)``, so a capture without LnkCap still tells.
    """
    out = {"speed_gts": None, "max_speed_gts": None, "width": None, "max_width": None, "lspci_degraded": []}
    for line in (text or "").splitlines():
        match = re.match(r"^\s*(LnkCap|LnkSta):\s*(.*)$", line)
        if not match:
            continue
        speed = re.search(r"Speed ([^,]+)", match.group(2))
        width = re.search(r"Width (x\d+)([^,]*)", match.group(2))
        if match.group(1) == "LnkCap":
            out["max_speed_gts"] = _gts(speed.group(1)) if speed else None
            out["max_width"] = _width(width.group(1)) if width else None
        else:
            out["speed_gts"] = _gts(speed.group(1)) if speed else None
            out["width"] = _width(width.group(1)) if width else None
            if speed and "downgraded" in speed.group(1):
                out["lspci_degraded"].append("speed")
            if width and "downgraded" in width.group(2):
                out["lspci_degraded"].append("width")
    return out


def read_link(sysroot, bdf, runner=None):
    """Negotiated vs capable PCIe link of one function.

    sysfs ``current_link_speed``/``max_link_speed`` (``16.0 GT/s PCIe``) and ``current_link_width``/
    ``max_link_width`` (Documentation/ABI/testing/sysfs-bus-pci); ``lspci -vvv -s <bdf>`` when sysfs has
    none. ``degraded`` names what runs below capability (``width``, ``speed``); None values are unknown.
    """
    base = "/sys/bus/pci/devices/%s/" % bdf
    pf = sysroot.link_name(base + "physfn")
    if pf and pf != bdf:
        # an SR-IOV VF has no link of its own (lspci: "Speed unknown, x0"; sysfs-bus-pci: physfn links a VF to its
        # PF): its traffic crosses the PF's link, so that is the one judged
        link = read_link(sysroot, pf, runner)
        link.update(vf_of=pf)
        return link
    link = {"source": None, "speed_gts": _gts(sysroot.read(base + "current_link_speed")),
            "max_speed_gts": _gts(sysroot.read(base + "max_link_speed")),
            "width": _width(sysroot.read(base + "current_link_width")),
            "max_width": _width(sysroot.read(base + "max_link_width")), "lspci_degraded": []}
    if any(link[k] is not None for k in ("speed_gts", "width")):
        link["source"] = "sysfs"
    elif runner is not None:
        result = runner.run(["lspci", "-vvv", "-s", bdf])
        if result.ok and "LnkSta" in result.stdout:
            link.update(parse_lspci_link(result.stdout))
            link["source"] = "lspci"
    if link["width"] == 0 and link["speed_gts"] is None:
        # "Speed unknown, x0": a function without a link of its own (an SR-IOV VF read through lspci); unknown,
        # not degraded (its PF's link is the one that carries the traffic)
        link["width"] = None
        link["lspci_degraded"] = []
        link["no_own_link"] = True
    degraded = []
    if link["width"] is not None and link["max_width"] and link["width"] < link["max_width"]:
        degraded.append("width")
    if link["speed_gts"] is not None and link["max_speed_gts"] and link["speed_gts"] < link["max_speed_gts"]:
        degraded.append("speed")
    link["degraded"] = sorted(set(degraded) | set(link.pop("lspci_degraded")))
    link.update(slot_limit(sysroot, bdf, link))
    return link


def physical_slot(sysroot, bdf):
    """Name of the physical slot holding ``bdf``: /sys/bus/pci/slots/<name>/address is the slot's
    ``domain:bus:device`` (Documentation/ABI/testing/sysfs-bus-pci), or None when the platform names none."""
    want = bdf.lower().rsplit(".", 1)[0]
    for name in sorted(sysroot.listdir("/sys/bus/pci/slots")):
        if (sysroot.read("/sys/bus/pci/slots/%s/address" % name) or "").strip().lower() == want:
            return name
    return None


def slot_limit(sysroot, bdf, link):
    """Whether the slot, not the device, limits a link that runs below the device's capability.

    A link trains to what both ends can do; when the upstream port (the slot the device sits in) is capable
    of no more than the link runs at, on every dimension that is below the device's capability, the slot is
    the limit (the kernel names the same port: ``limited by 8.0 GT/s PCIe x8 link at 0000:00:01.0 (capable of
    ... x16 link)``, drivers/pci/pci.c __pcie_print_link_status). Returns port, its capability, the physical
    slot name and ``limited_by`` (``slot`` or None)."""
    _dom, chain = device_path(sysroot, bdf)
    port = chain[-2] if len(chain) >= 2 else None
    out = {"port": port, "port_max_speed_gts": None, "port_max_width": None, "slot": None, "limited_by": None}
    if port is None:
        return out
    base = "/sys/bus/pci/devices/%s/" % port
    out["port_max_speed_gts"] = _gts(sysroot.read(base + "max_link_speed"))
    out["port_max_width"] = _width(sysroot.read(base + "max_link_width"))
    out["slot"] = physical_slot(sysroot, bdf)
    limits = {"width": ("width", "max_width", "port_max_width"), "speed": ("speed_gts", "max_speed_gts", "port_max_speed_gts")}
    explained = []
    for dim in link.get("degraded") or []:
        now, cap, port_cap = link[limits[dim][0]], link[limits[dim][1]], out[limits[dim][2]]
        explained.append(None not in (now, cap, port_cap) and port_cap < cap and now >= port_cap)
    if explained and all(explained):
        out["limited_by"] = "slot"
    return out


def acs_redirects(acs):
    """True when ACS redirects peer-to-peer requests or completions upstream (breaks P2P/GDR)."""
    return bool(acs) and (acs.get("ReqRedir") or acs.get("CmpltRedir"))


# SGR escape sequences: nvidia-smi (R580) underlines the matrix header (ESC[4m ... ESC[0m) even when
# its output is not a terminal (tests/fixtures/hosts/captures/h100-vm-2026-11-22).
ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text):
    return ANSI_RE.sub("", text or "")


# The relations nvidia-smi prints between devices, from its own legend (real captures gb200-topo-m, nccl-1453-topo-h100:
# "X = Self", SYS, NODE, PHB, PXB, PIX, "NV# = Connection traversing a bonded set of # NVLinks"); anything else in a
# relation cell is not a relation, and the row is refused rather than guessed.
TOPO_RELATION_RE = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|NV\d+)$")
# digits, commas and ranges (an excerpt cut mid-line, nccl-tests-29-topo-mlx5-columns, ends "24-47,")
CPULIST_RE = re.compile(r"^(N/A|\d[\d,-]*)$")


class TopoError(ValueError):
    """An ``nvidia-smi topo -m`` row that is not a matrix row: the message names the line and what is wrong."""


def _check_topo_row(number, line, gpu, columns, values, rest, has_numa):
    """Refuse a GPU row whose relation cells are not nvidia-smi relations, whose diagonal is not X, or whose
    affinity cells are missing or not CPU/NUMA lists (a lost tab glues two cells: ``PIXNODE``, a CPU list in a
    relation column)."""
    where = "nvidia-smi topo -m line %d %r" % (number, line.strip())
    if len(values) < len(columns):
        raise TopoError("%s: %d relation cells for %d columns (%s)" % (where, len(values), len(columns), " ".join(columns)))
    for column, value in zip(columns, values):
        if not TOPO_RELATION_RE.match(value):
            raise TopoError("%s: %r under %s is not a relation nvidia-smi prints (X, SYS, NODE, PHB, PXB, PIX, NV#)"
                            % (where, value, column))
        if column == "GPU" + gpu and value != "X":
            raise TopoError("%s: GPU%s against itself is %r, not X" % (where, gpu, value))
    need = 2 if has_numa else 1
    if len(rest) < need:
        raise TopoError("%s: no %s cell after the %d relation columns" % (where, "NUMA Affinity" if rest else "CPU Affinity", len(columns)))
    for cell in rest[:need]:
        if cell and not CPULIST_RE.match(cell):
            raise TopoError("%s: %r is not a CPU/NUMA list (affinity columns)" % (where, cell))


def parse_topo_matrix(text):
    """Parse ``nvidia-smi topo -m``; raises TopoError naming the line when a GPU row is malformed.

    Returns {'gpu_nic': {'0': {'mlx5_0': 'PIX', ...}}, 'gpu_gpu': {...}, 'nic_names': {...},
    'gpu_affinity': {'0': {'cpus': '0-15', 'numa': '0'}}}, or None when the text has no matrix.
    NIC columns named NIC<n> are resolved through the "NIC Legend" block; older drivers name the
    columns after the RDMA device directly.
    """
    lines = [line.rstrip("\n") for line in strip_ansi(text).splitlines()]
    header = None
    for idx, line in enumerate(lines):
        tokens = line.split()
        if tokens and tokens[0] == "GPU0" and line[:1] in ("\t", " "):
            header = idx
            break
    if header is None:
        return None
    columns = []
    for token in lines[header].split():
        if re.match(r"^(GPU\d+|NIC\d+|mlx\w+|\w+_\d+)$", token):
            columns.append(token)
        else:
            break
    legend = {}
    for line in lines:
        match = re.match(r"^\s*(NIC\d+):\s*(\S+)\s*$", line)
        if match:
            legend[match.group(1)] = match.group(2)
    gpu_nic = {}
    gpu_gpu = {}
    affinity = {}
    gpu_numa = {}
    has_numa = "NUMA Affinity" in lines[header]
    has_gpu_numa = "GPU NUMA ID" in lines[header]
    for number, line in enumerate(lines[header + 1:], header + 2):
        tokens = line.split()
        if not tokens or not re.match(r"^GPU\d+$", tokens[0]):
            if tokens and tokens[0].startswith("Legend"):
                break
            continue
        gpu = tokens[0][3:]
        if "\t" in line:
            # nvidia-smi separates cells with tabs; an empty cell (no CPU affinity inside a limited cpuset) is
            # an empty field, which a whitespace split would drop, shifting NUMA into the CPU column
            tokens = [cell.strip() for cell in line.split("\t")]
        values = tokens[1:1 + len(columns)]
        _check_topo_row(number, line, gpu, columns, values, tokens[1 + len(columns):], has_numa)
        for column, value in zip(columns, values):
            if column.startswith("GPU"):
                gpu_gpu.setdefault(gpu, {})[column[3:]] = value
            else:
                gpu_nic.setdefault(gpu, {})[legend.get(column, column)] = value
        # after the device columns: CPU Affinity, then NUMA Affinity (R450+); N/A when unknown
        rest = tokens[1 + len(columns):]
        # GPU NUMA ID (R535+): the GPU memory's own NUMA node, a number only where that memory is a NUMA node
        # (coherent C2C: GB200 capture gb200-topo-m prints 2, 10, 18, 26), N/A on PCIe GPUs (h200-vm-2026-11-26)
        tail = [cell for cell in rest[2:] if cell]
        affinity[gpu] = {"cpus": (rest[0] or None) if rest else None,
                         "numa": (rest[1] or None) if has_numa and len(rest) > 1 else None}
        gpu_numa[gpu] = tail[-1] if has_gpu_numa and tail and tail[-1] != "N/A" else None
    return {"gpu_nic": gpu_nic, "gpu_gpu": gpu_gpu, "nic_names": legend, "gpu_affinity": affinity, "gpu_numa_id": gpu_numa}


# --- rocm-smi --showtopo (AMD) ---------------------------------------------------------------------
# Format: ROCm/rocm-systems 1b1610fc2b2a projects/rocm-smi-lib/python_smi_tools/rocm_smi.py lines 3280-3441
# (showWeightTopology, showHopsTopology, showTypeTopology, showNumaTopology): each matrix under a
# "=== <title> ===" spacer, a header of GPU<n> columns, one row per GPU, "0" on the diagonal; weight and hops a
# number or N/A; link type PCIE (rsmi link type 1), XGMI (2) or XXXX (anything else, or unreadable); NUMA lines
# "GPU[<n>]\t\t: (Topology) Numa Node: <n>" (older rocm-smi: "GPU <n>   : ..."). Real captures:
# rocm-smi-showtopo-8gpu-two-hives, rocm-smi-showtopo-4gpu-rocm5, rocm-1503-mi100-showtopo.
ROCM_SMI_SECTIONS = {"Weight between two GPUs": "weight", "Hops between two GPUs": "hops",
                     "Link Type between two GPUs": "link_type", "Numa Nodes": "numa"}
ROCM_LINK_TYPES = ("PCIE", "XGMI", "XXXX")
_ROCM_NUMA_RE = re.compile(r"^GPU\s*\[?\s*(\d+)\s*\]?\s*:\s*\(Topology\) Numa (Node|Affinity)\s*:\s*(-?\d+)\s*$")


def _rocm_cell(kind, value):
    if kind == "link_type":
        return value if value in ROCM_LINK_TYPES else None
    if value == "N/A":
        return value
    return int(value) if value.isdigit() else None


def parse_rocm_smi_topo(text):
    """``rocm-smi --showtopo`` -> {'weight'|'hops'|'link_type': {'0': {'1': ...}}, 'numa': {'0': {'node', 'affinity'}},
    'gpus': [...]}, or None when the text holds none of its sections. Raises TopoError naming the line when a row has
    the wrong number of cells, a cell outside the vocabulary or a diagonal other than 0."""
    out = {"weight": {}, "hops": {}, "link_type": {}, "numa": {}}
    section, columns, seen = None, None, False
    for number, line in enumerate((text or "").splitlines(), 1):
        stripped = line.strip()
        spacer = re.match(r"^=+\s*(.*?)\s*=+$", stripped)
        if spacer:
            section, columns = ROCM_SMI_SECTIONS.get(spacer.group(1)), None
            seen = seen or section is not None
            continue
        if not stripped or section is None:
            continue
        where = "rocm-smi --showtopo line %d %r" % (number, stripped)
        if section == "numa":
            match = _ROCM_NUMA_RE.match(stripped)
            if not match:
                raise TopoError("%s: not a '(Topology) Numa Node|Affinity' line" % where)
            out["numa"].setdefault(match.group(1), {})["node" if match.group(2) == "Node" else "affinity"] = int(match.group(3))
            continue
        tokens = stripped.split()
        if columns is None and tokens and all(re.match(r"^GPU\d+$", t) for t in tokens):
            columns = [t[3:] for t in tokens]
            continue
        if columns is None or not re.match(r"^GPU\d+$", tokens[0]):
            raise TopoError("%s: not a row of the %s matrix" % (where, section))
        gpu, cells = tokens[0][3:], tokens[1:]
        if len(cells) != len(columns):
            raise TopoError("%s: %d cells for %d GPU columns" % (where, len(cells), len(columns)))
        row = out[section].setdefault(gpu, {})
        for column, cell in zip(columns, cells):
            if column == gpu:
                if cell != "0":
                    raise TopoError("%s: GPU%s against itself is %r, not 0" % (where, gpu, cell))
                continue
            value = _rocm_cell(section, cell)
            if value is None:
                raise TopoError("%s: %r under GPU%s is not a %s rocm-smi prints (%s)" % (
                    where, cell, column, section.replace("_", " "),
                    ", ".join(ROCM_LINK_TYPES) if section == "link_type" else "a number or N/A"))
            row[column] = value
    if not seen:
        return None
    out["gpus"] = sorted(set(out["weight"]) | set(out["hops"]) | set(out["link_type"]) | set(out["numa"]), key=int)
    return out
