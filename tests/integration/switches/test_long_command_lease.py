"""A single command longer than the lease (issue 37 item 2), with mixed TTLs across controllers: NVUE's
`nv config apply -y` may run 180 s, longer than a 60 s `lock_ttl`, and no renewal can happen while it runs. The run
extends its lease on the device over the command's whole timeout first (`devicelock.extend`: an object
`<tag>-x<end>`), and every controller honours the extension whatever its own TTL.

On the simulator: A (lease 60 s) is in its apply while the switch's clock moves 150 s on (A's controller clock too);
B, another machine with lease 60 s or 1800 s, tries to take the lock: refused, naming A. A's change lands whole and
A succeeds. A mutation (the extension ignored by the other controller) lets B take A's live lock mid-apply (B is then
stopped only by NVUE's pending-revision check). The same on NX-OS for the undo's `rollback running-config checkpoint`
(read_timeout 300 s), in `make bench-concurrent-edits` only: A's rollback restores the switch while B is refused.
"""
import os
import time

import lab
import pytest
from helpers import applier, claim_of, nothing_left, reset
from test_fault_matrix import aif_objects

from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock

NAME = "leaf2"   # NVUE


def controllers(switch_lab, name, tmp_path, other_ttl):
    """A (lease 60 s) and B (another machine, lease ``other_ttl``) on a reset switch, each with its plan."""
    reset(switch_lab, name)
    a = applier(switch_lab, name, read_timeout=8, lock_dir=str(tmp_path / "a"), lock_timeout=5, lock_ttl=60)
    b = applier(switch_lab, name, sections=("mtu",), read_timeout=8, lock_dir=str(tmp_path / "b"), lock_timeout=1,
                lock_ttl=other_ttl)
    planned_a, planned_b = a.plan(), b.plan()
    a.close()   # A's apply logs in again and reads the fault
    return a, b, planned_a, planned_b


def long_apply_race(switch_lab, tmp_path, other_ttl):
    a, b, planned_a, planned_b = controllers(switch_lab, NAME, tmp_path, other_ttl)
    lab.set_faults(NAME, {"slow": {"re": r"^nv config apply -y", "secs": 4, "skip": 0}}, switch_lab["root"])
    return race(switch_lab, NAME, a, b, planned_a, planned_b,
                lambda step, cmd: step == "commit" and cmd.startswith("nv config apply"))


def race(switch_lab, name, a, b, planned_a, planned_b, held):
    """A applies; when A sends the long command (``held(step, cmd)``, slowed by the simulator), the switch's clock
    and A's move 150 s on and B tries its own apply -> {"A": claim, "B": claim}."""
    outcome = {}
    real = a.io.run

    def run(step, cmd, *args, **kw):
        if held(step, cmd) and "B" not in outcome:
            import threading

            def during():
                lab.wait_slowed(name, 0, switch_lab["root"], timeout=30)
                lab.set_faults(name, {"clock_offset": 150}, switch_lab["root"])   # 150 s pass on the switch ...
                a._clock = lambda: time.monotonic() + 150                           # ... and for A
                outcome["B"] = claim_of(b, planned_b)
            t = threading.Thread(target=during)
            t.start()
            try:
                return real(step, cmd, *args, **kw)
            finally:
                t.join()
        return real(step, cmd, *args, **kw)
    a.io.run = run
    try:
        outcome["A"] = claim_of(a, planned_a)
    finally:
        a.close()
        b.close()
        lab.set_faults(name, {}, switch_lab["root"])
    return outcome


# CI: the other controller with the longer TTL (the review's mixed case); `make bench-concurrent-edits` adds 60 s
FULL = os.environ.get("AIFABRIC_CONCURRENT_FULL") == "1"
OTHER_TTLS = [60, 1800] if FULL else [1800]


@pytest.mark.parametrize("other_ttl", OTHER_TTLS)
def test_the_holder_keeps_its_lease_through_a_command_longer_than_its_ttl(switch_lab, tmp_path, other_ttl):
    outcome = long_apply_race(switch_lab, tmp_path, other_ttl)
    print("LONG-COMMAND nvue other_ttl=%d: A=%s B=%s" % (other_ttl, str(outcome["A"])[:200], str(outcome["B"])[:300]))
    assert outcome["A"] == "success", str(outcome["A"])
    assert outcome["B"] != "success" and outcome["B"].rolled_back is None, str(outcome["B"])
    assert "another run holds the device lock" in str(outcome["B"]) and "lease extended until" in str(outcome["B"]), str(outcome["B"])
    assert nothing_left(switch_lab, NAME, ("qos", "mtu", "pbr"))
    assert aif_objects(NAME, switch_lab["root"]) == []


def test_mutation_without_the_extension_the_other_controller_takes_a_live_lock(switch_lab, tmp_path, monkeypatch):
    monkeypatch.setattr(devicelock.Marker, "extended", property(lambda self: None))
    outcome = long_apply_race(switch_lab, tmp_path, 1800)
    print("MUTATION no-extension nvue: A=%s B=%s" % (str(outcome["A"])[:200], str(outcome["B"])[:200]))
    # B took A's live lock (recovering A's marker as stale); NVUE then refuses B only because A's revision is pending
    assert "holds the device lock" not in str(outcome["B"]), str(outcome["B"])


def rollback_race(switch_lab, tmp_path, other_ttl):
    """NX-OS: A (lease 60 s) has a line refused mid-push, so it rolls back to its checkpoint (`rollback running-config
    checkpoint`, read_timeout 300 s: longer than its lease). While the rollback runs, the switch's clock and A's move
    150 s on and B (another machine, lease ``other_ttl``) tries to take the lock."""
    name = "leaf3"
    a, b, planned_a, planned_b = controllers(switch_lab, name, tmp_path, other_ttl)
    lab.set_faults(name, {"reject": r"^mtu ", "reject_skip": 1}, switch_lab["root"])
    real_fresh = a.io.fresh

    def fresh(step, *args, **kw):
        if step == "abort":   # the rollback's own session reads the slow fault at its login
            lab.set_faults(name, {"slow": {"re": r"^rollback running-config checkpoint ", "secs": 4, "skip": 0}},
                           switch_lab["root"])
        return real_fresh(step, *args, **kw)
    a.io.fresh = fresh
    return race(switch_lab, name, a, b, planned_a, planned_b,
                lambda step, cmd: cmd.startswith("rollback running-config checkpoint"))


def an_nxos_rollback_longer_than_the_lease_keeps_it(switch_lab, tmp_path, other_ttl):
    """The lease is extended on the switch over the rollback's whole timeout before it starts (session.fence):
    B is refused naming A's extension, A's rollback restores the switch and releases its lock."""
    outcome = rollback_race(switch_lab, tmp_path, other_ttl)
    print("LONG-ROLLBACK nxos other_ttl=%d: A=%s B=%s" % (other_ttl, str(outcome["A"])[:300], str(outcome["B"])[:300]))
    assert outcome["A"] != "success" and outcome["A"].rolled_back is True, str(outcome["A"])
    assert "rolled back to checkpoint" in str(outcome["A"]), str(outcome["A"])
    assert outcome["B"] != "success" and outcome["B"].rolled_back is None, str(outcome["B"])
    assert "another run holds the device lock" in str(outcome["B"]) and "lease extended until" in str(outcome["B"]), str(outcome["B"])
    assert aif_objects("leaf3", switch_lab["root"]) == []


def mutation_without_the_extension_b_takes_the_rolling_back_lock(switch_lab, tmp_path, monkeypatch):
    """The extension ignored: B takes A's lock in the middle of A's rollback (A's undo then says its lock was lost),
    so the test above can fail."""
    monkeypatch.setattr(devicelock.Marker, "extended", property(lambda self: None))
    outcome = rollback_race(switch_lab, tmp_path, 1800)
    print("MUTATION no-extension nxos rollback: A=%s B=%s" % (str(outcome["A"])[:250], str(outcome["B"])[:250]))
    assert "another run holds the device lock" not in str(outcome["B"]), str(outcome["B"])
    assert "lock" in str(outcome["A"]) and outcome["A"].rolled_back is not True, str(outcome["A"])


if FULL:   # `make bench-concurrent-edits` only (CI: tests/unit/nos/test_devicelock.py holds the extension; NVUE's above)
    test_an_nxos_rollback_longer_than_the_lease_keeps_it = pytest.mark.parametrize("other_ttl", [60, 1800])(
        an_nxos_rollback_longer_than_the_lease_keeps_it)
    test_mutation_without_the_extension_b_takes_the_rolling_back_lock = mutation_without_the_extension_b_takes_the_rolling_back_lock
