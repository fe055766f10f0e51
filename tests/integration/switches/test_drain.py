"""Maintenance drain on the simulators (issue 18 item 4): a change that can disturb forwarding (here an MTU
change on a switch whose BGP this plan runs; `always`, since the lab's drained NOSes are leafs, which `auto`
leaves undrained) is applied inside drain / undrain, each step proven by reading
the whole config back; a failed change is undone and undrained; a switch someone else drained stays so.
NX-OS (`graceful-shutdown activate`) and NVUE (`router bgp graceful-shutdown`); FRR on the twin's engine."""
import copy

import lab
import pytest
from helpers import applier, full_state, reset

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError

SECTIONS = ("qos", "mtu", "pbr", "underlay")
DRAIN = {"leaf3": "graceful-shutdown activate", "leaf2": "router bgp graceful-shutdown on"}
MTU_RE = r"^mtu |link mtu "


def converged(switch_lab, name):
    """The switch as the plan wants it (underlay included), undrained, saved."""
    reset(switch_lab, name)
    a = applier(switch_lab, name, sections=SECTIONS)
    a.apply(*a.plan())
    a.close()


def other_mtu(switch_lab, name):
    intent = copy.deepcopy(switch_lab["devices"][name]["intent"])
    intent["mtu"] = 9100
    return intent


def drain_lines(switch_lab, name):
    text = str(lab.read_state(name, switch_lab["root"])["running"])
    return text.count(DRAIN[name])


def sent(run, needle):
    return [i for i, c in enumerate(run.attempted) if needle in c]


@pytest.mark.parametrize("name", sorted(DRAIN), ids=["nvue", "nxos"])
def test_mtu_change_is_drained_and_undrained(switch_lab, name):
    converged(switch_lab, name)
    dev = switch_lab["devices"][name]
    saved, dev["intent"] = dev["intent"], other_mtu(switch_lab, name)
    try:
        run = applier(switch_lab, name, sections=SECTIONS, drain="always", drain_wait=0)
        before, after, cmds = run.plan()
        assert any("mtu" in c for c in cmds), cmds
        run.apply(before, after, cmds)
        run.close()
    finally:
        dev["intent"] = saved
    assert run.drained and run.drained.startswith("drained (drain: always)"), run.notes
    on, mtu, off = sent(run, DRAIN[name].split(" on")[0]), sent(run, "mtu 9100"), sent(run, "graceful-shutdown")
    # drain line in before the first MTU line, taken back after the last one
    assert on and mtu and min(on) < min(mtu) and max(off) > max(mtu), run.attempted
    st = full_state(name, switch_lab["root"])
    assert drain_lines(switch_lab, name) == 0 and st["running"] == st["startup"]


@pytest.mark.parametrize("name", sorted(DRAIN), ids=["nvue", "nxos"])
def test_failed_change_is_undone_and_undrained(switch_lab, name):
    converged(switch_lab, name)
    seen = full_state(name, switch_lab["root"])
    lab.set_faults(name, {"reject": MTU_RE, "reject_skip": 1}, switch_lab["root"])
    dev = switch_lab["devices"][name]
    saved, dev["intent"] = dev["intent"], other_mtu(switch_lab, name)
    try:
        run = applier(switch_lab, name, sections=SECTIONS, drain="always", drain_wait=0)
        planned = run.plan()
        with pytest.raises(ApplyError) as exc:
            run.apply(*planned)
        run.close()
    finally:
        dev["intent"] = saved
        lab.set_faults(name, {}, switch_lab["root"])
    assert "undrained" in str(exc.value) and "NOT undrained" not in str(exc.value), str(exc.value)
    assert exc.value.rolled_back is True, str(exc.value)
    assert full_state(name, switch_lab["root"]) == seen and drain_lines(switch_lab, name) == 0


def test_a_switch_someone_drained_stays_drained(switch_lab):
    name = "leaf3"
    converged(switch_lab, name)
    op = applier(switch_lab, name)
    rendered = op.driver.render(switch_lab["devices"][name]["intent"], switch_lab["plan"]["qos"], SECTIONS)
    bgp = next(ln for ln in rendered.splitlines() if ln.startswith("router bgp "))
    op._conn().send_config_set([bgp, "  graceful-shutdown activate"])   # an engineer's maintenance
    op.close()
    dev = switch_lab["devices"][name]
    saved, dev["intent"] = dev["intent"], other_mtu(switch_lab, name)
    try:
        run = applier(switch_lab, name, sections=SECTIONS, drain="always", drain_wait=0)
        before, after, cmds = run.plan()
        assert not any("graceful-shutdown" in c for c in cmds), cmds   # never drift, never removed
        run.apply(before, after, cmds)
        run.close()
    finally:
        dev["intent"] = saved
    assert "already drained, not by this run" in run.drained, run.notes
    assert not any("graceful-shutdown" in c for c in run.attempted), run.attempted
    assert drain_lines(switch_lab, name) == 1


def test_auto_leaves_a_host_facing_leaf_undrained(switch_lab):
    name = "leaf3"
    converged(switch_lab, name)
    dev = switch_lab["devices"][name]
    saved, dev["intent"] = dev["intent"], other_mtu(switch_lab, name)
    try:
        run = applier(switch_lab, name, sections=SECTIONS, drain="auto", drain_wait=0)
        run.apply(*run.plan())
        run.close()
    finally:
        dev["intent"] = saved
    assert run.drained.startswith("not drained (mtu changes") and "single-homed" in run.drained, run.drained
    assert not any("graceful-shutdown" in c for c in run.attempted), run.attempted
