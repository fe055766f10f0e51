"""The device lock as a lease (issue 26 item 2): identities unique per machine and run, ages by the device's
clock, renewal, ended vs stale, unremovable markers, bounds; against an in-memory marker store whose clock
is the device's, and the show-clock readers against captured output."""
import contextlib
import os
import subprocess
import sys
import time

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import StepError, device_clock

HERE = os.path.dirname(os.path.abspath(__file__))
CLOCK = os.path.join(HERE, "..", "..", "fixtures", "switches", "clock")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


class Store(object):
    """A device's lock objects and its clock (``now``), as a NOS's marker store gives them."""

    def __init__(self, now=1_800_000_000, objects=None):
        self.now, self.objects, self.locked = now, dict(objects or {}), set()

    def listing(self):
        return self.now, dict(self.objects)


class Txn(object):
    hold_removal = None

    def __init__(self, store, tag=None):
        self.store, self.tag = store, tag or devicelock.new_tag()

    def shell_session(self):
        return contextlib.nullcontext()

    def listing(self):
        return self.store.listing()

    def make(self, name):
        if name in self.store.objects:
            raise StepError("lock", name, "exists")
        self.store.objects[name] = "file"

    def drop(self, name):
        if name in self.store.locked:
            raise StepError("unlock", "rm -f " + name, "rm: cannot remove '%s': Operation not permitted" % name)
        self.store.objects.pop(name, None)

    def recover(self, marker):
        for name in marker.objects():
            if not name.endswith("-d"):
                self.drop(name)
        return "marker removed"


def dated(store, host, machine, pid, age):
    """Another run's tag, dated ``age`` seconds ago by the device's clock."""
    return "aif-%s-%s-%s-%d-abc" % (time.strftime("%y%m%d%H%M%S", time.gmtime(store.now - age)), host, machine, pid)


def test_identity_is_unique_per_pid_namespace_and_never_a_host_name_prefix():
    """Two AWX job pods share 10 characters of host name and may share a pid; their machine parts differ
    (boot id + PID namespace), so neither is judged by the other's pid."""
    here = devicelock.machine_key()
    code = "from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock as d; print(d.machine_key())"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, ".collections"))
    same = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert same == here   # same machine and namespace: a pid there can be judged
    other = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--uts", "sh", "-c",
                            "hostname automation-job-101-abcde && exec %s -c '%s'" % (sys.executable, code)],
                           env=env, capture_output=True, text=True, check=False)
    assert other.returncode == 0, other.stderr
    assert len(other.stdout.strip()) == 6 and other.stdout.strip() != here


def test_a_live_marker_of_another_machine_is_never_judged_by_pid():
    store = Store()
    # pid 1 is alive here, and a pid that does not exist here: neither means anything on another machine
    for pid in (1, 4999999):
        store.objects = {dated(store, devicelock.controller_id(), "0badc0", pid, 10): "file"}
        txn = Txn(store)
        with pytest.raises(devicelock.LockHeldError) as exc:
            devicelock.acquire(txn, ttl=600, timeout=0, sleep=lambda s: None)
        assert "0badc0" in str(exc.value) and "10s since its last renewal by the device's clock" in str(exc.value)
        assert list(store.objects) == [n for n in store.objects if "0badc0" in n]   # ours taken back, theirs kept


def test_a_marker_of_this_machine_whose_process_is_gone_is_recovered_at_once():
    store = Store()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    old = dated(store, devicelock.controller_id(), devicelock.machine_key(), gone.pid, 5)
    store.objects = {old: "file"}
    txn = Txn(store)
    notes = devicelock.acquire(txn, ttl=600, timeout=0)
    assert old in notes[0] and "its run ended" in notes[0] and list(store.objects) == [txn.tag]


@pytest.mark.parametrize("skew", [-31 * 60, 3600, 0], ids=["controller-31min-behind", "controller-1h-ahead", "in-time"])
def test_controller_clock_skew_neither_steals_nor_blocks(monkeypatch, skew):
    """The controller's clock is never read for an age: a live marker 10 s old by the device's clock blocks,
    one 2 h old is recovered, whatever the controller's clock says."""
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew)
    store = Store()
    live = dated(store, "ctrla", "0badc0", 77, 10)
    store.objects = {live: "file"}
    with pytest.raises(devicelock.LockHeldError):
        devicelock.acquire(Txn(store), ttl=1800, timeout=0)
    old = dated(store, "ctrla", "0badc0", 77, 7200)
    store.objects = {old: "file"}
    txn = Txn(store)
    notes = devicelock.acquire(txn, ttl=1800, timeout=0)
    assert "not renewed within the 1800s lock TTL" in notes[0]
    # our own tag is dated by the device's clock, not the controller's
    assert devicelock.Marker(txn.tag).created == store.now


def test_a_renewed_lease_is_not_stale_and_a_lost_one_stops_the_run():
    store = Store()
    txn = Txn(store)
    devicelock.acquire(txn, ttl=60, timeout=0)
    store.now += 25   # past a third of the TTL: a renewal object dated by the device
    devicelock.renew(txn, 60)
    assert "%s-l%d" % (txn.tag, store.now) in store.objects
    store.now += 50   # 75 s since the marker, 50 s since the renewal: still live for another controller
    other = Txn(store, dated(store, "ctrlb", "0b0b0b", 12, 0))
    with pytest.raises(devicelock.LockHeldError):
        devicelock.acquire(other, ttl=60, timeout=0)
    store.now += 61   # not renewed (a suspended controller): stale, taken
    devicelock.acquire(other, ttl=60, timeout=0)
    with pytest.raises(devicelock.LockLostError) as exc:
        devicelock.renew(txn, 60, "begin")
    assert txn.tag in str(exc.value) and "stops" in str(exc.value)
    devicelock.release(other)
    assert store.objects == {}


def test_a_marker_this_login_cannot_remove_is_named_and_skipped():
    store = Store()
    stuck = dated(store, "ctrla", "0badc0", 77, 7200)
    store.objects, store.locked = {stuck: "file"}, {stuck}
    txn = Txn(store)
    notes = devicelock.acquire(txn, ttl=1800, timeout=0)
    assert stuck in notes[0] and "could not remove" in notes[0] and "Operation not permitted" in notes[0]
    assert txn.tag in store.objects   # the run holds the lock: a stale marker it cannot remove no longer blocks it


@pytest.mark.parametrize("hold", ["aif-manual-hold", "aif-hold.bob", "aif-bob's hold", "aif-", "aif-x:y"])
def test_an_undated_hold_is_never_stale_and_its_refusal_says_what_releases_it(hold):
    store = Store(objects={hold: ""})
    txn = Txn(store)
    txn.hold_removal = "rm -f /tmp/aifabric-lock.{name}"
    with pytest.raises(devicelock.LockHeldError) as exc:
        devicelock.acquire(txn, ttl=60, timeout=0)
    msg = str(exc.value)
    assert msg.startswith("a hold blocks the device lock: %s (undated)" % hold)
    assert "it never expires; remove it (rm -f /tmp/aifabric-lock.%s) to release the switch" % hold in msg
    assert "expires when" not in msg and list(store.objects) == [hold]   # never removed by a run


def test_a_live_runs_refusal_says_when_it_is_released():
    store = Store()
    live = dated(store, "ctrla", "0badc0", 77, 10)
    store.objects = {live: "file"}
    with pytest.raises(devicelock.LockHeldError) as exc:
        devicelock.acquire(Txn(store), ttl=600, timeout=0)
    msg = str(exc.value)
    assert msg.startswith("another run holds the device lock: %s" % live)
    assert ("not renewed for 600s by the device's clock (lock_ttl of this run; at the device's time %s if never "
            "renewed again)" % time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(store.now - 10 + 600))) in msg


def _stepped_back(store, step, renewed=False):
    """Another run's marker written before the switch's clock was stepped back ``step`` seconds."""
    tag = dated(store, "ctrla", "0badc0", 77, -step + 20)   # 20 s old by the old clock
    store.objects = {tag: "file"}
    if renewed:   # its run renewed after the step: a lease dated by the new clock
        store.objects["%s-l%d" % (tag, store.now - 5)] = "file"
    return tag


@pytest.mark.parametrize("step", [3597, 86391])
def test_a_clock_stepped_back_is_named_and_says_what_releases_the_marker(step):
    store = Store()
    tag = _stepped_back(store, step)
    with pytest.raises(devicelock.LockHeldError) as exc:
        devicelock.acquire(Txn(store), ttl=600, timeout=0)
    msg = str(exc.value)
    assert "dated %ds AFTER the device's clock: the switch's clock was stepped back" % (step - 20) in msg
    assert "%s is released when its run renews it" % tag in msg and "goes 600s without a renewal while a run waits" in msg


def test_after_a_step_back_a_live_run_renews_at_once_and_is_aged_from_that_renewal():
    store = Store()
    txn = Txn(store)
    devicelock.acquire(txn, ttl=600, timeout=0)
    store.now -= 3600   # the switch's clock is stepped back an hour
    devicelock.renew(txn, 600)   # its own marker is in the future: renewed at once, by the new clock
    assert "%s-l%d" % (txn.tag, store.now) in store.objects
    marker = [m for m in devicelock.markers(store)[1] if m.name == txn.tag][0]
    assert marker.age(store.now) == 0 and marker.ahead(store.now) == 0
    store.now += 601   # then not renewed for a TTL by the new clock: stale as usual, not TTL + 3600 s
    devicelock.acquire(Txn(store, dated(store, "ctrlb", "0b0b0b", 12, 0)), ttl=600, timeout=0)
    assert not [n for n in store.objects if n.startswith(txn.tag)]


def test_after_a_step_back_a_dead_run_is_taken_once_a_waiting_run_saw_it_unrenewed_for_a_ttl():
    store = Store()
    tag = _stepped_back(store, 3597)
    clock = [0.0]

    def sleep(secs):
        clock[0] += 61   # each try a minute later by this controller's monotonic clock; the switch's stays
    txn = Txn(store)
    notes = devicelock.acquire(txn, ttl=600, timeout=900, sleep=sleep, monotonic=lambda: clock[0])
    assert tag not in store.objects and txn.tag in store.objects and 600 < clock[0] < 700
    assert "the switch's clock was stepped back 3577s and the run did not renew it for 600s" in notes[0]
    # a run that renewed after the step is aged from that renewal: live
    _stepped_back(store, 3597, renewed=True)
    with pytest.raises(devicelock.LockHeldError) as exc:
        devicelock.acquire(Txn(store), ttl=600, timeout=0)
    assert "5s since its last renewal by the device's clock" in str(exc.value)


def test_the_shell_listing_sees_every_aif_entry_in_real_bash_and_the_lab_answers_the_same(tmp_path):
    """ShellMarkers.listing's command run by bash on names with '.', a quote, spaces, a colon, a tab in the
    content and an empty (touched) file; the lab's model (tests/lab/switches/markers.py) answers the same."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions
    sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
    import markers
    files = {"aif-261128200000-ctl-abcdef-12-abc": "controller=x machine=y user=u\n", "aif-hold.bob": "",
             "aif-bob's hold": "", "aif-a:b": "x\ty\nsecond line\n", "aif-": "", "other": "not ours\n"}
    for name, text in files.items():
        (tmp_path / ("aifabric-lock." + name)).write_text(text)
    seen = {}

    class Shell(transactions.ShellMarkers):
        def __init__(self):
            pass

        def _shell(self, step, command, verify_echo=True):
            seen["cmd"] = command
            run = subprocess.run(["bash", "-c", command], env={"AIF_LOCK_DIR": str(tmp_path), "PATH": os.environ["PATH"]},
                                 capture_output=True, text=True, check=False)
            seen["out"] = run.stdout
            return run.returncode, run.stdout
    now, found = Shell().listing()
    assert abs(now - time.time()) < 5
    assert found == {"aif-261128200000-ctl-abcdef-12-abc": "controller=x machine=y user=u", "aif-hold.bob": "",
                     "aif-bob's hold": "", "aif-a:b": "xy", "aif-": ""}
    lab_files = dict(("/tmp/aifabric-lock." + n, t) for n, t in files.items())
    listed = markers.listing(seen["cmd"].split("; ", 1)[1], lab_files, '"${AIF_LOCK_DIR:-/tmp}"')
    assert listed == seen["out"].split("\n", 1)[1]


def test_a_drain_record_outlives_its_run_and_is_handed_to_the_next():
    store = Store()
    first = Txn(store)
    devicelock.acquire(first, ttl=600, timeout=0)
    devicelock.record_drain(first)
    devicelock.release(first, keep_drain=True)   # a failed undrain: the record stays, the marker goes
    assert list(store.objects) == [first.tag + "-d"]
    nxt = Txn(store)
    notes = devicelock.acquire(nxt, ttl=600, timeout=0)
    assert [m.name for m in nxt.drain_records] == [first.tag] and "its run ended" in notes[0]
    assert first.tag + "-d" in store.objects   # kept until the drain is taken back
    devicelock.clear_drain(nxt, first.tag)
    devicelock.release(nxt)
    assert store.objects == {}


@pytest.mark.parametrize("ttl,wait,key", [(1800, -5, "drain_wait"), (1800, 864000, "drain_wait"), (0, 5, "lock_ttl"),
                                          (-1, 5, "lock_ttl"), (True, 5, "lock_ttl"), (1, 5, "lock_ttl"),
                                          (1800, True, "drain_wait"), ("1800", 5, "lock_ttl")])
def test_bounds_refuse_hostile_values_naming_the_key(ttl, wait, key):
    problems = devicelock.check_bounds(ttl, wait)
    assert len(problems) == 1 and problems[0].startswith(key), problems


def test_bounds_accept_the_documented_range():
    assert devicelock.check_bounds(60, 0) == [] and devicelock.check_bounds(86400, 600) == []


def test_device_clock_reads_captured_show_clock():
    with open(os.path.join(CLOCK, "cisco_nxos_show_clock.raw")) as fh:
        assert device_clock(fh.read()) == 1445281058   # 2015-10-19 18:57:38, read as UTC
    with open(os.path.join(CLOCK, "arista_eos_show_clock.raw")) as fh:
        assert device_clock(fh.read()) == 1358188969   # 2013-01-14 18:42:49
    assert device_clock("Time source is NTP\n*01:02:03.456 UTC Thu Nov 26 2026\n") == 1795654923
    with pytest.raises(StepError):
        device_clock("% Invalid input")


def test_the_applier_refuses_bad_bounds_before_connecting():
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

    def connect():
        raise AssertionError("nothing may be sent")
    for kw, key in ((dict(drain_wait=-5), "drain_wait"), (dict(lock_ttl=0), "lock_ttl"), (dict(lock_ttl=True), "lock_ttl")):
        with pytest.raises(ValueError) as exc:
            Applier(get_driver("nvue"), connect, {}, {}, ("mtu",), **kw)
        assert str(exc.value).startswith(key), str(exc.value)


def test_the_holders_ttl_is_in_its_name_and_every_controller_honours_it():
    """issue 37 item 3: a controller with lock_ttl 60 met a live 1800 s run's marker 61 s after its last renewal
    and took it. The name records the holder's lease; the other controller ages the marker by it."""
    store = Store()
    holder = Txn(store, devicelock.redate(devicelock.new_tag(ttl=1800), store.now))
    devicelock.acquire(holder, ttl=1800, timeout=0)
    marker = devicelock.Marker(holder.tag)
    assert holder.tag.endswith("-t1800") and marker.ttl == 1800 and marker.pid is not None
    store.now += 61
    short = Txn(store, devicelock.new_tag(ttl=60))
    with pytest.raises(devicelock.LockHeldError) as exc:
        devicelock.acquire(short, ttl=60, timeout=0)
    assert "lease 1800s" in str(exc.value) and "not renewed for 1800s by the device's clock (its holder's lock_ttl" in str(exc.value)
    store.now += 1800   # past the holder's own lease: stale, recovered
    notes = devicelock.acquire(short, ttl=60, timeout=0)
    assert "not renewed within the 1800s lock TTL" in notes[0]
    # a marker of an earlier version (no -t) is still judged by this controller's TTL
    old = dated(store, "ctrla", "0badc0", 77, 61)
    assert devicelock.Marker(old).ttl is None and devicelock.Marker(old).stale(60, store.now)


def test_a_lease_must_outlast_the_longest_command():
    assert devicelock.lease_covers(60, 120) and devicelock.lease_covers(149, 120)
    assert devicelock.lease_covers(150, 120) == [] and devicelock.lease_covers(1800, 120) == []


class _Io(object):
    """DeviceIO's fence with a driven clock and a renew callback."""

    def __init__(self, ttl, taken=False):
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.session import DeviceIO
        LockLost = devicelock.LockLostError
        self.clock, self.renewed, self.LockLost = [0.0], [], LockLost
        self.io = DeviceIO(None, None, read_timeout=20)

        def renew(step):
            if taken:
                raise LockLost(step, None, "", "this run's device lock is gone")
            self.renewed.append(step)
            self.io.lease.confirm(self.clock[0])

        def extend(step, seconds):
            if taken:
                raise LockLost(step, None, "", "this run's device lock is gone")
            self.renewed.append("extend %s %ds" % (step, seconds))
            self.io.lease.extended(self.clock[0], seconds)
        self.io.lease = devicelock.Lease(ttl, lambda: self.clock[0], renew, extend)
        self.io.lease.confirm(0.0)


def test_a_write_goes_out_only_under_a_lease_that_covers_it():
    """issue 37 item 2: a controller suspended between its last check and a write longer than its lease stops
    there (LockLost) when another run took the lock, and renews first when nobody did."""
    io = _Io(60)
    io.clock[0] = 20
    io.io.fence("stage", "mtu 9100")            # 40 s left: goes out
    io.io.fence("commit", "config apply-patch", 20)   # 40 s left >= 20 + 10: goes out
    assert io.renewed == []
    io.clock[0] = 35                          # 25 s left < 20 + 10: renewed on the device first
    io.io.fence("commit", "config apply-patch", 20)
    assert io.renewed == ["commit"]
    io.io.fence("lock", "rm -f marker")       # the lock's own steps are never fenced
    stalled = _Io(60, taken=True)
    stalled.clock[0] = 75                     # suspended 75 s: the lock was taken meanwhile
    with pytest.raises(stalled.LockLost) as exc:
        stalled.io.fence("stage", "interface Ethernet1/1")
    assert "gone" in str(exc.value)


def test_a_lost_lock_crosses_the_klish_shell_hop_as_itself():
    """issue 37 item 4: Dell SONiC's klish -> shell hop reported a lost lock as a broken hop ("command 'exit /
    sonic-cli': LockLostError") and the run went on to its undo."""
    import contextlib
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import transactions

    class Conn(object):
        pass

    class Io(object):
        def session(self, step, cmd):
            return Conn()

        def _fail(self, step, cmd, exc):
            return StepError(step, cmd, "", type(exc).__name__)
    txn = transactions.KlishReverseTxn.__new__(transactions.KlishReverseTxn)
    txn.io, txn.in_shell = Io(), False
    orig = transactions.klish_shell
    transactions.klish_shell = lambda conn: contextlib.nullcontext()
    try:
        with pytest.raises(devicelock.LockLostError):
            with txn.shell_session("undo"):
                raise devicelock.LockLostError("undo", None, "", "this run's device lock aif-x is gone at step undo")
    finally:
        transactions.klish_shell = orig


def test_a_command_longer_than_the_lease_goes_out_under_an_extension_covering_its_whole_timeout():
    """issue 37 item 2: NVUE's `nv config apply` (180 s) under a 60 s lease: no renewal can happen while it runs, so the
    lease is extended on the device over its whole timeout first; a run whose lock was taken stops instead."""
    io = _Io(60)
    io.clock[0] = 5
    io.io.fence("commit", "nv config apply -y", 180)
    assert io.renewed == ["extend commit 200s"] and io.io.lease.left() >= 190
    io.clock[0] = 100   # during the apply: still covered by the extension, nothing more sent to the device
    io.io.fence("commit", "nv config apply -y", 80)
    assert io.renewed == ["extend commit 200s"]
    taken = _Io(60, taken=True)
    taken.clock[0] = 5
    with pytest.raises(taken.LockLost):
        taken.io.fence("abort", "rollback running-config checkpoint aif-x", 300)


def test_an_extension_holds_the_lock_for_every_controller_whatever_its_ttl():
    """Mixed TTLs across controllers (60 s holder, 60 s and 1800 s others): the holder's `-x<end>` object keeps its
    lock through one long command; past its end (and the holder's TTL since its last renewal) it is stale."""
    store = Store()
    holder = Txn(store, devicelock.redate(devicelock.new_tag(ttl=60), store.now))
    devicelock.acquire(holder, ttl=60, timeout=0)
    start = store.now
    devicelock.extend(holder, 60, 200, "commit")
    assert "%s-x%d" % (holder.tag, start + 201) in store.objects
    for ttl in (60, 1800):
        store.now = start + 150   # 150 s without a renewal: past the holder's 60 s TTL, inside the extension
        other = Txn(store, devicelock.new_tag(ttl=ttl))
        with pytest.raises(devicelock.LockHeldError):
            devicelock.acquire(other, ttl=ttl, timeout=0)
    devicelock.extend(holder, 60, 300, "abort")   # a second extension replaces the first
    assert sorted(n for n in store.objects if "-x" in n) == ["%s-x%d" % (holder.tag, start + 451)]
    store.now = start + 452
    notes = devicelock.acquire(Txn(store, devicelock.new_tag(ttl=1800)), ttl=1800, timeout=0)
    assert "not renewed within the 60s lock TTL" in notes[0] and not any(n.startswith(holder.tag) for n in store.objects)
    # the marker's objects group under the run: an extension is never read as a hold of its own
    runs = devicelock.group({holder.tag: "", holder.tag + "-x123": ""})
    assert [(m.name, m.extended) for m in runs] == [(holder.tag, 123)]


def test_a_line_inside_a_block_is_never_cut_from_its_parent_mode():
    """Renewing means leaving config mode, which would lose a nested line's mode (NX-OS `  pause pfc-cos 3` under
    its class): such a line goes out while the lease has not run out; past it, the run stops."""
    class Conn(object):
        def exit_config_mode(self):
            raise AssertionError("left config mode inside a block")
    io = _Io(60)
    io.clock[0] = 55   # 5 s left: a top-level line would renew first; a nested one goes out
    io.io.fence("stage", "    pause pfc-cos 3", conn=Conn())
    assert io.renewed == []
    io.clock[0] = 61
    with pytest.raises(io.LockLost):
        io.io.fence("stage", "    pause pfc-cos 3", conn=Conn())
