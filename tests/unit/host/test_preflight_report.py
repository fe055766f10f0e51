"""The fleet summary (module rdma_preflight_report and its action plugin, module_utils/host/preflight_report.py) on
the fixture fleet: the facts given beside the entries (what role host_preflight passes) or inside them (the module's
older form) give the same summary and files; check mode writes nothing; a host name that would escape dest is refused."""
import json
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host import facts as hf
from ansible_collections.aifabric.roce.plugins.module_utils.host import preflight, preflight_report
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError
from ansible_collections.aifabric.roce.plugins.modules import rdma_preflight_report

from ..module_runner import run_module

HOSTS = ("h100-cx7", "gpu8-nic4", "broken", "degraded")


@pytest.fixture(scope="module")
def checked(fixture_hosts):
    """Per host: the gathered facts and rdma_preflight's result (findings, nics), as the role registers it."""
    out = {}
    for name in HOSTS:
        base = os.path.join(fixture_hosts, name)
        intent = json.load(open(os.path.join(base, "intent.json")))
        facts = hf.gather(os.path.join(base, "root"), os.path.join(base, "tools"))
        result = preflight.run(dict(facts=facts, host=name, nics=intent["nics"], gid_index=None, mtu=None,
                                    rdma_modules=None, stack={}, firmware_baseline={}, gpu_nic_allowed=["PIX", "PXB", "P2C"],
                                    require_gdr=True, require_acs_off=True, require_ats="auto",
                                    iommu_allowed=["off", "passthrough"], severity={}))
        out[name] = (facts, result)
    return out


def params(checked, dest, beside=True):
    if beside:
        hosts = dict((h, r) for h, (_f, r) in checked.items())
        facts = dict((h, f) for h, (f, _r) in checked.items())
    else:
        hosts = dict((h, {"facts": f, "findings": r["findings"], "nics": r["nics"]}) for h, (f, r) in checked.items())
        facts = {}
    return dict(hosts=hosts, facts=facts, dest=str(dest), strict=True, fleet_severity="warning")


def test_the_check_returns_the_nics_it_checked(checked):
    assert [n["rdma"] for n in checked["broken"][1]["nics"]][:2] == ["mlx5_0", "mlx5_1"]


def test_facts_beside_the_entries_give_the_same_summary_and_files(checked, tmp_path):
    beside = preflight_report.run(params(checked, tmp_path / "beside"), False)
    inside = preflight_report.run(params(checked, tmp_path / "inside", beside=False), False)
    assert beside["summary"] == inside["summary"] and beside["fleet_findings"] == inside["fleet_findings"]
    # the fleet firmware check needs the facts: the two hosts the fixtures plant a mixed ConnectX-7 on
    assert sorted(f["host"] for f in beside["fleet_findings"]) == ["broken", "degraded"]
    # strict: the planted broken and degraded hosts fail, the others warn (each is a synthetic tree, not a live host)
    assert dict((h, v["status"]) for h, v in beside["summary"]["hosts"].items()) == {
        "h100-cx7": "warn", "gpu8-nic4": "warn", "broken": "fail", "degraded": "fail"}
    for name in ["preflight.json", "preflight.md"] + ["%s.json" % h for h in HOSTS]:
        assert (tmp_path / "beside" / name).read_text() == (tmp_path / "inside" / name).read_text()
    assert beside["changed"] is True and beside["diff"][0]["after_header"].endswith("preflight.md")
    again = preflight_report.run(params(checked, tmp_path / "beside"), False)
    assert again["changed"] is False and again["diff"] == []


def test_without_facts_there_is_no_fleet_firmware_finding(checked, tmp_path):
    args = params(checked, tmp_path)
    args["facts"] = {}
    assert preflight_report.run(args, False)["fleet_findings"] == []


def test_check_mode_writes_nothing(checked, tmp_path):
    res = preflight_report.run(params(checked, tmp_path / "out"), True)
    assert res["changed"] is True and not (tmp_path / "out").exists()
    assert sorted(os.path.basename(p) for p in res["files"])[:2] == ["broken.json", "degraded.json"]


def test_a_host_name_outside_dest_is_refused(checked, tmp_path):
    args = params(checked, tmp_path / "out")
    args["hosts"]["../evil"] = args["hosts"].pop("broken")
    with pytest.raises(RunError, match="refusing to write a host report outside"):
        preflight_report.run(args, False)
    assert not (tmp_path / "evil.json").exists()


def test_the_module_runs_the_same_code(checked, tmp_path, capsys):
    res = run_module(rdma_preflight_report, params(checked, tmp_path / "module"), capsys)
    assert res["rc"] == 0 and res["summary"] == preflight_report.run(params(checked, tmp_path / "lib"), False)["summary"]
    args = params(checked, tmp_path / "bad")
    args["hosts"]["../evil"] = args["hosts"].pop("broken")
    res = run_module(rdma_preflight_report, args, capsys)
    assert res["rc"] == 1 and "refusing to write a host report outside" in res["msg"]
