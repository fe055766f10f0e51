"""GOM localiser (issue 38 step 3): probe results in, faults named by the probes' paths, maintenance filtered.
The network is replayed (tools/gom_sim.py: packets on a faulty link lost at its rate, seeded); the localiser is the
real one. The twin campaign (tools/gom_twin.py) runs the real agents over the twin's kernels."""
import os
import re
import statistics
import sys

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom.identify import plan_identifiable
from ansible_collections.aifabric.roce.plugins.module_utils.gom.localise import GRACE, Localiser, Topology

from ..fabric.intents import lab

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools"))
from gom_sim import Replay  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


@pytest.fixture(scope="module")
def lab_plan():
    plan = build_plan(lab())
    report = plan_identifiable(plan, dport=4792)
    return plan, report, Topology(plan, report["probes"])


def run(topo, report, faults_at, seconds, seed=1, noise=0.0, maintenance=None, loc=None, boost=True):
    """Replays ``seconds``; ``faults_at`` {time: {link: loss}}; returns (localiser, [(t, event)]). The agents
    follow the localiser's boost requests (``boost``) as agent.py does."""
    sim = Replay(report["probes"], seed=seed, noise=noise)
    loc = loc or Localiser(topo, clock=lambda: 0.0)
    if not boost:
        loc.boost_seconds = 0.0
    out = []
    t = 0.0
    for _step in range(int(seconds * 10)):
        t = round(t + 0.1, 1)
        if t in faults_at:
            sim.faults = faults_at[t]
        if maintenance and t in maintenance:
            loc.set_maintenance(maintenance[t])
        for batch in sim.step(t):
            loc.ingest(batch, t)
        out.extend((t, e) for e in loc.tick(t))
        sim.apply(loc.boosts(t), t)
    return loc, out


def test_every_link_down_is_named_exactly_within_a_second_and_recovers(lab_plan):
    plan, report, topo = lab_plan
    took = []
    for index, link in enumerate(sorted(topo.sig)):
        _loc, events = run(topo, report, {5.0: {link: 1.0}, 9.0: {}}, 12, seed=index)
        kinds = [(e["kind"], e["link"]) for _t, e in events]
        assert kinds == [("link_fault", link), ("recovered", link)], (link, kinds)
        fault = events[0][1]
        took.append(fault["localised"] - 5.0)
        assert fault["first_loss"] is not None and 4.8 <= fault["first_loss"] <= fault["detected"] <= fault["localised"]
        assert fault["gpus"] and fault["loss"] == 1.0 and fault["fault_id"] == fault["id"]
        assert events[1][1]["fault_id"] == fault["id"] and events[1][1]["cleared"] > 9.0
    assert statistics.median(took) <= 1.0 and max(took) <= 1.0


def test_twenty_percent_loss_is_named_and_nothing_else_is(lab_plan):
    _plan, report, topo = lab_plan
    took, wrong = [], []
    for index, link in enumerate(sorted(topo.sig)):
        _loc, events = run(topo, report, {5.0: {link: 0.2}}, 20, seed=100 + index)
        faults = [e for _t, e in events if e["kind"] != "recovered"]
        assert faults, link
        if faults[0]["link"] != link:
            wrong.append((link, faults[0]["link"]))
        took.append(faults[0]["localised"] - 5.0)
    # a link whose probes are a subset of another's needs clean packets on the other's probes before it can be
    # named (docs/gom.md): the boost (the agents send the telling probes at 100/s) gives them in a fraction of a
    # second; without it this replay took 1.05 s median, 5.3 s worst
    assert wrong == []
    assert statistics.median(took) <= 1.0 and max(took) <= 2.5


def test_a_link_is_named_only_when_every_path_across_it_is_bad(lab_plan):
    """NetBouncer's rule, on top of the likelihood ratio: a link sharing one lossy probe with the faulty link but
    whose other probes stayed clean is never the one named."""
    _plan, report, topo = lab_plan
    link = "leaf1:Ethernet9>spine1:Ethernet3"
    loc, events = run(topo, report, {1.0: {link: 1.0}}, 2.0)
    t0 = min(loc.probes[pid].first_loss_t for pid in topo.sig[link])
    _strong, weak = loc._sets()
    assert loc._all_paths_bad(link, t0, weak)
    sharing = [x for x in topo.sig if x != link and topo.sig[x] & topo.sig[link] and not topo.sig[x] <= topo.sig[link]]
    assert sharing and not any(loc._all_paths_bad(x, t0, weak) for x in sharing)


def test_two_percent_loss_is_named_within_thirty_seconds(lab_plan):
    _plan, report, topo = lab_plan
    took = []
    for index, link in enumerate(sorted(topo.sig)[::8]):
        _loc, events = run(topo, report, {5.0: {link: 0.02}}, 40, seed=300 + index)
        faults = [e for _t, e in events if e["kind"] != "recovered"]
        assert [(e["kind"], e["link"]) for e in faults] == [("link_fault", link)], link
        took.append(faults[0]["localised"] - 5.0)
    assert max(took) <= 30.0, took


def test_no_event_without_a_fault_even_with_background_loss(lab_plan):
    _plan, report, topo = lab_plan
    _loc, events = run(topo, report, {}, 60, noise=0.001)
    assert events == []


def _stalled(topo, report, seconds, fixed_grace=False, faults_at=None):
    """Agents starved as on a loaded machine: each stalls (sends nothing, composes no batch) with probability 3 %
    per 100 ms, for up to 0.8 s; what reached it meanwhile is in its first batch after."""
    sim = Replay(report["probes"], seed=7, stall=(0.03, 0.8))
    loc = Localiser(topo, clock=lambda: 0.0)
    if fixed_grace:
        loc._ready = lambda _dst, sent_t, now: sent_t <= now - GRACE
    out, t = [], 0.0
    for _step in range(int(seconds * 10)):
        t = round(t + 0.1, 1)
        if faults_at and t in faults_at:
            sim.faults = faults_at[t]
        for batch in sim.step(t):
            loc.ingest(batch, t)
        out.extend((t, e) for e in loc.tick(t))
    return loc, out


def test_starved_agents_raise_no_false_alarm(lab_plan):
    """The cause of the false alarms under load: a packet was judged a fixed 0.25 s after its sender's report,
    so a receiving agent that reported late made it a loss. Judged against the receiver's own batch times (``m``),
    nothing is lost; the old rule on the same replay counts losses and raises events."""
    _plan, report, topo = lab_plan
    loc, events = _stalled(topo, report, 60)
    assert events == [] and loc.counters["lost"] == 0 and loc.counters["received"] > 20000
    old, old_events = _stalled(topo, report, 60, fixed_grace=True)
    assert old.counters["lost"] > 100 and old_events
    link = "leaf1:Ethernet9>spine1:Ethernet3"
    loc, events = _stalled(topo, report, 12, faults_at={5.0: {link: 1.0}})
    assert [(e["kind"], e["link"]) for _t, e in events][:1] == [("link_fault", link)]


def test_a_switch_down_is_one_event_naming_the_switch(lab_plan):
    _plan, report, topo = lab_plan
    for switch in ("leaf0", "spine1"):
        links = dict((link, 1.0) for link in topo.links_of_switch[switch])
        loc, events = run(topo, report, {3.0: links}, 6)
        assert [(e["kind"], e["switch"]) for _t, e in events] == [("switch_fault", switch)]
        assert set(events[0][1]["links"]) <= set(links) and len(events[0][1]["links"]) >= 8
        assert all(loc.state(link) == "grouped" for link in events[0][1]["links"])


def test_a_fault_on_a_switch_under_maintenance_is_maintenance_not_a_fault(lab_plan):
    _plan, report, topo = lab_plan
    link = "leaf0:Ethernet8>spine1:Ethernet1"
    held = {"spine1": {"by": "drain", "holder": "aif-261128200000-ctrl-abcdef-42-abc", "since": 1.0}}
    loc, events = run(topo, report, {3.0: {link: 1.0}}, 8, maintenance={1.0: held})
    assert [(e["kind"], e["switch"]) for _t, e in events] == [("maintenance", "spine1")]
    assert link in events[0][1]["links"] and events[0][1]["maintenance"]["by"] == "drain"
    assert loc.state(link) == "maintenance"
    # the drain ends and the link is still bad: now it is a fault
    loc, events = run(topo, report, {3.0: {link: 1.0}}, 10, maintenance={1.0: held, 8.0: {}})
    assert [(e["kind"], e["link"]) for _t, e in events] == [("maintenance", None), ("link_fault", link)]
    # a fault that ends within the drain: its losses belong to the maintenance, nothing is reported after it
    loc, events = run(topo, report, {3.0: {link: 1.0}, 5.0: {}}, 14, maintenance={1.0: held, 8.0: {}})
    assert [e["kind"] for _t, e in events] == ["maintenance"]


def test_two_faults_on_different_switches_are_both_named(lab_plan):
    _plan, report, topo = lab_plan
    one, two = "gpu01:rail0>leaf0:Ethernet0", "leaf3:Ethernet1/3>gpu03:rail3"
    _loc, events = run(topo, report, {3.0: {one: 1.0, two: 1.0}}, 7)
    assert sorted(e["link"] for _t, e in events if e["kind"] == "link_fault") == sorted([one, two])


def test_agent_restart_and_unknown_probes(lab_plan):
    _plan, report, topo = lab_plan
    loc = Localiser(topo, clock=lambda: 0.0)
    dst = topo.probe[0]["dst_host"]
    loc.ingest({"host": dst}, 0.5)
    loc.ingest({"host": "gpu01", "tx": [[0, 500], [9999, 3]], "rx": [[0, [[1, 500]]]], "dropped": 7}, 1.0)
    loc.ingest({"host": dst}, 1.9)
    loc.tick(2.0)
    assert loc.counters["unknown_probe"] == 1 and loc.dropped == {"gpu01": 7}
    # joined late: judged from the first report on, nothing counted lost before it
    assert loc.probes[0].eval_to == 500 and loc.counters["lost"] == 0
    loc.ingest({"tx": [[0, 1]], "rx": [[0, [[1, 1]]]]}, 3.0)     # restarted: numbers start again
    loc.ingest({"host": dst}, 3.9)
    loc.tick(4.0)
    assert loc.probes[0].eval_to == 1 and loc.counters["lost"] == 0
    # a receiving agent that stops reporting: its probes are not measured, not lost
    loc.ingest({"tx": [[0, 40]]}, 4.5)
    loc.tick(6.0)
    assert loc.probes[0].eval_to == 40 and loc.counters["lost"] == 0


def test_event_keys_are_the_documented_schema(lab_plan):
    _plan, report, topo = lab_plan
    _loc, events = run(topo, report, {3.0: {"gpu01:rail0>leaf0:Ethernet0": 1.0}}, 5)
    with open(os.path.join(ROOT, "docs", "gom.md")) as handle:
        text = handle.read()
    table = text.split("## 4. Events")[1].split("Rules:")[0]
    documented = set()
    for cell in re.findall(r"^\| ([^|]+) \|", table, re.M):
        documented.update(re.findall(r"`([a-z_]+)`", cell))
    assert events and set(events[0][1]) == documented
    assert events[0][1]["schema"] == "aifabric.gom.event/1"


def _one_then_another(topo, report, first, then, seed, seconds=60):
    """2 % loss on ``first`` from 3 s until it is named (the twin campaign clears it then), 2 % on ``then`` (if any)
    from 3 s after that; the faults and links named, in order."""
    sim = Replay(report["probes"], seed=seed)
    loc = Localiser(topo, clock=lambda: 0.0)
    t, out, named_at = 0.0, [], None
    for _step in range(int(seconds * 10)):
        t = round(t + 0.1, 1)
        if t == 3.0:
            sim.faults = {first: 0.02}
        if named_at is None and any(e["link"] == first for e in out):
            named_at, sim.faults = t, {}
        if then and named_at and t == round(named_at + 3.0, 1):
            sim.faults = {then: 0.02}
        for batch in sim.step(t):
            loc.ingest(batch, t)
        out.extend(loc.tick(t))
        sim.apply(loc.boosts(t), t)
    return [(e["kind"], e["link"]) for e in out if e["kind"] != "recovered"]


def test_a_probe_an_open_fault_explains_names_no_other_link(lab_plan):
    """The last false alarms at 2 % loss (twin loss2 campaign, docs/gom.md): a probe that lost packets on a fault
    still open (its 2 % takes ~20 s of clean packets to recover) kept failing the detection test, and once the
    fault's other probes were clean a link crossed by that probe alone led the likelihoods and was named. Only its
    losses since the fault was named count now. Replayed: seeds 13 and 25 named leaf2:swp1>gpu01:rail2 before."""
    _plan, report, topo = lab_plan
    first = "gpu02:rail1>leaf1:Ethernet2"
    assert topo.sig["leaf2:swp1>gpu01:rail2"] < topo.sig[first]
    for seed in (13, 25):
        assert _one_then_another(topo, report, first, None, seed) == [("link_fault", first)], seed
    # a real second fault whose probes all cross the open fault's link is still named: its fresh losses count
    first, then = "gpu02:rail3>leaf3:Ethernet1/2", "leaf3:Ethernet1/10>spine2:Ethernet7"
    assert topo.sig[then] < topo.sig[first]
    for seed in (0, 1):
        assert ("link_fault", then) in _one_then_another(topo, report, first, then, seed), seed


def test_a_link_inside_a_wider_one_is_named_only_when_the_wider_ones_other_probes_refute_it(lab_plan):
    """A link whose probes are a subset of another's (spine1:Ethernet4>leaf1:Ethernet11: one probe, also across
    leaf0:Ethernet10>spine1:Ethernet2) is told apart only by the wider link's other probes staying clean; with the
    rate estimated from a few losses at 2 %, the likelihood ratio named it 4.9 s in (seed 37) and the real one 3.8 s
    later. Now those clean packets must be improbable at the lowest rate the subset's own losses allow."""
    _plan, report, topo = lab_plan
    link, inner = "leaf0:Ethernet10>spine1:Ethernet2", "spine1:Ethernet4>leaf1:Ethernet11"
    assert topo.sig[inner] < topo.sig[link]
    _loc, events = run(topo, report, {3.0: {link: 0.02}}, 20, seed=37)
    assert [(e["kind"], e["link"]) for _t, e in events if e["kind"] != "recovered"] == [("link_fault", link)]
    # two real faults at 2 % at once, on different switches: both named (a third link is still named in some seeds,
    # as before this rule: docs/gom.md)
    one, two = "gpu01:rail0>leaf0:Ethernet0", "leaf3:Ethernet1/3>gpu03:rail3"
    for seed in (1, 5):
        _loc, events = run(topo, report, {3.0: {one: 0.02, two: 0.02}}, 40, seed=seed)
        assert set([one, two]) <= set(e["link"] for _t, e in events if e["kind"] == "link_fault"), seed


def test_refutation_bounds():
    from ansible_collections.aifabric.roce.plugins.module_utils.gom.localise import binomial_cdf, wilson_low
    assert 0.0 < wilson_low(3, 150, 2.33) < 0.02 < wilson_low(30, 150, 2.33) < 0.2
    assert wilson_low(10, 10, 2.33) > 0.6 and wilson_low(0, 10, 2.33) == 0.0
    assert abs(binomial_cdf(0, 100, 0.02) - 0.98 ** 100) < 1e-12
    assert binomial_cdf(5, 5, 0.5) == 1.0 and binomial_cdf(0, 10, 1.0) == 0.0
