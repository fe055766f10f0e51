"""The planner modules, run in-process the way AnsiballZ runs them."""
import os


from ansible_collections.aifabric.roce.plugins.modules import fabric_artifacts, fabric_plan, leaf_port_binding, rail_ip_plan

from ..fabric.intents import lab
from ..module_runner import run_module


run = run_module


def test_fabric_plan_returns_the_plan_unchanged(capsys):
    result = run(fabric_plan, {"fabric": lab()}, capsys)
    assert result["rc"] == 0 and result["changed"] is False
    assert sorted(result["plan"]["hosts"]) == ["gpu01", "gpu02", "gpu03", "gpu04"]


def test_fabric_plan_filters_hosts(capsys):
    result = run(fabric_plan, {"fabric": lab(), "hosts": ["gpu03"]}, capsys)
    assert list(result["plan"]["hosts"]) == ["gpu03"]
    result = run(fabric_plan, {"fabric": lab(), "hosts": ["gpu09"]}, capsys)
    assert result["failed"] and "gpu09" in result["msg"]


def test_bad_intent_fails_with_problems_and_no_traceback(capsys):
    intent = lab()
    intent["rails"] = 8
    intent["routing"]["table_base"] = 254
    result = run(fabric_plan, {"fabric": intent}, capsys)
    assert result["failed"] and result["rc"] == 1
    assert sorted(p["path"] for p in result["problems"]) == ["fabric.rails", "fabric.routing.table_base"]
    assert "Traceback" not in result["msg"] and "Fix:" in result["msg"]


def test_rail_ip_plan(capsys):
    result = run(rail_ip_plan, {"fabric": lab(), "hosts": ["gpu04"]}, capsys)
    assert result["hosts"]["gpu04"][3]["address"] == "10.103.0.4"
    assert result["rails"][3]["leafs"] == [{"leaf": "leaf3", "subnet": "10.103.0.0/29", "gateway": "10.103.0.6"}]
    assert len(result["fabric_links"]) == 16


def test_leaf_port_binding(capsys):
    result = run(leaf_port_binding, {"fabric": lab(), "leafs": ["leaf2"]}, capsys)
    assert [b["uplink"] for b in result["bindings"]["leaf2"]] == ["Ethernet9", "Ethernet10", "Ethernet11", "Ethernet12"]
    assert result["ratio"] == {"downlinks": 4, "uplinks": 4}


def test_fabric_artifacts_check_mode_writes_nothing_then_apply_then_no_change(tmp_path, capsys):
    dest = str(tmp_path / "out")
    args = {"fabric": lab(), "dest": dest, "render_svg": False}
    checked = run(fabric_artifacts, dict(args, _ansible_check_mode=True, _ansible_diff=True), capsys)
    assert checked["changed"] and "cabling.csv" in checked["written"] and not os.path.exists(dest)
    applied = run(fabric_artifacts, args, capsys)
    assert applied["changed"] and os.path.isfile(os.path.join(dest, "leafs", "leaf0-bindings.csv"))
    again = run(fabric_artifacts, args, capsys)
    assert again["changed"] is False and again["written"] == []


def test_fabric_artifacts_removes_files_of_a_removed_host(tmp_path, capsys):
    dest = str(tmp_path)
    run(fabric_artifacts, {"fabric": lab(), "dest": dest, "render_svg": False}, capsys)
    smaller = lab()
    smaller["servers"]["count"] = 3
    result = run(fabric_artifacts, {"fabric": smaller, "dest": dest, "render_svg": False}, capsys)
    assert result["removed"] == ["hosts/gpu04.json"] and not os.path.exists(os.path.join(dest, "hosts", "gpu04.json"))


def test_fabric_plan_as_fact(capsys):
    result = run(fabric_plan, {"fabric": lab(), "as_fact": True}, capsys)
    assert "plan" not in result
    assert result["ansible_facts"]["aifabric_plan"]["sizing"]["gpus"] == 16


def test_drift_report_writes_three_files_and_can_fail_on_drift(tmp_path, capsys):
    from ansible_collections.aifabric.roce.plugins.modules import drift_report
    results = {"gpu01": {"host_network": {"changed": False}},
               "leaf1": {"switch_qos": {"changed": True, "diff": {"before": {"mtu": 1500}, "after": {"mtu": 9216}}}}}
    args = {"results": results, "kinds": {"leaf1": "switch"}, "fabric": "lab", "dest": str(tmp_path)}
    first = run(drift_report, args, capsys)
    assert first["changed"] and first["drift"] and first["summary"]["devices_drift"] == ["leaf1"]
    assert sorted(os.listdir(str(tmp_path))) == ["drift-report.html", "drift-report.json", "drift-report.md"]
    assert run(drift_report, args, capsys)["changed"] is False
    failed = run(drift_report, dict(args, fail_on_drift=True), capsys)
    assert failed["failed"] and "leaf1" in failed["msg"] and failed["rc"] == 1
    clean = run(drift_report, dict(args, results={"gpu01": {"host_network": {"changed": False}}}, fail_on_drift=True), capsys)
    assert clean["rc"] == 0 and clean["drift"] is False
