"""k8s_rail_networks module: output, file write, check mode, idempotence."""

import yaml

from ansible_collections.aifabric.roce.plugins.modules import k8s_rail_networks

from ..fabric.intents import lab, small
from ..module_runner import run_module


def run(args, capsys):
    return run_module(k8s_rail_networks, args, capsys)


def test_check_mode_then_write_then_no_change(tmp_path, capsys):
    dest = tmp_path / "k8s" / "rails.yml"
    args = {"fabric": lab(), "dest": str(dest), "_ansible_check_mode": True, "_ansible_diff": True}
    result = run(args, capsys)
    assert result["changed"] and not dest.exists() and "SpiderIPPool" in result["diff"]["after"]
    args["_ansible_check_mode"] = False
    assert run(args, capsys)["changed"]
    docs = list(yaml.safe_load_all(dest.read_text()))
    assert [d["kind"] for d in docs] == ["SpiderIPPool"] * 4 + ["SpiderMultusConfig"] * 4
    assert run(args, capsys)["changed"] is False


def test_nad_flavour_and_annotations(capsys):
    result = run({"fabric": lab(), "flavour": "nad", "namespace": "gpu"}, capsys)
    assert result["changed"] is False
    assert [d["kind"] for d in result["manifests"]] == ["NetworkAttachmentDefinition"] * 4
    assert result["pod_annotations"]["k8s.v1.cni.cncf.io/networks"].startswith("gpu/rail0,gpu/rail1")


def test_p2p_fails_cleanly(capsys):
    result = run({"fabric": small(scheme="p2p")}, capsys)
    assert result["failed"] and "subnet_per_leaf" in result["msg"]


def test_rdma_options_reach_the_manifests(capsys):
    result = run({"fabric": lab(), "rdma_resource": "rdma/shared_rail{rail}"}, capsys)
    configs = [d for d in result["manifests"] if d["kind"] == "SpiderMultusConfig"]
    assert [c["spec"]["macvlan"]["rdmaResourceName"] for c in configs] == ["rdma/shared_rail%d" % r for r in range(4)]
    assert result["pod_resources"] == {"rdma/shared_rail%d" % r: 1 for r in range(4)}
    assert result["rdma_shared_device_plugin"]["configList"][3]["resourceName"] == "shared_rail3"
    off = run({"fabric": lab(), "rdma": False}, capsys)
    assert all("rdmaResourceName" not in d["spec"].get("macvlan", {}) for d in off["manifests"])
    assert off["rdma_shared_device_plugin"] is None
    bad = run({"fabric": lab(), "rdma_resource": "noslash"}, capsys)
    assert bad["failed"] and "rdma_resource" in bad["msg"] and "Fix:" in bad["msg"]
