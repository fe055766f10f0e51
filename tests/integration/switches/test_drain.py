"""Maintenance drain on the simulators (issue 18 item 4): a change that can disturb forwarding (here an MTU
change on a switch whose BGP this plan runs; `always`, since the lab's drained NOSes are leafs, which `auto`
leaves undrained) is applied inside drain / undrain, each step proven by reading
the whole config back; a failed change is undone and undrained; a switch someone else drained stays so.
NX-OS (`graceful-shutdown activate`), NVUE (`router bgp graceful-shutdown`) and community SONiC (CONFIG_DB
BGP_DEVICE_GLOBAL|STATE tsa_enabled, SONiC's traffic shift away, by a GCU patch); FRR on the twin's engine."""
import copy

import lab
import pytest
from helpers import applier, full_state, reset

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError

SECTIONS = ("qos", "mtu", "pbr", "underlay")
# what the simulator's running config holds while drained (text in the CLI trees, a field in CONFIG_DB)
DRAIN = {"leaf3": "graceful-shutdown activate", "leaf2": "router bgp graceful-shutdown on",
         "csonic0": "'tsa_enabled': 'true'"}
IDS = {"leaf3": "nxos", "leaf2": "nvue", "csonic0": "community_sonic"}
# what the run sends to drain, to change the MTU, to undrain
SENT = {"leaf3": ("graceful-shutdown activate", "mtu 9100", "graceful-shutdown"),
        "leaf2": ("router bgp graceful-shutdown", "mtu 9100", "graceful-shutdown"),
        "csonic0": ('tsa_enabled", "value": "true"', '"value": "9100"', 'tsa_enabled", "value": "false"')}
MTU_RE = r"^mtu |link mtu |^sudo -n config apply-patch "


def sections_of(name):
    """community SONiC carries no pbr (SONiC's sonic-acl.yang refuses the redirect: test_community_sonic.py)."""
    return ("qos", "mtu", "underlay") if name == "csonic0" else SECTIONS


def converged(switch_lab, name):
    """The switch as the plan wants it (underlay included), undrained, saved."""
    reset(switch_lab, name)
    a = applier(switch_lab, name, sections=sections_of(name))
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


@pytest.mark.parametrize("name", sorted(DRAIN), ids=[IDS[n] for n in sorted(DRAIN)])
def test_mtu_change_is_drained_and_undrained(switch_lab, name):
    converged(switch_lab, name)
    dev = switch_lab["devices"][name]
    saved, dev["intent"] = dev["intent"], other_mtu(switch_lab, name)
    try:
        run = applier(switch_lab, name, sections=sections_of(name), drain="always", drain_wait=0)
        before, after, cmds = run.plan()
        assert any("mtu" in c for c in cmds), cmds
        run.apply(before, after, cmds)
        run.close()
    finally:
        dev["intent"] = saved
    assert run.drained and run.drained.startswith("drained (drain: always)"), run.notes
    on, mtu, off = (sent(run, needle) for needle in SENT[name])
    # drain line in before the first MTU line, taken back after the last one
    assert on and mtu and min(on) < min(mtu) and max(off) > max(mtu), run.attempted
    st = full_state(name, switch_lab["root"])
    assert drain_lines(switch_lab, name) == 0 and st["running"] == st["startup"]


@pytest.mark.parametrize("name", sorted(DRAIN), ids=[IDS[n] for n in sorted(DRAIN)])
def test_failed_change_is_undone_and_undrained(switch_lab, name):
    converged(switch_lab, name)
    seen = full_state(name, switch_lab["root"])
    lab.set_faults(name, {"reject": MTU_RE, "reject_skip": 1}, switch_lab["root"])
    dev = switch_lab["devices"][name]
    saved, dev["intent"] = dev["intent"], other_mtu(switch_lab, name)
    try:
        run = applier(switch_lab, name, sections=sections_of(name), drain="always", drain_wait=0)
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
