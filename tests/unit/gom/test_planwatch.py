"""GOM probes follow the fabric (issue 38): a plan checked against the fabric it runs on (digest, changes), probes
re-pathed when GOR steers a binding, and a running localiser carried over without losing state or paging again.
The network is replayed (tools/gom_sim.py) on the probes' real paths: after a steer the packets cross the new uplink.
GOR's own steering (gor/steer.py compute) moves the bindings."""
import os
import sys

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom import planwatch
from ansible_collections.aifabric.roce.plugins.module_utils.gom.identify import plan_identifiable
from ansible_collections.aifabric.roce.plugins.module_utils.gom.localise import Localiser, Topology
from ansible_collections.aifabric.roce.plugins.module_utils.gor import steer

from ..fabric.intents import lab

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools"))
from gom_sim import Replay  # noqa: E402


@pytest.fixture(scope="module")
def lab_plan():
    plan = build_plan(lab())
    return plan, plan_identifiable(plan, dport=4792)


class Run(object):
    """A replayed network and a localiser; ``reload`` re-paths both (the network forwards on the new bindings, the
    collector reloads its plan) and carries the localiser's state."""

    def __init__(self, plan, probes):
        self.plan = plan
        self.sim = Replay(probes, seed=4)
        self.loc = Localiser(Topology(plan, probes), clock=lambda: 0.0)
        self.t = 0.0
        self.events = []

    def run(self, seconds):
        out = []
        for _step in range(int(round(seconds * 10))):
            self.t = round(self.t + 0.1, 1)
            for batch in self.sim.step(self.t):
                self.loc.ingest(batch, self.t)
            out.extend(self.loc.tick(self.t))
        self.events.extend(out)
        return out

    def reload(self, probes):
        self.sim.probes = [(p["id"], p["src_host"], p["dst_host"], tuple(p["path"])) for p in probes]
        new = Localiser(Topology(self.plan, probes), clock=lambda: 0.0)
        self.loc = planwatch.carry(self.loc, new, self.plan)


def kinds(events):
    return [(e["kind"], e["link"]) for e in events]


def faulted(plan, report, link_class):
    """A Run with the first link of ``link_class`` failed (100 %) after 3 s and named; returns (run, link)."""
    topo = Topology(plan, report["probes"])
    link = sorted(x for x, info in topo.info.items() if info["link_class"] == link_class)[0]
    run = Run(plan, report["probes"])
    run.run(3)
    run.sim.faults = {link: 1.0}
    assert kinds(run.run(2)) == [("link_fault", link)]
    return run, link


def test_a_steer_changes_the_fabric_digest_and_names_the_moved_bindings(lab_plan):
    plan, _report = lab_plan
    uplink = sorted(steer._uplink_links(plan))[0]
    record, moves, _notes = steer.compute(plan, steer.check_links(plan, [{"link": uplink, "state": "bad", "since": 1}]))
    assert moves
    before, after = planwatch.fabric_view(plan), planwatch.fabric_view(plan, record)
    assert planwatch.digest(before) == planwatch.digest(planwatch.fabric_view(plan, steer.empty_record()))
    assert planwatch.digest(before) != planwatch.digest(after)
    diff = planwatch.changes(before, after)
    assert sorted((m["leaf"], m["ingress"], m["to"]) for m in diff["bindings_moved"]) == sorted(
        (m["leaf"], m["ingress"], m["to"]) for m in moves)
    assert diff["links_added"] == diff["links_removed"] == diff["nics_changed"] == []


def test_probes_follow_a_steer_the_steered_link_is_not_called_healthy_and_recovers_on_real_evidence(lab_plan):
    plan, report = lab_plan
    run, bad = faulted(plan, report, "leaf_up")
    # GOR steers the bindings off the bad uplink; the network forwards them on the new uplink, GOM re-paths
    record, moves, _notes = steer.compute(plan, steer.check_links(plan, [{"link": bad, "state": "bad", "since": 3}]),
                                          now=5, hold_down=300)
    assert moves and all(m["action"] == "steer" for m in moves)
    probes, moved = planwatch.repath(plan, report["probes"], record)
    assert moved and all(bad not in p["path"] for p in probes)
    run.reload(probes)
    # the bad link is still bad: no probe crosses it now, so GOM neither pages again nor calls it recovered
    assert run.run(60) == []
    assert run.loc.state(bad) == "fault" and planwatch.unmeasured_faults(run.loc) == [bad]
    # ... so GOR, run again without events after its hold-down, does not restore (no steer back and forth)
    again, moves, _notes = steer.compute(plan, {}, record, now=400, hold_down=300)
    assert moves == [] and again == record
    # the probes crossing the new uplink judge it: a fault there is named on it
    new_uplink = [p["path"][1] for p in probes if p["id"] in moved][0]
    run.sim.faults = {bad: 1.0, new_uplink: 1.0}
    named = kinds(run.run(3))
    assert ("link_fault", new_uplink) in named and ("recovered", bad) not in named
    run.sim.faults = {bad: 1.0}
    assert kinds(run.run(5)) == [("recovered", new_uplink)]
    # the operator (or GOR on a healthy report) restores: the probes cross the bad link again, which still loses
    # packets: the open fault stays open, no second page and no recovery
    run.reload(report["probes"])
    assert run.run(10) == [] and run.loc.state(bad) == "fault"
    # repaired: recovered on the probes that cross it
    run.sim.faults = {}
    assert kinds(run.run(5)) == [("recovered", bad)]


def test_carry_keeps_open_faults_and_loss_history_of_unmoved_probes(lab_plan):
    plan, report = lab_plan
    run, host = faulted(plan, report, "host_up")
    old = run.loc
    run.reload(report["probes"])        # a reload with nothing changed: no new event, same state
    assert run.loc is not old and run.loc.open.keys() == old.open.keys() and run.loc.lossy == old.lossy
    assert run.run(3) == []
    run.sim.faults = {}
    assert kinds(run.run(3)) == [("recovered", host)]


def test_the_collector_reloads_when_gor_writes_its_record_and_keeps_its_faults(lab_plan, tmp_path):
    import json
    import time as _time
    from ansible_collections.aifabric.roce.plugins.module_utils.gom import collector
    plan, report = lab_plan
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "probes.json").write_text(json.dumps({"probes": report["probes"]}))
    record_path = tmp_path / "gor.json"
    loc, loaded = collector.build(str(tmp_path / "plan.json"), str(tmp_path / "probes.json"), 10.0, str(record_path))
    service = collector.Service(loc)
    service.watch(loaded, str(tmp_path / "probes.json"), str(record_path))
    assert service.reload_if_changed() is False and service.repathed == []
    bad = sorted(steer._uplink_links(plan))[0]
    loc.open[bad] = {"links": [bad], "probes": [], "kind": "link_fault"}
    loc.link_state[bad] = "fault"
    record, _moves, _notes = steer.compute(plan, steer.check_links(plan, [{"link": bad, "state": "bad", "since": 1}]))
    _time.sleep(0.01)
    record_path.write_text(json.dumps(record))
    assert service.reload_if_changed() is True
    assert service.localiser is not loc and service.repathed
    assert service.localiser.state(bad) == "fault" and planwatch.unmeasured_faults(service.localiser) == [bad]
    record_path.write_text("{not json")
    _time.sleep(0.01)
    kept = service.localiser
    assert service.reload_if_changed() is False and service.localiser is kept
