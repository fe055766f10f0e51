"""The device lock in the field's shapes (issue 26 items 2, 3, 6), on the lab's simulators:

* two controller PROCESSES, each in its own PID and UTS namespace (`unshare --pid --fork --mount-proc --uts`)
  with AWX job-pod host names that share their first 10 characters (`automation-job-<n>-<x>`, both pid 1),
  one controller clock 31 min behind and the other 1 h ahead (a clock hook in the child), started at the same
  instant: one success, one refusal with nothing sent, the winner's change whole (0 lost updates, 0 mixed
  configs, 0 false success), no `aif-*` object left - on every NOS driver the lab simulates;
* a slow controller past its TTL: its lease, renewed by the device's clock during a long drain wait, keeps
  the lock although its marker is older than the TTL; the other run is refused naming it;
* a controller SIGKILLed between drain and undrain (after its change was verified): the switch stays drained,
  the check-mode plan (what audit.yml reads) reports it as drained by an ended run of ours, and the next run -
  with no other change to make - takes the drain back, proven, leaving nothing.
AIFABRIC_FIELD_RACES sets the races per NOS (CI: 1).
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import lab
import pytest
from helpers import Background, applier, full_state, nothing_left, reset
from test_drain import DRAIN, IDS, converged, drain_lines, sections_of
from test_fault_matrix import aif_objects

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = os.path.join(HERE, "field_controller.py")
NOS = {"leaf0": "asternos", "sonic0": "sonic", "leaf1": "eos", "leaf2": "nvue", "leaf3": "nxos", "csonic0": "community_sonic"}
RACES = int(os.environ.get("AIFABRIC_FIELD_RACES", "1"))

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="PID/UTS namespaces need root (CI runs as root)")


def controller(switch_lab, name, host=None, sections=("qos", "mtu", "pbr"), lock_dir="a", start_at=0, options=None,
               mtu=None, skew=0, ready=None, start_when=None):
    """Start one controller process; ``host``: in its own PID + UTS namespace with that host name."""
    args = dict(root=switch_lab["root"], ports=switch_lab["ports"], name=name, sections=list(sections),
                lock_dir=os.path.join(switch_lab["root"], "ctl-" + lock_dir), start_at=start_at,
                options=dict(read_timeout=15, **(options or {})), mtu=mtu, skew=skew, ready=ready, start_when=start_when)
    cmd = [sys.executable, CHILD, json.dumps(args)]
    if host:
        cmd = ["unshare", "--pid", "--fork", "--mount-proc", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host] + cmd
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def outcome(proc, timeout=240):
    out, err = proc.communicate(timeout=timeout)
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    assert lines, "controller printed no outcome: %s" % err[-2000:]
    return json.loads(lines[-1])


def whole(switch_lab, name, sections, mtu=None):
    return nothing_left(switch_lab, name, sections, **({"mtu": mtu} if mtu else {}))


def awx_race(switch_lab, name, index):
    """Two AWX job pods (same host name prefix, both pid 1 in their namespaces, skewed clocks) race."""
    reset(switch_lab, name)
    changes = {"A": (("qos", "mtu", "pbr"), None), "B": (("mtu",), 9100)}
    if NOS[name] == "asternos":   # Easy RoCE QoS only (AsterNOS configures no MTU): both pods push the profile
        changes = {"A": (("qos",), None), "B": (("qos",), None)}
    # both pods plan first, then apply together: a pod that planned after the other's change landed would plan nothing
    # and rightly succeed (a loaded CI machine once took longer than a fixed 7 s start to plan)
    root = switch_lab["root"]
    ready = dict((k, os.path.join(root, "awx-%s%d-ready" % (k, index))) for k in "AB")
    go = os.path.join(root, "awx-%d-go" % index)
    for stale in list(ready.values()) + [go]:   # an earlier session's files in a kept lab root
        if os.path.exists(stale):
            os.remove(stale)
    procs = {
        "A": controller(switch_lab, name, "automation-job-%d01-abcde" % index, changes["A"][0], "a%d" % index, 0,
                        dict(lock_timeout=60), changes["A"][1], skew=-31 * 60, ready=ready["A"], start_when=go),
        "B": controller(switch_lab, name, "automation-job-%d02-fghij" % index, changes["B"][0], "b%d" % index, 0,
                        dict(lock_timeout=60), changes["B"][1], skew=3600, ready=ready["B"], start_when=go),
    }
    deadline = time.time() + 120
    while not all(os.path.exists(f) for f in ready.values()) and all(p.poll() is None for p in procs.values()) \
            and time.time() < deadline:
        time.sleep(0.05)
    open(go, "w").close()
    res = {k: outcome(p) for k, p in procs.items()}
    bad = []
    hosts = {r["host"] for r in res.values()}
    if len(hosts) != 2 or not all(h.startswith("automation-job-") for h in hosts) or any(r["pid"] != 1 for r in res.values()):
        bad.append("not two AWX-like namespaces: %s" % [(r["host"], r["pid"]) for r in res.values()])
    winners = [k for k, r in res.items() if r["result"] == "success"]
    losers = [r for r in res.values() if r["result"] != "success"]
    if len(winners) != 1 or len(losers) != 1 or losers[0].get("rolled_back") is not None:
        said = dict((k, (r["result"], r.get("message", "")[:300])) for k, r in res.items())
        bad.append("not one success and one refusal with nothing sent: %s" % said)
    for key in winners:
        if not whole(switch_lab, name, *changes[key]):
            bad.append("lost update or mixed config: run %s succeeded but its change is not whole" % key)
    for key in set(res) - set(winners):
        if changes[key][1] and whole(switch_lab, name, ("mtu",), changes[key][1]):
            bad.append("mixed config: the refused run %s's MTU is on the switch" % key)
    st = full_state(name, switch_lab["root"])
    if st["running"] != st["startup"]:
        bad.append("running config not saved")
    left = aif_objects(name, switch_lab["root"])
    if left:
        bad.append("aif objects left: %s" % left)
    return bad, res


@pytest.mark.parametrize("name", sorted(NOS), ids=[NOS[n] for n in sorted(NOS)])
def test_awx_pods_with_colliding_names_and_skewed_clocks_never_mix(switch_lab, name):
    failures = {}
    for i in range(RACES):
        bad, res = awx_race(switch_lab, name, i + 1)
        if bad:
            failures[i] = bad
    print("FIELD-RACES %s %d/%d clean" % (NOS[name], RACES - len(failures), RACES))
    assert not failures, failures


# the lease's renewal is the marker store's: community SONiC's is NVUE's (transactions.ShellMarkers), so the 50 s
# slow-controller case runs on NVUE and NX-OS only
@pytest.mark.parametrize("name", ["leaf2", "leaf3"], ids=["nvue", "nxos"])
def test_a_slow_controller_past_its_ttl_keeps_its_lease(switch_lab, name):
    """A holds the lock through a 21 s drain wait with a 60 s lease; the device's clock jumps 50 s meanwhile, so
    A's marker is older than the TTL by its name. A renewed it in the wait (by the device's clock): B, another
    machine, is refused naming A, and A succeeds."""
    converged(switch_lab, name)
    a = controller(switch_lab, name, "ctl-slow-a", sections_of(name), "slowa", 0,
                   dict(lock_ttl=60, drain="always", drain_wait=21), mtu=9100)
    try:
        deadline = time.time() + 60
        while drain_lines(switch_lab, name) == 0 and time.time() < deadline:
            time.sleep(0.3)
        assert drain_lines(switch_lab, name) == 1, "A never drained"
        lab.set_faults(name, {"clock_offset": 50}, switch_lab["root"])
        time.sleep(24)   # past A's renewal in the wait (a third of the TTL)
        b = controller(switch_lab, name, "ctl-slow-b", ("mtu",), "slowb", 0, dict(lock_ttl=60, lock_timeout=3))
        rb = outcome(b)
        ra = outcome(a)
    finally:
        if a.poll() is None:
            a.kill()
        lab.set_faults(name, {}, switch_lab["root"])
    assert ra["result"] == "success", ra
    assert rb["result"] == "failed" and rb["rolled_back"] is None and ra["tag"] in rb["message"], rb
    assert "since its last renewal by the device's clock" in rb["message"], rb["message"]
    assert whole(switch_lab, name, sections_of(name), 9100) and drain_lines(switch_lab, name) == 0
    assert aif_objects(name, switch_lab["root"]) == []


@pytest.mark.parametrize("name", sorted(DRAIN), ids=[IDS[n] for n in sorted(DRAIN)])
def test_a_controller_killed_between_drain_and_undrain_is_undrained_by_the_next_run(switch_lab, name):
    converged(switch_lab, name)
    a = controller(switch_lab, name, None, sections_of(name), "killa", 0, dict(drain="always", drain_wait=20), mtu=9100)
    try:
        deadline = time.time() + 150
        # the change verified, the switch still drained: the second wait, before the undrain
        while not (drain_lines(switch_lab, name) == 1 and whole(switch_lab, name, sections_of(name), 9100)) \
                and time.time() < deadline:
            time.sleep(0.5)
        assert drain_lines(switch_lab, name) == 1 and a.poll() is None, "A never drained: %s" % (
            (a.communicate(timeout=60),) if a.poll() is not None else "still running")
        os.kill(a.pid, signal.SIGKILL)
        a.communicate(timeout=30)
    finally:
        if a.poll() is None:
            a.kill()
    assert drain_lines(switch_lab, name) == 1   # left drained
    dev = switch_lab["devices"][name]
    saved, dev["intent"] = dev["intent"], dict(dev["intent"], mtu=9100)
    try:
        audit = applier(switch_lab, name, sections=sections_of(name))   # what audit.yml's check-mode switch_config reads
        before, after, cmds = audit.plan()
        audit.close()
        state = audit.drain_state
        assert cmds == [] and state and state["drained"] and state["undrain"], state
        assert "ended before undraining" in state["by"] and state["records"], state
        run = applier(switch_lab, name, sections=sections_of(name))
        before, after, cmds = run.plan()
        run.apply(before, after, cmds)   # switch_config applies for the drain alone (changed: true)
        run.close()
    finally:
        dev["intent"] = saved
    assert any("undrained the switch that run" in n and "proven" in n for n in run.notes), run.notes
    assert drain_lines(switch_lab, name) == 0 and aif_objects(name, switch_lab["root"]) == []
    st = full_state(name, switch_lab["root"])
    assert st["running"] == st["startup"]
    check = applier(switch_lab, name, sections=sections_of(name))
    check.plan()
    check.close()
    assert check.drain_state is None


def test_a_push_slower_than_the_lease_renews_it_between_blocks(switch_lab):
    """NX-OS applies line by line: a push held up on a slow switch renews its lease between blocks (lock.StagingGuard,
    a third of the TTL by the controller's clock, driven here). The device's clock jumps 70 s past A's 60 s lease
    while A sends; A renews at its next block; B, another machine, then tries while A waits on its last MTU line
    and is refused naming A; A succeeds."""
    name, root = "leaf3", switch_lab["root"]
    reset(switch_lab, name)
    probe = applier(switch_lab, name)
    mtu_lines = sum(1 for c in probe.plan()[2] if c.strip().startswith("mtu "))
    probe.close()
    # B is started and planned before A (and before the faults, which the first session to log in takes): it tries
    # the lock the moment A waits on its last MTU line
    ready, go = os.path.join(root, "pushb-ready"), os.path.join(root, name, "slowed-1")
    b = controller(switch_lab, name, None, ("mtu",), "pushb", 0, dict(lock_ttl=60, lock_timeout=2), mtu=9100,
                   ready=ready, start_when=go)
    deadline = time.time() + 120
    while not os.path.exists(ready) and b.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    lab.set_faults(name, {"slow": [{"re": r"^mtu ", "skip": 0, "secs": 1},
                                   {"re": r"^mtu ", "skip": mtu_lines - 1, "secs": 12}]}, root)
    run = applier(switch_lab, name, lock_ttl=60, read_timeout=20, lock_dir=os.path.join(root, "ctl-pusha"))
    jumped = threading.Event()
    real = time.monotonic
    # a third of the TTL and a little more (25 s of 60): the guard's renewal is due; not past the lease, which the
    # write fence (apply.DeviceIO.fence) would rightly read as possibly lost
    run._clock = lambda: real() + (25 if jumped.is_set() else 0)
    a = Background(run, run.plan())
    try:
        lab.wait_slowed(name, 0, root, timeout=60)
        lab.set_faults(name, {"clock_offset": 70}, root)   # the device's clock: A's lease is now 70 s old
        jumped.set()                                        # the controller's: a third of the TTL has passed
        rb = outcome(b)
    finally:
        if b.poll() is None:
            b.kill()
        a.join()
        run.close()
        lab.set_faults(name, {}, root)
    assert a.claim == "success", str(a.claim)
    assert rb["result"] == "failed" and rb["rolled_back"] is None and run.tag in rb["message"], rb
    assert "since its last renewal by the device's clock" in rb["message"], rb["message"]
    assert whole(switch_lab, name, ("qos", "mtu", "pbr"))
    assert aif_objects(name, root) == []
