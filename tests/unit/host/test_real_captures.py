"""The host readers against real captured output (tests/fixtures/hosts/captures/<name>/, each with SOURCE.md).

Each test names the capture it covers. The H100 VM tree is built from the shared capture by
tests/fixtures/hosts/from_capture.py with values printed in the trace only.
"""
import importlib.util
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host import checks
from ansible_collections.aifabric.roce.plugins.module_utils.host import facts as hf
from ansible_collections.aifabric.roce.plugins.module_utils.host import pcitopo

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.join(HERE, "..", "..", "fixtures", "hosts", "captures")
VM = "h100-vm-2026-11-22"


def capture(name, filename):
    with open(os.path.join(CAPTURES, name, filename), "r") as handle:
        return handle.read()


def test_every_capture_has_a_source():
    names = sorted(os.listdir(CAPTURES))
    assert len(names) >= 4
    for name in names:
        text = capture(name, "SOURCE.md")
        assert "Source" in text and ("https://" in text or "shared/captures" in text
                                     or "tools/capture_host.sh" in text
                                     or "search index holds it as file id" in " ".join(text.split())), name


@pytest.fixture(scope="module")
def vm_tree(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("from_capture", os.path.join(CAPTURES, "..", "from_capture.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = str(tmp_path_factory.mktemp("vm"))
    return mod.build(os.path.join(CAPTURES, VM, "capture.txt"), out)


@pytest.fixture(scope="module")
def vm_facts(vm_tree):
    return hf.gather(os.path.join(vm_tree, "root"), os.path.join(vm_tree, "tools"), netdevs=["eth0"])


# --- h100-vm-2026-11-22 (shared capture) ---------------------------------------------------------

def test_vm_capture_keeps_ansi_header_and_it_parses():
    raw = capture(VM, "capture.txt")
    assert "\x1b[4mGPU0" in raw  # the misread's cause is in the witness
    text = raw.split("+ nvidia-smi topo -m\n", 1)[1].split("+ nvidia-smi topo -mp", 1)[0]
    parsed = pcitopo.parse_topo_matrix(text)
    assert parsed is not None
    assert parsed["gpu_gpu"] == {"0": {"0": "X"}} and parsed["gpu_nic"] == {}
    assert parsed["gpu_affinity"] == {"0": {"cpus": "0-15", "numa": "0"}}


def test_vm_topology_comes_from_nvidia_smi(vm_facts):
    topo = vm_facts["topology"]
    assert topo["source"] == "nvidia-smi" and topo["nvidia_smi"] == "ok"
    assert topo["gpu_affinity"]["0"] == {"cpus": "0-15", "numa": "0"}


def test_vm_gpu_has_a_name_and_no_fake_numa(vm_facts):
    assert len(vm_facts["gpus"]) == 1
    gpu = vm_facts["gpus"][0]
    assert gpu["pci"] == "0000:00:06.0" and gpu["device_id"] == "0x2330"
    assert gpu["name"] == "NVIDIA H100 80GB HBM3" and gpu["name_source"] == "nvidia-smi"
    assert gpu["vbios"] == "96.00.DA.00.0C"
    assert gpu["numa_node"] is None  # sysfs says -1 (NUMA_NO_NODE), not node -1


def test_vm_virtio_nic_resolves_to_its_pci_function(vm_facts):
    eth0 = vm_facts["netdevs"]["eth0"]
    assert eth0["pci"] == "0000:00:03.0" and eth0["bus_device"] == "virtio2"
    assert eth0["mtu"] == 1400 and eth0["operstate"] == "up" and eth0["address"] == "02:fc:00:00:00:01"


def test_vm_builtin_modules_are_not_missing(vm_facts):
    mods = vm_facts["modules"]
    assert mods["nvidia"] == "loaded"  # /proc/modules
    assert mods["ib_core"] == mods["mlx5_core"] == mods["mlx5_ib"] == "builtin"  # /sys/module only
    assert mods["ib_uverbs"] == "builtin"  # only /sys/class/infiniband_verbs/abi_version shows it
    # nvidia_peermem ships outside the kernel tree: absent means not loaded. rdma_cm is in-tree and the capture has
    # no modules.builtin: a parameterless built-in leaves no /sys/module entry, so its state cannot be told
    assert mods["nvidia_peermem"] == "missing" and mods["rdma_cm"] == "unknown"
    assert vm_facts["modules_builtin"] is None  # modules.builtin was not captured


def test_vm_no_rdma_device_and_no_traceback(vm_facts):
    assert vm_facts["rdma_devices"] == {} and vm_facts["live"] is False
    assert vm_facts["kernel"] == "6.18.44-fc-v657-gpu"
    assert vm_facts["iommu"]["mode"] == "off"


def test_modules_builtin_file_is_read(tmp_path):
    # modules.builtin format: one path per line (kernel Documentation/kbuild/kbuild.rst, "modules.builtin")
    (tmp_path / "proc" / "sys" / "kernel").mkdir(parents=True)
    (tmp_path / "proc" / "sys" / "kernel" / "osrelease").write_text("6.8.0-45-generic\n")
    mods = tmp_path / "lib" / "modules" / "6.8.0-45-generic"
    mods.mkdir(parents=True)
    (mods / "modules.builtin").write_text("kernel/drivers/infiniband/core/rdma_cm.ko\nkernel/drivers/infiniband/core/ib_core.ko\n")
    f = hf.gather(str(tmp_path))
    assert f["modules"]["rdma_cm"] == "builtin" and f["modules"]["ib_uverbs"] == "missing"
    assert f["modules_builtin"] == "/lib/modules/6.8.0-45-generic/modules.builtin"


# --- public nvidia-smi topo -m captures ----------------------------------------------------------

def test_nccl_1453_topo_nic_columns():
    parsed = pcitopo.parse_topo_matrix(capture("nccl-1453-topo-h100", "nvidia-smi_topo_-m.txt"))
    assert sorted(parsed["gpu_nic"]) == [str(i) for i in range(8)]
    assert parsed["gpu_nic"]["0"]["NIC8"] == "PIX" and parsed["gpu_nic"]["7"]["NIC1"] == "PIX"
    assert all(parsed["gpu_nic"][str(g)]["NIC0"] == "SYS" for g in range(8))
    assert parsed["gpu_gpu"]["3"]["5"] == "NV18"
    assert parsed["gpu_affinity"]["4"] == {"cpus": "80-159", "numa": "1"}
    assert parsed["nic_names"] == {}  # the legend is beyond the stored excerpt


def test_nccl_tests_29_topo_legacy_columns():
    parsed = pcitopo.parse_topo_matrix(capture("nccl-tests-29-topo-mlx5-columns", "nvidia-smi_topo_-m.txt"))
    assert parsed["gpu_nic"]["2"] == {"mlx5_0": "PIX", "mlx5_1": "PIX"}
    assert parsed["gpu_nic"]["0"] == {"mlx5_0": "NODE", "mlx5_1": "NODE"}
    assert parsed["gpu_gpu"]["0"]["3"] == "NV1" and parsed["gpu_affinity"]["4"] == {"cpus": "24-47,72-95", "numa": None}
    assert parsed["gpu_nic"]["7"] == {"mlx5_0": "SYS", "mlx5_1": "SYS"}  # the truncated last row still reads


# --- ethtool -i ----------------------------------------------------------------------------------

def test_ethq_8_ethtool_inbox_mlx5():
    info = hf.parse_ethtool_i(capture("ethq-8-ethtool-cx4lx", "ethtool_-i_p3p1.txt"))
    assert info["driver"] == "mlx5_core" and info["bus-info"] == "0000:af:00.0"
    assert info["firmware-version"] == "14.23.1020" and info["expansion-rom-version"] == ""


# --- GPUDirect RDMA on the VM capture -------------------------------------------------------------

def test_vm_gdr_not_ready_without_rdma_device(vm_facts):
    gdr = vm_facts["gdr"]
    # open module 580 on 6.18: the driver side of dma-buf is there, but there is nothing to do RDMA with
    assert gdr["open_kernel_module"] is True and gdr["driver_version"] == "580.159.04"  # whole, as the capture prints it
    assert gdr["ready"] is False and gdr["mode"] is None and gdr["rdma_devices"] == 0
    assert gdr["reasons"][0] == "no RDMA device (/sys/class/infiniband is empty)"
    assert "peermem path: nvidia_peermem not loaded" in gdr["reasons"]
    assert any("rdma-core (libibverbs) not found" in r for r in gdr["reasons"])


def test_vm_preflight_raises_gdr_and_missing_nic(vm_facts):
    # one planned rail NIC on this host: nothing RDMA is there, and preflight must say so
    exp = checks.expectations([{"netdev": "eth0", "rdma": "mlx5_0", "gpu": 0, "mtu": 1400}])
    found = dict((f["id"], f) for f in checks.host_findings(vm_facts, exp, "h100-vm"))
    assert {"gdr_ready", "nic_present", "rdma_module_unknown"} <= set(found)
    assert "rdma_module" not in found  # the built-ins are not reported missing
    assert "no RDMA device" in found["gdr_ready"]["message"]
    # rdma_cm: no /sys/module entry and no modules.builtin in the capture - a warning that says so, not an error
    assert found["rdma_module_unknown"]["subject"] == "rdma_cm" and found["rdma_module_unknown"]["severity"] == "warning"
    assert "RDMA device mlx5_0 missing" in found["nic_present"]["message"]


# --- PCIe link: lspci LnkCap/LnkSta --------------------------------------------------------------

def test_rocm_92_lspci_speed_downgraded():
    link = pcitopo.parse_lspci_link(capture("rocm-tf-92-lspci-downgraded", "lspci_-vvv.txt"))
    assert (link["speed_gts"], link["max_speed_gts"], link["width"], link["max_width"]) == (2.5, 5.0, 1, 1)
    assert link["lspci_degraded"] == ["speed"]  # LnkCtl2/LnkSta2 lines are not read as LnkSta


def test_pciutils_128_speed_unknown_is_none():
    link = pcitopo.parse_lspci_link(capture("pciutils-128-lspci-cx5-socket-direct",
                                            "lspci_-s_17_00.0_-vvv_grep_Width_PCIeGen.txt"))
    assert (link["speed_gts"], link["max_speed_gts"], link["width"], link["max_width"]) == (None, None, 8, 8)
    assert link["lspci_degraded"] == []


def test_tinygrad_6_gpu_idle_line():
    link = pcitopo.parse_lspci_link(capture("tinygrad-ogkm-6-lspci-gpu-idle", "lspci_LnkSta_line.txt"))
    assert link["speed_gts"] == 2.5 and link["width"] == 16 and link["lspci_degraded"] == ["speed"]


def test_read_link_falls_back_to_lspci(tmp_path):
    # no link attributes in sysfs (the VM capture has none): lspci output for that function is used
    (tmp_path / "root" / "sys" / "bus" / "pci" / "devices" / "0000:b3:00.0").mkdir(parents=True)
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "lspci_-vvv_-s_0000_b3_00.0.txt").write_text(capture("rocm-tf-92-lspci-downgraded", "lspci_-vvv.txt"))
    from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot, ToolRunner
    link = pcitopo.read_link(SysRoot(str(tmp_path / "root")), "0000:b3:00.0", ToolRunner(capture_dir=str(tools)))
    assert link["source"] == "lspci" and link["degraded"] == ["speed"]
    link = pcitopo.read_link(SysRoot(str(tmp_path / "root")), "0000:b3:00.0", ToolRunner(live=False))
    assert link["source"] is None and link["degraded"] == []


def test_vm_capture_has_no_link_values(vm_facts):
    # the capture lists no link attributes and no lspci: unknown, not "ok" and not "degraded"
    link = vm_facts["pcie_links"]["0000:00:06.0"]
    assert link["source"] is None and link["speed_gts"] is None and link["degraded"] == []


# --- firmware: devlink, mlxfwmanager/mlxup, flint, ethtool ---------------------------------------

def test_netdev_2025_devlink_info_two_functions():
    info = hf.parse_devlink_info(capture("netdev-2025-mlx5-devlink-info", "devlink_dev_info.txt"))
    assert sorted(info) == ["auxiliary/mlx5_core.eth.0", "auxiliary/mlx5_core.eth.1", "pci/0000:08:00.0", "pci/0000:08:00.1"]
    fn0 = info["pci/0000:08:00.0"]
    assert fn0["info"]["driver"] == "mlx5_core" and fn0["info"]["board.serial_number"] == "MT2314XZ00YA"
    assert fn0["fixed"] == {"fw.psid": "MT_0000000894"}
    assert fn0["running"]["fw.version"] == fn0["stored"]["fw.version"] == "28.41.1000"
    assert info["auxiliary/mlx5_core.eth.0"]["info"] == {"driver": "mlx5_core.eth"}


def _runner_with(tmp_path, argv, text):
    from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import ToolRunner, capture_key
    (tmp_path / (capture_key(argv) + ".txt")).write_text(text)
    return ToolRunner(capture_dir=str(tmp_path))


def test_netdev_2025_devlink_is_the_firmware_source(tmp_path):
    runner = _runner_with(tmp_path, ["devlink", "dev", "info", "pci/0000:08:00.1"],
                          capture("netdev-2025-mlx5-devlink-info", "devlink_dev_info.txt"))
    fw = hf.read_firmware(runner, {"pci": "0000:08:00.1", "fw_ver": "28.41.1000", "board_id": "MT_0000000894"})
    assert fw["source"] == "devlink" and fw["version"] == "28.41.1000" and fw["psid"] == "MT_0000000894"
    assert fw["stored"] == "28.41.1000" and fw["tried"] == []


def test_netdev_2026_devlink_stored_unreadable_is_not_pending(tmp_path):
    runner = _runner_with(tmp_path, ["devlink", "dev", "info", "pci/0000:00:06.0"],
                          capture("netdev-2026-mlx5-devlink-stored-unreadable", "devlink_dev_info.txt"))
    fw = hf.read_firmware(runner, {"pci": "0000:00:06.0"})
    assert fw["version"] == "22.41.0188" and fw["psid"] == "MT_0000000436"
    assert fw["stored"] is None and fw["stored_unreadable"] is True


def test_innova2_5_mlxup_query_block(tmp_path):
    text = capture("innova2-5-mlxup-query", "mlxup_--query.txt")
    devs = hf.parse_mlxfwmanager(text)
    assert len(devs) == 1
    dev = devs[0]
    assert dev["device_type"] == "ConnectX5" and dev["psid"] == "MT_0000000158" and dev["pci_device_name"] == "pci0:6:0:0"
    assert (dev["fw_current"], dev["fw_available"]) == ("16.24.4020", "N/A") and dev["status"] == "No matching image found"
    # the same block answering `mlxfwmanager --query -d <bdf>`: devlink absent, so mlxfwmanager is the source
    runner = _runner_with(tmp_path, ["mlxfwmanager", "--query", "-d", "0000:06:00.0"], text)
    fw = hf.read_firmware(runner, {"pci": "0000:06:00.0", "fw_ver": "16.24.4020", "board_id": "MT_0000000158"})
    assert fw["source"] == "mlxfwmanager" and fw["tried"] == ["devlink"] and fw["available"] is None


def test_innova2_7_flint_query(tmp_path):
    text = capture("innova2-7-flint-query", "flint_query.txt")
    info = hf.parse_flint_query(text)
    assert info["fw_version"] == "16.28.2006" and info["psid"] == "MT_0000000158" and info["image_type"] == "FS4"
    runner = _runner_with(tmp_path, ["flint", "-d", "0000:06:00.0", "query"], text)
    fw = hf.read_firmware(runner, {"pci": "0000:06:00.0", "fw_ver": None, "board_id": None})
    assert fw["source"] == "flint" and fw["version"] == "16.28.2006" and fw["tried"] == ["devlink", "mlxfwmanager"]


def test_ethq_8_ethtool_firmware_without_psid():
    info = hf.parse_ethtool_i(capture("ethq-8-ethtool-cx4lx", "ethtool_-i_p3p1.txt"))
    assert hf.firmware_from_ethtool(info) == ("14.23.1020", None)
    assert hf.firmware_from_ethtool({"firmware-version": "28.39.1002 (MT_0000000838)"}) == ("28.39.1002", "MT_0000000838")


def test_no_tool_falls_back_to_sysfs():
    from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import ToolRunner
    fw = hf.read_firmware(ToolRunner(live=False), {"pci": "0000:08:00.0", "fw_ver": "28.41.1000", "board_id": "MT_0000000894"})
    assert fw["source"] == "sysfs" and fw["tried"] == ["devlink", "mlxfwmanager", "flint"] and fw["version"] == "28.41.1000"


def test_deepep_60_topo_mp_fourteen_nics():
    parsed = pcitopo.parse_topo_matrix(capture("deepep-60-topo-mp-14nics", "nvidia-smi_topo_-mp.txt"))
    assert sorted(parsed["gpu_nic"]) == ["0", "1", "2", "3"]
    assert len(parsed["gpu_nic"]["0"]) == 14 and parsed["gpu_nic"]["0"]["NIC0"] == "PIX"
    assert parsed["gpu_nic"]["3"]["NIC7"] == "PIX" and parsed["gpu_nic"]["3"]["NIC13"] == "SYS"
    assert parsed["gpu_gpu"]["0"]["4"] == "SYS" and parsed["gpu_affinity"]["2"] == {"cpus": "0-47,96-143", "numa": "0"}


# --- GID table and device identity witnesses --------------------------------------------------------

def _show_gids_rows(text):
    rows = []
    for line in text.splitlines()[2:]:
        cells = [c.strip() for c in line.split("\t")]
        cells = [c for c in cells if c]
        if len(cells) == 7:
            rows.append({"dev": cells[0], "index": int(cells[2]), "gid": cells[3], "ipv4": cells[4], "ver": cells[5]})
        elif len(cells) == 6:
            rows.append({"dev": cells[0], "index": int(cells[2]), "gid": cells[3], "ipv4": None, "ver": cells[4]})
    return rows


def test_nccl_1573_show_gids_gid_format(tmp_path):
    rows = _show_gids_rows(capture("nccl-1573-show-gids", "show_gids.txt"))
    assert len(rows) == 8
    for row in rows:
        assert hf.gid_to_ipv4(row["gid"]) == row["ipv4"], row  # link-local GIDs map to no IPv4
        if row["ipv4"]:
            assert hf.ipv4_to_gid(row["ipv4"]) == row["gid"]
    # the same table as sysfs holds it (types "IB/RoCE v1" / "RoCE v2", empty GIDs without a types file)
    port = tmp_path / "sys" / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        (port / sub).mkdir(parents=True)
    for index in range(8):
        (port / "gids" / str(index)).write_text("0000:0000:0000:0000:0000:0000:0000:0000\n")
    for row in (r for r in rows if r["dev"] == "mlx5_0"):
        (port / "gids" / str(row["index"])).write_text(row["gid"] + "\n")
        (port / "gid_attrs" / "types" / str(row["index"])).write_text("RoCE v2\n" if row["ver"] == "v2" else "IB/RoCE v1\n")
        (port / "gid_attrs" / "ndevs" / str(row["index"])).write_text("net1\n")
    f = hf.gather(str(tmp_path))
    gids = f["rdma_devices"]["mlx5_0"]["ports"]["1"]["gids"]
    assert [(g["index"], g["type"], g["ipv4"]) for g in gids] == [
        (4, "IB/RoCE v1", None), (5, "RoCE v2", None), (6, "IB/RoCE v1", "10.152.0.12"), (7, "RoCE v2", "10.152.0.12")]


def test_deepep_38_ibv_devinfo_identity():
    text = capture("deepep-38-ibv-devinfo-cx7", "ibv_devinfo.txt")
    values = dict(line.strip().split(":", 1) for line in text.splitlines() if ":" in line and "port:" not in line)
    values = dict((k.strip(), v.strip()) for k, v in values.items())
    assert hf.HCA_MODELS["MT" + values["vendor_part_id"]] == "ConnectX-7"
    dev = {"name": values["hca_id"], "model": "ConnectX-7", "hca_type": "MT4129", "board_id": values["board_id"],
           "fw_ver": values["fw_ver"]}
    assert checks.baseline_rule({"ConnectX-7/MT_0000000838": {"exact": "28.42.1000"}}, dev) == (
        "ConnectX-7/MT_0000000838", "exact", "28.42.1000")
