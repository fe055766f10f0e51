"""Switch lab: converge, idempotence, drift, fault matrix, against the SSH simulators via netmiko."""
import lab
import pytest
from helpers import applier, full_state, reset

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import Image, differences

ONE_PER_NOS = ["leaf0", "leaf1", "leaf2", "leaf3"]   # asternos, eos, nvue, nxos


@pytest.mark.parametrize("name", ONE_PER_NOS + ["spine1"])
def test_converge_then_noop_without_config_mode(switch_lab, name):
    reset(switch_lab, name)
    a = applier(switch_lab, name)
    before, after, cmds = a.plan()
    assert cmds and before != after
    a.apply(before, after, cmds)
    a.close()
    st = lab.read_state(name, switch_lab["root"])
    assert st["startup"] == st["running"], "config was saved"
    entries = st["config_entries"]
    a = applier(switch_lab, name)
    before2, after2, cmds2 = a.plan()
    a.close()
    assert cmds2 == [] and before2 == after2 == after
    assert lab.read_state(name, switch_lab["root"])["config_entries"] == entries, "no-op run entered config mode"


DRIFT = {
    "leaf1": ["interface Ethernet2", "mtu 1500"],
    "leaf3": ["interface Ethernet1/2", "mtu 1500"],
}


@pytest.mark.parametrize("name", sorted(DRIFT))
def test_manual_drift_shows_in_plan(switch_lab, name):
    a = applier(switch_lab, name)
    before, after, cmds = a.plan()
    if cmds:
        a.apply(before, after, cmds)
    conn = a._conn()
    conn.send_config_set(DRIFT[name])
    before, after, cmds = a.plan()
    a.close()
    assert "1500" in before and before != after
    got = [c.strip() for c in cmds]
    mtu = "mtu 9214" if name == "leaf1" else "mtu 9216"  # leaf1 is EOS: switch MTU clamped to Arista's 9214
    assert got[0] == DRIFT[name][0] and got[-1] == mtu and set(got[1:-1]) <= {"no mtu 1500"}, got


# a port each of the two CLI simulators with a config mode types into (NX-OS; klish: Dell SONiC, since AsterNOS is REST)
TYPING = {"leaf3": "interface Ethernet1/2", "sonic0": "interface Eth1/2"}


@pytest.mark.parametrize("name", sorted(TYPING))
def test_a_login_keeps_the_config_context_of_a_session_typing(switch_lab, name):
    """Another SSH login (a second controller's read, a test's poll) in the middle of a session's config mode
    must not move that session's `interface X` context off the running config: the NX-OS drain-kill flake was
    the simulator re-reading its own state file at every login, so the next `mtu` line landed in a dropped node."""
    reset(switch_lab, name)
    port = TYPING[name]
    typing = applier(switch_lab, name)
    conn = typing._conn()
    conn.config_mode()
    conn.send_config_set([port], enter_config_mode=False, exit_config_mode=False)
    other = applier(switch_lab, name)
    other.read()   # a login and a read while the first session stands in `interface X`
    other.close()
    conn.send_config_set(["mtu 1500"], enter_config_mode=False, exit_config_mode=False)
    conn.exit_config_mode()
    typing.close()
    node = next(n for n in lab.read_state(name, switch_lab["root"])["running"] if n[0] == port)
    assert ["mtu 1500", []] in node[1], node


def test_asternos_rest_drift_shows_in_plan(switch_lab):
    """Someone PATCHes our Easy RoCE profile's cable length over REST: the plan reads it back and PATCHes it back."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.asternos import PROFILES, request
    a = applier(switch_lab, "leaf0")
    before, after, cmds = a.plan()
    if cmds:
        a.apply(before, after, cmds)
    a._conn().send_command(request("PATCH", PROFILES + "/aif_roce", {"cable-length": "CABLE_5m"}))
    before, after, cmds = a.plan()
    a.close()
    assert "roce-profiles aif_roce cable-length CABLE_5m" in before.splitlines()
    assert cmds == [request("PATCH", PROFILES + "/aif_roce", {"cable-length": "CABLE_40m"})]


def test_asternos_refuses_sonic_native_sections_without_the_opt_in(switch_lab):
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import DriverError
    a = applier(switch_lab, "leaf0", sections=("qos", "mtu"))
    with pytest.raises(DriverError, match="asternos_config: config_db"):
        a.plan()
    a.close()


def test_nvue_drift_shows_in_plan(switch_lab):
    a = applier(switch_lab, "leaf2")
    before, after, cmds = a.plan()
    if cmds:
        a.apply(before, after, cmds)
    conn = a._conn()
    conn.send_command("nv set interface swp2 link mtu 1500")
    conn.send_command("nv config apply -y")
    before, after, cmds = a.plan()
    a.close()
    assert cmds == ["nv set interface swp2 link mtu 9216"]


def test_rejected_command_rolls_back_with_device_error(switch_lab):
    name = "leaf3"
    reset(switch_lab, name)
    lab.set_faults(name, {"reject": r"^mtu "}, switch_lab["root"])
    a = applier(switch_lab, name, sections=("mtu",))
    before, after, cmds = a.plan()
    with pytest.raises(ApplyError) as err:
        a.apply(before, after, cmds)
    a.close()
    lab.set_faults(name, {}, switch_lab["root"])
    assert err.value.rolled_back
    assert "Invalid command" in err.value.device_error
    assert "mtu 9216" in [c.strip() for c in err.value.attempted]
    b = applier(switch_lab, name, sections=("mtu",))
    assert b.plan()[0] == before
    b.close()


@pytest.mark.parametrize("name", ONE_PER_NOS)
def test_fault_matrix_drop_at_every_k(switch_lab, name):
    """A session drop after the k-th config command leaves the device in before or intended state: the
    managed view *and* the whole running config, with no checkpoint, pending revision or session left."""
    secs = ("qos",) if name == "leaf0" else ("mtu",)   # AsterNOS: Easy RoCE REST, QoS only
    reset(switch_lab, name)
    probe = applier(switch_lab, name, sections=secs)
    before, after, cmds = probe.plan()
    probe.close()
    full_before = full_state(name, switch_lab["root"])
    # the intended whole config: the before-image outside the managed view, the intent inside it
    intended = Image(after, probe.before_image.outside)
    n = len(cmds) + 2  # every config line, plus the commit/apply step
    outcomes = set()
    for k in range(1, n + 1):
        reset(switch_lab, name)
        lab.set_faults(name, {"drop_after": k}, switch_lab["root"])
        a = applier(switch_lab, name, sections=secs)
        b0, a0, c0 = a.plan()
        assert (b0, a0) == (before, after)
        try:
            a.apply(b0, a0, c0, save=False)  # the matrix is about the transaction, not the save
            outcome = "after"
        except ApplyError as exc:
            assert exc.rolled_back, (k, str(exc))
            outcome = "before"
        a.close()
        check = applier(switch_lab, name, sections=secs)
        seen = check.plan()[0]
        whole = check.before_image
        check.close()
        assert seen in (before, after), "k=%d left a partial config" % k
        assert seen == (after if outcome == "after" else before), k
        # the whole device, not only the managed view: nothing else touched, nothing left behind
        assert whole == (intended if outcome == "after" else probe.before_image), (k, differences(whole, intended))
        st = full_state(name, switch_lab["root"])
        assert (st["checkpoints"], st["pending"], st["sessions"]) == ([], None, {}), (k, st)
        if outcome == "before":
            assert st == full_before, k
        outcomes.add(outcome)
    assert "before" in outcomes
