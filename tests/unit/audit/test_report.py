import json

from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import (
    build_report, entry_from_result, items_from_diff, render_html, render_json, render_markdown)


def test_dict_diff_items_name_the_path_and_both_sides():
    diff = {"before": {"rail0": {"mtu": 1500, "address": "10.0.0.1/29"}, "rules": ["1000: from 10.0.0.1 lookup 100"]},
            "after": {"rail0": {"mtu": 9000, "address": "10.0.0.1/29"},
                      "rules": ["1000: from 10.0.0.1 lookup 100", "1001: from 10.1.0.1 lookup 101"]}}
    assert items_from_diff(diff) == [
        {"item": "rail0.mtu", "expected": "9000", "actual": "1500"},
        {"item": "rules", "expected": "1001: from 10.1.0.1 lookup 101", "actual": "(absent)"}]


def test_text_diff_items_are_changed_lines():
    diff = [{"before": "interface Ethernet1\n mtu 1500\n", "after": "interface Ethernet1\n mtu 9216\n", "after_header": "leaf1"}]
    assert items_from_diff(diff) == [{"item": "leaf1: line", "expected": "(absent)", "actual": " mtu 1500"},
                                     {"item": "leaf1: line", "expected": " mtu 9216", "actual": "(absent)"}]


def test_no_difference_no_items():
    assert items_from_diff({"before": {"a": 1}, "after": {"a": 1}}) == []
    assert items_from_diff(None) == []


def test_entry_status_from_results():
    assert entry_from_result("gpu01", "host", "net", {"changed": False})["status"] == "ok"
    drift = entry_from_result("gpu01", "host", "net", {"changed": True, "diff": {"before": {"mtu": 1500}, "after": {"mtu": 9000}}})
    assert drift["status"] == "drift" and drift["items"] == [{"item": "mtu", "expected": "9000", "actual": "1500"}]
    opaque = entry_from_result("gpu01", "host", "net", {"changed": True})
    assert opaque["status"] == "drift" and opaque["items"][0]["actual"].startswith("differs")
    assert entry_from_result("leaf0", "switch", "qos", {"failed": True, "msg": "commit refused"})["status"] == "fail"
    refused = {"failed": True, "msg": "cannot read running config from 127.0.0.1:22: TCP connection to device failed."}
    assert entry_from_result("leaf0", "switch", "qos", refused)["status"] == "unreachable"
    assert entry_from_result("gpu01", "host", "net", {"unreachable": True, "msg": "ssh: no route"})["status"] == "unreachable"
    skipped = entry_from_result("leaf0", "switch", "qos", {"skipped": True, "skip_reason": "Conditional result was False"})
    assert skipped["status"] == "not_run" and skipped["message"] == "not run: Conditional result was False"
    explicit = entry_from_result("gpu02", "host", "net", {"changed": True, "drift": [{"item": "x", "expected": "1", "actual": "2"}]})
    assert explicit["items"] == [{"item": "x", "expected": "1", "actual": "2"}]


def _entries():
    return [
        entry_from_result("gpu01", "host", "host_network", {"changed": False}),
        entry_from_result("gpu02", "host", "host_network", {"changed": True, "diff": {"before": {"rail0.mtu": 1500}, "after": {"rail0.mtu": 9000}}}),
        entry_from_result("leaf0", "switch", "switch_qos", {"changed": True, "diff": {"before": "pfc\n", "after": "pfc\n<b>x</b>\n"}}),
        entry_from_result("leaf1", "switch", "switch_qos", {"failed": True, "msg": "% Invalid input detected"}),
    ]


def test_report_summary_ranks_devices_by_worst_status():
    report = build_report(_entries(), fabric="lab")
    summary = report["summary"]
    assert summary["devices"] == 4 and summary["drifted_items"] == 2
    assert (summary["devices_drift"], summary["devices_fail"], summary["devices_ok"]) == (["gpu02", "leaf0"], ["leaf1"], ["gpu01"])
    assert report["drift"] is True
    assert report["by_check"]["host_network"]["drift"] == 1 and report["by_check"]["host_network"]["ok"] == 1


def test_in_sync_fleet_reports_no_drift():
    report = build_report([entry_from_result("gpu01", "host", "host_network", {"changed": False})], fabric="lab")
    assert report["drift"] is False
    assert "IN SYNC" in render_markdown(report) and "IN SYNC" in render_html(report)


def test_renderings_show_each_drifted_item_and_escape_html():
    report = build_report(_entries(), fabric="lab")
    md = render_markdown(report)
    assert "| gpu02 | host_network | rail0.mtu | 9000 | 1500 |" in md
    assert "| leaf1 | switch_qos | % Invalid input detected |" in md
    page = render_html(report)
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert json.loads(render_json(report))["summary"]["devices_fail"] == ["leaf1"]


def test_report_is_deterministic_whatever_the_entry_order():
    entries = _entries()
    assert render_json(build_report(entries, "lab")) == render_json(build_report(list(reversed(entries)), "lab"))


def test_collect_entries_reads_results_findings_and_missing_hosts():
    from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import collect_entries
    hostvars = {
        "gpu01": {"net": {"changed": False}, "pre": {"findings": []}},
        "gpu02": {"net": {"changed": True, "diff": {"before": {"mtu": 1500}, "after": {"mtu": 9000}}},
                  "pre": {"findings": [{"id": "fw_fleet_mixed", "severity": "warning", "subject": "ConnectX-7",
                                        "expected": "28.39.1002", "actual": "28.38.1000", "message": "fw differs"}]}},
        "gpu03": {},
    }
    entries = collect_entries(hostvars, ["gpu01", "gpu02", "gpu03"], {"host_network": "net", "host_preflight": "pre"}, "host")
    status = dict(((e["device"], e["check"]), e["status"]) for e in entries)
    assert status == {("gpu01", "host_network"): "ok", ("gpu01", "host_preflight"): "ok",
                      ("gpu02", "host_network"): "drift", ("gpu02", "host_preflight"): "warn",
                      ("gpu03", "host_network"): "fail", ("gpu03", "host_preflight"): "fail"}
    warn = [e for e in entries if e["status"] == "warn"][0]
    assert warn["items"] == [{"item": "fw_fleet_mixed ConnectX-7", "expected": "28.39.1002", "actual": "28.38.1000"}]


def test_probe_findings_make_fail_skipped_or_ok_entries():
    from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import entry_from_findings
    ok = {"probe": "route a", "status": "ok", "expected": "x", "actual": "x"}
    skipped = {"probe": "lldp", "status": "skipped", "expected": "", "actual": "lldpctl not installed"}
    failed = {"probe": "ping b", "status": "fail", "expected": "0% loss", "actual": "100% loss"}
    assert entry_from_findings("h", "host", "validate", [ok])["status"] == "ok"
    assert entry_from_findings("h", "host", "validate", [ok, skipped])["status"] == "not_run"
    entry = entry_from_findings("h", "host", "validate", [ok, skipped, failed])
    assert entry["status"] == "fail"
    assert entry["items"] == [{"item": "lldp", "expected": "run", "actual": "not run: lldpctl not installed"},
                              {"item": "ping b", "expected": "0% loss", "actual": "100% loss"}]
    # every probe is kept, the passed one too, as passed / failed / not run with why
    assert [(r["subject"], r["result"], r["why"]) for r in entry["results"]] == [
        ("route a", "passed", ""), ("lldp", "not_run", "lldpctl not installed"), ("ping b", "failed", "")]


def test_readiness_findings_are_reported_but_are_not_drift():
    from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import collect_entries
    hostvars = {"gpu01": {"net": {"changed": False},
                          "pre": {"findings": [{"id": "rdma_module", "severity": "error", "subject": "mlx5_ib",
                                                "expected": "loaded", "actual": "missing", "message": "not loaded"}]}}}
    entries = (collect_entries(hostvars, ["gpu01"], {"host_network": "net"}, "host")
               + collect_entries(hostvars, ["gpu01"], {"host_preflight": "pre"}, "host", category="readiness"))
    report = build_report(entries, fabric="lab")
    assert report["drift"] is False
    assert report["summary"]["devices_findings"] == ["gpu01"] and report["summary"]["devices_ok"] == []
    assert "| gpu01 | host_preflight | rdma_module mlx5_ib | loaded | missing |" in render_markdown(report)


def test_structured_change_items_become_report_items():
    result = {"changed": True, "items": [
        {"kind": "mtu", "action": "set", "dev": "rail1", "before": 1500, "after": 9000},
        {"kind": "rule", "action": "add", "rule": "priority 1001 from 10.101.0.2/32 table 101"},
        {"kind": "route", "action": "delete", "route": "10.9.9.0/24 via 10.100.0.6 dev rail0 table 100"}]}
    entry = entry_from_result("gpu02", "host", "host_network", result)
    assert entry["items"] == [
        {"item": "mtu rail1", "expected": "9000", "actual": "1500"},
        {"item": "rule", "expected": "priority 1001 from 10.101.0.2/32 table 101", "actual": "(absent)"},
        {"item": "route", "expected": "(absent)", "actual": "10.9.9.0/24 via 10.100.0.6 dev rail0 table 100"}]


def _fleet():
    """A fleet as the lab audit sees it: one drifted switch (driver drift items with None sides), a
    host with preflight errors on a synthetic tree, one unreachable host and one clean host."""
    from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import collect_entries
    hostvars = {
        "gpu01": {"net": {"changed": False},
                  "qos": {"changed": False, "invocation": {"module_args": {"root": "/opt/aifabric-hw/root"}}},
                  "pre": {"findings": [{"id": "synthetic_root", "severity": "warning", "subject": "root", "expected": "/",
                                        "actual": "/opt/aifabric-hw/root", "message": "checks ran against a tree"},
                                       {"id": "gdr", "severity": "error", "subject": "gpu0", "expected": {"peermem": True},
                                        "actual": {"peermem": False, "dmabuf": False}, "message": "no GPUDirect"}]}},
        "gpu02": {"audit_reach": {"unreachable": True, "msg": "Failed to connect to the host via ssh"}},
        "gpu03": {"net": {"changed": False}, "qos": {"changed": False}, "pre": {"findings": []}},
        "leaf1": {"sw": {"changed": True, "drift": [
            {"item": "interface Ethernet1", "expected": "mtu 9216", "actual": None},
            {"item": "qos", "expected": None, "actual": "pfc priority 4"}]}},
        "leaf2": {"sw": {"failed": True, "msg": "cannot read running config from 10.0.0.2:22: TCP connection to device failed."}},
    }
    hosts = ["gpu01", "gpu02", "gpu03"]
    return (collect_entries(hostvars, hosts, {"host_network": "net", "host_rdma_qos": "qos"}, "host")
            + collect_entries(hostvars, hosts, {"host_preflight": "pre"}, "host", category="readiness")
            + collect_entries(hostvars, ["leaf1", "leaf2"], {"switch": "sw"}, "switch"))


def test_headline_says_drift_readiness_and_unreachable_with_time_and_plan():
    report = build_report(_fleet(), fabric="lab", generated="2026-11-23T17:00:00Z", plan_digest="ab12" * 16,
                          plan_path="/srv/build/lab/plan.json")
    assert report["verdict"] == "DRIFT / NOT READY / 2 UNREACHABLE"
    assert report["summary"]["devices_unreachable"] == ["gpu02", "leaf2"]
    assert report["summary"]["devices_drift"] == ["leaf1"] and report["summary"]["devices_not_ready"] == ["gpu01"]
    assert report["summary"]["devices_ok"] == ["gpu03"]
    for text in (render_markdown(report), render_html(report)):
        assert "DRIFT / NOT READY / 2 UNREACHABLE" in text and "2026-11-23T17:00:00Z" in text
        assert "ab12ab12ab12ab12" in text and "/srv/build/lab/plan.json" in text
        assert "gpu02" in text and "Failed to connect" in text and "leaf2" in text


def test_in_sync_is_never_shown_beside_errors_or_unaudited_devices():
    entries = [e for e in _fleet() if e["device"] in ("gpu01", "gpu03")]
    assert build_report(entries, "lab")["verdict"] == "IN SYNC / NOT READY"
    entries = [e for e in _fleet() if e["device"] in ("gpu02", "gpu03")]
    assert build_report(entries, "lab")["verdict"] == "IN SYNC / 1 UNREACHABLE"
    entries = [e for e in _fleet() if e["device"] == "gpu03"]
    assert build_report(entries, "lab")["verdict"] == "IN SYNC"
    entries = [e for e in _fleet() if e["device"] in ("gpu02", "leaf2")]
    assert build_report(entries, "lab")["verdict"] == "NOT AUDITED / 2 UNREACHABLE"


def test_renderings_have_no_none_no_json_blobs_and_no_empty_rows():
    import re
    report = build_report(_fleet(), fabric="lab")
    md, page = render_markdown(report), render_html(report)
    for text in (md, page, render_json(report)):
        assert "None" not in text
    assert "{&quot;" not in page and '{"' not in md
    assert "dmabuf=no, peermem=no" in md  # a mapping reads as key=value
    assert "| leaf1 | switch | interface Ethernet1 | mtu 9216 | (absent) |" in md
    assert not re.search(r"<td>\s*</td>", page) and "| | |" not in md
    assert "<tr class=\"ok\"" not in page  # clean checks are summed up, not listed as rows


def test_synthetic_tree_is_disclosed():
    report = build_report(_fleet(), fabric="lab")
    assert len(report["notes"]) == 1
    note = report["notes"][0]
    assert "/opt/aifabric-hw/root" in note and "host_preflight" in note and "host_rdma_qos" in note and "gpu01" in note
    assert "synthetic tree /opt/aifabric-hw/root" in render_html(report)
    assert build_report([e for e in _fleet() if e["device"] == "gpu03"], "lab")["notes"] == []


def test_a_drained_switch_is_reported_whoever_drained_it():
    """Issue 26 item 3: any drain is in the report (a spine left drained halves its plane); one a killed run of
    ours left is an item the next apply takes back, an engineer's is a warning, neither is "clean"."""
    ours = {"changed": True, "drift": [], "drain_state": {"drained": True, "lines": ["router bgp 65001 > graceful-shutdown activate"],
                                                          "records": ["aif-x-d"], "undrain": True,
                                                          "by": "this collection: run aif-x drained it and ended"}}
    theirs = {"changed": False, "drift": [], "drain_state": {"drained": True, "lines": ["router bgp graceful-shutdown on"],
                                                             "records": [], "undrain": False,
                                                             "by": "not this collection (no drain record of ours)"}}
    entries = [entry_from_result("spine0", "switch", "switch", ours), entry_from_result("spine1", "switch", "switch", theirs),
               entry_from_result("spine2", "switch", "switch", {"changed": False, "drift": [], "drain_state": None})]
    assert entries[0]["status"] == "drift" and entries[0]["items"][0]["item"] == "drain"
    assert entries[1]["status"] == "warn" and "not this collection" in entries[1]["message"]
    report = build_report(entries, fabric="lab")
    assert report["summary"]["devices_drained"] == ["spine0", "spine1"] and report["summary"]["devices_ok"] == ["spine2"]
    assert "2 DRAINED" in report["verdict"]
    md, page = render_markdown(report), render_html(report)
    for text in (md, page):
        assert "Drained switches" in text and "spine1" in text and "graceful-shutdown" in text
