"""GOM's alert rules and Grafana panel use only series the collector exports, with its label sets; the panel's
queries parse as PromQL (promtool); the exposition carries a fault, a switch fault, maintenance and agent drops."""
import functools
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom.collector import Metrics, Service
from ansible_collections.aifabric.roce.plugins.module_utils.gom.identify import plan_identifiable
from ansible_collections.aifabric.roce.plugins.module_utils.gom.localise import Localiser, Topology

from ..fabric.intents import lab

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools"))
from gom_sim import Replay  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@functools.lru_cache(maxsize=1)
def gom_exposition():
    """The collector's /metrics for the lab after a link fault, a switch fault under way elsewhere is not needed:
    one link fault, one switch's links grouped, one switch in maintenance, an agent that dropped batches."""
    from prometheus_client import CollectorRegistry, generate_latest
    plan = build_plan(lab())
    report = plan_identifiable(plan, dport=4792)
    topo = Topology(plan, report["probes"])
    loc = Localiser(topo, clock=lambda: 0.0)
    sim = Replay(report["probes"])
    t = 0.0
    for step in range(60):
        t = round(t + 0.1, 1)
        if step == 20:
            sim.faults = dict((link, 1.0) for link in topo.links_of_switch["leaf3"])
            sim.faults["gpu01:rail0>leaf0:Ethernet0"] = 1.0
        for batch in sim.step(t):
            loc.ingest(batch, t)
        loc.tick(t)
    loc.set_maintenance({"spine2": {"by": "drain", "holder": "x", "since": 1.0}})
    loc.link_state["spine2:Ethernet1>leaf0:Ethernet9"] = "maintenance"
    loc.dropped["gpu03"] = 4
    service = Service(loc)
    service.event_counts = {"link_fault": 1, "switch_fault": 1}
    registry = CollectorRegistry()
    registry.register(Metrics(service))
    return generate_latest(registry).decode()


def samples():
    out = {}
    for line in gom_exposition().splitlines():
        m = re.match(r"^([a-z_]+)(?:\{(.*)\})? (\S+)$", line)
        if m:
            out.setdefault(m.group(1), []).append((dict(re.findall(r'([a-z_]+)="([^"]*)"', m.group(2) or "")), float(m.group(3))))
    return out


def test_exposition_has_every_state_and_the_gpus_behind_each_link():
    have = samples()
    states = dict((labels["link"], value) for labels, value in have["gom_link_state"])
    assert len(states) == 64
    assert states["gpu01:rail0>leaf0:Ethernet0"] == 1 and states["spine2:Ethernet1>leaf0:Ethernet9"] == 2
    assert 3 in states.values() and 0 in states.values()
    host = [labels for labels, _v in have["gom_link_state"] if labels["link"] == "gpu01:rail0>leaf0:Ethernet0"][0]
    assert host == {"link": "gpu01:rail0>leaf0:Ethernet0", "link_class": "host_up", "from": "gpu01", "to": "leaf0",
                    "gpus": "gpu01:rail0"}
    assert have["gom_switch_fault"] == [({"switch": "leaf3"}, 1.0)]
    # the switch fault names each failing link with the labels GOR steers on (link, link_class)
    grouped = dict((labels["link"], labels) for labels, value in have["gom_switch_fault_link"] if value == 1)
    assert len(grouped) >= 8 and all(labels["switch"] == "leaf3" for labels in grouped.values())
    assert set(grouped) == set(link for link, value in states.items() if value == 3)
    assert {"leaf_up", "spine_down", "host_up", "host_down"} == set(labels["link_class"] for labels in grouped.values())
    assert ({"host": "gpu03"}, 4.0) in have["gom_agent_dropped_batches_total"]
    assert any(labels.get("quantile") == "0.99" for labels, _v in have["gom_link_rtt_seconds"])


def used(expr):
    return set(re.findall(r"\b(gom_[a-z_]+)", expr))


def test_alert_rules_and_panel_use_exported_series_with_their_labels():
    have = samples()
    with open(os.path.join(ROOT, "monitoring", "gom-alerts.yml")) as handle:
        rules = yaml.safe_load(handle)["groups"][0]["rules"]
    assert [r["alert"] for r in rules] == [
        "GomLinkFault", "GomSwitchFault", "GomLinkDown", "GomLinkLossy", "GomAgentDroppingBatches"]
    for rule in rules:
        assert used(rule["expr"]) and used(rule["expr"]) <= set(have), rule["expr"]
    with open(os.path.join(ROOT, "monitoring", "gom-dashboard.json")) as handle:
        dashboard = json.load(handle)
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert exprs and all(used(e) and used(e) <= set(have) for e in exprs)
    state = dashboard["panels"][0]
    assert state["type"] == "state-timeline" and "gom_link_state" in state["targets"][0]["expr"]
    assert set(state["fieldConfig"]["defaults"]["mappings"][0]["options"]) == {"0", "1", "2", "3", "4", "5"}
    # the promtool test's series are the collector's label sets
    with open(os.path.join(ROOT, "monitoring", "tests", "gom-alerts-test.yml")) as handle:
        doc = yaml.safe_load(handle)
    names = dict((metric, set(frozenset(labels) for labels, _v in values)) for metric, values in have.items())
    for test in doc["tests"]:
        for series in test["input_series"]:
            m = re.match(r"^([a-z_]+)\{(.*)\}$", series["series"])
            labels = frozenset(re.findall(r'([a-z_]+)="', m.group(2)))
            assert labels in names[m.group(1)], series["series"]


@pytest.mark.skipif(not shutil.which("promtool"), reason="promtool (Debian package prometheus) not installed")
def test_panel_queries_are_valid_promql(tmp_path):
    with open(os.path.join(ROOT, "monitoring", "gom-dashboard.json")) as handle:
        dashboard = json.load(handle)
    rules = [{"record": "aifabric:gom_panel%d_%s" % (p["id"], t["refId"].lower()),
              "expr": t["expr"].replace("$link_class", ".*")} for p in dashboard["panels"] for t in p["targets"]]
    path = tmp_path / "q.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "gom", "rules": rules}]}))
    proc = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
