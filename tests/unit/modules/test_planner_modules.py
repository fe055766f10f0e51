"""The planner modules, run in-process the way AnsiballZ runs them."""
import os


from ansible_collections.aifabric.roce.plugins.modules import fabric_artifacts, fabric_plan, leaf_port_binding, rail_ip_plan

from ..fabric.intents import lab
from ..module_runner import run_module


run = run_module


def test_fabric_plan_module_writes_the_plan_and_returns_a_small_handle(tmp_path, capsys):
    # The module body (used when the action plugin is not) does what the action plugin does.
    result = run(fabric_plan, {"fabric": lab(), "dest": str(tmp_path)}, capsys)
    assert result["rc"] == 0 and result["changed"] is True
    handle = result["plan"]
    assert handle["counts"] == {"hosts": 4, "leafs": 4, "spines": 2} and "hosts" not in handle
    assert sorted(os.listdir(str(tmp_path / "devices"))) == ["gpu0%d.json" % i for i in range(1, 5)] + [
        "leaf0.json", "leaf1.json", "leaf2.json", "leaf3.json", "spine1.json", "spine2.json"]
    assert result["switch_batches"][0] == ["leaf0"]
    again = run(fabric_plan, {"fabric": lab(), "dest": str(tmp_path), "as_fact": True}, capsys)
    assert again["changed"] is False and again["ansible_facts"]["aifabric_plan"]["digest"] == handle["digest"]


def test_bad_intent_fails_with_problems_and_no_traceback(tmp_path, capsys):
    intent = lab()
    intent["rails"] = 8
    intent["routing"]["table_base"] = 254
    result = run(fabric_plan, {"fabric": intent, "dest": str(tmp_path)}, capsys)
    assert result["failed"] and result["rc"] == 1
    assert sorted(p["path"] for p in result["problems"]) == ["fabric.rails", "fabric.routing.table_base"]
    assert "Traceback" not in result["msg"] and "Fix:" in result["msg"]
    assert os.listdir(str(tmp_path)) == []  # nothing written


def test_modules_read_the_written_plan_instead_of_planning(tmp_path, capsys):
    handle = run(fabric_plan, {"fabric": lab(), "dest": str(tmp_path)}, capsys)["plan"]
    from_plan = run(rail_ip_plan, {"plan": handle["path"], "hosts": ["gpu04"]}, capsys)
    from_fabric = run(rail_ip_plan, {"fabric": lab(), "hosts": ["gpu04"]}, capsys)
    assert from_plan["hosts"] == from_fabric["hosts"] and from_plan["rails"] == from_fabric["rails"]
    missing = run(rail_ip_plan, {"plan": str(tmp_path / "nowhere"), "hosts": ["gpu04"]}, capsys)
    assert missing["failed"] and "run role aifabric.roce.plan" in missing["msg"]
    both = run(rail_ip_plan, {"plan": handle["path"], "fabric": lab()}, capsys)
    assert both["failed"] and "mutually exclusive" in both["msg"]


def test_rail_ip_plan(capsys):
    result = run(rail_ip_plan, {"fabric": lab(), "hosts": ["gpu04"]}, capsys)
    assert result["hosts"]["gpu04"][3]["address"] == "10.103.0.4"
    assert result["rails"][3]["leafs"] == [{"leaf": "leaf3", "subnet": "10.103.0.0/29", "gateway": "10.103.0.6"}]
    assert len(result["fabric_links"]) == 16


def test_leaf_port_binding(capsys):
    result = run(leaf_port_binding, {"fabric": lab(), "leafs": ["leaf2"]}, capsys)
    assert [b["uplink"] for b in result["bindings"]["leaf2"]] == ["swp9", "swp10", "swp11", "swp12"]  # leaf2 runs NVUE
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


def test_fabric_artifacts_removes_files_of_a_removed_leaf_but_never_the_plan(tmp_path, capsys):
    dest = str(tmp_path)
    run(fabric_plan, {"fabric": lab(), "dest": dest}, capsys)
    run(fabric_artifacts, {"fabric": lab(), "dest": dest, "render_svg": False}, capsys)
    smaller = lab()
    smaller["rails"] = 3
    smaller["servers"]["nics"] = smaller["servers"]["nics"][:3]
    del smaller["leafs"]["platform_overrides"]["leaf3"]
    result = run(fabric_artifacts, {"fabric": smaller, "dest": dest, "render_svg": False}, capsys)
    assert result["removed"] == ["leafs/leaf3-bindings.csv", "switches/leaf3.cfg"]
    assert not os.path.exists(os.path.join(dest, "leafs", "leaf3-bindings.csv"))
    assert not os.path.exists(os.path.join(dest, "switches", "leaf3.cfg"))
    assert os.path.isfile(os.path.join(dest, "switches", "leaf2.cfg"))
    assert os.path.exists(os.path.join(dest, "plan.json")) and os.path.exists(os.path.join(dest, "devices", "gpu04.json"))


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
