"""Fault matrix on every NOS (issue 12 item 7): each fault against a full apply (qos, mtu, pbr, save).

Every case asserts the *whole* device state the simulator keeps (running and startup config in full,
NX-OS checkpoints, the NVUE pending revision, EOS configuration sessions), not only the managed view,
and the module's claim against it:
  * 0 partial configs: running is exactly the before-image or exactly the intended one;
  * 0 false claims: success => intended and saved; "restored" => before-image, nothing left behind;
    refused => nothing sent;
  * every recoverable fault ends restored (rolled_back True).
The mutation checks prove the matrix fails when the rollback does nothing, and when it does nothing
but claims success.
"""
import threading

import lab
import pytest
from helpers import applier, full_state, reset

from ansible_collections.aifabric.roce.plugins.module_utils.nos import apply as apply_mod
from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions
from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.lock import DeviceLock
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import lock_key
from ansible_collections.aifabric.roce.plugins.module_utils.nos.gcu import GcuTxn

NOS = {"leaf0": "asternos", "leaf1": "eos", "leaf2": "nvue", "leaf3": "nxos", "csonic0": "community_sonic"}
READ_TIMEOUT = 4
RECONNECT = 3
SAVE_RE = {"asternos": r"^y$", "eos": r"^copy running-config", "nxos": r"^copy running-config", "nvue": r"^nv config save",
           "dell_sonic": r"^write memory", "community_sonic": r"^sudo -n config save"}
# Enterprise SONiC (the fixture's extra sonic0) in the outage test too: every NOS driver recovers its leftovers
OUTAGE = dict(NOS, sonic0="dell_sonic")
MTU_RE = r"^mtu |link mtu "
# community_sonic sends its change as one `config apply-patch`: a refusal there fails it after half of its ops
PATCH_RE = r"^sudo -n config apply-patch "
SHOW_RE = r"^show running-config|^nv config show|^show runningconfiguration all"
REST_PATCH = r"^curl .* -X PATCH "


def faults_for(name, n_cmds):
    nos = OUTAGE[name]
    commit = {"eos": {"drop_on": {"re": r"^commit timer", "when": "after"}},
              "nvue": {"drop_on": {"re": r"^nv config apply", "when": "after"}},
              "community_sonic": {"drop_on": {"re": PATCH_RE, "when": "after"}}}.get(
        nos, {"drop_on": {"re": r"^end$", "when": "before"}})   # NX-OS/klish: every line is in, config mode not yet left
    change = PATCH_RE if nos == "community_sonic" else MTU_RE
    cases = {
        "reject_mid_batch": {"reject": change, "reject_skip": 0 if nos == "community_sonic" else 2},
        "drop_at_commit": commit,
        "drop_at_save": {"drop_on": {"re": SAVE_RE[nos], "when": "after"}},
        # reads: plan, preflight, then verification: the verification read outlasts the read timeout
        # (community_sonic reads once more, just before its apply-patch: skip that one too)
        "slow_read": {"slow": {"re": SHOW_RE, "secs": READ_TIMEOUT + 2, "skip": 3 if nos == "community_sonic" else 2}},
        "unexpected_prompt": {"prompt_on": change},
        "no_reconnect": {"drop_after": max(2, n_cmds // 2), "down_for": RECONNECT + 1},
    }
    if nos == "asternos":
        # Easy RoCE REST: POST the profile, PATCH its cable length, PATCH its bound ports; the read is a GET
        cases.update(reject_mid_batch={"reject": REST_PATCH, "reject_skip": 1}, unexpected_prompt={"prompt_on": REST_PATCH},
                     slow_read={"slow": {"re": r"^curl \S+ \S+ \S+ \S+ https://", "secs": READ_TIMEOUT + 2, "skip": 2}},
                     drop_at_commit={"drop_on": {"re": REST_PATCH, "when": "after"}})
    if nos == "eos":
        # the device's timer fires after 1 s whatever was asked, and the verification read takes 2 s
        cases["commit_timer_expiry"] = {"timer_secs": 1, "slow": {"re": SHOW_RE, "secs": 2, "skip": 2}}
    return cases


_GOLDEN = {}


def golden(switch_lab, name):
    """(before, after) full device states of a clean run, once per device."""
    if name not in _GOLDEN:
        reset(switch_lab, name)
        before = full_state(name, switch_lab["root"])
        a = applier(switch_lab, name, read_timeout=READ_TIMEOUT)
        b, af, cmds = a.plan()
        a.apply(b, af, cmds)
        a.close()
        _GOLDEN[name] = (before, full_state(name, switch_lab["root"]), len(cmds))
    return _GOLDEN[name]


def run_case(switch_lab, name, fault):
    """Run one faulted apply; return (claim, violations)."""
    root = switch_lab["root"]
    before, after, n_cmds = golden(switch_lab, name)
    reset(switch_lab, name)
    lab.set_faults(name, faults_for(name, n_cmds)[fault], root)
    a = applier(switch_lab, name, read_timeout=READ_TIMEOUT, reconnect_timeout=RECONNECT)
    claim, err = "success", None
    try:
        b, af, cmds = a.plan()
        a.apply(b, af, cmds)
    except ApplyError as exc:
        err = exc
        claim = {True: "restored", False: "not restored", None: "refused"}[exc.rolled_back]
    finally:
        a.close()
    lab.set_faults(name, {}, root)
    seen = full_state(name, root)
    bad = []
    if seen["running"] not in (before["running"], after["running"]):
        bad.append("partial config")
    if claim == "success" and seen != after:
        bad.append("false success: device is not the intended, saved config")
    if claim == "restored" and seen != before:
        bad.append("false restored: %s" % ", ".join(k for k in seen if seen[k] != before[k]))
    if claim == "not restored":
        bad.append("not restored after a recoverable fault: %s" % err)
    if claim == "refused":
        bad.append("refused without cause: %s" % err)
    if err is not None and not (err.step and str(err).startswith("apply failed on %s at step " % NOS[name])):
        bad.append("message does not name the step: %s" % err)
    return claim, err, bad


CASES = [(name, fault) for name in sorted(NOS) for fault in faults_for(name, 10)]


@pytest.mark.parametrize("name,fault", CASES, ids=["%s-%s" % (NOS[n], f) for n, f in CASES])
def test_fault(switch_lab, name, fault):
    claim, err, bad = run_case(switch_lab, name, fault)
    print("MATRIX %s %s claim=%s violations=%d %s" % (NOS[name], fault, claim, len(bad), (str(err) if err else "")[:300]))
    assert not bad, bad
    assert claim in ("success", "restored"), claim
    if fault == "reject_mid_batch":
        assert "rejected" in str(err) and ("Invalid" in err.device_error or "rror" in err.device_error), err


@pytest.mark.parametrize("name", sorted(OUTAGE), ids=[OUTAGE[n] for n in sorted(OUTAGE)])
def test_outage_longer_than_reconnect_is_reported_honestly(switch_lab, name):
    """The device stays unreachable past the reconnect window: the module must not claim anything it
    could not read back; once reachable, a re-run recovers what the failed run left (its lock marker,
    EOS session, NVUE revision, NX-OS checkpoint) and converges with no hand work and no aif-* leftover."""
    root = switch_lab["root"]
    before, after, n_cmds = golden(switch_lab, name)
    reset(switch_lab, name)
    # down longer than the foreign-change check, both undo attempts and the proof read (5 reconnect windows)
    lab.set_faults(name, {"drop_after": max(2, n_cmds // 2), "down_for": 5 * RECONNECT}, root)
    a = applier(switch_lab, name, read_timeout=READ_TIMEOUT, reconnect_timeout=RECONNECT)
    b, af, cmds = a.plan()
    with pytest.raises(ApplyError) as exc:
        a.apply(b, af, cmds)
    a.close()
    assert exc.value.rolled_back is False and "NOT proven restored" in str(exc.value), str(exc.value)
    import time
    time.sleep(2 * RECONNECT)
    left = aif_objects(name, root)   # what the failed run could not clean (it may have, once the switch was back)
    a = applier(switch_lab, name, read_timeout=READ_TIMEOUT, reconnect_timeout=RECONNECT + 5)
    b, af, cmds = a.plan()
    if cmds:
        a.apply(b, af, cmds)
        assert bool(left) == any("recovered" in n for n in a.notes), (left, a.notes)
    a.close()
    st = full_state(name, root)
    assert st["running"] == after["running"]
    assert aif_objects(name, root) == [], "aif-* objects left on the device"


def aif_objects(name, root):
    """Every object of this collection left on a simulated device: sessions, checkpoints, marker files,
    and a pending NVUE revision."""
    st = lab.read_state(name, root)
    left = [k for k in (st.get("sessions") or {}) if k.startswith("aif-") and st["sessions"][k].startswith("pending")]
    left += [k for k in (st.get("checkpoints") or {}) if k.startswith("aif-")]
    left += [k for k in (st.get("files") or {}) if "aifabric-lock" in k or k.startswith("/tmp/aif-")]
    if st.get("pending") is not None and st.get("pending") != st.get("running"):
        left.append("pending NVUE revision")
    return left


def test_concurrent_runs_do_not_lose_updates(switch_lab):
    """Two runs on one switch: the controller lock serialises them and the second refuses because the
    device changed since it read it (no last-writer-wins, no false success)."""
    for name in sorted(NOS):
        reset(switch_lab, name)
        a = applier(switch_lab, name, read_timeout=READ_TIMEOUT)
        # B changes one section (AsterNOS has only its Easy RoCE profile: both runs push it)
        b = applier(switch_lab, name, sections=("qos",) if NOS[name] == "asternos" else ("mtu",), read_timeout=READ_TIMEOUT)
        pa, pb = a.plan(), b.plan()
        results = {}

        def run(key, app, planned):
            try:
                app.apply(*planned)
                results[key] = "success"
            except ApplyError as exc:
                results[key] = exc
        threads = [threading.Thread(target=run, args=("A", a, pa)), threading.Thread(target=run, args=("B", b, pb))]
        [t.start() for t in threads]
        [t.join() for t in threads]
        a.close()
        b.close()
        outcomes = sorted("success" if r == "success" else "refused" if r.rolled_back is None else "other" for r in results.values())
        assert outcomes == ["refused", "success"], (NOS[name], results)
        refused = [r for r in results.values() if r != "success"][0]
        assert "changed since" in str(refused), str(refused)
        st = full_state(name, switch_lab["root"])
        assert st["running"] == st["startup"]


def test_controller_lock_held_refuses(switch_lab):
    name = "leaf3"
    reset(switch_lab, name)
    a = applier(switch_lab, name, read_timeout=READ_TIMEOUT, lock_timeout=0.5)
    before = full_state(name, switch_lab["root"])
    planned = a.plan()
    from helpers import params
    with DeviceLock(lock_key(params(switch_lab, name)), a.lock_dir, 1):
        with pytest.raises(ApplyError) as exc:
            a.apply(*planned)
    a.close()
    assert exc.value.rolled_back is None and "controller lock" in str(exc.value)
    assert full_state(name, switch_lab["root"]) == before


def test_expected_digest_guards_the_reviewed_diff(switch_lab):
    name = "leaf1"
    reset(switch_lab, name)
    a = applier(switch_lab, name, read_timeout=READ_TIMEOUT)
    a.plan()
    reviewed = a.config_digest
    a.close()
    # someone changes the switch between the reviewed check run and the apply
    other = applier(switch_lab, name)
    other._conn().send_config_set(["interface Ethernet3", "description changed by hand"])
    other.close()
    before = full_state(name, switch_lab["root"])
    a = applier(switch_lab, name, read_timeout=READ_TIMEOUT)
    planned = a.plan()
    with pytest.raises(ApplyError) as exc:
        a.apply(*planned, expected_digest=reviewed)
    a.close()
    assert exc.value.rolled_back is None and "reviewed" in str(exc.value)
    assert full_state(name, switch_lab["root"]) == before


def test_foreign_pending_change_is_refused_and_kept(switch_lab):
    """NVUE: an operator's staged, unapplied revision; EOS: another operator's open configuration session."""
    for name, stage in (("leaf2", ["nv set system hostname operator-was-here"]), ("leaf1", None)):
        reset(switch_lab, name)
        a = applier(switch_lab, name, read_timeout=READ_TIMEOUT)
        planned = a.plan()
        op = applier(switch_lab, name)
        conn = op._conn()
        if stage:
            for cmd in stage:
                conn.send_command(cmd)
        else:
            conn.config_mode("configure session operator1")
            conn.send_config_set(["hostname operator"], enter_config_mode=False, exit_config_mode=False)
        op.close()   # the operator walks away: the session / revision stays pending
        seen = full_state(name, switch_lab["root"])
        with pytest.raises(ApplyError) as exc:
            a.apply(*planned)
        a.close()
        assert exc.value.rolled_back is None and "pending" in str(exc.value), str(exc.value)
        assert full_state(name, switch_lab["root"]) == seen, "the operator's pending change was touched"


# ----------------------------------------------------------------------------- mutation checks
MUTATION_CASES = [(name, fault) for name in sorted(NOS) for fault in ("reject_mid_batch", "drop_at_save")]


def test_mutation_noop_rollback_fails_the_matrix(switch_lab, monkeypatch):
    """Rollback replaced by a no-op: the matrix must fail on every NOS."""
    for cls in (transactions.EosSessionTxn, transactions.NxosCheckpointTxn, transactions.NvueRevisionTxn, transactions.KlishReverseTxn,
                transactions.AsterNosRestTxn, GcuTxn):
        monkeypatch.setattr(cls, "abort", lambda self, read, before: "no-op (mutation)")
    failed = {}
    for name, fault in MUTATION_CASES:
        claim, err, bad = run_case(switch_lab, name, fault)
        if bad or claim not in ("success", "restored"):
            failed.setdefault(NOS[name], []).append(fault)
    print("MUTATION noop-rollback caught:", failed)
    assert sorted(failed) == sorted(NOS.values()), failed


def test_mutation_lying_rollback_is_caught_by_device_state(switch_lab, monkeypatch):
    """Rollback does nothing *and* the module claims "restored" without proof (the audited bug): the
    matrix's own device-state checks must catch it on every NOS."""
    for cls in (transactions.EosSessionTxn, transactions.NxosCheckpointTxn, transactions.NvueRevisionTxn, transactions.KlishReverseTxn,
                transactions.AsterNosRestTxn, GcuTxn):
        monkeypatch.setattr(cls, "abort", lambda self, read, before: "no-op (mutation)")

    def lying(self, txn, base, want, err, resave):
        raise ApplyError("apply failed on %s at %s; rollback restored the previous config" % (self.driver.name, err),
                         list(self.attempted), err.output, True, step=err.step)
    monkeypatch.setattr(apply_mod.Applier, "_undo_and_raise", lying)
    caught = {}
    for name, fault in MUTATION_CASES:
        claim, err, bad = run_case(switch_lab, name, fault)
        if any(b.startswith(("false", "partial")) for b in bad):
            caught.setdefault(NOS[name], []).append(fault)
    print("MUTATION lying-rollback caught:", caught)
    assert sorted(caught) == sorted(NOS.values()), caught
