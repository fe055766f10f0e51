"""audit/roce_health.py: GPUs behind a port from the plan, findings ranked by GPUs affected, MTU chain."""
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.audit import roce_health as H
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

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
    mtus = {"leaf1": get_driver("eos").port_mtus(have["leaf1"]["mtu"]), "leaf2": get_driver("nvue").port_mtus(have["leaf2"]["mtu"])}
    assert mtus == {"leaf1": {"Ethernet2": 1500, "Ethernet1": 9214}, "leaf2": {"swp1": 9216}}
    got = H.consistency_findings(plan, have, want, {"gpu03": {"rail1": 1500}}, mtus)
    kinds = sorted((f["kind"], f["switch"], f["port"]) for f in got)
    assert kinds == [("mtu_chain", "gpu03", "rail1"), ("mtu_chain", "leaf1", "Ethernet2"), ("qos_profile", "leaf2", "")]
    assert next(f for f in got if f["kind"] == "qos_profile")["expected"] == "y"
    assert H.entries(H.report_section([], got))[0]["kind"] == "host"


def audit_read_task():
    """playbooks/audit.yml's RoCE health read: the switch_facts task and the block around it."""
    with open(os.path.join(ROOT, "playbooks", "audit.yml")) as fh:
        plays = yaml.safe_load(fh)
    for task in next(p for p in plays if p["hosts"] == "switches")["tasks"]:
        for inner in task.get("block", [task]):
            if "aifabric.roce.switch_facts" in inner:
                return task, inner
    raise AssertionError("audit.yml has no switch_facts read")


def audit_sections(platform):
    """audit.yml's ``sections`` template of that task, rendered for a switch of this platform (the same filters as
    Ansible: the collection's nos_sections and Jinja2's select)."""
    import jinja2
    from ansible_collections.aifabric.roce.plugins.filter.nos_sections import nos_sections
    _block, task = audit_read_task()
    env = jinja2.Environment()
    env.filters["aifabric.roce.nos_sections"] = nos_sections
    sections = task["aifabric.roce.switch_facts"]["sections"]
    if not isinstance(sections, str):
        return sections   # a fixed list
    return yaml.safe_load(env.from_string(sections).render(roce_intent={"platform": platform}))


def test_audit_asks_each_switch_only_for_the_sections_its_driver_renders():
    """switch_facts refuses a section the driver does not render; audit.yml asked every switch for [qos, mtu], so the
    AsterNOS read failed (and was ignored) and leaf0's QoS never reached the RoCE health section. Now each platform
    gets the QoS/MTU sections of its own driver, and a failed read is rescued and recorded, not ignored."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver
    for platform in sorted(DRIVERS):
        got = audit_sections(platform)
        driver = get_driver(platform)
        assert set(got) <= set(driver.sections), (platform, got, driver.sections)   # nothing switch_facts refuses
        assert got == [s for s in ("qos", "mtu") if s in driver.sections], (platform, got)
    assert audit_sections("asternos") == ["qos"]
    from ansible.errors import AnsibleFilterError
    from ansible_collections.aifabric.roce.plugins.filter.nos_sections import nos_sections
    with pytest.raises(AnsibleFilterError, match="no NOS driver for platform 'junos'; known: asternos"):
        nos_sections("junos")
    assert audit_sections("nxos") == ["qos", "mtu"]
    block, task = audit_read_task()
    assert "ignore_errors" not in task and "ignore_errors" not in block and block.get("rescue"), block


def test_only_the_sections_a_driver_renders_are_compared(plan):
    """AsterNOS renders qos alone (Easy RoCE: no MTU there): audit.yml reads only its qos section (what switch_facts
    returns for it), its converged qos gives no finding and an unconverged one is named."""
    from ansible_collections.aifabric.roce.plugins.modules.roce_health import evaluate
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
    leaf0 = plan["leafs"]["leaf0"]
    assert leaf0["platform"] == "asternos"
    qos = get_driver("asternos").render(leaf0, plan["qos"], ("qos",))
    facts = {"leaf0": {"sections": dict((s, {"config": qos}) for s in audit_sections("asternos")), "counters": None}}
    section, _entries, _snap = evaluate(plan, facts, {}, None, 1000)
    assert [f for f in section["consistency"] if f["switch"] == "leaf0"] == []
    assert section["read"] == {"leaf0": ["qos"]} and section["not_read"] == {}
    facts["leaf0"]["sections"]["qos"]["config"] = ""   # not converged: named as a QoS profile finding
    section, _entries, _snap = evaluate(plan, facts, {}, None, 1000)
    assert [(f["kind"], f["switch"]) for f in section["consistency"]] == [("qos_profile", "leaf0")]


def test_a_switch_not_read_is_named_never_counted_healthy(plan):
    """The section says which switches it read and what of each; a failed read (its message) and a read skipped
    because the switch check could not reach the switch are named, in the Markdown and the HTML report."""
    from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import build_report, render_html, render_markdown
    from ansible_collections.aifabric.roce.plugins.modules.roce_health import evaluate
    facts = {"leaf1": {"sections": {"qos": {"config": ""}, "mtu": {"config": ""}}, "counters": {}},
             "leaf0": {"failed": True, "msg": "section(s) mtu not rendered by the asternos driver"},
             "leaf2": {"skipped": True, "changed": False}}
    section, _entries, _snap = evaluate(plan, facts, {}, None, 1000)
    assert section["read"] == {"leaf1": ["mtu", "qos", "counters"]}
    assert section["not_read"] == {"leaf0": "section(s) mtu not rendered by the asternos driver",
                                   "leaf2": "not read (its switch check could not read it)"}
    line = H.coverage_line(section)
    assert line.startswith("Read on 1 switch(es): leaf1 (mtu, qos, counters). Not read on 2 switch(es), not counted healthy:")
    report = build_report([], fabric="lab", roce=section)
    assert line in render_markdown(report)
    assert "Not read on 2 switch(es)" in render_html(report)


@pytest.mark.parametrize("platform", ["community_sonic", "eos", "nxos", "nvue", "dell_sonic"])
def test_a_port_below_the_host_mtu_is_found_on_every_platform_that_renders_mtu(platform):
    """The MTU chain reads each switch's MTU view through its driver (``port_mtus``), never a shared regex: a community
    SONiC port (CONFIG_DB ``PORT|Ethernet0 mtu``) below the host MTU is found like an EOS one (architecture review
    turn 5, section 3: the regex read nothing of CONFIG_DB, so such a port gave no finding)."""
    from ansible_collections.aifabric.roce.plugins.modules.roce_health import evaluate
    from ..nos.helpers import plan_on_platform
    plan = plan_on_platform("lab", platform)
    name, leaf = next((n, leaf) for n, leaf in sorted(plan["leafs"].items()) if leaf["downlinks"])
    low = dict(leaf, mtu=1500)
    drv = get_driver(platform)
    facts = {name: {"sections": {"qos": {"config": drv.render(leaf, plan["qos"], ("qos",))},
                                 "mtu": {"config": drv.render(low, plan["qos"], ("mtu",))}}, "counters": None}}
    section, _entries, _snap = evaluate(plan, facts, {}, None, 1000)
    ports = sorted(f["port"] for f in section["consistency"] if f["kind"] == "mtu_chain" and f["switch"] == name)
    assert ports and leaf["downlinks"][0]["port"] in ports, section["consistency"]
    facts[name]["sections"]["mtu"]["config"] = drv.render(leaf, plan["qos"], ("mtu",))
    section, _entries, _snap = evaluate(plan, facts, {}, None, 1000)
    assert [f for f in section["consistency"] if f["kind"] == "mtu_chain"] == []
