"""rdma_facts / rdma_preflight as Ansible runs them (in-process), on the real VM capture and a planted fixture."""
import importlib.util
import os

from ansible_collections.aifabric.roce.plugins.modules import rdma_facts, rdma_preflight

from ..module_runner import run_module

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.join(HERE, "..", "..", "fixtures", "hosts", "captures")


def _vm_tree(tmp_path):
    spec = importlib.util.spec_from_file_location("from_capture", os.path.join(CAPTURES, "..", "from_capture.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build(os.path.join(CAPTURES, "h100-vm-2026-11-22", "capture.txt"), str(tmp_path))


def test_facts_and_preflight_modules_on_the_vm_capture(tmp_path, capsys):
    base = _vm_tree(tmp_path)
    res = run_module(rdma_facts, {"root": os.path.join(base, "root"), "tool_output_dir": os.path.join(base, "tools"),
                                  "netdevs": ["eth0"]}, capsys)
    assert res["rc"] == 0 and res["changed"] is False
    facts = res["ansible_facts"]["aifabric_rdma"]
    assert facts["live"] is False and facts["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
    res = run_module(rdma_preflight, {"facts": facts, "host": "h100-vm", "require_ats": "always",
                                      "nics": [{"netdev": "eth0", "rdma": "mlx5_0", "gpu": 0}]}, capsys)
    assert res["rc"] == 0
    found = set(f["id"] for f in res["findings"])
    assert {"gdr_ready", "nic_present", "synthetic_root"} <= found and res["errors"] >= 2


def test_preflight_module_rejects_a_malformed_baseline(capsys):
    res = run_module(rdma_preflight, {"facts": {}, "host": "h", "nics": [],
                                      "firmware_baseline": {"ConnectX-7": {"max": "1.0"}}}, capsys)
    assert res["rc"] == 1 and res["failed"]
    assert "firmware_baseline: ConnectX-7: a dict needs exactly one of min, exact" in res["msg"]
