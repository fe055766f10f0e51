"""Fabric-wide RoCE check against the simulators: an injected pause storm (NVUE leaf2) and a PFC watchdog event
(AsterNOS leaf0, SONiC `show pfcwd stats`) appear in the drift report as findings with the GPUs behind the port."""
import json
import os

from helpers import applier, params, reset

from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import build_report, render_html, render_markdown
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from ansible_collections.aifabric.roce.plugins.modules.roce_health import evaluate
from ansible_collections.aifabric.roce.plugins.modules.switch_facts import collect

SWITCHES = ("leaf0", "leaf2")


def inject(switch_lab, name, table):
    path = os.path.join(switch_lab["root"], name, "counters.json")
    if table is None:
        if os.path.exists(path):
            os.remove(path)
        return
    with open(path, "w") as fh:
        json.dump(table, fh)


def nos_sections_read(drv):
    """What playbooks/audit.yml asks a switch for: the QoS/MTU sections its driver renders (AsterNOS: qos alone)."""
    return [s for s in ("qos", "mtu") if s in drv.sections]


def read_all(switch_lab):
    out = {}
    for name in SWITCHES:
        dev = switch_lab["devices"][name]
        drv = get_driver(dev["platform"])
        conn = netmiko_factory(params(switch_lab, name), drv)()
        try:
            out[name] = collect(drv, conn, dev["intent"], nos_sections_read(drv), True)
        finally:
            conn.disconnect()
    return out


def test_pause_storm_and_watchdog_event_are_findings_with_their_gpus(switch_lab, tmp_path):
    plan = switch_lab["plan"]
    for name in SWITCHES:
        reset(switch_lab, name)
        inject(switch_lab, name, None)
    a = applier(switch_lab, "leaf2", sections=("qos", "mtu"))
    before, after, cmds = a.plan()
    a.apply(before, after, cmds)
    a.close()
    try:
        # first audit: the counters are read (every counter the NOS gives, zero), nothing to compare with
        first = read_all(switch_lab)
        assert first["leaf0"]["counters"]["Ethernet1"]["3"] == {"pfc_rx": 0, "pfc_tx": 0, "drops": 0, "drop_bytes": 0,
                                                                "ecn_marked": 0}
        assert first["leaf2"]["counters"]["swp2"]["3"]["pfc_rx"] == 0
        section, entries, snap = evaluate(plan, first, {}, None, 1000)
        assert section["counters"] == []
        assert section["read"] == {"leaf0": ["qos", "counters"], "leaf2": ["mtu", "qos", "counters"]} and not section["not_read"]
        # consistency: leaf2 was converged to the fabric profile, leaf0 was not (its QoS lines are missing)
        assert [f["switch"] for f in section["consistency"] if f["kind"] == "qos_profile"] == ["leaf0"]

        # a pause storm from gpu02's rail-2 NIC into leaf2 swp2, and the watchdog firing on leaf0 Ethernet1 queue 3
        inject(switch_lab, "leaf2", {"swp2": {"3": {"pfc_rx": 250000}}})
        inject(switch_lab, "leaf0", {"Ethernet1": {"3": {"wd_storms": 1, "wd_restores": 0, "wd_state": "stormed"}}})
        second = read_all(switch_lab)
        section, entries, snap2 = evaluate(plan, second, {}, json.loads(json.dumps(snap)), 1000)
        got = [(f["kind"], f["switch"], f["port"], f["priority"], f["gpus"]) for f in section["counters"]]
        assert ("watchdog", "leaf0", "Ethernet1", "3", ["gpu02:gpu0"]) in got
        assert ("pause_storm", "leaf2", "swp2", "3", ["gpu02:gpu2"]) in got
        assert len(got) == 2 and got[0][0] == "watchdog"     # same GPU count: the watchdog ranks first
        assert section["status"] == "fail" and section["gpus_affected"] == ["gpu02:gpu0", "gpu02:gpu2"]
        assert snap2["leaf2"]["swp2"]["3"]["pfc_rx"] == 250000

        report = build_report(entries, fabric="lab", roce=section)
        md = render_markdown(report)
        assert "## RoCE health: FAIL (2 GPUs affected)" in md
        assert "| leaf2 | swp2 | 3 | pause_storm | 250000 PFC pause frames since the last audit (threshold 1000) | 1 | gpu02:gpu2 |" in md
        assert "| leaf0 | Ethernet1 | 3 | watchdog |" in md and "gpu02:gpu0" in md
        assert "gpu02:gpu2" in render_html(report)
        assert any(e["device"] == "leaf2" and e["check"] == "roce_health" for e in report["entries"])

        # the next audit with the same counters: the storm is not new, the queue still stormed is
        section, dummy_entries, dummy_snap = evaluate(plan, read_all(switch_lab), {}, snap2, 1000)
        assert [(f["kind"], f["switch"]) for f in section["counters"]] == [("watchdog", "leaf0")]
        assert "stormed now" in section["counters"][0]["message"]
    finally:
        for name in SWITCHES:
            inject(switch_lab, name, None)
