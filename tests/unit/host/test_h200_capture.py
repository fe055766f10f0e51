"""Replay of the real H200 VM capture (tests/fixtures/hosts/captures/h200-vm-2026-11-26, taken with
tools/capture_host.sh) through the host readers, and the verdicts a careful engineer gives that host."""
import importlib.util
import json
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host import checks
from ansible_collections.aifabric.roce.plugins.module_utils.host import facts as hf

HERE = os.path.dirname(os.path.abspath(__file__))
CAP = os.path.join(HERE, "..", "..", "fixtures", "hosts", "captures", "h200-vm-2026-11-26")


def _from_capture():
    spec = importlib.util.spec_from_file_location("from_capture", os.path.join(CAP, "..", "..", "from_capture.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def live():
    """The readers' own output on the live host (the kit's facts.json)."""
    with open(os.path.join(CAP, "facts.json")) as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def replay(tmp_path_factory, live):
    out = _from_capture().build(os.path.join(CAP, "trace.txt"), str(tmp_path_factory.mktemp("h200")), live)
    return hf.gather(os.path.join(out, "root"), os.path.join(out, "tools"), netdevs=["eth0"])


def test_trace_is_the_kit_format_and_parses():
    mod = _from_capture()
    with open(os.path.join(CAP, "trace.txt")) as handle:
        secs = mod.sections(handle.read())
    commands = [cmds[0] for cmds, _lines in secs]
    assert commands[0] == "uname -a" and "nvidia-smi topo -m" in commands
    # '# rc=0' glued to the tr output is not a module name
    assert mod.find(secs, "cat /proc/modules | cut -d' ' -f1") == ["nvidia nvidia_uvm"]


def test_h200_gpu_found_by_pci_id_and_c2c_read(replay, live):
    gpus = replay["gpus"]
    assert [(g["pci"], g["device_id"], g["vendor"], g["name"]) for g in gpus] == [
        ("0000:00:06.0", "0x2335", "nvidia", "NVIDIA H200")]
    assert gpus[0]["c2c"] is False  # nvidia-smi -q: "GPU C2C Mode : Disabled" (PCIe-attached)
    # the live reader named it through nvidia-smi; the replay (no such query in the trace) through the PCI id
    assert live["gpus"][0]["name"] == "NVIDIA H200" and live["gpus"][0]["device_id"] == "0x2335"
    assert replay["topology"]["source"] == "nvidia-smi"
    assert replay["topology"]["gpu_affinity"] == {"0": {"cpus": "0-15", "numa": "0"}}
    assert replay["stack"] == {"gpu_vendor": "nvidia", "gpu_vendors": ["nvidia"], "nic_drivers": []}


def test_h200_no_rdma_device_so_gdr_not_ready_for_that_reason(replay, live):
    for gdr in (replay["gdr"], live["gdr"]):
        assert gdr["ready"] is False and gdr["rdma_devices"] == 0
        assert gdr["reasons"][0] == "no RDMA device (/sys/class/infiniband is empty)"
        # not blamed on the driver: the dma-buf prerequisites are met (open module R580, 6.18, rdma-core 50)
        assert gdr["dmabuf"] == hf.DMABUF_PREREQUISITES_MET
        assert (gdr["open_kernel_module"], gdr["rdma_core"]) == (True, 50)
        assert not any(r.startswith("dma-buf path") for r in gdr["reasons"])
    assert replay["gdr"]["nvidia_peermem"] == "missing"  # out-of-tree module, not loaded
    # the driver version whole, as the trace prints it ("... Open Kernel Module for x86_64  580.159.04  Release Build");
    # the live reader of the day cut it to major.minor
    assert replay["gdr"]["driver_version"] == "580.159.04" and live["gdr"]["driver_version"] == "580.159"
    # dma-buf prerequisites met: loading nvidia_peermem is not a reason (the live reader of the day said it was)
    assert replay["gdr"]["reasons"] == ["no RDMA device (/sys/class/infiniband is empty)"]
    assert "peermem path: nvidia_peermem not loaded" in live["gdr"]["reasons"]


def test_h200_rdma_cm_builtin_by_the_kernels_own_rule(replay, live):
    assert live["modules"]["rdma_cm"] == "missing" and live["modules_builtin"] is None  # the old misread
    mods = replay["modules"]
    assert replay["modules_builtin"] is None
    # no /sys/module/rdma_cm and no modules.builtin, but ib_core and rdma_ucm are built in: the kernel's Makefile
    # builds rdma_cm with ib_core whenever rdma_ucm exists (CONFIG_INFINIBAND_ADDR_TRANS)
    assert mods["rdma_cm"] == "builtin"
    assert replay["modules_inferred"]["rdma_cm"].startswith("builtin: ib_core is builtin and rdma_ucm is present")
    assert mods["ib_core"] == mods["mlx5_core"] == mods["mlx5_ib"] == "builtin"
    assert mods["nvidia"] == "loaded" and mods["nvidia_peermem"] == "missing"


def test_h200_preflight_verdict(replay):
    exp = checks.expectations([{"netdev": "eth0", "rdma": "mlx5_0", "gpu": 0, "mtu": 1500}])
    found = checks.host_findings(replay, exp, "h200-vm")
    ids = dict((f["id"], f) for f in found)
    assert "rdma_module" not in ids  # nothing is reported missing that may be built in
    assert "rdma_module_unknown" not in ids  # no warning nobody can act on: every module state is known
    # every finding left is one the operator can act on: the plan's NIC and the GDR it needs are absent
    assert sorted(ids) == ["gdr_ready", "nic_present", "synthetic_root"]
    assert "no RDMA device" in ids["gdr_ready"]["message"] and ids["gdr_ready"]["severity"] == "error"
    assert "RDMA device mlx5_0 missing" in ids["nic_present"]["message"]
    assert "gpu_present" not in ids  # the H200 is there


# --- h200-vm-2026-11-26b: the second VM, with the kit's module and library listings --------------

CAP_B = os.path.join(CAP + "b")


@pytest.fixture(scope="module")
def replay_b(tmp_path_factory):
    out = _from_capture().build(os.path.join(CAP_B, "trace.txt"), str(tmp_path_factory.mktemp("h200b")))
    return hf.gather(os.path.join(out, "root"), os.path.join(out, "tools"), netdevs=["eth0"])


def test_h200b_module_states_from_the_listings_alone(replay_b):
    mods = replay_b["modules"]
    assert mods["ib_core"] == mods["mlx5_core"] == mods["mlx5_ib"] == "builtin"  # /sys/module
    assert mods["ib_uverbs"] == "builtin"  # /sys/class/infiniband_verbs/abi_version
    assert mods["rdma_ucm"] == "builtin"  # misc device rdma_cm
    assert mods["rdma_cm"] == "builtin"  # neither /sys/module nor a class, no /lib/modules: the Makefile's rule
    assert mods["nvidia"] == "loaded" and mods["nvidia_peermem"] == "missing"


def test_h200b_gpu_named_by_nvidia_smi_and_gdr_verdict(replay_b):
    gpu = replay_b["gpus"][0]
    assert (gpu["device_id"], gpu["name"], gpu["name_source"], gpu["vbios"], gpu["c2c"]) == (
        "0x2335", "NVIDIA H200", "nvidia-smi", "96.00.A5.00.1A", False)
    gdr = replay_b["gdr"]
    assert gdr["ready"] is False and gdr["reasons"][0].startswith("no RDMA device")
    assert gdr["dmabuf"] == hf.DMABUF_PREREQUISITES_MET and gdr["libibverbs"].endswith("libibverbs.so.1.14.50.0")
    link = replay_b["pcie_links"].get(gpu["pci"])
    assert link is None or link["degraded"] == []  # the trace prints 32 GT/s x16 of 32 GT/s x16
