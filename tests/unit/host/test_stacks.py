"""Host stacks (issue 29): GPU vendors and their collective library's GPUDirect rules, NIC drivers and their
modules, and the reading errors a real capture showed. Every rule asserted here names its source in
plugins/module_utils/host/stacks.py or facts.py; trees built here are minimal stand-ins for one file each."""
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host import checks
from ansible_collections.aifabric.roce.plugins.module_utils.host import facts as hf
from ansible_collections.aifabric.roce.plugins.module_utils.host import nccl
from ansible_collections.aifabric.roce.plugins.module_utils.host import nic_firmware
from ansible_collections.aifabric.roce.plugins.module_utils.host import pcitopo
from ansible_collections.aifabric.roce.plugins.module_utils.host import stacks
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot, ToolResult

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.join(HERE, "..", "..", "fixtures", "hosts", "captures")


def capture(name, filename):
    with open(os.path.join(CAPTURES, name, filename)) as handle:
        return handle.read()


def write(root, rel, text=""):
    path = os.path.join(str(root), rel.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


class Runner(object):
    """Answers argv lists from a dict (argv tuple -> stdout); anything else is a missing tool."""

    def __init__(self, answers):
        self.answers = dict((tuple(k), v) for k, v in answers.items())

    def run(self, argv):
        if tuple(argv) in self.answers:
            return ToolResult(argv, 0, self.answers[tuple(argv)], "")
        return ToolResult(argv, 127, "", "", missing=True)


# --- firmware: mlxup `FW (Running)` (real capture mlxup-cx7-fw-running) ---------------------------

def test_mlxup_fw_running_row_is_not_the_version():
    text = capture("mlxup-cx7-fw-running", "mlxup_-d.txt")
    dev = hf.parse_mlxfwmanager(text)[0]
    assert (dev["fw_current"], dev["fw_available"], dev["fw_running"]) == ("28.47.1026", "28.47.1026", "28.46.3048")
    runner = Runner({("mlxfwmanager", "--query", "-d", "0000:8e:00.0"): text})
    fw = hf.read_firmware(runner, {"pci": "0000:8e:00.0", "fw_ver": "28.46.3048", "board_id": "MT_0000000838"})
    # what runs is the version (as devlink's running fw.version); the flashed image waits for a reset
    assert (fw["source"], fw["version"], fw["stored"], fw["pending_reset"]) == ("mlxfwmanager", "28.46.3048", "28.47.1026", True)
    assert fw["pending"] == "28.47.1026"
    state = nic_firmware.device_state(text, "0000:8e:00.0")
    # one firmware truth: the upgrade module and the facts name the same running and pending versions
    assert (state["current"], state["running"], state["flashed"], state["pending"], state["pending_reset"], state["update"]) == (
        "28.46.3048", "28.46.3048", "28.47.1026", "28.47.1026", True, False)
    assert (state["running"], state["pending"]) == (fw["version"], fw["pending"])


# --- nvidia-smi topo -m: an empty CPU-affinity cell ------------------------------------------------

def test_topo_empty_cpu_affinity_cell_does_not_shift_the_row():
    real = capture("h200-vm-2026-11-26", "trace.txt").split("+ nvidia-smi topo -m\n", 1)[1].split("# rc=", 1)[0]
    assert pcitopo.parse_topo_matrix(real)["gpu_affinity"] == {"0": {"cpus": "0-15", "numa": "0"}}
    # the same row as nvidia-smi prints it when the GPU's CPUs are outside the caller's cpuset: the cell is empty
    blank = real.replace("GPU0\t X \t0-15\t0", "GPU0\t X \t\t0")
    assert blank != real
    assert pcitopo.parse_topo_matrix(blank)["gpu_affinity"] == {"0": {"cpus": None, "numa": "0"}}


# --- SR-IOV VF links are judged by their PF --------------------------------------------------------

def test_vf_link_is_its_pf_link(tmp_path):
    pf, vf = "0000:3b:00.0", "0000:3b:00.2"
    for bdf in (pf, vf):
        os.makedirs(str(tmp_path / "sys/devices/pci0000:3a/0000:3a:00.0" / bdf))
        os.makedirs(str(tmp_path / "sys/bus/pci/devices"), exist_ok=True)
        os.symlink("../../../devices/pci0000:3a/0000:3a:00.0/%s" % bdf, str(tmp_path / "sys/bus/pci/devices" / bdf))
    base = "sys/devices/pci0000:3a/0000:3a:00.0/"
    for key, value in (("current_link_speed", "32.0 GT/s PCIe"), ("max_link_speed", "32.0 GT/s PCIe"),
                       ("current_link_width", "16"), ("max_link_width", "16")):
        write(tmp_path, base + pf + "/" + key, value)
    # a VF: sysfs-bus-pci physfn link to its PF; its own link reads Unknown / 0 (lspci "Speed unknown, x0")
    write(tmp_path, base + vf + "/current_link_speed", "Unknown")
    write(tmp_path, base + vf + "/current_link_width", "0")
    write(tmp_path, base + vf + "/max_link_speed", "32.0 GT/s PCIe")
    write(tmp_path, base + vf + "/max_link_width", "16")
    os.symlink("../" + pf, str(tmp_path / base / vf / "physfn"))
    link = pcitopo.read_link(SysRoot(str(tmp_path)), vf)
    assert link["vf_of"] == pf and link["degraded"] == [] and (link["speed_gts"], link["width"]) == (32.0, 16)


def test_function_without_own_link_is_unknown_not_degraded():
    # real lspci -vvv text of a function with no link of its own (search index file 35211284767)
    text = ("\t\tLnkCap:\tPort #0, Speed unknown, Width x0, ASPM unknown, Latency L0 <64ns, L1 <1us\n"
            "\t\tLnkSta:\tSpeed unknown, Width x0, TrErr- Train- SlotClk- DLActive- BWMgmt- ABWMgmt-\n")
    link = pcitopo.read_link(SysRoot("/nonexistent-root"), "0000:00:1f.3",
                             Runner({("lspci", "-vvv", "-s", "0000:00:1f.3"): text}))
    assert link["source"] == "lspci" and link["degraded"] == [] and link.get("no_own_link") is True


# --- modules: missing vs unknown -------------------------------------------------------------------

def test_module_state_unknown_only_without_modules_builtin(tmp_path):
    root = SysRoot(str(tmp_path))
    assert hf.module_state(root, "rdma_cm", set(), set(), builtin_known=False) == "unknown"
    assert hf.module_state(root, "rdma_cm", set(), set(), builtin_known=True) == "missing"
    # an out-of-tree module is never built in: absent is missing either way
    assert hf.module_state(root, "nvidia_peermem", set(), set(), builtin_known=False) == "missing"
    os.makedirs(str(tmp_path / "sys/module/rdma_cm"))
    assert hf.module_state(root, "rdma_cm", set(), set(), builtin_known=False) == "builtin"


# --- stacks: required modules follow the NIC driver -----------------------------------------------

def test_required_modules_follow_the_nic_driver():
    assert stacks.required_modules(["bnxt_re"]) == ["ib_core", "ib_uverbs", "rdma_cm", "bnxt_en", "bnxt_re"]
    assert stacks.required_modules(["irdma"])[-2:] == ["ice", "irdma"]
    assert stacks.required_modules([]) == ["ib_core", "ib_uverbs", "rdma_cm", "mlx5_core", "mlx5_ib"]
    assert stacks.nic_driver_of("bnxt_re0") == "bnxt_re" and stacks.nic_driver_of("rocep1s0f0", "ice") == "irdma"
    assert stacks.nic_driver_of("rocep1s0f0", None, "0x15b3") == "mlx5"  # renamed by rdma-core: the PCI vendor tells


def _bnxt_facts():
    mods = dict((m, "loaded") for m in ("ib_core", "ib_uverbs", "rdma_cm", "bnxt_en", "bnxt_re"))
    mods.update(mlx5_core="missing", mlx5_ib="missing")
    return {"root": "/", "live": True, "modules": mods, "rdma_devices": {}, "netdevs": {}, "gpus": [],
            "stack": {"gpu_vendor": "amd", "gpu_vendors": ["amd"], "nic_drivers": ["bnxt_re"]},
            "iommu": {"mode": "off", "cmdline": []}, "gdr": {}, "topology": {"gpu_nic": {}}}


def test_bnxt_host_gets_no_mlx5_module_errors_and_a_wrong_declaration_is_named():
    found = checks.host_findings(_bnxt_facts(), checks.expectations([]), "mi300x")
    assert [f for f in found if f["id"] == "rdma_module"] == []
    exp = checks.expectations([], stack={"gpu_vendor": "nvidia", "nic_driver": "mlx5"})
    found = dict(((f["id"], f["subject"]), f) for f in checks.host_findings(_bnxt_facts(), exp, "mi300x"))
    assert ("rdma_module", "mlx5_core") in found  # declared mlx5: its modules are required
    assert "plan declares nvidia GPUs, the host shows amd" in found[("stack", "gpu_vendor")]["message"]
    assert ("stack", "nic_driver") in found


# --- AMD GPUs and RCCL's GPUDirect rules ------------------------------------------------------------

def _amd_tree(tmp_path):
    dev = "sys/devices/pci0000:00/0000:00:01.0/0000:05:00.0"
    write(tmp_path, dev + "/vendor", "0x1002")
    write(tmp_path, dev + "/device", "0x74a1")
    write(tmp_path, dev + "/class", "0x120000")  # processing accelerator (MI300X)
    write(tmp_path, dev + "/numa_node", "0")
    audio = "sys/devices/pci0000:00/0000:00:01.0/0000:05:00.1"
    write(tmp_path, audio + "/vendor", "0x1002")
    write(tmp_path, audio + "/class", "0x040300")  # an AMD audio function is not a GPU
    os.makedirs(str(tmp_path / "sys/bus/pci/devices"), exist_ok=True)
    for bdf, rel in (("0000:05:00.0", dev), ("0000:05:00.1", audio)):
        os.symlink(str(tmp_path / rel), str(tmp_path / "sys/bus/pci/devices" / bdf))
    write(tmp_path, "proc/sys/kernel/osrelease", "6.8.0-45-generic")
    write(tmp_path, "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0")
    return SysRoot(str(tmp_path))


def test_amd_gpus_are_found(tmp_path):
    gpus = hf.read_gpus(_amd_tree(tmp_path), Runner({}))
    assert [(g["pci"], g["vendor"], g["index"]) for g in gpus] == [("0000:05:00.0", "amd", 0)]


MODS = {"ib_uverbs": "loaded"}
RDMA = {"bnxt_re0": {}}


def test_rccl_peer_memory_by_amdkfd_file(tmp_path):
    root = _amd_tree(tmp_path)
    write(tmp_path, "sys/kernel/mm/memory_peers/amdkfd/version", "1.0")
    gdr = hf.read_gdr(root, set(), RDMA, MODS, "amd")
    assert (gdr["ready"], gdr["library"], gdr["peer_registration"]) == (True, "RCCL", "/sys/kernel/mm/memory_peers/amdkfd/version")


def test_rccl_kallsyms_symbol_alone_is_not_peer_memory(tmp_path):
    # ROCm/rocm-systems#9540: ib_uverbs exports ib_register_peer_memory_client with no client loaded; the old
    # fallback's false positive made registrations fail (ibv_reg_mr_iova2: Bad address) on Thor 2 and Pensando
    root = _amd_tree(tmp_path)
    write(tmp_path, "proc/kallsyms", "ffffffffc0a01230 T ib_register_peer_memory_client\t[ib_uverbs]\n")
    gdr = hf.read_gdr(root, set(), RDMA, MODS, "amd")
    assert gdr["ready"] is False and gdr["peer_registration"] is None
    assert any("rocm-systems#9540" in r and "not counted" in r for r in gdr["reasons"])
    # any registered client counts (the rule after #9540)
    write(tmp_path, "sys/kernel/mm/memory_peers/example_client/version", "1.0")
    gdr = hf.read_gdr(root, set(), RDMA, MODS, "amd")
    assert gdr["ready"] is True and gdr["peer_registration"] == "/sys/kernel/mm/memory_peers/example_client/version"


RCCL_2024 = {"library": "RCCL", "version": [2, 21, 5], "rocm": [6, 3, 0], "source": ["test"]}


def test_rccl_2024_dmabuf_needs_the_variable_and_the_kernel_config(tmp_path):
    root = _amd_tree(tmp_path)
    write(tmp_path, "boot/config-6.8.0-45-generic", "CONFIG_DMABUF_MOVE_NOTIFY=y\nCONFIG_PCI_P2PDMA=y\n")
    gdr = hf.read_gdr(root, set(), RDMA, MODS, "amd", library_version=RCCL_2024)
    assert gdr["ready"] is False and gdr["dmabuf_env_needed"] is True
    facts = dict(_bnxt_facts(), gdr=gdr)
    found = dict((f["id"], f) for f in checks.host_findings(facts, checks.expectations([{"netdev": "x", "rdma": None}]), "h"))
    assert "NCCL_DMABUF_ENABLE=1" in found["gdr_dmabuf_env"]["message"] and "gdr_ready" not in found
    assert "default 0 for RCCL 2024" in found["gdr_dmabuf_env"]["message"]
    write(tmp_path, "etc/rccl.conf", "NCCL_DMABUF_ENABLE=1\n")  # RCCL reads /etc/rccl.conf (param.cc initEnv)
    gdr = hf.read_gdr(root, set(), RDMA, MODS, "amd", library_version=RCCL_2024)
    assert (gdr["ready"], gdr["mode"], gdr["dmabuf"]) == (None, "dmabuf", hf.DMABUF_PREREQUISITES_MET)
    write(tmp_path, "boot/config-6.8.0-45-generic", "CONFIG_DMABUF_MOVE_NOTIFY=y\n")
    gdr = hf.read_gdr(root, set(), RDMA, MODS, "amd", library_version=RCCL_2024)
    assert gdr["ready"] is False and any("CONFIG_PCI_P2PDMA=y" in r for r in gdr["reasons"])


# --- Grace C2C: SYS in nvidia-smi, P2C for NCCL -----------------------------------------------------

def _c2c_facts(gpu_numa, nic_numa, c2c=True):
    return {"root": "/", "live": True, "modules": {}, "iommu": {"mode": "off", "cmdline": []}, "ats": {}, "pcie_links": {},
            "gdr": {"ready": True}, "stack": {}, "pci_bridges": {},
            "gpus": [{"index": 0, "pci": "0009:01:00.0", "numa_node": None, "c2c": c2c}],
            "rdma_devices": {"mlx5_0": {"name": "mlx5_0", "pci": "0000:01:00.0", "numa_node": nic_numa, "netdevs": ["eth1"],
                                        "ports": {}, "model": "ConnectX-7", "fw_ver": "28.45.1020", "firmware": {}}},
            "netdevs": {"eth1": {"operstate": "up", "speed_mbps": 400000, "mtu": 9000}},
            "topology": {"gpu_nic": {"0": {"mlx5_0": "SYS"}}, "gpu_affinity": {"0": {"cpus": "0-71", "numa": str(gpu_numa)}},
                         "acs_path": {}}}


@pytest.mark.parametrize("gpu_numa,nic_numa,c2c,bad", [(0, 0, True, False), (0, 1, True, True), (0, 0, False, True)])
def test_c2c_gpu_to_nic_on_its_cpu_is_p2c(gpu_numa, nic_numa, c2c, bad):
    exp = checks.expectations([{"netdev": "eth1", "rdma": "mlx5_0", "gpu": 0}], rdma_modules=["ib_core"], require_gdr=False)
    found = [f for f in checks.host_findings(_c2c_facts(gpu_numa, nic_numa, c2c), exp, "gb200") if f["id"] == "gpu_nic_affinity"]
    assert bool(found) is bad
    if bad:
        assert found[0]["actual"] == "SYS"


# --- RCCL_* settings ------------------------------------------------------------------------------

def test_rccl_variables_accepted_where_rccl_reads_them():
    got = nccl.build_settings({"NCCL_IB_HCA": "=bnxt_re0"}, extra={"RCCL_MSCCL_ENABLE": "0", "NCCL_DMABUF_ENABLE": "1"})
    assert got["RCCL_MSCCL_ENABLE"] == "0" and got["NCCL_DMABUF_ENABLE"] == "1"
    # an unknown RCCL_* name is the operator's setting: written, with a warning naming the version checked against
    got = nccl.build_settings({"NCCL_IB_HCA": "=bnxt_re0"}, extra={"RCCL_NOT_A_PARAM": "1"})
    assert got["RCCL_NOT_A_PARAM"] == "1"
    assert nccl.variable_warnings(got) == [
        "RCCL_NOT_A_PARAM: not among the RCCL_* variables of %s, the version this collection checked; written as given "
        "(a newer RCCL may read it) - check the name against your RCCL's documentation" % stacks.RCCL_VARIABLES_CHECKED_AT]
    with pytest.raises(nccl.NcclError, match="RCCL_lower: not an NCCL_\\* or RCCL_\\* variable name"):
        nccl.build_settings({"NCCL_IB_HCA": "=bnxt_re0"}, extra={"RCCL_lower": "1"})


# --- the synthetic MI300X + bnxt_re host (gen_fixtures mi300x-bnxt) runs the whole preflight --------

def test_mi300x_bnxt_fixture_host_preflight(fixture_hosts):
    import json
    base = os.path.join(fixture_hosts, "mi300x-bnxt")
    with open(os.path.join(base, "intent.json")) as handle:
        intent = json.load(handle)
    f = hf.gather(os.path.join(base, "root"), os.path.join(base, "tools"), netdevs=[n["netdev"] for n in intent["nics"]])
    assert f["stack"]["gpu_vendor"] == "amd" and f["stack"]["nic_drivers"] == ["bnxt_re"]
    assert [g["vendor"] for g in f["gpus"]] == ["amd"] * 8 and f["topology"]["source"] == "sysfs"
    assert f["gdr"]["library"] == "RCCL" and f["gdr"]["ready"] is True
    for declared in (intent["stack"], {}):  # declared or detected, the same verdict
        exp = checks.expectations(intent["nics"], gid_index=3, stack=declared)
        assert [(x["id"], x["subject"]) for x in checks.host_findings(f, exp, "mi300x-bnxt")] == [("synthetic_root", "root")]
    # the planted switch relationship is seen: GPU3 <-> rail3 is PIX through one switch
    assert f["topology"]["gpu_nic"]["3"]["bnxt_re3"] == "PIX"
    # the QoS tool state says the firmware runs DCBX
    from ansible_collections.aifabric.roce.plugins.module_utils.host import qos
    from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import ToolRunner
    state, problem = qos.read_tool_state(ToolRunner(capture_dir=os.path.join(base, "tools")), "dcb", "rail0")
    assert problem is None and state["dcbx"] == qos.DCBX_FIRMWARE and state["pfc"] == [3]


# --- real RCCL log of an Azure MI300X VM (captures/azure-mi300x-rccl-log) -------------------------

def test_rccl_verdict_matches_rccls_own_log(tmp_path):
    import re
    log = capture("azure-mi300x-rccl-log", "rccl_info.txt")
    kernel = re.search(r"Kernel version: (\S+)", log).group(1)
    found = re.findall(r"NCCL INFO Found (/\S+)", log)
    hcas = re.findall(r"\[\d+\](mlx5_\w+):\d+/", re.search(r"NET/IB : Using (.*);", log).group(1))
    assert (kernel, found, len(hcas)) == ("5.15.0-1086-azure", ["/sys/kernel/mm/memory_peers/amdkfd/version"], 9)
    # a tree holding only what the log states: the kernel release and the file RCCL found
    write(tmp_path, "proc/sys/kernel/osrelease", kernel)
    for rel in found:
        write(tmp_path, rel, "")
    # the versions RCCL's own banner prints: RCCL 2.21.5, ROCm 6.3.0 -> the 2024 rule set
    banner = hf.parse_library_banner(log)
    assert (banner["library"], banner["version"], banner["rocm"]) == ("RCCL", (2, 21, 5), (6, 3, 0))
    gdr = hf.read_gdr(SysRoot(str(tmp_path)), set(), dict((h, {}) for h in hcas), {"ib_uverbs": "loaded"}, "amd",
                      library_version=dict(banner, source=["rccl_info.txt banner"]))
    assert gdr["rules"]["rule_set"].startswith("RCCL 2024") and gdr["rules"]["chosen_by"] == "ROCm 6.3.0"
    # RCCL: "Found .../amdkfd/version" -> GPUDirect RDMA through peer memory; the readers agree, naming the same file
    assert (gdr["ready"], gdr["mode"], gdr["peer_registration"]) == (True, "peermem", found[0])
    # RCCL: "Dmabuf feature disabled without NCCL_DMABUF_ENABLE=1"; the readers say the same of the dma-buf path
    assert "Dmabuf feature disabled without NCCL_DMABUF_ENABLE=1" in log
    assert gdr["dmabuf"] == hf.DMABUF_PREREQUISITES_MISSING and gdr["dmabuf_env"] is None
    _ok, _detail, why = hf.amd_dmabuf_path(SysRoot(str(tmp_path)), kernel, {"ib_uverbs": "loaded"}, stacks.RCCL_RULES[0])
    assert any("NCCL_DMABUF_ENABLE=1" in r for r in why)
    found_facts = dict(_bnxt_facts(), gdr=gdr)
    ids = [f["id"] for f in checks.host_findings(found_facts, checks.expectations([{"netdev": "x", "rdma": None}]), "nd-mi300x")]
    assert "gdr_ready" not in ids and "gdr_dmabuf_env" not in ids  # peer memory is there: nothing to propose


# --- GB200 (captures/gb200-topo-m): every GPU-NIC pair SYS in nvidia-smi, P2C for NCCL ---------------

def test_gb200_topology_reads_and_c2c_pairs_are_p2c():
    topo = pcitopo.parse_topo_matrix(capture("gb200-topo-m", "nvidia-smi_topo_-m.txt"))
    assert set(v for row in topo["gpu_nic"].values() for v in row.values()) == {"SYS"}
    assert topo["gpu_affinity"]["0"] == {"cpus": "0-71", "numa": "0,3-9,11-17"}
    assert topo["gpu_affinity"]["3"] == {"cpus": "72-143", "numa": "1,19-25,27-33"}
    assert topo["gpu_numa_id"] == {"0": "2", "1": "10", "2": "18", "3": "26"}
    # the PCIe H200 prints N/A there: no C2C inferred
    h200 = capture("h200-vm-2026-11-26", "trace.txt").split("+ nvidia-smi topo -m\n", 1)[1].split("# rc=", 1)[0]
    assert pcitopo.parse_topo_matrix(h200)["gpu_numa_id"] == {"0": None}
    # NIC NUMA nodes are not in the capture: this test's input - mlx5_0 on Grace 0 (node 0), mlx5_4 on Grace 1
    facts = _c2c_facts(0, 0, c2c=None)
    facts["topology"] = {"gpu_nic": topo["gpu_nic"], "gpu_affinity": topo["gpu_affinity"], "gpu_numa_id": topo["gpu_numa_id"],
                         "acs_path": {}}
    facts["rdma_devices"]["mlx5_0"]["numa_node"] = 0
    exp = checks.expectations([{"netdev": "eth1", "rdma": "mlx5_0", "gpu": 0}], rdma_modules=["ib_core"], require_gdr=False)
    assert [f for f in checks.host_findings(facts, exp, "gb200") if f["id"] == "gpu_nic_affinity"] == []
    exp = checks.expectations([{"netdev": "eth1", "rdma": "mlx5_0", "gpu": 3}], rdma_modules=["ib_core"], require_gdr=False)
    facts["gpus"].append({"index": 3, "pci": "0019:01:00.0", "numa_node": None, "c2c": None})
    found = [f for f in checks.host_findings(facts, exp, "gb200") if f["id"] == "gpu_nic_affinity"]
    assert [f["actual"] for f in found] == ["SYS"]  # GPU3 (Grace 1) to a NIC on Grace 0 stays SYS


# --- GB10 / DGX Spark (captures/gb10-dgx-spark): NCCL disables GPUDirect RDMA, the readers say so -----

def _gb10_tree(tmp_path):
    """A tree of what the captures state: the PCI functions of the real lspci -nn (vendor, device, class), the
    kernel release, open driver 580.95.05 and the two HCAs of the NCCL log; rdma-core 50 is Ubuntu 24.04's
    (the log's OS); no nvidia_peermem (modprobe failed)."""
    import re
    lspci = capture("gb10-dgx-spark", "lspci_-nn.txt")
    for line in lspci.splitlines():
        match = re.match(r"^(\S+) .*\[([0-9a-f]{2})([0-9a-f]{2})\]: .*\[([0-9a-f]{4}):([0-9a-f]{4})\]", line)
        bdf, klass, sub, vendor, device = match.groups()
        rel = "sys/devices/pci%s:00/%s" % (bdf[:4], bdf)
        write(tmp_path, rel + "/vendor", "0x" + vendor)
        write(tmp_path, rel + "/device", "0x" + device)
        write(tmp_path, rel + "/class", "0x%s%s00" % (klass, sub))
        os.makedirs(str(tmp_path / "sys/bus/pci/devices"), exist_ok=True)
        os.symlink(str(tmp_path / rel), str(tmp_path / "sys/bus/pci/devices" / bdf))
    log = capture("gb10-dgx-spark", "nccl_and_peermem.txt")
    kernel = re.search(r"/lib/modules/(\S+?)/", log).group(1)
    driver = re.search(r"version:(\S+)", log).group(1)
    write(tmp_path, "proc/sys/kernel/osrelease", kernel)
    write(tmp_path, "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  %s  Release Build\n" % driver)
    write(tmp_path, "usr/lib/aarch64-linux-gnu/libibverbs.so.1.14.50.0")
    hcas = re.findall(r"Disabled for HCA \d+ .(\w+).", log)
    return SysRoot(str(tmp_path)), kernel, hcas


def test_gb10_gdr_is_not_ready_by_nccls_rule(tmp_path):
    root, kernel, hcas = _gb10_tree(tmp_path)
    assert (kernel, hcas) == ("6.14.0-1013-nvidia", ["rocep1s0f0", "rocep1s0f1"])
    assert "could not insert" in capture("gb10-dgx-spark", "nccl_and_peermem.txt")  # no peer-memory client
    gpus = hf.read_gpus(root)
    assert [(g["pci"], g["device_id"], g["name"]) for g in gpus] == [("000f:01:00.0", "0x2e12", "NVIDIA GB10")]
    # the GB10 PCI bridges (10de:22ce/22d0/22d1) are bridges, not GPUs
    assert "NVIDIA GB10" in capture("gb10-dgx-spark", "nvidia-smi.txt")  # nvidia-smi names it the same
    mods = {"ib_uverbs": "loaded", "ib_core": "loaded", "mlx5_ib": "loaded"}
    rdma = dict((h, {}) for h in hcas)
    # without the rule, the files alone say "dma-buf prerequisites met, untested" (the warning issue 29 reported)
    plain = hf.read_gdr(root, set(), rdma, mods, "nvidia")
    assert (plain["ready"], plain["mode"], plain["dmabuf"]) == (None, "dmabuf", hf.DMABUF_PREREQUISITES_MET)
    # with the GPUs: NCCL logs "GPU Direct RDMA Disabled for HCA" there, and the readers say not ready, not supported
    gdr = hf.read_gdr(root, set(), rdma, mods, "nvidia", gpus)
    assert (gdr["ready"], gdr["mode"], gdr["dmabuf"]) == (False, None, hf.DMABUF_PREREQUISITES_MISSING)
    assert gdr["unsupported"]["gpus"] == ["000f:01:00.0 NVIDIA GB10"]
    assert "348787" in gdr["unsupported"]["source"] and "ncclGpuGdrSupport" in gdr["unsupported"]["source"]
    facts = dict(_bnxt_facts(), gdr=gdr)
    found = dict((f["id"], f) for f in checks.host_findings(facts, checks.expectations([{"netdev": "x", "rdma": None}]), "spark"))
    assert found["gdr_unsupported"]["severity"] == "error" and "gdr_dmabuf_untested" not in found and "gdr_ready" not in found
    assert "host_preflight_require_gdr: false" in found["gdr_unsupported"]["message"]
    accepted = checks.host_findings(facts, checks.expectations([{"netdev": "x", "rdma": None}], require_gdr=False), "spark")
    assert [f for f in accepted if f["id"].startswith("gdr")] == []


def test_gdr_unsupported_only_when_every_nvidia_gpu_lacks_it():
    spark = {"vendor": "nvidia", "device_id": "0x2e12", "name": None}
    assert stacks.nvidia_gdr_unsupported(spark)["name"].startswith("NVIDIA GB10")
    assert stacks.nvidia_gdr_unsupported({"vendor": "nvidia", "device_id": "0x2e3f"}) is not None  # NV-Kernels#396 range
    assert stacks.nvidia_gdr_unsupported({"vendor": "nvidia", "device_id": "0x2e40"}) is None
    assert stacks.nvidia_gdr_unsupported({"vendor": "nvidia", "device_id": "0x2335", "name": "NVIDIA GB10"}) is not None
    assert stacks.nvidia_gdr_unsupported({"vendor": "nvidia", "device_id": "0x2335", "name": "NVIDIA H200"}) is None
    assert stacks.nvidia_gdr_unsupported({"vendor": "amd", "device_id": "0x2e12"}) is None


# --- SR-IOV VF of a ConnectX-7 (captures/kvm-2025-cx7-sriov-vf-lspci) --------------------------------

def test_real_vf_has_no_link_of_its_own_and_is_judged_by_its_pf(tmp_path):
    vf_text = capture("kvm-2025-cx7-sriov-vf-lspci", "lspci_-vvv_-s_b1_00.2.txt")
    pf_text = capture("kvm-2025-cx7-sriov-vf-lspci", "lspci_-vvv_-s_b1_00.1.txt")  # same device, same link as b1:00.0
    assert "Virtual Function" in vf_text.splitlines()[0] and "Width x0 (downgraded)" in vf_text
    pf, vf = "0000:b1:00.0", "0000:b1:00.2"
    runner = Runner({("lspci", "-vvv", "-s", vf): vf_text, ("lspci", "-vvv", "-s", pf): pf_text})
    # read alone (no sysfs physfn): "Speed unknown (downgraded), Width x0 (downgraded)" is no link, not a degraded one
    alone = pcitopo.read_link(SysRoot(str(tmp_path / "empty")), vf, runner)
    assert (alone["source"], alone.get("no_own_link"), alone["degraded"]) == ("lspci", True, [])
    # with its PF (sysfs-bus-pci physfn): the card's own link, Gen4 x8 of Gen5 x16, is what the VF's traffic crosses
    base = "sys/devices/pci0000:b0/0000:b0:04.0/"
    for bdf in (pf, vf):
        os.makedirs(str(tmp_path / base / bdf))
        os.makedirs(str(tmp_path / "sys/bus/pci/devices"), exist_ok=True)
        os.symlink("../../../devices/pci0000:b0/0000:b0:04.0/%s" % bdf, str(tmp_path / "sys/bus/pci/devices" / bdf))
    os.symlink("../" + pf, str(tmp_path / base / vf / "physfn"))
    link = pcitopo.read_link(SysRoot(str(tmp_path)), vf, runner)
    assert link["vf_of"] == pf and link["source"] == "lspci"
    assert (link["speed_gts"], link["width"], link["max_speed_gts"], link["max_width"]) == (16.0, 8, 32.0, 16)
    assert link["degraded"] == ["speed", "width"]


# --- Broadcom bnxt_re ibv_devinfo (captures/rdma-core-2020-bnxt-re-ibv-devinfo) --------------------

def test_real_bnxt_re_device_identity_firmware_and_gids(tmp_path):
    import re
    text = capture("rdma-core-2020-bnxt-re-ibv-devinfo", "ibv_devinfo_-v_-d_bnxt_re2.txt")
    name = re.search(r"^hca_id: (\S+)", text, re.M).group(1)
    fw = re.search(r"fw_ver:\s+(\S+)", text).group(1)
    gids = [(int(i), g, t) for i, g, t in re.findall(r"GID\[\s*(\d+)\]:\s+([0-9a-f:.]+), (IB/RoCE v1|RoCE v2)", text)]
    assert (name, fw, len(gids)) == ("bnxt_re2", "216.0.220.0", 4)
    # sysfs keeps each GID in the full form (ibv_devinfo shortens some); the IPv4-mapped pair is the rail address
    assert hf.ipv4_to_gid("192.170.1.101") == gids[2][1]
    base = tmp_path / "sys/class/infiniband" / name
    port = base / "ports/1"
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        (port / sub).mkdir(parents=True)
    (base / "fw_ver").write_text(fw + "\n")
    (port / "state").write_text("4: ACTIVE\n")
    (port / "link_layer").write_text("Ethernet\n")
    full = {0: gids[0][1], 1: gids[0][1], 2: gids[2][1], 3: gids[2][1]}  # 1 and 3 are 0 and 2 shortened
    for index, gid, gtype in gids:
        (port / "gids" / str(index)).write_text(full[index] + "\n")
        (port / "gid_attrs/types" / str(index)).write_text(gtype + "\n")
    facts = hf.gather(str(tmp_path))
    dev = facts["rdma_devices"][name]
    assert dev["fw_ver"] == fw and dev["nic_driver"] == "bnxt_re" and facts["stack"]["nic_drivers"] == ["bnxt_re"]
    assert [(g["index"], g["type"], g["ipv4"]) for g in dev["ports"]["1"]["gids"]] == [
        (0, "IB/RoCE v1", None), (1, "RoCE v2", None), (2, "IB/RoCE v1", "192.170.1.101"), (3, "RoCE v2", "192.170.1.101")]
    # Broadcom firmware has four parts: the last one counts against a baseline
    assert checks.version_key(fw) < checks.version_key("216.0.220.1")
    assert stacks.required_modules(facts["stack"]["nic_drivers"])[-2:] == ["bnxt_en", "bnxt_re"]


# --- AMD Pensando AINIC through amd-smi (captures/amd-smi-ainic-ionic) --------------------------------

def test_real_ainic_found_by_its_netdev_driver_not_its_rdma_name(tmp_path):
    import re
    text = capture("amd-smi-ainic-ionic", "amd-smi_ainic.txt")
    driver = re.search(r"DRIVER:\s+NAME: (\S+)", text).group(1)
    netdev = re.search(r"NETDEV: (\S+)", text).group(1)
    rdma = re.search(r"RDMA_DEVICE_0:\s+NAME: (\S+)", text).group(1)
    fw = re.search(r"FW_VER: (\S+)", text).group(1)
    numa = re.search(r"NUMA:\s+NODE: (\d+)", text).group(1)
    assert (driver, netdev, rdma, fw) == ("ionic", "enp229s0", "rocep229s0", "1.110.1-a-1")
    # the udev-renamed RDMA name carries no driver prefix: the name alone says nothing
    assert stacks.nic_driver_of(rdma_name=rdma) is None
    bdf = "0000:e5:00.0"  # enp229s0: PCI bus 229 (0xe5), slot 0 (systemd predictable naming)
    dev = "sys/devices/pci0000:e0/0000:e0:01.1/" + bdf
    write(tmp_path, dev + "/numa_node", numa)
    write(tmp_path, dev + "/vendor", "0x1dd8")
    write(tmp_path, dev + "/net/%s/operstate" % netdev, "down")
    write(tmp_path, dev + "/infiniband/%s/fw_ver" % rdma, fw)
    write(tmp_path, dev + "/infiniband/%s/ports/1/state" % rdma, "1: DOWN")
    write(tmp_path, "sys/bus/pci/drivers/%s/module" % driver)
    os.symlink(str(tmp_path / "sys/bus/pci/drivers" / driver), str(tmp_path / dev / "driver"))
    os.symlink("../../../" + bdf, str(tmp_path / dev / "net" / netdev / "device"))
    os.symlink("../../../" + bdf, str(tmp_path / dev / "infiniband" / rdma / "device"))
    for cls, item in (("net", netdev), ("infiniband", rdma)):
        os.makedirs(str(tmp_path / "sys/class" / cls), exist_ok=True)
        os.symlink(str(tmp_path / dev / cls / item), str(tmp_path / "sys/class" / cls / item))
    os.makedirs(str(tmp_path / "sys/bus/pci/devices"))
    os.symlink(str(tmp_path / dev), str(tmp_path / "sys/bus/pci/devices" / bdf))
    facts = hf.gather(str(tmp_path), netdevs=[netdev])
    found = facts["rdma_devices"][rdma]
    assert (found["pci"], found["netdevs"], found["numa_node"], found["nic_driver"]) == (bdf, [netdev], 1, "ionic")
    assert facts["stack"]["nic_drivers"] == ["ionic"]
    exp = checks.expectations([{"netdev": netdev, "rdma": rdma}], require_gdr=False)
    ids = dict(((f["id"], f["subject"]), f) for f in checks.host_findings(facts, exp, "ainic"))
    modules = set(subject for (check, subject) in ids if check.startswith("rdma_module"))  # unknown: no modules.builtin here
    assert {"ionic", "ionic_rdma"} <= modules and not modules & {"mlx5_core", "mlx5_ib"}
    assert any(k[0] == "link_up" for k in ids)  # port 1 DOWN, as amd-smi says


# --- devlink firmware names beyond mlx5 (captures netdev-2020-bnxt-en-devlink-info, iwl-2023-e810-ice-devlink-info) -

@pytest.mark.parametrize("name, bdf, key, version, stored", [
    ("netdev-2020-bnxt-en-devlink-info", "0000:af:00.0", "fw", "216.1.154.0", None),
    ("iwl-2023-e810-ice-devlink-info", "0000:af:00.0", "fw.bundle_id", "0x80008e6a", "0x80008e6a"),
    ("netdev-2025-mlx5-devlink-info", None, "fw.version", None, None),
])
def test_devlink_firmware_of_each_driver(name, bdf, key, version, stored):
    text = capture(name, "devlink_dev_info.txt")
    parsed = hf.parse_devlink_info(text)
    bdf = bdf or sorted(h for h in parsed if h.startswith("pci/"))[0].split("/", 1)[1]
    found = hf._fw_devlink(Runner({("devlink", "dev", "info", "pci/%s" % bdf): text}), bdf)
    assert found is not None and found["version_key"] == key  # before: None (sysfs fallback) for bnxt_en and ice
    if version:
        assert (found["version"], found["stored"]) == (version, stored)
    assert found["driver"] == {"fw": "bnxt_en", "fw.bundle_id": "ice", "fw.version": "mlx5_core"}[key]
