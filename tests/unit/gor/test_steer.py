"""GOR steering, pure: which bindings move off a bad leaf-spine link, where to (balanced), when they come back."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gor import steer
from ansible_collections.aifabric.roce.plugins.modules import gor_steer

from ..fabric.intents import lab, small
from ..module_runner import run_module


@pytest.fixture(scope="module")
def plan():
    return build_plan(lab())


def up_link(plan, leaf, port):
    u = [u for u in plan["leafs"][leaf]["uplinks"] if u["port"] == port][0]
    return "%s:%s>%s:%s" % (leaf, port, u["spine"], u["spine_port"])


def down_link(plan, leaf, port):
    u = [u for u in plan["leafs"][leaf]["uplinks"] if u["port"] == port][0]
    return "%s:%s>%s:%s" % (u["spine"], u["spine_port"], leaf, port)


def links(*items):
    return [dict(link=l, state=s, since=t, event="ev-%d" % i) for i, (l, s, t) in enumerate(items)]


def run(plan, items, record=None, now=100, hold_down=300):
    return steer.compute(plan, steer.check_links(plan, items), record, now, hold_down)


def effective(plan, record, leaf):
    intent = steer.steered_intent(plan["leafs"][leaf], leaf, record)
    return dict((b["ingress"], b["uplink"]) for b in intent["bindings"])


def test_bad_leaf_to_spine_link_moves_its_bindings_to_the_least_loaded_healthy_uplinks(plan):
    leaf = plan["leafs"]["leaf0"]
    planned = dict((b["ingress"], b["uplink"]) for b in leaf["bindings"])
    bad = "Ethernet8"
    on_bad = sorted(i for i, u in planned.items() if u == bad)
    assert on_bad, "the lab's leaf0 binds a port to Ethernet8"
    record, moves, notes = run(plan, links((up_link(plan, "leaf0", bad), "bad", 50)))
    assert not notes and [m["ingress"] for m in moves] == on_bad and all(m["action"] == "steer" for m in moves)
    after = effective(plan, record, "leaf0")
    assert bad not in after.values()
    load = {}
    for u in after.values():
        load[u] = load.get(u, 0) + 1
    healthy = [u["port"] for u in leaf["uplinks"] if u["port"] != bad]
    assert max(load.get(u, 0) for u in healthy) - min(load.get(u, 0) for u in healthy) <= 1
    entry = record["steered"][0]
    assert entry["because"] == up_link(plan, "leaf0", bad) and entry["since"] == 50 and entry["event"] == "ev-0"
    target = [u for u in leaf["uplinks"] if u["port"] == entry["uplink"]][0]
    assert entry["next_hop"] == target["peer"] and entry["spine"] == target["spine"]
    # only leaf0 changes; bindings on healthy uplinks stay
    assert steer.leafs_changed(moves) == ["leaf0"]
    assert all(after[i] == planned[i] for i in planned if i not in on_bad)


def test_spine_to_leaf_link_moves_the_planes_other_leafs_off_that_spine(plan):
    bad = down_link(plan, "leaf1", "Ethernet9")     # spine2 -> leaf1
    spine = [u for u in plan["leafs"]["leaf1"]["uplinks"] if u["port"] == "Ethernet9"][0]["spine"]
    record, moves, notes = run(plan, links((bad, "congested", 10)))
    assert not notes and moves
    for leaf_name in steer.leafs_changed(moves):
        assert leaf_name != "leaf1"
        intent = steer.steered_intent(plan["leafs"][leaf_name], leaf_name, record)
        assert all(b["spine"] != spine for b in intent["bindings"])
    assert all(e["because"] == bad for e in record["steered"])


def test_restore_after_hold_down_only(plan):
    bad = up_link(plan, "leaf0", "Ethernet8")
    record, moves, _notes = run(plan, links((bad, "bad", 50)))
    # link healthy again at t=200: not yet (hold-down 300)
    kept, moves2, _notes = run(plan, links((bad, "healthy", 200)), record, now=400)
    assert [dict(e, healthy_since=None) for e in kept["steered"]] == [dict(e, healthy_since=None) for e in record["steered"]]
    assert moves2 == []
    # still bad: stays, idempotent
    assert run(plan, links((bad, "bad", 50)), record, now=1000)[0] == record
    # healthy for 300 s: back to the plan
    back, moves3, _notes = run(plan, links((bad, "healthy", 200)), record, now=500)
    assert back["steered"] == [] and all(m["action"] == "restore" and m["to"] == "Ethernet8" for m in moves3)
    # a link never reported healthy keeps the steer (no silent restore)
    assert run(plan, [], record, now=10 ** 9)[0] == record
    # the healthy report is remembered: a later run without events (a periodic job) restores after the hold-down
    assert kept["steered"][0]["healthy_since"] == 200
    assert run(plan, [], kept, now=450)[0] == kept
    assert run(plan, [], kept, now=500)[0]["steered"] == []
    # a new fault report forgets it
    again = run(plan, links((bad, "bad", 600)), kept, now=600)[0]
    assert "healthy_since" not in again["steered"][0] and run(plan, [], again, now=10 ** 9)[0] == again


def test_steered_uplink_failing_too_moves_again_and_no_healthy_uplink_is_said(plan):
    first = up_link(plan, "leaf0", "Ethernet8")
    record = run(plan, links((first, "bad", 1)))[0]
    moved_to = record["steered"][0]["uplink"]
    second = up_link(plan, "leaf0", moved_to)
    record2, moves, _notes = run(plan, links((first, "bad", 1), (second, "bad", 2)), record)
    assert any(m["action"] == "move" for m in moves)
    assert {"Ethernet8", moved_to}.isdisjoint(effective(plan, record2, "leaf0").values())
    everything = [(up_link(plan, "leaf0", u["port"]), "bad", 3) for u in plan["leafs"]["leaf0"]["uplinks"]]
    notes = run(plan, links(*everything), record2)[2]
    assert notes and "no healthy uplink" in notes[0]


def test_bad_input_and_host_links():
    p = build_plan(lab())
    with pytest.raises(steer.SteerError, match="links\\[0\\].state"):
        steer.check_links(p, [{"link": "x", "state": "down", "since": 1}])
    with pytest.raises(steer.SteerError, match="since"):
        steer.check_links(p, [{"link": "x", "state": "bad", "since": True}])
    assert steer.check_links(p, [{"link": "gpu01:rail0>leaf0:Ethernet0", "state": "bad", "since": 1}]) == {}
    with pytest.raises(steer.SteerError, match="version"):
        steer.check_record({"steered": []})


def test_audit_entries_say_steered_not_drift(plan):
    record = run(plan, links((up_link(plan, "leaf0", "Ethernet8"), "bad", 0)))[0]
    entries = steer.audit_entries(record, ["leaf0", "leaf1"], lambda t: "since 1970-01-01T00:00:00Z")
    assert len(entries) == 1 and entries[0]["status"] == "warn" and entries[0]["check"] == "gor_steer"
    link = up_link(plan, "leaf0", "Ethernet8")
    assert entries[0]["message"] == "steered by GOR because %s since 1970-01-01T00:00:00Z" % link
    assert steer.audit_entries(record, ["leaf1"]) == []


def test_balance_on_a_wider_leaf():
    p = build_plan(small(servers=8, rails=1, spg=8))
    leaf_name = sorted(p["leafs"])[0]
    leaf = p["leafs"][leaf_name]
    planned = dict((b["ingress"], b["uplink"]) for b in leaf["bindings"])
    first = leaf["uplinks"][0]["port"]
    record, moves, _notes = run(p, links((up_link(p, leaf_name, first), "bad", 0)))
    after = effective(p, record, leaf_name)
    load = {}
    for u in after.values():
        load[u] = load.get(u, 0) + 1
    assert first not in load and max(load.values()) - min(load.values()) <= 1
    assert len(moves) == sum(1 for u in planned.values() if u == first)


def test_module_planned_then_recorded(tmp_path, capsys, plan):
    path = str(tmp_path / "gor" / "steer.json")
    bad = up_link(plan, "leaf0", "Ethernet8")
    args = {"fabric": lab(), "links": links((bad, "bad", 5)), "record_path": path, "now": 10}
    planned = run_module(gor_steer, args, capsys)
    assert not planned["changed"] and planned["leafs"] == ["leaf0"] and planned["record"]["steered"]
    rec = {"fabric": lab(), "record_path": path, "state": "recorded", "planned_record": planned["record"]}
    nothing = run_module(gor_steer, dict(rec, pushed_leafs=[]), capsys)
    assert nothing["changed"] and nothing["record"]["steered"] == []     # an empty record written, nothing steered
    check = run_module(gor_steer, dict(rec, pushed_leafs=["leaf0"], _ansible_check_mode=True, _ansible_diff=True), capsys)
    assert check["changed"] and '"leaf0"' in check["diff"]["after"]
    done = run_module(gor_steer, dict(rec, pushed_leafs=["leaf0"]), capsys)
    assert done["changed"] and done["record"] == planned["record"]
    assert not run_module(gor_steer, dict(rec, pushed_leafs=["leaf0"]), capsys)["changed"]
    again = run_module(gor_steer, args, capsys)
    assert again["moves"] == [] and again["record"] == planned["record"]
    bad_leaf = run_module(gor_steer, dict(rec, pushed_leafs=["nope"]), capsys)
    assert bad_leaf["failed"] and "nope" in bad_leaf["msg"]
