"""Compare-and-swap at the last moment (issue 26 item 4), on every NOS driver the lab simulates: an engineer sets a
key this run manages (a port's MTU) to their own value while the run is under way, at the latest moment each
NOS's mechanism lets us look; the run stops, names the key and their value, and their value stays.

* EOS: after the pre-commit read, while the run re-enters its configuration session (a commit copies the session's
  snapshot over the running config): caught by `show session-config diffs` taken again right before `commit timer`;
* NX-OS, Dell SONiC (klish apply each line as typed): while the run is sending, before its line for that
  port: caught by the re-read between blocks (lock.StagingGuard);
* AsterNOS (Easy RoCE REST, each call applied as made; no MTU there): an engineer's PATCH of our profile while the
  run is between its REST calls: caught by the same re-read before the next call;
* NVUE: while the run stages its revision: caught by the read just before `nv config apply`.
A clean run re-checking before every block is never refused (no false foreign change). FRR: unit-tested
(tests/unit/nos/test_frr_transaction.py), no simulator.
"""
import lab
import pytest
from helpers import Background, applier, cli_session, nothing_left, reset
from test_fault_matrix import aif_objects

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError

# where the run is held (the simulator sleeps before that line) while the engineer types
HOLD = {
    "leaf1": {"re": r"^configure session aif-\S+-c$", "skip": 1},   # EOS: re-entering the session, after the read
    "leaf3": {"re": r"^mtu ", "skip": 0},                            # NX-OS: its first MTU line
    "sonic0": {"re": r"^mtu ", "skip": 0},                           # Dell SONiC
    "leaf2": {"re": r"link mtu ", "skip": 0},                        # NVUE: staging its revision
}
NOS = {"leaf1": "eos", "leaf3": "nxos", "leaf0": "asternos", "sonic0": "dell_sonic", "leaf2": "nvue"}
# AsterNOS: held before its first PATCH (cable-length), after the POST that created our profile
ASTERNOS_HOLD = {"re": r"^curl .* -X PATCH ", "skip": 0}


def last_mtu_port(cmds):
    """The port whose MTU line this run sends last (its edit lands before our line for it)."""
    port, found = None, None
    for cmd in cmds:
        if cmd.startswith("nv set interface ") and " link mtu " in cmd:
            found = cmd.split()[3]
        elif not cmd[:1].isspace():
            port = cmd[len("interface "):] if cmd.startswith("interface ") else None
        elif port and cmd.strip().startswith("mtu "):
            found = port
    return found


def engineer_sets_mtu(switch_lab, name, port):
    with cli_session(switch_lab, name) as conn:
        if NOS[name] == "nvue":
            conn.send_command("nv set interface %s link mtu 1500" % port)
            conn.send_command("nv config apply -y")
        else:
            conn.send_config_set(["interface %s" % port, "mtu 1500"])


def device_mtu(switch_lab, name, port):
    running = lab.read_state(name, switch_lab["root"])["running"]
    if NOS[name] == "nvue":
        return [p.split()[-1] for p in running if p.startswith("interface %s link mtu " % port)]
    node = next((n for n in running if n[0] == "interface %s" % port), ["", []])
    return [c[0].split()[-1] for c in node[1] if c[0].startswith("mtu ")]


@pytest.mark.parametrize("name", sorted(HOLD), ids=[NOS[n] for n in sorted(HOLD)])
def test_an_engineers_value_on_a_key_we_set_is_named_never_overwritten(switch_lab, name):
    reset(switch_lab, name)
    lab.set_faults(name, {"slow": dict(HOLD[name], secs=2)}, switch_lab["root"])
    run = applier(switch_lab, name, read_timeout=10)
    planned = run.plan()
    port = last_mtu_port(planned[2])
    assert port, planned[2]
    a = Background(run, planned)
    try:
        lab.wait_slowed(name, 0, switch_lab["root"], timeout=60)
        engineer_sets_mtu(switch_lab, name, port)
    finally:
        a.join()
        run.close()
        lab.set_faults(name, {}, switch_lab["root"])
    claim = a.claim
    print("LAST-MOMENT %s: %s" % (NOS[name], str(claim)[-600:]))
    assert device_mtu(switch_lab, name, port) == ["1500"], "the engineer's MTU was overwritten: %s" % claim
    assert claim != "success", "success claimed over the engineer's MTU"
    assert claim.rolled_back is not True, str(claim)
    assert "mtu 1500" in str(claim) and port in str(claim), "the failure does not name their key and value: %s" % claim
    assert aif_objects(name, switch_lab["root"]) == []


@pytest.mark.parametrize("name", ["leaf3", "sonic0"], ids=["nxos", "dell_sonic"])
def test_a_clean_run_rechecking_while_it_sends_is_not_refused(switch_lab, name):
    """Our own lines, half sent, are never taken for someone else's (both line-by-line transactions: NX-OS, klish)."""
    reset(switch_lab, name)
    run = applier(switch_lab, name, recheck_every=0.2)
    planned = run.plan()
    reads = []
    real = run.read_image
    run.read_image = lambda step="read": reads.append(step) or real(step)
    run.apply(*planned)
    run.close()
    assert reads.count("stage") >= 3, reads   # the guard read between blocks
    assert nothing_left(switch_lab, name, ("qos", "mtu", "pbr"))


@pytest.mark.parametrize("name", ["leaf3", "sonic0"], ids=["nxos", "dell_sonic"])
def test_an_edit_before_the_first_line_is_never_rolled_back(switch_lab, name):
    """The engineer types between the run's compare-and-swap read and its first line (here: right after the lease
    re-check at `begin`), and the guard's first re-read stops the run before anything is sent: the undo must not
    treat the switch as holding nothing of anyone (an NX-OS checkpoint rollback or a klish reverse to the
    before-image would take their value away)."""
    reset(switch_lab, name)
    run = applier(switch_lab, name)
    planned = run.plan()
    port = last_mtu_port(planned[2])
    renew, late = run._renew, []

    def renew_then_engineer(step):
        renew(step)
        if step == "begin" and not late:
            engineer_sets_mtu(switch_lab, name, port)
            late.append(60.0)   # and the controller's clock moves on: the guard's re-read is due at once
    run._renew = renew_then_engineer
    clock = run._clock
    run._clock = lambda: clock() + sum(late)
    with pytest.raises(ApplyError) as err:
        run.apply(*planned)
    run.close()
    assert device_mtu(switch_lab, name, port) == ["1500"], str(err.value)
    assert err.value.rolled_back is not True and "mtu 1500" in str(err.value), str(err.value)
    assert aif_objects(name, switch_lab["root"]) == []


def asternos_edit_between_calls(switch_lab, body):
    """The run POSTs its Easy RoCE profile and is held before its first PATCH, while an engineer PATCHes ``body`` (a
    dict, or a function of the run's plan giving one) onto that profile over REST -> (claim, the profile after, plan)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.asternos import PROFILE, PROFILES, request
    name = "leaf0"
    reset(switch_lab, name)
    lab.set_faults(name, {"slow": dict(ASTERNOS_HOLD, secs=2)}, switch_lab["root"])
    run = applier(switch_lab, name, read_timeout=10)
    planned = run.plan()
    assert [c.split(" -X ")[1].split()[0] for c in planned[2]] == ["POST", "PATCH", "PATCH"], planned[2]
    body = body(planned) if callable(body) else body
    a = Background(run, planned)
    try:
        lab.wait_slowed(name, 0, switch_lab["root"], timeout=60)
        with cli_session(switch_lab, name) as conn:
            conn.send_command(request("PATCH", "%s/%s" % (PROFILES, PROFILE), body))
    finally:
        a.join()
        run.close()
        lab.set_faults(name, {}, switch_lab["root"])
    print("LAST-MOMENT asternos %s: %s" % (body, str(a.claim)[-600:]))
    profile = next(p for p in lab.read_state(name, switch_lab["root"])["running"]["rest"]["roce-profiles"]
                   if p["name"] == PROFILE)
    assert a.claim != "success", "success claimed over the engineer's edit %s" % body
    assert a.claim.rolled_back is not True, str(a.claim)
    assert aif_objects(name, switch_lab["root"]) == []
    return a.claim, profile, planned


def test_asternos_an_engineers_edit_of_our_profile_between_rest_calls_is_named_and_kept(switch_lab):
    """AsterNOS: the run has POSTed its profile and is held before its first PATCH; an engineer PATCHes the profile's
    mode to their own value over REST. The re-read before the run's next call (the guard, due after the hold) stops
    the run, names their value, and their value stays: nothing of theirs is PATCHed or DELETEd back."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.asternos import PROFILE
    claim, profile, _plan = asternos_edit_between_calls(switch_lab, {"mode": "lossy"})
    assert profile["mode"] == "lossy", "the engineer's mode was overwritten: %s" % claim
    assert "bind-interfaces" not in profile, "the run sent its next call after the engineer's edit: %s" % profile
    assert "roce-profiles %s mode lossy" % PROFILE in str(claim), "the failure does not name their value: %s" % claim


def ours_first_port(planned):
    """An engineer's bind-interfaces list: the first of the ports this run binds (a subset of ours)."""
    ours = sorted(line.split()[-1] for line in planned[1].splitlines() if " bind-interfaces " in line)
    assert len(ours) > 1, planned[1]
    return {"bind-interfaces": ours[:1]}


def test_asternos_an_engineers_bind_interfaces_subset_of_ours_is_theirs_not_our_partial_change(switch_lab):
    """issue 37 item 1 (the review's AsterNOS case): between the run's REST calls an engineer PATCHes our profile's
    `bind-interfaces` to a list that is a subset of ours. The list is one REST leaf, replaced whole: their subset is
    their value, not our change half made. The run stops before its own bind PATCH, names their list, and it stays
    (without the change: SUCCESS, their list replaced by ours)."""
    claim, profile, planned = asternos_edit_between_calls(switch_lab, ours_first_port)
    subset = ours_first_port(planned)["bind-interfaces"]
    assert profile["bind-interfaces"] == subset, "the engineer's list was overwritten: %s" % claim
    assert "bind-interfaces %s" % subset[0] in str(claim), "the failure does not name their list: %s" % claim
