"""Alert rules and dashboard only use metrics the collectors emit (host: roce_exporter.py, switches:
switch_metrics.py); DIGEST 002 thresholds; the dashboard's structure; the promtool tests' series are the exporters'."""
import functools
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.telemetry import roce_exporter

from .test_exporter import FIX, config
from .test_switch_metrics import lab_plan, render as render_switches

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


# node_exporter's own series read by RoceRailUtilisationHigh (netclass/netdev collectors, node_exporter README)
NODE_EXPORTER = {"node_network_transmit_bytes_total", "node_network_speed_bytes"}


@functools.lru_cache(maxsize=1)
def exposition():
    from ..gom.test_monitoring_gom import gom_exposition   # the GOM collector's series (monitoring/gom-*)
    return (roce_exporter.collect(config(), root=os.path.join(FIX, "root"), ethtool_dir=os.path.join(FIX, "ethtool"))
            + render_switches(lab_plan()) + gom_exposition())


def emitted():
    return set(line.split()[2] for line in exposition().splitlines() if line.startswith("# TYPE "))


def label_names():
    """{metric: set of label-name sets} of every sample the exporters write."""
    out = {}
    for line in exposition().splitlines():
        m = re.match(r"^([a-z_]+)\{(.*)\} ", line)
        if m:
            out.setdefault(m.group(1), set()).add(frozenset(re.findall(r'([a-z_]+)="', m.group(2))))
    return out


def used(expr):
    return set(re.findall(r"\b(roce_[a-z_]+)", expr))


def test_alert_rules_reference_emitted_metrics_and_digest_thresholds():
    with open(os.path.join(ROOT, "monitoring", "roce-alerts.yml")) as handle:
        rules = [r for g in yaml.safe_load(handle)["groups"] for r in g["rules"]]
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


KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right"}


def metric_names(expr):
    """Every series name a PromQL expression selects (label matchers, grouping lists, functions and keywords out)."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", " ", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    names = set(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", expr))
    return set(n for n in names if n not in KEYWORDS and not re.match(r"^\d", n))


def dashboard():
    with open(os.path.join(ROOT, "monitoring", "roce-dashboard.json")) as handle:
        return json.load(handle)


def alert_rules():
    with open(os.path.join(ROOT, "monitoring", "roce-alerts.yml")) as handle:
        return [r for g in yaml.safe_load(handle)["groups"] for r in g["rules"]]


def test_metric_names_sees_every_selector():
    assert metric_names('(a_b == 0) * on (leaf, source) group_left (x) c{l=~"q|r"} and sum by (h) (rate(d[5m]))') \
        == {"a_b", "c", "d"}


def test_every_series_queried_is_one_something_exports():
    names = emitted() | NODE_EXPORTER
    queried = set()
    for rule in alert_rules():
        assert metric_names(rule["expr"]) <= names, (rule["alert"], metric_names(rule["expr"]) - names)
        queried |= metric_names(rule["expr"])
    board = dashboard()
    for panel in board["panels"]:
        for target in panel["targets"]:
            assert metric_names(target["expr"]) <= names, (panel["title"], metric_names(target["expr"]) - names)
            queried |= metric_names(target["expr"])
    for var in board["templating"]["list"]:
        if var["type"] == "query":
            assert metric_names(re.sub(r"^label_values\((.*),\s*\w+\)$", r"\1", var["query"])) <= names, var["name"]
    # the alerts read the switch series, and the host CNPs for ECN without CNP
    for name in ("roce_switch_pfc_pause_frames_total", "roce_switch_pfcwd_storms_total", "roce_switch_pfcwd_stormed",
                 "roce_switch_queue_drops_total", "roce_switch_ecn_marked_packets_total", "roce_cnp_sent_total",
                 "roce_ppd_on_planned_uplink", "roce_ppd_binding_info"):
        assert name in queried, name


def test_dashboard_structure_panels_targets_and_variables():
    board = dashboard()
    assert board["uid"] and board["title"] and isinstance(board["schemaVersion"], int)
    variables = dict((v["name"], v) for v in board["templating"]["list"])
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    ids = [p["id"] for p in board["panels"]]
    assert len(set(ids)) == len(ids) and all(isinstance(i, int) for i in ids)
    for panel in board["panels"]:
        where = panel["title"]
        assert panel["type"] in ("timeseries", "table", "stat"), where
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, where
        grid = panel["gridPos"]
        assert set(grid) == {"h", "w", "x", "y"} and 0 <= grid["x"] and grid["x"] + grid["w"] <= 24, where
        assert panel["targets"], where
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert len(set(ref_ids)) == len(ref_ids), where
        if "repeat" in panel:
            var = variables[panel["repeat"]]
            assert var.get("multi") or var.get("includeAll"), where
        text = json.dumps(panel)
        for ref in re.findall(r"\$\{?([a-zA-Z_]\w*)", text):
            assert ref in variables, (where, ref)
    for var in variables.values():
        if var["type"] == "query":
            assert var["datasource"]["uid"] == "${datasource}", var["name"]


def test_dashboard_ppd_panel_per_leaf_and_pfc_ecn_panels_per_rail():
    panels = dashboard()["panels"]
    ppd = [p for p in panels if any("roce_ppd_binding_info" in t["expr"] for t in p["targets"])]
    assert len(ppd) == 1 and ppd[0]["type"] == "table" and ppd[0]["repeat"] == "leaf"
    target = ppd[0]["targets"][0]
    assert target["format"] == "table" and target["instant"] and 'leaf=~"$leaf"' in target["expr"]
    organize = next(t for t in ppd[0]["transformations"] if t["id"] == "organize")["options"]
    shown = set(organize["indexByName"]) - set(k for k, v in organize["excludeByName"].items() if v)
    assert {"port", "host", "planned_uplink", "live_uplink", "status"} <= shown
    # the columns it shows are labels the exporter writes
    assert shown <= set().union(*label_names()["roce_ppd_binding_info"])
    per_rail = [p for p in panels if p.get("repeat") == "rail"]
    exprs = " ".join(t["expr"] for p in per_rail for t in p["targets"])
    assert "roce_switch_pfc_pause_frames_total" in exprs and "roce_switch_ecn_marked_packets_total" in exprs
    assert all('rail=~"$rail"' in t["expr"] for p in per_rail for t in p["targets"])


def test_promtool_test_series_are_the_exporters_label_sets():
    """Every input series of monitoring/tests/*.yml is a metric the exporters write, with exactly the label names of
    one of its samples (minus empty ones), so the recorded series are what Prometheus will scrape."""
    have = label_names()
    tests_dir = os.path.join(ROOT, "monitoring", "tests")
    seen = 0
    for name in sorted(os.listdir(tests_dir)):
        with open(os.path.join(tests_dir, name)) as handle:
            doc = yaml.safe_load(handle)
        for test in doc["tests"]:
            for series in test["input_series"]:
                m = re.match(r"^([a-z_]+)\{(.*)\}$", series["series"])
                metric, labels = m.group(1), frozenset(re.findall(r'([a-z_]+)="', m.group(2)))
                assert metric in have, series["series"]
                assert any(labels <= names for names in have[metric]), (series["series"], have[metric])
                seen += 1
    assert seen >= 20


def promql_targets():
    """Every dashboard query with its variables filled, as recording rules (promtool parses them)."""
    fill = {"$host": ".*", "$rail": ".*", "$leaf": ".*"}
    rules = []
    for panel in dashboard()["panels"]:
        for target in panel["targets"]:
            expr = target["expr"]
            for var, value in fill.items():
                expr = expr.replace(var, value)
            rules.append({"record": "aifabric:panel%d_%s" % (panel["id"], target["refId"].lower()), "expr": expr})
    return {"groups": [{"name": "dashboard", "rules": rules}]}


@pytest.mark.skipif(not shutil.which("promtool"), reason="promtool (Debian package prometheus) not installed")
def test_dashboard_queries_are_valid_promql(tmp_path):
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(yaml.safe_dump(promql_targets()))
    proc = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(yaml.safe_dump({"groups": [{"name": "x", "rules": [{"record": "a:b", "expr": "sum by (host (x)"}]}]}))
    assert subprocess.run(["promtool", "check", "rules", str(broken)], capture_output=True, check=False).returncode != 0
