"""audit/roce_health.py: GPUs behind a port from the plan, findings ranked by GPUs affected, MTU chain."""
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.audit import roce_health as H
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def plan():
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as fh:
        return build_plan(yaml.safe_load(fh)["fabric"])


def test_gpus_behind_downlinks_uplinks_and_spine_ports(plan):
    behind = H.gpus_behind(plan)
    assert behind[("leaf1", "Ethernet2")] == ["gpu02:gpu1"]
    b = next(b for b in plan["leafs"]["leaf1"]["bindings"] if b["server"] == "gpu02")
    assert "gpu02:gpu1" in behind[("leaf1", b["uplink"])]
    up = next(u for u in plan["leafs"]["leaf1"]["uplinks"] if u["port"] == b["uplink"])
    assert "gpu02:gpu1" in behind[(up["spine"], up["spine_port"])]


def test_findings_ranked_by_gpus_and_only_on_lossless_priorities(plan):
    b = plan["leafs"]["leaf1"]["bindings"][0]
    up = next(u for u in plan["leafs"]["leaf1"]["uplinks"] if u["port"] == b["uplink"])
    spine_port_gpus = H.gpus_behind(plan)[(up["spine"], up["spine_port"])]
    current = {"leaf1": {"Ethernet2": {"3": {"drops": 5}, "0": {"drops": 999}}},
               up["spine"]: {up["spine_port"]: {"all": {"pfc_rx": 5000}}}}
    got = H.counter_findings(plan, current, None, 1000)
    assert [(f["kind"], f["switch"]) for f in got][-1] == ("lossless_drops", "leaf1")   # priority 0 is not lossless
    assert len(got) == 2
    if len(spine_port_gpus) > 1:
        assert got[0]["switch"] == up["spine"]
    # below the threshold or unchanged since the last audit: no finding; a cleared counter counts from zero
    assert H.counter_findings(plan, current, current, 1000) == []
    assert H.counter_findings(plan, {"leaf1": {"Ethernet2": {"3": {"pfc_rx": 10}}}}, None, 1000) == []
    cleared = H.counter_findings(plan, {"leaf1": {"Ethernet2": {"3": {"wd_storms": 1}}}},
                                 {"leaf1": {"Ethernet2": {"3": {"wd_storms": 7}}}}, 1000)
    assert [(f["kind"], f["count"]) for f in cleared] == [("watchdog", 1)]


def test_mtu_chain_and_qos_profile(plan):
    have = {"leaf1": {"qos": "a\nb\n", "mtu": "interface Ethernet2\n   mtu 1500\ninterface Ethernet1\n   mtu 9214\n"},
            "leaf2": {"qos": "x\n", "mtu": "nv set interface swp1 link mtu 9216\n"}}
    want = {"leaf1": {"qos": "a\nb\n"}, "leaf2": {"qos": "x\ny\n"}}
    got = H.consistency_findings(plan, have, want, {"gpu03": {"rail1": 1500}})
    kinds = sorted((f["kind"], f["switch"], f["port"]) for f in got)
    assert kinds == [("mtu_chain", "gpu03", "rail1"), ("mtu_chain", "leaf1", "Ethernet2"), ("qos_profile", "leaf2", "")]
    assert next(f for f in got if f["kind"] == "qos_profile")["expected"] == "y"
    assert H.entries(H.report_section([], got))[0]["kind"] == "host"


def test_only_the_sections_a_driver_renders_are_compared(plan):
    """audit.yml reads qos and mtu from every switch; AsterNOS renders qos alone (Easy RoCE: no MTU there), so its
    mtu section is not compared (rendering it would refuse) and its converged qos gives no finding."""
    from ansible_collections.aifabric.roce.plugins.modules.roce_health import evaluate
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
    leaf0 = plan["leafs"]["leaf0"]
    assert leaf0["platform"] == "asternos"
    qos = get_driver("asternos").render(leaf0, plan["qos"], ("qos",))
    facts = {"leaf0": {"sections": {"qos": {"config": qos}, "mtu": {"config": ""}}, "counters": None}}
    section, _entries, _snap = evaluate(plan, facts, {}, None, 1000)
    assert [f for f in section["consistency"] if f["switch"] == "leaf0"] == []
    facts["leaf0"]["sections"]["qos"]["config"] = ""   # not converged: named as a QoS profile finding
    section, _entries, _snap = evaluate(plan, facts, {}, None, 1000)
    assert [(f["kind"], f["switch"]) for f in section["consistency"]] == [("qos_profile", "leaf0")]
