import copy
import json
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.host import checks
from ansible_collections.aifabric.roce.plugins.module_utils.host import facts as hf

HOSTS = ("h100-cx7", "gpu8-nic4", "broken", "degraded")
# The problems planted in tests/fixtures/hosts/gen_fixtures.py (broken_spec, degraded_spec), and nothing else.
SYNTH = ("synthetic_root", "root")  # every fixture says it is a tree, not a live host
DMABUF = ("gdr_dmabuf_untested", "gpudirect_rdma")  # h100-cx7: GPUDirect RDMA through dma-buf only, untested
PLANTED = {
    # dma-buf only (open module 550, rdma-core 50, no peer-memory file): NCCL's registration test is not run here
    "h100-cx7": {SYNTH, DMABUF},
    "gpu8-nic4": {SYNTH},
    "broken": {SYNTH, ("fw_host_mixed", "ConnectX-7"), ("fw_fleet_mixed", "ConnectX-7"), ("gdr_ready", "gpudirect_rdma"),
               ("gpu_nic_affinity", "rail3<->GPU3"), ("acs_p2p", "rail1<->GPU1")},
    "degraded": {SYNTH, DMABUF, ("pcie_link", "rail2"), ("pcie_gpu_speed", "GPU5"), ("ats", "rail6"), ("iommu_mode", "iommu"),
                 ("fw_baseline", "mlx5_1"), ("fw_host_mixed", "ConnectX-7"), ("fw_fleet_mixed", "ConnectX-7")},
}
BASELINE = {"ConnectX-7": "28.36.1010"}


@pytest.fixture(scope="module")
def fleet(fixture_hosts):
    out = {}
    for name in HOSTS:
        base = os.path.join(fixture_hosts, name)
        intent = json.load(open(os.path.join(base, "intent.json")))
        exp = checks.expectations(intent["nics"], gid_index=intent["nccl"]["NCCL_IB_GID_INDEX"], firmware_baseline=BASELINE)
        out[name] = (hf.gather(os.path.join(base, "root"), os.path.join(base, "tools")), exp)
    return out


def ids(findings):
    return set((f["id"], f["subject"]) for f in findings)


def test_exactly_the_planted_problems(fleet):
    fleet_f = checks.fleet_findings(dict((h, v[0]) for h, v in fleet.items()), dict((h, v[1]) for h, v in fleet.items()))
    for host, (facts, exp) in fleet.items():
        found = ids(checks.host_findings(facts, exp, host)) | ids(f for f in fleet_f if f["host"] == host)
        assert found == PLANTED[host], host


def test_finding_shape_and_detail(fleet):
    facts, exp = fleet["broken"]
    by_id = dict((f["id"], f) for f in checks.host_findings(facts, exp, "broken"))
    assert set(by_id["acs_p2p"]) == {"id", "severity", "host", "subject", "expected", "actual", "message"}
    assert by_id["gpu_nic_affinity"]["actual"] == "SYS" and "NUMA 1" in by_id["gpu_nic_affinity"]["message"]
    assert by_id["fw_host_mixed"]["actual"]["28.36.1010"] == ["mlx5_5"]
    assert by_id["gdr_ready"]["severity"] == "error"


def test_baseline(fleet):
    facts, exp = fleet["broken"]
    exp = dict(exp, firmware_baseline={"MT4129": "28.39.1002"})
    base = [f for f in checks.host_findings(facts, exp, "broken") if f["id"] == "fw_baseline"]
    assert [(f["subject"], f["actual"]) for f in base] == [("mlx5_5", "28.36.1010")]


@pytest.mark.parametrize("mutate,expected", [
    (lambda f: f["netdevs"]["rail2"].update(operstate="down"), {("link_up", "rail2")}),
    (lambda f: f["netdevs"]["rail2"].update(speed_mbps=200000), {("link_speed", "rail2")}),
    (lambda f: f["netdevs"]["rail6"].update(mtu=1500), {("mtu", "rail6")}),
    (lambda f: f["modules"].update(mlx5_ib="missing"), {("rdma_module", "mlx5_ib")}),
    # translated DMA also makes ATS on the rail NICs required (require_ats: auto); the fixture NICs have it off
    (lambda f: f["iommu"].update(mode="translated"), {("iommu_mode", "iommu")} | {("ats", "rail%d" % i) for i in range(8)}),
    (lambda f: f["rdma_devices"]["mlx5_0"]["ports"]["1"]["gids"].pop(3), {("roce_gid", "rail0")}),
    (lambda f: [g.update(index=5) for g in f["rdma_devices"]["mlx5_0"]["ports"]["1"]["gids"] if g["type"] == "RoCE v2" and g["ipv4"]],
     {("roce_gid", "rail0")}),
    (lambda f: f["rdma_devices"]["mlx5_7"].update(netdevs=["eth9"]), {("nic_present", "rail7")}),
    (lambda f: f["gpus"].pop(), {("gpu_present", "GPU7")}),
])
def test_each_check_fires_alone(fleet, mutate, expected):
    facts, exp = fleet["h100-cx7"]
    facts = copy.deepcopy(facts)
    mutate(facts)
    assert ids(checks.host_findings(facts, exp, "h100-cx7")) == expected | {SYNTH, DMABUF}


def test_severity_override_and_summary(fleet):
    facts, exp = fleet["broken"]
    exp = dict(exp, severity={"gdr_ready": "warning", "acs_p2p": "warning", "gpu_nic_affinity": "warning", "fw_host_mixed": "warning"})
    findings = checks.host_findings(facts, exp, "broken")
    assert all(f["severity"] == "warning" for f in findings)
    summary = checks.summarize({"broken": findings, "ok": []}, [], strict=True)
    assert summary["hosts"]["broken"]["status"] == "warn" and summary["hosts"]["ok"]["status"] == "pass"
    strict = checks.summarize({"broken": checks.host_findings(facts, fleet["broken"][1], "broken")}, [], strict=True)
    lenient = checks.summarize({"broken": checks.host_findings(facts, fleet["broken"][1], "broken")}, [], strict=False)
    assert strict["hosts"]["broken"]["status"] == "fail" and lenient["hosts"]["broken"]["status"] == "warn"
    md = checks.render_markdown(strict)
    assert "| broken | fail | 4 | 1 |" in md and "| gdr_ready | broken |" in md


def test_plan_host_intent_is_accepted_as_is(fixture_hosts):
    # the lab plan's gpu01 (4x 100G rails) against the 4-NIC fixture: same names, planned speed differs
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    plan = build_plan(yaml.safe_load(open(os.path.join(root, "inventories/lab/group_vars/all/fabric.yml")))["fabric"])
    host = plan["hosts"]["gpu01"]
    assert "NCCL_IB_GID_INDEX" not in host["nccl"]   # the lab intent sets no gid_index: NCCL finds the GID itself
    exp = checks.expectations(host["nics"], gid_index=host["nccl"].get("NCCL_IB_GID_INDEX"))
    facts = hf.gather(os.path.join(fixture_hosts, "gpu8-nic4", "root"), os.path.join(fixture_hosts, "gpu8-nic4", "tools"))
    found = ids(checks.host_findings(facts, exp, "gpu01"))
    assert {("link_speed", "rail%d" % i) for i in range(4)} <= found
    assert all(f[0] in ("link_speed", "roce_gid", "gpu_nic_affinity", "synthetic_root") for f in found)


def test_degraded_pcie_and_ats_detail(fleet):
    facts, exp = fleet["degraded"]
    by_id = dict((f["id"], f) for f in checks.host_findings(facts, exp, "degraded"))
    assert by_id["pcie_link"]["actual"] == {"speed_gts": 32.0, "width": 8} and by_id["pcie_link"]["severity"] == "error"
    assert "x8 (capable of 32 GT/s x16, from sysfs)" in by_id["pcie_link"]["message"]
    assert by_id["pcie_gpu_speed"]["severity"] == "warning" and by_id["pcie_gpu_speed"]["actual"]["speed_gts"] == 2.5
    assert by_id["ats"]["actual"] is False and "translated" in by_id["ats"]["message"]
    # ATS is judged only where the platform needs it: never -> quiet; always on a passthrough host -> fires
    quiet = dict(exp, require_ats="never")
    assert "ats" not in set(f["id"] for f in checks.host_findings(facts, quiet, "degraded"))
    healthy, hexp = fleet["h100-cx7"]
    loud = ids(checks.host_findings(healthy, dict(hexp, require_ats="always"), "h100-cx7"))
    assert loud == {("ats", "rail%d" % i) for i in range(8)} | {SYNTH, DMABUF}


def test_pcie_unknown_values_are_not_findings(fleet):
    facts, exp = fleet["h100-cx7"]
    facts = copy.deepcopy(facts)
    for link in facts["pcie_links"].values():
        link.update(speed_gts=None, width=None, source=None, degraded=[])
    assert ids(checks.host_findings(facts, exp, "h100-cx7")) == {SYNTH, DMABUF}


def test_firmware_read_with_devlink_on_degraded(fleet):
    facts, exp = fleet["degraded"]
    dev = facts["rdma_devices"]["mlx5_1"]
    assert dev["firmware"]["source"] == "devlink" and dev["firmware"]["version"] == "28.35.2000"
    assert dev["firmware"]["stored"] == "28.39.1002"  # flashed, not yet activated
    base = [f for f in checks.host_findings(facts, exp, "degraded") if f["id"] == "fw_baseline"]
    assert [(f["subject"], f["actual"], f["expected"]) for f in base] == [("mlx5_1", "28.35.2000", ">= 28.36.1010")]
    assert "read with devlink" in base[0]["message"] and "PSID MT_0000000838" in base[0]["message"]
    assert fleet["h100-cx7"][0]["rdma_devices"]["mlx5_0"]["firmware"]["source"] == "sysfs"


@pytest.mark.parametrize("baseline,expected", [
    ({"ConnectX-7/MT_0000000838": {"exact": "28.39.1003"}}, {("fw_baseline", "mlx5_%d" % i) for i in range(8)}),
    ({"MT_0000000838": "28.39.1002"}, set()),
    ({"MT_0000000838": {"exact": "28.39.1002"}, "ConnectX-7": "99.0.0"}, set()),  # PSID key is more specific
    ({"ConnectX-7/MT_0000009999": "99.0.0"}, set()),  # another PSID: does not apply
    ({"MT4129": {"min": "28.40.0"}}, {("fw_baseline", "mlx5_%d" % i) for i in range(8)}),
])
def test_baseline_keys_and_kinds(fleet, baseline, expected):
    facts, exp = fleet["h100-cx7"]
    assert ids(checks.host_findings(facts, dict(exp, firmware_baseline=baseline), "h100-cx7")) == expected | {SYNTH, DMABUF}


def test_baseline_shape_errors():
    assert checks.baseline_errors({"ConnectX-7": "28.39.1002", "MT_1": {"exact": "1.2.3"}}) == []
    assert checks.baseline_errors({"ConnectX-7": {"max": "1"}}) == ["ConnectX-7: a dict needs exactly one of min, exact (got max)"]
    assert len(checks.baseline_errors({"a": ["1"]})) == 1


def test_synthetic_root_finding_names_the_tree(fleet):
    facts, exp = fleet["h100-cx7"]
    synth = [f for f in checks.host_findings(facts, exp, "h100-cx7") if f["id"] == "synthetic_root"]
    assert len(synth) == 1 and synth[0]["severity"] == "warning" and synth[0]["actual"] == facts["root"]
    assert "not the live system" in synth[0]["message"] and facts["tool_output_dir"] in synth[0]["message"]
    live = dict(facts, root="/", live=True)
    assert "synthetic_root" not in set(f["id"] for f in checks.host_findings(live, exp, "h100-cx7"))


def _rail2_port(facts):
    bdf = facts["rdma_devices"]["mlx5_2"]["pci"]
    return bdf, facts["pcie_links"][bdf]["port"]


@pytest.mark.parametrize("port_width,slot", [(8, "7"), (8, None), (16, "7")])
def test_pcie_link_names_the_slot_when_the_slot_is_the_limit(host_copy, port_width, slot):
    # degraded: rail2's NIC (capable of Gen5 x16) runs x8. Its upstream port capable of x8 only: the slot is the limit
    # (the kernel's own words: "limited by ... x8 link at <port> (capable of ... x16 link)"); capable of x16: a fault
    base = host_copy("degraded")
    root, tools = os.path.join(base, "root"), os.path.join(base, "tools")
    bdf, port = _rail2_port(hf.gather(root, tools))
    port_dir = os.path.realpath(os.path.join(root, "sys/bus/pci/devices", port))
    for name, value in (("max_link_width", str(port_width)), ("max_link_speed", "32.0 GT/s PCIe"),
                        ("current_link_width", "8"), ("current_link_speed", "32.0 GT/s PCIe")):
        with open(os.path.join(port_dir, name), "w") as fh:
            fh.write(value + "\n")
    if slot:
        os.makedirs(os.path.join(root, "sys/bus/pci/slots", slot))
        with open(os.path.join(root, "sys/bus/pci/slots", slot, "address"), "w") as fh:
            fh.write(bdf.rsplit(".", 1)[0] + "\n")
    facts = hf.gather(root, tools)
    intent = json.load(open(os.path.join(base, "intent.json")))
    found = [f for f in checks.host_findings(facts, checks.expectations(intent["nics"]), "degraded") if f["id"] == "pcie_link"]
    assert [f["subject"] for f in found] == ["rail2"]
    message = found[0]["message"]
    if port_width == 8:
        assert facts["pcie_links"][bdf]["limited_by"] == "slot"
        assert "the slot is the limit" in message and "capable of 32 GT/s x8 only" in message
        assert ("slot %s (port %s)" % (slot, port) if slot else "the slot at port %s" % port) in message
        assert found[0]["actual"]["limited_by"] == "slot" and found[0]["actual"]["slot"] == slot
    else:
        assert facts["pcie_links"][bdf]["limited_by"] is None and facts["pcie_links"][bdf]["slot"] == slot
        assert "degraded (width)" in message and "slot" not in message
