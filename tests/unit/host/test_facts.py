import json
import os
import shutil

import pytest
from hypothesis import given, strategies as st

from ansible_collections.aifabric.roce.plugins.module_utils.host import facts as hf
from ansible_collections.aifabric.roce.plugins.module_utils.host import pcitopo
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot, ToolRunner, capture_key, format_cpulist, parse_cpulist

HOSTS = ("h100-cx7", "gpu8-nic4", "broken")


def gather(fixture_hosts, name, tools=True):
    base = os.path.join(fixture_hosts, name)
    return hf.gather(os.path.join(base, "root"), os.path.join(base, "tools") if tools else None)


def test_h100_inventory(fixture_hosts):
    f = gather(fixture_hosts, "h100-cx7")
    assert sorted(f["rdma_devices"]) == ["mlx5_%d" % i for i in range(8)]
    dev = f["rdma_devices"]["mlx5_4"]
    assert dev["netdevs"] == ["rail4"]
    assert dev["model"] == "ConnectX-7" and dev["board_id"] == "MT_0000000838" and dev["fw_ver"] == "28.39.1002"
    assert dev["numa_node"] == 1 and dev["pci"].startswith("0000:")
    assert f["netdevs"]["rail4"]["speed_mbps"] == 400000 and f["netdevs"]["rail4"]["mtu"] == 9000
    assert f["netdevs"]["rail4"]["ethtool"]["firmware-version"] == "28.39.1002 (MT_0000000838)"
    assert f["netdevs"]["rail4"]["ethtool"]["bus-info"] == dev["pci"]
    assert len(f["gpus"]) == 8 and [g["numa_node"] for g in f["gpus"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert dev["ports"]["1"]["state"] == "4: ACTIVE" and dev["ports"]["1"]["rate_gbps"] == 400


def test_gid_table_maps_rail_ip_to_rocev2_index(fixture_hosts):
    f = gather(fixture_hosts, "h100-cx7")
    gids = f["rdma_devices"]["mlx5_2"]["ports"]["1"]["gids"]
    v2 = [g for g in gids if g["ipv4"] == "10.100.8.1" and g["type"] == "RoCE v2"]
    assert [g["index"] for g in v2] == [3]
    assert hf.ipv4_to_gid("10.100.8.1") == v2[0]["gid"]
    assert all(g["ndev"] == "rail2" for g in gids)


def test_nvidia_smi_and_sysfs_agree(fixture_hosts):
    # the matrix is written from the spec's switch layout, the sysfs walk from the PCI tree: two derivations
    for name in HOSTS:
        f = gather(fixture_hosts, name)
        assert f["topology"]["source"] == "nvidia-smi"
        assert f["topology"]["gpu_nic"] == f["topology"]["gpu_nic_sysfs"], name


def test_relationships(fixture_hosts):
    f = gather(fixture_hosts, "h100-cx7")
    assert all(f["topology"]["gpu_nic"][str(i)]["mlx5_%d" % i] == "PIX" for i in range(8))
    assert f["topology"]["gpu_nic"]["0"]["mlx5_1"] == "NODE" and f["topology"]["gpu_nic"]["0"]["mlx5_4"] == "SYS"
    f = gather(fixture_hosts, "gpu8-nic4")
    assert f["topology"]["gpu_nic"]["2"]["mlx5_1"] == "PXB" and f["topology"]["gpu_nic"]["3"]["mlx5_1"] == "PXB"
    assert f["topology"]["gpu_nic"]["0"]["mlx5_1"] == "NODE" and f["topology"]["gpu_nic"]["4"]["mlx5_1"] == "SYS"


def test_without_tools_falls_back_to_sysfs_and_reports_missing(fixture_hosts):
    f = gather(fixture_hosts, "broken", tools=False)
    assert f["topology"]["source"] == "sysfs" and f["topology"]["nvidia_smi"] == "tool missing"
    assert f["topology"]["gpu_nic"]["3"]["mlx5_3"] == "SYS"
    assert f["netdevs"]["rail0"]["ethtool"] is None and f["netdevs"]["rail0"]["ethtool_status"] == "tool missing"


def test_gdr_modes(fixture_hosts):
    assert gather(fixture_hosts, "h100-cx7")["gdr"]["mode"] == "dmabuf"
    assert gather(fixture_hosts, "gpu8-nic4")["gdr"]["mode"] == "peermem"
    gdr = gather(fixture_hosts, "broken")["gdr"]
    assert gdr["ready"] is False and gdr["nvidia_peermem"] == "missing" and gdr["open_kernel_module"] is False


def test_iommu_and_irqbalance(fixture_hosts):
    f = gather(fixture_hosts, "h100-cx7")
    assert f["iommu"]["mode"] == "passthrough" and "iommu=pt" in f["iommu"]["cmdline"]
    assert f["irqbalance"]["running"] and f["irqbalance"]["enabled"]
    assert gather(fixture_hosts, "gpu8-nic4")["iommu"]["mode"] == "off"


def test_acs_from_config_space(fixture_hosts):
    f = gather(fixture_hosts, "broken")
    path = f["topology"]["acs_path"]["1"]["mlx5_1"]
    assert len(path) == 2
    assert all(pcitopo.acs_redirects(f["pci_bridges"][b]["acs"]) for b in path)
    clean = f["topology"]["acs_path"]["0"]["mlx5_0"]
    assert clean and not any(pcitopo.acs_redirects(f["pci_bridges"][b]["acs"]) for b in clean)
    assert f["ats"][f["rdma_devices"]["mlx5_0"]["pci"]] is False


def test_empty_root_is_not_a_traceback(tmp_path):
    f = hf.gather(str(tmp_path))
    assert f["rdma_devices"] == {} and f["gpus"] == [] and f["gdr"]["ready"] is False
    assert f["iommu"]["mode"] == "off" and f["irqbalance"]["running"] is False


def test_truncated_config_space(tmp_path):
    dev = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:01:00.0"
    dev.mkdir(parents=True)
    (dev / "config").write_bytes(b"\x00" * 64)  # what a non-root reader gets
    assert pcitopo.read_acs_ats(SysRoot(str(tmp_path)), "0000:01:00.0") == {"config_readable": False, "acs": None, "ats_enabled": None}


def test_legacy_topo_columns():
    text = "\tGPU0\tGPU1\tmlx5_0\tmlx5_1\tCPU Affinity\nGPU0\t X \tNV12\tPIX\tSYS\t0-23\nGPU1\tNV12\t X \tSYS\tPXB\t24-47\n\nLegend:\n"
    parsed = pcitopo.parse_topo_matrix(text)
    assert parsed["gpu_nic"] == {"0": {"mlx5_0": "PIX", "mlx5_1": "SYS"}, "1": {"mlx5_0": "SYS", "mlx5_1": "PXB"}}
    assert pcitopo.parse_topo_matrix("NVIDIA-SMI has failed") is None


def test_runner_capture_and_missing(tmp_path):
    (tmp_path / (capture_key(["ethtool", "-i", "rail0"]) + ".txt")).write_text("driver: mlx5_core\n")
    runner = ToolRunner(capture_dir=str(tmp_path))
    assert runner.run(["ethtool", "-i", "rail0"]).stdout == "driver: mlx5_core\n"
    assert runner.run(["ethtool", "-i", "rail9"]).missing
    assert runner.available("ethtool") and not runner.available("mlnx_qos")
    assert ToolRunner(live=False).run(["true"]).missing
    assert ToolRunner().run(["aifabric-no-such-tool"]).missing


@given(st.sets(st.integers(min_value=0, max_value=511)))
def test_cpulist_roundtrip(cpus):
    assert parse_cpulist(format_cpulist(cpus)) == sorted(cpus)


def test_intent_files_are_plan_shaped(fixture_hosts):
    intent = json.load(open(os.path.join(fixture_hosts, "gpu8-nic4", "intent.json")))
    assert [n["gpus"] for n in intent["nics"]] == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_peermem_registered_and_dmabuf_paths(fixture_hosts):
    gdr = gather(fixture_hosts, "gpu8-nic4")["gdr"]
    assert gdr["ready"] and gdr["mode"] == "peermem"
    assert gdr["peer_registration"] == "/sys/kernel/mm/memory_peers/nv_mem/version"
    # dma-buf: files show the prerequisites only; NCCL tests a registration at init, so readiness is unknown (None)
    gdr = gather(fixture_hosts, "h100-cx7")["gdr"]
    assert gdr["ready"] is None and gdr["mode"] == "dmabuf" and gdr["rdma_core"] == 50
    assert gdr["dmabuf"] == "prerequisites met" and gdr["dmabuf_tested"] is False


# NCCL's rule (NVIDIA/nccl src/transport/net_ib/gdr.cc ibGdrSupportInitOnce): GPUDirect RDMA through peer memory
# exactly when one of nv_mem/version, nv_mem_nc/version (under /sys/kernel/mm/memory_peers) or
# /sys/module/nvidia_peermem/version exists; a loaded module alone is not enough, and any one file is.
@pytest.mark.parametrize("files,modules_line,ready,probe", [
    ([], True, False, None),                                           # loaded, no memory_peers at all, no version file
    (["root/sys/kernel/mm/memory_peers/.keep"], True, False, None),    # loaded, peer-memory API there, not registered
    (["root/sys/module/nvidia_peermem/version"], True, True, "/sys/module/nvidia_peermem/version"),
    (["root/sys/kernel/mm/memory_peers/nv_mem_nc/version"], False, True, "/sys/kernel/mm/memory_peers/nv_mem_nc/version"),
    (["root/sys/kernel/mm/memory_peers/nv_mem/version"], False, True, "/sys/kernel/mm/memory_peers/nv_mem/version"),
])
def test_peermem_exactly_when_nccl_would_find_it(host_copy, files, modules_line, ready, probe):
    base = host_copy("gpu8-nic4")      # proprietary 535 driver: no dma-buf path to fall back on
    shutil.rmtree(os.path.join(base, "root/sys/kernel/mm/memory_peers"))
    if not modules_line:               # e.g. MLNX_OFED's legacy nv_peer_mem registering nv_mem / nv_mem_nc
        path = os.path.join(base, "root/proc/modules")
        lines = [ln for ln in open(path).read().splitlines() if not ln.startswith("nvidia_peermem ")]
        open(path, "w").write("\n".join(lines))
        shutil.rmtree(os.path.join(base, "root/sys/module/nvidia_peermem"))
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(base, rel)), exist_ok=True)
        open(os.path.join(base, rel), "w").write("1.0\n")
    gdr = hf.gather(os.path.join(base, "root"), os.path.join(base, "tools"))["gdr"]
    assert gdr["nvidia_peermem"] == ("loaded" if modules_line else "missing")
    assert gdr["ready"] is ready and gdr["peer_registration"] == probe
    assert gdr["mode"] == ("peermem" if ready else None)
    if not ready:
        assert any("none of the files NCCL probes exists" in r for r in gdr["reasons"]), gdr["reasons"]


def test_peermem_loaded_but_not_registered(host_copy):
    # planted: the peer-memory API is there (memory_peers/) but nvidia_peermem did not register
    base = host_copy("gpu8-nic4")
    os.remove(os.path.join(base, "root/sys/kernel/mm/memory_peers/nv_mem/version"))
    os.rmdir(os.path.join(base, "root/sys/kernel/mm/memory_peers/nv_mem"))
    gdr = hf.gather(os.path.join(base, "root"), os.path.join(base, "tools"))["gdr"]
    assert gdr["nvidia_peermem"] == "loaded" and gdr["ready"] is False
    assert any("nvidia_peermem loaded, but none of the files NCCL probes exists" in r for r in gdr["reasons"])
    # proprietary 535 driver: the dma-buf path is not there either, and the reasons say why
    assert any("open kernel modules" in r for r in gdr["reasons"])


def test_dmabuf_needs_rdma_core(host_copy):
    base = host_copy("h100-cx7")
    os.remove(os.path.join(base, "root/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0"))
    gdr = hf.gather(os.path.join(base, "root"), os.path.join(base, "tools"))["gdr"]
    assert gdr["ready"] is False and gdr["dmabuf_capable"] is False
    assert any("rdma-core (libibverbs) not found" in r for r in gdr["reasons"])
    lib = os.path.join(base, "root/usr/lib64/libibverbs.so.1.14.33.0")  # rdma-core 33: before dma-buf
    os.makedirs(os.path.dirname(lib))
    open(lib, "w").close()
    gdr = hf.gather(os.path.join(base, "root"), os.path.join(base, "tools"))["gdr"]
    assert any("rdma-core >= 34 (have 33" in r for r in gdr["reasons"])


def test_ethtool_firmware_split(fixture_hosts):
    nd = gather(fixture_hosts, "h100-cx7")["netdevs"]["rail0"]
    assert nd["ethtool_firmware"] == {"version": "28.39.1002", "psid": "MT_0000000838", "package": None}
    assert gather(fixture_hosts, "h100-cx7", tools=False)["netdevs"]["rail0"]["ethtool_firmware"] is None
