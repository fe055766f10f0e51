"""Alert rules and dashboard only use metrics the collector emits; DIGEST 002 thresholds."""
import json
import os
import re

import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.telemetry import roce_exporter

from .test_exporter import FIX, config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def emitted():
    text = roce_exporter.collect(config(), root=os.path.join(FIX, "root"), ethtool_dir=os.path.join(FIX, "ethtool"))
    return set(line.split()[2] for line in text.splitlines() if line.startswith("# TYPE "))


def used(expr):
    return set(re.findall(r"\b(roce_[a-z_]+)", expr))


def test_alert_rules_reference_emitted_metrics_and_digest_thresholds():
    with open(os.path.join(ROOT, "monitoring", "roce-alerts.yml")) as handle:
        rules = yaml.safe_load(handle)["groups"][0]["rules"]
    names = emitted()
    by_name = dict((r["alert"], r) for r in rules)
    for rule in rules:
        assert used(rule["expr"]) and used(rule["expr"]) <= names, rule["alert"]
        assert rule["labels"]["severity"] in ("warning", "critical")
    assert by_name["RoceRailUtilisationHigh"]["expr"].rstrip().endswith("> 0.8")
    assert by_name["RoceRailLossAboveBudget"]["expr"].rstrip().endswith("> 0.0001")
    assert "roce_link_down_total" in by_name["RoceRailLinkDown"]["expr"]


def test_dashboard_panels_reference_emitted_metrics():
    with open(os.path.join(ROOT, "monitoring", "roce-dashboard.json")) as handle:
        dashboard = json.load(handle)
    names = emitted()
    covered = set()
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            assert used(target["expr"]) <= names, panel["title"]
            covered |= used(target["expr"])
    assert {"roce_pfc_pause_frames_total", "roce_ecn_marked_packets_total", "roce_cnp_sent_total",
            "roce_cnp_handled_total", "roce_out_of_sequence_total", "roce_link_down_total"} <= covered
    assert len(set(p["id"] for p in dashboard["panels"])) == len(dashboard["panels"])
