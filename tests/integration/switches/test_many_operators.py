"""Many operators on one switch (issue 18 items 1-3, 8), on every NOS driver the lab simulates: AsterNOS and
Dell SONiC (klish), EOS, NVUE, NX-OS, community SONiC (GCU) (FRR: tests/unit/nos/test_frr_transaction.py and the routed twin).

* Two controllers (separate controller-lock directories: two machines, CLI + AWX, two AWX jobs) started
  together: one change lands, the other is refused with nothing sent; no lost update, no false claim,
  no aif-* object left. Without the device lock the same races break the invariants (mutation check).
* An engineer edits the switch CLI while the run applies: their change survives, and the run either
  succeeds or fails naming it; never "restored" over it.
* A lock marker of another controller blocks until its TTL, naming the holder; past the TTL it is
  recovered with a message, and the run converges.
AIFABRIC_RACES sets the races per NOS (CI: 3; tools/bench_races.py runs 50).
"""
import json
import os
import threading
import time

import lab
import pytest
from helpers import Background, applier, claim_of, cli_session, full_state, nothing_left, reset
from test_fault_matrix import aif_objects

from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock
from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError

NOS = {"leaf0": "asternos", "sonic0": "dell_sonic", "leaf1": "eos", "leaf2": "nvue", "leaf3": "nxos",
       "csonic0": "community_sonic"}
RACES = int(os.environ.get("AIFABRIC_RACES", "3"))
IDS = [NOS[n] for n in sorted(NOS)]


def race(switch_lab, name, tmp_path, index, device_lock=True):
    """One two-controller race; returns the list of invariant violations."""
    reset(switch_lab, name)
    runs = {
        "A": applier(switch_lab, name, read_timeout=8, lock_dir=str(tmp_path / ("a%d" % index)), lock_timeout=60,
                     device_lock=device_lock),
        "B": applier(switch_lab, name, sections=("qos",) if NOS[name] == "asternos" else ("mtu",), read_timeout=8, lock_dir=str(tmp_path / ("b%d" % index)),
                     lock_timeout=60, device_lock=device_lock),
    }
    planned = {k: r.plan() for k, r in runs.items()}
    gate, results = threading.Barrier(2), {}

    def run(key):
        gate.wait()
        try:
            runs[key].apply(*planned[key])
            results[key] = "success"
        except ApplyError as exc:
            results[key] = exc
    threads = [threading.Thread(target=run, args=(k,)) for k in runs]
    [t.start() for t in threads]
    [t.join() for t in threads]
    [r.close() for r in runs.values()]
    bad = []
    winners = [k for k, v in results.items() if v == "success"]
    losers = [v for v in results.values() if v != "success"]
    if len(winners) != 1 or len(losers) != 1 or losers[0].rolled_back is not None:
        bad.append("not one success and one refusal: %s" % {k: str(v)[:300] for k, v in results.items()})
    for key in winners:   # the winner's change is whole on the device: a fresh plan has nothing to do
        if not nothing_left(switch_lab, name, runs[key].sections):
            bad.append("lost update: run %s succeeded but some of its lines are gone" % key)
    st = full_state(name, switch_lab["root"])
    if st["running"] != st["startup"]:
        bad.append("running config not saved")
    left = aif_objects(name, switch_lab["root"])
    if left:
        bad.append("aif objects left: %s" % left)
    return bad


@pytest.mark.parametrize("name", sorted(NOS), ids=IDS)
def test_two_controllers_never_lose_an_update(switch_lab, name, tmp_path):
    failures = {}
    for i in range(RACES):
        bad = race(switch_lab, name, tmp_path, i)
        if bad:
            failures[i] = bad
    print("RACES %s %d/%d clean" % (NOS[name], RACES - len(failures), RACES))
    assert not failures, failures


def test_mutation_without_the_device_lock_races_break(switch_lab, tmp_path):
    """The device lock removed (each controller only has its own local lock): tight races must break the
    invariants on the NOSes that apply line by line, or this suite cannot tell the lock is there."""
    broken = {}
    for name in ("leaf3", "leaf0"):
        for i in range(5):
            bad = race(switch_lab, name, tmp_path, 100 + i, device_lock=False)
            if bad:
                broken[NOS[name]] = bad
                break
    print("MUTATION no-device-lock broken:", sorted(broken))
    assert sorted(broken) == ["asternos", "nxos"], broken


OPERATOR_LINE = "hostname operator-was-here"


def operator_edit(switch_lab, name):
    """A second SSH session, as an engineer at the CLI: change the hostname and make it live."""
    with cli_session(switch_lab, name) as conn:
        if NOS[name] == "nvue":
            conn.send_command("nv set system hostname operator-was-here")
            conn.send_command("nv config apply -y")
        elif NOS[name] == "asternos":   # an engineer's own Easy RoCE profile, over REST
            from ansible_collections.aifabric.roce.plugins.module_utils.nos.asternos import PROFILES, request
            conn.send_command(request("POST", PROFILES, {"name": "operator-was-here", "mode": "lossless"}))
        elif NOS[name] == "community_sonic":
            conn.send_command("sudo config hostname operator-was-here")   # sonic-utilities config/main.py `hostname`
        else:
            conn.send_config_set([OPERATOR_LINE])


def operator_kept(switch_lab, name):
    st = lab.read_state(name, switch_lab["root"])
    if NOS[name] == "nvue":
        return "system hostname operator-was-here" in st["running"]
    if NOS[name] == "asternos":
        return any(p["name"] == "operator-was-here" for p in st["running"]["rest"]["roce-profiles"])
    if NOS[name] == "community_sonic":
        return st["running"]["DEVICE_METADATA"]["localhost"].get("hostname") == "operator-was-here"
    return any(node[0] == OPERATOR_LINE for node in st["running"])


@pytest.mark.parametrize("name", sorted(NOS), ids=IDS)
def test_cli_edit_during_apply_survives_or_is_named(switch_lab, name):
    # the run stops 3 s on its first MTU line; the engineer edits the switch meanwhile
    kept, claim = cli_edit_outcome(switch_lab, name)
    print("CLI-EDIT %s: %s" % (NOS[name], str(claim)[-700:]))
    assert kept, "the engineer's change was lost: %s" % claim
    if claim != "success":
        assert claim.rolled_back is not True, "claimed restored over a foreign change: %s" % claim
        assert "operator-was-here" in str(claim), "the failure does not name the foreign change: %s" % claim
    assert aif_objects(name, switch_lab["root"]) == []


def cli_edit_outcome(switch_lab, name):
    """One apply with an engineer's CLI edit in the middle -> (their change kept?, the run's claim)."""
    reset(switch_lab, name)
    # the change's first line (community SONiC: its one `config apply-patch`) waits 3 s
    change = r"^sudo -n config apply-patch " if NOS[name] == "community_sonic" else r"^mtu |link mtu |^curl .* -X PATCH "
    lab.set_faults(name, {"slow": {"re": change, "secs": 3, "skip": 0}}, switch_lab["root"])
    run = applier(switch_lab, name, read_timeout=10)
    a = Background(run, run.plan())
    try:
        lab.wait_slowed(name, 0, switch_lab["root"], timeout=60)   # the run waits on its first MTU line
        operator_edit(switch_lab, name)
    finally:
        a.join()
        run.close()
        lab.set_faults(name, {}, switch_lab["root"])
    return operator_kept(switch_lab, name), a.claim


def test_mutation_without_the_foreign_change_check_a_cli_edit_is_lost(switch_lab, monkeypatch):
    """The foreign-change checks removed (no compare before the commit, no check before the undo): on NX-OS the
    checkpoint rollback then wipes the engineer's line and claims "restored", so the CLI-edit test above must
    be able to fail."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import apply as apply_mod
    monkeypatch.setattr(apply_mod.Applier, "_foreign", lambda self, txn, base, want: None)
    kept, claim = cli_edit_outcome(switch_lab, "leaf3")
    print("MUTATION no-foreign-check nxos: kept=%s claim=%s" % (kept, str(claim)[-300:]))
    assert not kept or (claim != "success" and claim.rolled_back is True), (kept, str(claim))


def plant_marker(switch_lab, name, tag):
    """Another controller's lock marker, made through the driver's own transaction object."""
    app = applier(switch_lab, name)
    txn = app._transaction()
    txn.tag = tag
    txn.make(txn.tag)
    app.close()


@pytest.mark.parametrize("name", sorted(NOS), ids=IDS)
def test_another_controllers_lock_blocks_until_its_ttl(switch_lab, name):
    reset(switch_lab, name)
    # another machine's live marker, dated now by the device's clock (the simulator's)
    tag = "aif-%s-otherctl-0badc0-4242-abc" % time.strftime("%y%m%d%H%M%S", time.gmtime())
    plant_marker(switch_lab, name, tag)
    seen = full_state(name, switch_lab["root"])
    run = applier(switch_lab, name, read_timeout=8, lock_timeout=2, lock_ttl=60)
    planned = run.plan()
    with pytest.raises(ApplyError) as exc:
        run.apply(*planned)
    run.close()
    assert exc.value.rolled_back is None and tag in str(exc.value) and "otherctl" in str(exc.value), str(exc.value)
    assert full_state(name, switch_lab["root"])["running"] == seen["running"]
    # the device's clock moves 2 minutes on (the controller's does not): the marker is now past its 60 s lease,
    # recovered with a message naming it, and the run converges
    lab.set_faults(name, {"clock_offset": 120}, switch_lab["root"])
    try:
        run = applier(switch_lab, name, read_timeout=8, lock_timeout=2, lock_ttl=60)
        run.apply(*run.plan())
        run.close()
    finally:
        lab.set_faults(name, {}, switch_lab["root"])
    assert any(tag in n and "TTL" in n for n in run.notes), run.notes
    assert aif_objects(name, switch_lab["root"]) == []


def test_marker_names_are_dated_and_attributable():
    tag = devicelock.new_tag(now=0, rand=0xabc)
    marker = devicelock.Marker(tag)
    assert tag.startswith("aif-700101000000-") and tag.endswith("-abc")
    assert marker.created == 0 and marker.controller == devicelock.controller_id() and marker.pid == os.getpid() % 10000000
    assert marker.machine == devicelock.machine_key()


def plant_hold(switch_lab, name, hold):
    """An engineer's hand-made hold, written into the simulator's state as the NOS would keep it: an EOS session,
    an NX-OS checkpoint, a file in the Linux-based NOSes' /tmp (empty: `touch`)."""
    path = os.path.join(switch_lab["root"], name, "state.json")
    with open(path) as fh:
        st = json.load(fh)
    if NOS[name] == "eos":
        st["sessions"][hold] = "pending"
    elif NOS[name] == "nxos":
        st["checkpoints"][hold] = st["running"]
    else:
        st.setdefault("files", {})["/tmp/aifabric-lock." + hold] = ""
    with open(path + ".tmp", "w") as fh:
        json.dump(st, fh)
    os.replace(path + ".tmp", path)
    return lambda: plant_hold_remove(path, hold)


def plant_hold_remove(path, hold):
    with open(path) as fh:
        st = json.load(fh)
    for table in ("sessions", "checkpoints"):
        (st.get(table) or {}).pop(hold, None)
    (st.get("files") or {}).pop("/tmp/aifabric-lock." + hold, None)
    with open(path + ".tmp", "w") as fh:
        json.dump(st, fh)
    os.replace(path + ".tmp", path)


@pytest.mark.parametrize("name", sorted(NOS), ids=IDS)
def test_any_aif_object_blocks_and_the_refusal_says_what_releases_it(switch_lab, name):
    """issue 37 item 5: `aif-hold.bob` (any NOS) and an empty `aif-bob's hold` file (the Linux-based NOSes) block a
    run, which says the hold never expires and how to remove it; removed, the run converges."""
    reset(switch_lab, name)
    for hold in ["aif-hold.bob"] + ([] if NOS[name] in ("eos", "nxos") else ["aif-bob's hold"]):
        remove = plant_hold(switch_lab, name, hold)
        seen = full_state(name, switch_lab["root"])
        run = applier(switch_lab, name, read_timeout=8, lock_timeout=1, lock_ttl=60)
        with pytest.raises(ApplyError) as exc:
            run.apply(*run.plan())
        run.close()
        msg = str(exc.value)
        assert "a hold blocks the device lock: %s" % hold in msg and "it never expires; remove it (" in msg, msg
        assert full_state(name, switch_lab["root"])["running"] == seen["running"]
        remove()
    run = applier(switch_lab, name, read_timeout=8, lock_timeout=2, lock_ttl=60)
    run.apply(*run.plan())
    run.close()
    assert aif_objects(name, switch_lab["root"]) == []


@pytest.mark.parametrize("name", sorted(NOS), ids=IDS)
def test_a_switch_clock_stepped_back_is_named(switch_lab, name):
    """A marker written before the switch's clock went back an hour: the refusal names the step and what releases
    the marker, instead of reading it as live for TTL plus the step."""
    reset(switch_lab, name)
    tag = "aif-%s-otherctl-0badc0-4242-abc" % time.strftime("%y%m%d%H%M%S", time.gmtime())
    plant_marker(switch_lab, name, tag)
    lab.set_faults(name, {"clock_offset": -3600}, switch_lab["root"])
    try:
        run = applier(switch_lab, name, read_timeout=8, lock_timeout=1, lock_ttl=60)
        with pytest.raises(ApplyError) as exc:
            run.apply(*run.plan())
        run.close()
    finally:
        lab.set_faults(name, {}, switch_lab["root"])
    msg = str(exc.value)
    assert tag in msg and "AFTER the device's clock: the switch's clock was stepped back" in msg, msg
    assert "is released when its run renews it" in msg
    plant_hold_remove(os.path.join(switch_lab["root"], name, "state.json"), tag)


def stalled_race(switch_lab, name, tmp_path, fence=True):
    """Controller A (lease 60 s) is suspended for 75 s right before it stages its change - after its last lease
    check, as the review's SIGSTOP did on NX-OS. Meanwhile the device's clock moves 75 s on, B (another machine)
    finds A's marker stale, takes the lock and sets MTU 9100 (AsterNOS, which configures no MTU: the RoCE profile's
    cable length, 300 m against the plan's 40 m). Returns (A's outcome, B's outcome, B's change whole)."""
    reset(switch_lab, name)
    dev = switch_lab["devices"][name]
    asternos = NOS[name] == "asternos"
    a = applier(switch_lab, name, read_timeout=8, lock_dir=str(tmp_path / "a"), lock_timeout=5, lock_ttl=60)
    b_lab = dict(switch_lab, plan=dict(switch_lab["plan"], qos=dict(switch_lab["plan"]["qos"], cable_length_m=300)))
    saved = dev["intent"]
    dev["intent"] = dict(saved, mtu=9100)
    try:
        b = applier(b_lab if asternos else switch_lab, name, sections=("qos",) if asternos else ("mtu",), read_timeout=8,
                    lock_dir=str(tmp_path / "b"), lock_timeout=5, lock_ttl=60)
    finally:
        dev["intent"] = saved
    outcome = {}

    def stall():
        lab.set_faults(name, {"clock_offset": 75}, switch_lab["root"])   # 75 s pass on the switch ...
        a._clock = lambda: time.monotonic() + 75                          # ... and for the suspended A
        try:
            b.apply(*b.plan())
            outcome["B"] = "success"
        except ApplyError as exc:
            outcome["B"] = exc

    def first_write(send):
        # A is suspended right before its first staging write leaves: after every check it made (the guard's
        # included), before the fence that is part of the write itself
        def hooked(step, *args, **kw):
            text = str(args[:1])
            carries = (step == "stage" and "mtu" in text and ("interface" in text or "PORT" in text)
                       or step == "commit" and "apply-patch" in text   # GCU: the patch goes out whole at commit
                       or asternos and step == "stage" and " -X " in text)   # AsterNOS: its first REST write
            if carries and "B" not in outcome:
                stall()   # right before the write that carries A's port MTU or profile (the key B sets)
            return send(step, *args, **kw)
        return hooked
    a.io.configure = first_write(a.io.configure)
    a.io.run = first_write(a.io.run)
    a.io.fence = first_write(a.io.fence)   # the Linux-shell NOSes' writes (ShellMarkers._shell) fence first
    if not fence:   # the stall stays where it was, the fence's check goes
        a.io.fence = first_write(lambda *args, **kw: None)
    try:
        outcome["A"] = claim_of(a, a.plan())
    finally:
        a.close()
        b.close()
        lab.set_faults(name, {}, switch_lab["root"])
    kept = nothing_left(b_lab, name, ("qos",)) if asternos else nothing_left(switch_lab, name, ("mtu",), mtu=9100)
    return outcome, kept


STALL_NOS = sorted(NOS)


@pytest.mark.parametrize("name", STALL_NOS, ids=[NOS[n] for n in STALL_NOS])
def test_a_controller_stalled_past_its_lease_before_a_write_writes_nothing(switch_lab, name, tmp_path):
    """issue 37 item 2: 0 lost updates, 0 false success. A stops at its first write ("lost its device lock",
    nothing undone), B's MTU (AsterNOS: B's cable length) stays."""
    outcome, kept = stalled_race(switch_lab, name, tmp_path)
    assert outcome["B"] == "success", outcome
    assert outcome["A"] != "success" and outcome["A"].rolled_back is not True, outcome
    assert "is gone" in str(outcome["A"]) and "touches nothing more" in str(outcome["A"]), str(outcome["A"])
    assert kept, "B's change (MTU 9100 or cable length 300 m) was overwritten"


def test_mutation_without_the_lease_fence_the_stalled_controller_overwrites(switch_lab, tmp_path):
    """The fence removed: on NX-OS (line by line, the review's case) the stalled run's block goes out over B's
    change, so the test above can fail."""
    outcome, kept = stalled_race(switch_lab, "leaf3", tmp_path, fence=False)
    print("MUTATION no-fence nxos: B=%s A=%s kept=%s" % (outcome.get("B"), str(outcome.get("A"))[:200], kept))
    assert outcome["B"] == "success" and not (kept and outcome["A"] != "success")
