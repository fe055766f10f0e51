"""An engineer's edit that lands while this run is sending (issue 37 item 1), on the NOSes whose own record of who
changed what this collection reads (docs/switches.md#concurrent-edits): NX-OS (`show accounting log`), EOS (command
accounting in `show logging`) and Enterprise SONiC (`show audit-log`). Three cases, each judged the same way: their value is on the switch (kept), or the run
is NOT a success and names their key, value, user and time; never SUCCESS with their change lost.

* in flight: the engineer sets the MTU of the very port this run's held line is for (NX-OS: its first `mtu` line;
  EOS: `commit timer`, when the session's snapshot is copied over the running config); on NX-OS also with the device's
  clock stepped back meanwhile (the window is placed by the accounting log's sequence numbers, not the clock);
* later key: the engineer sets the MTU of the port this run sends last;
* outside our view, during commit: the engineer sets the hostname while the run's last write is held.

NVUE (no record read) keeps all three on the simulator. The simulator writes each NOS's record in the format of public
captures (tests/fixtures/switches/accounting/SOURCE.md). A mutation (the record never read) loses the in-flight edit
behind SUCCESS, so these tests can fail. Enterprise SONiC (klish) reads its audit log (`show audit-log`): an edit
in flight is named there too. AsterNOS reads klish's command log and sudo's records from its Linux shell
(nos/asterlog.py; bench only, below).
"""
import json
import os

import lab
import pytest
from helpers import Background, applier, cli_session, reset
from test_fault_matrix import aif_objects
from test_last_moment import device_mtu, last_mtu_port

NOS = {"leaf1": "eos", "leaf3": "nxos", "leaf2": "nvue", "sonic0": "dell_sonic"}
# the held write of each case: (regex, skip) of the simulator's slow fault
HELD = {
    ("leaf3", "in flight"): (r"^mtu ", 0), ("leaf3", "later key"): (r"^mtu ", 0),
    ("leaf3", "during commit"): (r"^mtu ", -1),
    ("leaf1", "in flight"): (r"^commit timer ", 0), ("leaf1", "later key"): (r"^commit timer ", 0),
    ("leaf1", "during commit"): (r"^commit timer ", 0),
    ("leaf2", "in flight"): (r"^nv config apply -y", 0), ("leaf2", "later key"): (r"^nv config apply -y", 0),
    ("leaf2", "during commit"): (r"^nv config apply -y", 0),
    ("sonic0", "in flight"): (r"^mtu ", 0), ("sonic0", "later key"): (r"^mtu ", 0), ("sonic0", "during commit"): (r"^mtu ", -1),
}
CASES = ("in flight", "later key", "during commit")
# CI runs the cases no other test covers (the record's own: an edit in flight on EOS, an edit outside our view during
# EOS's commit; NX-OS's in flight runs with its clock stepped back, test_nxos_names_an_edit_in_flight_whatever_the_device
# _clock); `make bench-concurrent-edits` (AIFABRIC_CONCURRENT_FULL=1) runs every NOS x case and the clock mutation
FULL = os.environ.get("AIFABRIC_CONCURRENT_FULL") == "1"
MATRIX = [(n, c) for n in sorted(NOS) for c in CASES
          if FULL or (n, c) in (("leaf1", "in flight"), ("leaf1", "during commit"))]


def first_mtu_port(cmds):
    """(the first port whose MTU line this run sends, how many `mtu` lines go before that line)."""
    port, seen = None, 0
    for cmd in cmds:
        if cmd.startswith("nv set interface ") and " link mtu " in cmd:
            return cmd.split()[3], 0
        if not cmd[:1].isspace():
            port = cmd[len("interface "):] if cmd.startswith("interface ") else None
        elif cmd.strip().startswith("mtu "):
            if port:
                return port, seen
            seen += 1
    return None, 0


def edit_during(switch_lab, name, case, mutate=None, step_clock=0):
    """One apply with the engineer's edit while the case's write is held -> (kept, claim, what they set).
    ``step_clock``: seconds the device's clock steps (an NTP step) once the write is held, before the edit."""
    reset(switch_lab, name)
    run = applier(switch_lab, name, read_timeout=10)
    if mutate:
        mutate(run)
    planned = run.plan()
    run.close()   # the apply's own session reads the fault (one shot, read at login)
    regex, skip = HELD[(name, case)]
    if skip < 0:   # the last of them
        skip = sum(1 for c in planned[2] if c.strip().startswith("mtu ")) - 1
    if case == "in flight":
        port, before = first_mtu_port(planned[2])
        skip += before if regex == r"^mtu " else 0
    else:
        port = last_mtu_port(planned[2])
    lab.set_faults(name, {"slow": {"re": regex, "secs": 3, "skip": skip}}, switch_lab["root"])
    assert port, planned[2]
    a = Background(run, planned)
    try:
        lab.wait_slowed(name, 0, switch_lab["root"], timeout=60)
        if step_clock:
            lab.set_faults(name, {"clock_offset": step_clock}, switch_lab["root"])
        with cli_session(switch_lab, name) as conn:
            if name == "leaf2":   # NVUE: the engineer's own revision, applied
                conn.send_command("nv set system hostname operator-was-here" if case == "during commit" else
                                  "nv set interface %s link mtu 1500" % port)
                conn.send_command("nv config apply -y")
            elif case == "during commit":
                conn.send_config_set(["hostname operator-was-here"])
            else:
                conn.send_config_set(["interface %s" % port, "mtu 1500"])
    finally:
        a.join()
        run.close()
        lab.set_faults(name, {}, switch_lab["root"])
    running = lab.read_state(name, switch_lab["root"])["running"]
    if case == "during commit" and name == "leaf2":
        kept = "system hostname operator-was-here" in running
        theirs = "system hostname operator-was-here"
    elif case == "during commit":
        kept = any(node[0] == "hostname operator-was-here" for node in running)
        theirs = "hostname operator-was-here"
    else:
        kept = device_mtu(switch_lab, name, port) == ["1500"]
        theirs = "interface %s > mtu 1500" % port
    return kept, a.claim, theirs, run.notes


def kept_or_named(switch_lab, name, kept, claim, theirs):
    """The cases' one judgement: their value is on the switch, or the run is NOT a success and names who, when and
    what (``theirs``) without claiming anything restored; nothing of ours left on ``name``."""
    assert kept or claim != "success", "SUCCESS over the engineer's lost edit (%s)" % theirs
    if not kept:
        assert theirs in str(claim) and "by admin at " in str(claim), "the claim does not name who, when, what: %s" % claim
        assert claim.rolled_back is False, "their edit is gone: nothing may claim restored or untouched: %s" % claim
    if claim != "success":
        assert claim.rolled_back is not True, str(claim)
    assert aif_objects(name, switch_lab["root"]) == []


@pytest.mark.parametrize("name,case", MATRIX, ids=["%s-%s" % (NOS[n], c.replace(" ", "-")) for n, c in MATRIX])
def test_an_engineers_concurrent_edit_is_kept_or_named(switch_lab, name, case):
    kept, claim, theirs, _notes = edit_during(switch_lab, name, case)
    print("CONCURRENT %s %s: kept=%s %s" % (NOS[name], case, kept, str(claim)[-500:]))
    kept_or_named(switch_lab, name, kept, claim, theirs)


def test_mutation_without_the_record_an_edit_in_flight_is_lost_behind_success(switch_lab):
    """The NX-OS accounting log never read: the engineer's MTU, typed while this run's line for that port was in
    flight, is overwritten and the run says SUCCESS, so the test above can fail."""
    kept, claim, _theirs, _notes = edit_during(switch_lab, "leaf3", "in flight", mutate=_with("record_clock", lambda: None))
    print("MUTATION no-record nxos: kept=%s claim=%s" % (kept, str(claim)[-300:]))
    assert not kept and claim == "success", (kept, str(claim))


def _with(attr, value):
    """A mutation: each transaction of the run gets ``attr`` = ``value``."""
    def mutate(run):
        real = run._transaction

        def txn():
            t = real()
            setattr(t, attr, value)
            return t
        run._transaction = txn
    return mutate


# the NX-OS window placed by the clock, as on a switch that refuses `show accounting log last-index`
_clock_window_only = _with("record_open", lambda: None)
# the NOS's record never read (its transaction says it has none)
_no_record = _with("edit_record", None)


@pytest.mark.parametrize("mutate", [None] + ([_clock_window_only] if FULL else []),
                         ids=["by-sequence", "mutation-by-clock"][:2 if FULL else 1])
def test_nxos_names_an_edit_in_flight_whatever_the_device_clock(switch_lab, mutate):
    """NX-OS places the window by the accounting log's sequence numbers (`last-index`, `start-seqnum`): the device's
    clock stepped back 30 s while this run's line is held stamps the engineer's MTU before the run's clock read, and
    the edit is still named. The mutation places the same window by the clock: the edit falls before it and is lost
    behind SUCCESS, so this test can fail."""
    kept, claim, theirs, notes = edit_during(switch_lab, "leaf3", "in flight", mutate=mutate, step_clock=-30)
    print("CLOCK-STEP nxos %s: kept=%s %s" % ("clock" if mutate else "sequence", kept, str(claim)[-300:]))
    assert not kept, "the engineer's value survived: the case did not race (%s)" % claim
    if mutate:
        assert claim == "success", str(claim)
        return
    assert claim != "success" and theirs in str(claim) and "by admin at " in str(claim), str(claim)
    assert claim.rolled_back is False and not any("placed by the device's clock" in n for n in notes), notes


@pytest.mark.parametrize("mutate", [None] + ([_no_record] if FULL else []), ids=["audit-log", "mutation-no-record"][:2 if FULL else 1])
def test_enterprise_sonic_names_an_edit_in_flight_from_its_audit_log(switch_lab, mutate):
    """Enterprise SONiC (klish): the audit log (`show audit-log`, klish's command logging; no mode, no session)
    names an engineer's MTU typed, on the run's own account, while this run's line for that port is in flight. The
    mutation (the record never read) loses it behind SUCCESS and says in its notes that the check did NOT run."""
    kept, claim, theirs, notes = edit_during(switch_lab, "sonic0", "in flight", mutate=mutate)
    print("AUDIT-LOG dell_sonic in flight%s: kept=%s %s; notes=%s" % (" (mutation)" if mutate else "", kept,
                                                                      str(claim)[-300:], notes))
    assert not kept, "the engineer's value survived: the case did not race (%s)" % claim
    if mutate:
        assert claim == "success" and any("NOT checked for a concurrent edit" in n for n in notes), (str(claim), notes)
        return
    assert claim != "success" and theirs in str(claim) and "by admin at " in str(claim), str(claim)
    assert claim.rolled_back is False, str(claim)


# community SONiC (csonic0): GCU reads CONFIG_DB once when `config apply-patch` starts and writes each key it changes
# whole from that image (configdb_sim.py, held to upstream's ChangeApplier), so the window is the whole apply-patch;
# the engineer acts where GCU sleeps after its first change (fault slow gcu_change). Who wrote what is read from sudo's
# syslog records (nos/sudolog.py). Bench only (AIFABRIC_CONCURRENT_FULL=1): CI runs the same cases on the lab's model
# without SSH (tests/unit/nos/test_gcu_concurrent_edits.py).
CSONIC_CASES = [c for c in CASES if FULL]


def csonic_edit_during(switch_lab, case):
    """One apply of the qos and mtu sections on csonic0 (its ports at MTU 4200, so the patch writes every port's MTU)
    with the engineer's edit after GCU's first change -> (kept, claim, what they set)."""
    name = "csonic0"
    reset(switch_lab, name)
    ports = sorted(lab.read_state(name, switch_lab["root"])["running"]["PORT"])
    with cli_session(switch_lab, name) as conn:
        for port in ports:
            conn.send_command("sudo config interface mtu %s 4200" % port)
    run = applier(switch_lab, name, sections=("qos", "mtu"), read_timeout=20)
    planned = run.plan()
    run.close()
    mtu = [json.loads(c)["path"].split("/")[2] for c in planned[2] if json.loads(c)["path"].endswith("/mtu")]
    assert mtu, planned[2]
    port = mtu[0] if case == "in flight" else mtu[-1]
    lab.set_faults(name, {"slow": [{"gcu_change": 1, "secs": 3}]}, switch_lab["root"])
    a = Background(run, planned)
    try:
        lab.wait_slowed(name, 0, switch_lab["root"], timeout=60)
        with cli_session(switch_lab, name) as conn:
            conn.send_command("sudo config hostname operator-was-here" if case == "during commit" else
                              "sudo config interface mtu %s 1500" % port)
    finally:
        a.join()
        run.close()
        lab.set_faults(name, {}, switch_lab["root"])
    running = lab.read_state(name, switch_lab["root"])["running"]
    if case == "during commit":
        return running["DEVICE_METADATA"]["localhost"]["hostname"] == "operator-was-here", a.claim, "operator-was-here"
    return running["PORT"][port]["mtu"] == "1500", a.claim, "PORT > %s > mtu 1500" % port


@pytest.mark.parametrize("case", CSONIC_CASES, ids=[c.replace(" ", "-") for c in CSONIC_CASES])
def test_community_sonic_an_edit_during_apply_patch_is_kept_or_named(switch_lab, case):
    kept, claim, theirs = csonic_edit_during(switch_lab, case)
    print("CONCURRENT community_sonic %s: kept=%s %s" % (case, kept, str(claim)[-500:]))
    kept_or_named(switch_lab, "csonic0", kept, claim, theirs)
    assert claim == "success" or theirs in str(claim), str(claim)


# AsterNOS (leaf0): Easy RoCE's REST calls (POST the profile, PATCH cable-length, PATCH bind-interfaces) applied as
# made; the engineer types Easy RoCE klish lines (the simulator's form, unverified) or `sudo config hostname`, which the
# switch records in klish's command log and sudo's records (nos/asterlog.py). Bench only (AIFABRIC_CONCURRENT_FULL=1):
# CI runs the record's parsing and the transaction's reads without SSH (tests/unit/nos/test_asterlog.py).
ASTERNOS_CASES = [c for c in CASES if FULL]
ASTERNOS_HOLD = {"in flight": 0, "later key": 0, "during commit": 1}   # which PATCH is held (cable-length, bind)


def asternos_edit_during(switch_lab, case, mutate=None, faults=None):
    """One apply on leaf0 with the engineer's edit while a PATCH is held -> (kept, claim, what they set, notes)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.asternos import PROFILE
    name = "leaf0"
    reset(switch_lab, name)
    run = applier(switch_lab, name, read_timeout=10)
    if mutate:
        mutate(run)
    planned = run.plan()
    run.close()
    assert [c.split(" -X ")[1].split()[0] for c in planned[2]] == ["POST", "PATCH", "PATCH"], planned[2]
    ours = [line.split()[-1] for line in planned[1].splitlines() if " bind-interfaces " in line]
    cable = "CABLE_99m" if "cable-length CABLE_99m" not in planned[1] else "CABLE_98m"
    line = ("qos roce profile %s cable-length %s" % (PROFILE, cable) if case == "in flight" else
            "qos roce profile %s bind-interfaces %s" % (PROFILE, ours[0]))
    lab.set_faults(name, dict(faults or {}, slow={"re": r"^curl .* -X PATCH ", "secs": 3, "skip": ASTERNOS_HOLD[case]}),
                   switch_lab["root"])
    a = Background(run, planned)
    try:
        lab.wait_slowed(name, 0, switch_lab["root"], timeout=60)
        with cli_session(switch_lab, name) as conn:
            if case == "during commit":
                conn.send_command("sudo config hostname operator-was-here")
            else:
                for cmd, prompt in (("sonic-cli", r"#"), ("configure terminal", r"\(config\)#"), (line, r"\(config\)#"),
                                    ("end", r"#"), ("exit", r"\$")):
                    conn.send_command(cmd, expect_string=prompt)
    finally:
        a.join()
        run.close()
        lab.set_faults(name, {}, switch_lab["root"])
    running = lab.read_state(name, switch_lab["root"])["running"]
    profile = next(p for p in running["rest"]["roce-profiles"] if p["name"] == PROFILE)
    if case == "during commit":
        return running.get("hostname") == "operator-was-here", a.claim, "hostname", run.notes
    if case == "in flight":
        return profile.get("cable-length") == cable, a.claim, "roce-profiles %s cable-length %s" % (PROFILE, cable), run.notes
    return profile.get("bind-interfaces") == ours[:1], a.claim, "`%s`" % line, run.notes


@pytest.mark.parametrize("case", ASTERNOS_CASES, ids=[c.replace(" ", "-") for c in ASTERNOS_CASES])
def test_asternos_an_engineers_edit_is_kept_or_named_from_the_switchs_records(switch_lab, case):
    kept, claim, theirs, notes = asternos_edit_during(switch_lab, case)
    print("CONCURRENT asternos %s: kept=%s %s; notes=%s" % (case, kept, str(claim)[-500:], notes))
    kept_or_named(switch_lab, "leaf0", kept, claim, theirs)


@pytest.mark.parametrize("mutate,faults", [(_no_record, None), (None, {"no_records": True})] if FULL else [],
                         ids=["mutation-no-record", "switch-without-records"] if FULL else [])
def test_asternos_without_the_records_an_edit_in_flight_is_lost_and_the_check_said_not_run(switch_lab, mutate, faults):
    """The records never read (the mutation), or a switch without them (no log file, as the run's session sees it):
    the engineer's cable length, typed while this run's PATCH of it is in flight, is overwritten and the run says
    SUCCESS, noting the check did NOT run; so the test above can fail, and a switch without records is never a
    silent check."""
    kept, claim, _theirs, notes = asternos_edit_during(switch_lab, "in flight", mutate=mutate, faults=faults)
    print("WITHOUT RECORDS asternos (%s): kept=%s claim=%s notes=%s" % ("mutation" if mutate else "switch", kept,
                                                                        str(claim)[-300:], notes))
    assert not kept and claim == "success" and any("NOT checked for a concurrent edit" in n for n in notes), (str(claim), notes)
