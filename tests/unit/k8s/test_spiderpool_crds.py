"""Every rendered manifest against Spiderpool's own CRDs (v1.2.1), not only our hand-written schemas."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.k8s.rails import manifests, render

from ..fabric.intents import lab, rail512, small
from .crds import crd_errors

VARIANTS = [
    ("lab-macvlan", lab, {}),
    ("rail512-macvlan", rail512, {}),
    ("multigroup-macvlan", lambda: small(servers=8, rails=2, spg=4), {"namespace": "ai", "prefix": "x-"}),
    ("lab-sriov", lab, {"cni": "sriov", "sriov_resource": "nvidia.com/rail{rail}"}),
    ("lab-macvlan-no-rdma", lab, {"enable_rdma": False}),
    ("lab-sriov-no-rdma", lab, {"cni": "sriov", "enable_rdma": False}),
]


@pytest.mark.parametrize("name,intent,options", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_every_manifest_passes_spiderpools_real_crd(name, intent, options):
    rendered = render(build_plan(intent()), **options)
    docs = manifests(rendered, "spiderpool") + manifests(rendered, "nad")
    assert docs
    for doc in docs:
        assert crd_errors(doc) == [], "%s %s" % (doc["kind"], doc["metadata"]["name"])


def test_the_crd_check_catches_what_the_api_server_would_prune():
    """The v0.x key must fail here: this is the check that would have caught enableRdma."""
    config = render(build_plan(lab()))["spidermultusconfigs"][0]
    config["spec"]["macvlan"]["enableRdma"] = True
    errors = crd_errors(config)
    assert len(errors) == 1 and errors[0].startswith("spec/macvlan: Additional properties")
    assert "'enableRdma'" in errors[0]
    config["spec"]["macvlan"].pop("enableRdma")
    config["spec"]["rdmaResourceName"] = "spidernet.io/rail0"  # the top-level form some docs show
    assert crd_errors(config) and crd_errors(config)[0].startswith("spec: Additional properties")
    pool = render(build_plan(lab()))["spiderippools"][0]
    pool["spec"]["ipVersion"] = 5
    assert [e for e in crd_errors(pool) if e.startswith("spec/ipVersion")]


def test_rdma_is_requested_the_v1_way():
    rendered = render(build_plan(lab()))
    for rail, config in enumerate(rendered["spidermultusconfigs"]):
        body = config["spec"]["macvlan"]
        assert body["rdmaResourceName"] == "spidernet.io/rail%d" % rail
        assert "enableRdma" not in body
    assert rendered["pod_resources"] == {"spidernet.io/rail%d" % r: 1 for r in range(4)}
    plugin = rendered["rdma_shared_device_plugin"]["configList"]
    assert [(p["resourcePrefix"], p["resourceName"], p["selectors"]["ifNames"]) for p in plugin] == [
        ("spidernet.io", "rail%d" % r, [config["spec"]["macvlan"]["master"][0]])
        for r, config in enumerate(rendered["spidermultusconfigs"])]
    sriov = render(build_plan(lab()), cni="sriov")
    assert all(c["spec"]["sriov"]["rdmaIsolation"] is True for c in sriov["spidermultusconfigs"])
    off = render(build_plan(lab()), enable_rdma=False)
    assert all("rdmaResourceName" not in c["spec"]["macvlan"] for c in off["spidermultusconfigs"])
    assert off["pod_resources"] == {} and off["rdma_shared_device_plugin"] is None
