"""tools/demo.py's terminal lines on the bring-up's validation (issue 41 item 3): each failed check with the reason
its report row gives, and a closing line saying whether the FAILED is the lab's expected one (the spines' sessions to
the AsterNOS leaf, where the collection configures no BGP). The report is built by the collection's own code
(nos/validation.py explains the sessions, audit/report.py builds and renders the report), not written by hand."""
import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
from ansible_collections.aifabric.roce.plugins.module_utils.audit import report as audit_report  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.nos import validation  # noqa: E402

PLAN = {"leafs": {"leaf0": {"platform": "asternos"}, "leaf1": {"platform": "eos"}}, "spines": {"spine1": {"platform": "eos"}}}
RECORD = {"bgp": {"neighbors": [{"address": "10.81.0.0", "peer": "leaf0"}, {"address": "10.81.0.2", "peer": "leaf1"}]}}


@pytest.fixture
def demo():
    spec = importlib.util.spec_from_file_location("demo_under_test", os.path.join(ROOT, "tools", "demo.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_report(tmp_path, leaf1_session):
    findings = [{"probe": "bgp 10.81.0.0", "status": "fail", "expected": "Established", "actual": "Active"},
                {"probe": "bgp 10.81.0.2", "status": leaf1_session, "expected": "Established",
                 "actual": "Established" if leaf1_session == "ok" else "Idle"},
                {"probe": "bgp_sessions", "status": "fail", "expected": "2 sessions established",
                 "actual": "%d established" % (1 if leaf1_session == "ok" else 0)}]
    findings = validation.explain_peers_without_bgp(PLAN, RECORD, findings, {"asternos"})
    entries = [audit_report.entry_from_findings("spine1", "switch", "switch_validate", findings),
               audit_report.entry_from_findings("leaf1", "switch", "switch_validate",
                                                [{"probe": "bgp 10.81.0.3", "status": "ok", "expected": "Established",
                                                  "actual": "Established"}])]
    report = audit_report.build_report(entries, fabric="lab", title="Fabric validation", purpose="validation")
    path = tmp_path / "drift-report.json"
    path.write_text(audit_report.render_json(report))
    return str(path), report["verdict"]


def test_failed_sessions_towards_the_asternos_leaf_are_said_to_be_expected(demo, tmp_path, monkeypatch, capsys):
    path, verdict = write_report(tmp_path, "ok")
    assert verdict.startswith("FAILED")
    monkeypatch.setattr(demo, "VALIDATION", path)
    closing = demo.validation_summary()
    out = capsys.readouterr().out
    assert ("  failed, 2 check(s) (spine1 bgp 10.81.0.0, spine1 bgp_sessions): leaf0 runs asternos, where this collection "
            "configures no BGP (only by hand)") in out, out
    expected = ("FAILED is expected in this lab: every failed check is a BGP session towards leaf0 (leaf0 runs asternos, "
                "where this collection configures no BGP (only by hand)")
    assert out.rstrip().splitlines()[-1].startswith(expected), out
    assert closing.startswith("validation FAILED is expected in this lab") and closing.endswith(
        os.path.join(str(tmp_path), "drift-report.html"))


def test_a_failure_the_lab_does_not_explain_is_not_called_expected(demo, tmp_path, monkeypatch, capsys):
    path = write_report(tmp_path, "fail")[0]
    monkeypatch.setattr(demo, "VALIDATION", path)
    closing = demo.validation_summary()
    out = capsys.readouterr().out
    assert "expected in this lab" not in out + closing
    assert "  failed: spine1 bgp 10.81.0.2 (" in out, out
    assert closing.startswith("validation FAILED") and "does not explain (spine1 bgp 10.81.0.2 (" in closing, closing
