# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Apply a driver's remediation inside the NOS's own transaction, verify the whole running config, save;
on any failure undo and *prove* the undo by reading the whole running config back.

One flow for every NOS: the driver's ``transaction`` class (nos/transactions.py) knows the NOS's
mechanism; nothing here names a NOS. No Ansible and no netmiko import: the caller passes ``connect()``,
a factory returning a netmiko-like connection.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time

from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock
from ansible_collections.aifabric.roce.plugins.module_utils.nos import drain as drainmod
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import SECTIONS
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import Changes, differences, image, paths
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import (
    RefusedError, StepError, check_safe, managed_reverse)


# seconds of line-by-line sending between two reads of the whole running config (StagingGuard): the window in
# which an operator's edit of a key this run sets later could still be overwritten (docs/switches.md)
RECHECK_EVERY = 1.0


class ConnectError(StepError):
    """The device could not be reached or logged into (TCP, SSH, authentication): nothing was sent."""

    def __init__(self, step, command, exc):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        StepError.__init__(self, step, command, "", "cannot connect (%s: %s)" % (type(exc).__name__, first))
        self.reason = "%s: %s" % (type(exc).__name__, first)


class ApplyError(Exception):
    """``rolled_back``: True only when the read-back proved the before-image; False when it proved a
    difference or could not read; None when nothing was sent (refused). ``foreign``: the lines someone
    else changed on the switch during this run (then only this run's own lines are ever taken back)."""

    def __init__(self, msg, attempted, device_error, rolled_back, state=None, step=None, command=None, differs=None,
                 foreign=None):
        Exception.__init__(self, msg)
        self.attempted = attempted
        self.device_error = device_error
        self.rolled_back = rolled_back
        self.state = state
        self.step, self.command, self.differs = step, command, differs
        self.foreign = foreign


class ForeignChange(StepError):
    """The switch changed under this run, by someone else (another controller, a CLI user)."""


class LockLost(StepError):
    """This run's device lock was taken by another run (not renewed within the TTL): touch nothing more."""


class StagingGuard(object):
    """Between the blocks of a push that the NOS applies line by line (NX-OS, klish), and before FRR's ``vtysh -f``:
    renew the device lock's lease at the house's cadence (a third of the TTL) and re-read the running config,
    stopping before the next line when someone else changed the switch since this run's read (an operator's
    value on a key this run is about to set would be overwritten otherwise). Due every ``every`` seconds."""

    def __init__(self, applier, base, want, every):
        self.applier, self.base, self.want, self.every = applier, base, want, float(every)
        self.checked = self.renewed = applier._clock()

    def due(self):
        now = self.applier._clock()
        return now - self.checked >= self.every or now - self.renewed >= self.applier.lock_ttl / 3.0

    def __call__(self, step):
        run = self.applier
        if run._clock() - self.renewed >= run.lock_ttl / 3.0:
            run._renew(step)   # still ours, the lease renewed by the device's clock (LockLost otherwise)
            self.renewed = run._clock()
        got = run.read_image(step)
        self.checked = run._clock()
        ch = Changes(self.base, self.want, got, sent=run.driver.ops(run.attempted))
        if ch.foreign:
            raise ForeignChange(step, None, "", "someone else changed the switch while this run was sending its "
                                "change; this run stopped before its next line, which could overwrite it: %s"
                                % ch.describe())


class DeviceLock(object):
    """Per-device lock on this controller (flock on a file per host:port): two runs of one controller queue
    here before they meet at the device lock (nos/devicelock.py), which is the one other controllers see.

    The directory is this user's own (mode 0700, owner checked, never a symlink) and the file is opened
    with O_NOFOLLOW and checked to be a regular file of ours, so a planted link is refused, not written."""

    def __init__(self, key, directory=None, timeout=300):
        self.directory = directory or os.path.join(tempfile.gettempdir(), "aifabric-switch-locks-%d" % os.getuid())
        self.path = os.path.join(self.directory, re.sub(r"[^A-Za-z0-9_.-]", "_", key) + ".lock")
        self.timeout, self.fd = timeout, None

    def _safe_directory(self):
        try:
            os.mkdir(self.directory, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(self.directory)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise RefusedError("the controller lock directory %s is not a directory owned by this user (uid %d): "
                               "refusing to use it" % (self.directory, os.getuid()))

    def _open(self):
        self._safe_directory()
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise RefusedError("the controller lock file %s is a symlink: refusing to follow it" % self.path)
            raise
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            os.close(fd)
            raise RefusedError("the controller lock file %s is not a regular file of this user" % self.path)
        return fd

    def __enter__(self):
        import fcntl
        self.fd = self._open()
        end = time.time() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except (IOError, OSError) as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.time() >= end:
                    holder = os.pread(self.fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"
                    os.close(self.fd)
                    raise RefusedError("another run holds the controller lock %s (%s) for more than %ss"
                                       % (self.path, holder, self.timeout))
                time.sleep(0.2)
        os.ftruncate(self.fd, 0)   # our own regular file (checked above), held under flock
        os.pwrite(self.fd, ("pid %d since %s" % (os.getpid(), time.strftime("%H:%M:%S"))).encode(), 0)
        return self

    def __exit__(self, *exc):
        import fcntl
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        return False


class DeviceIO(object):
    """Commands to one device; every failure becomes a StepError with the step, the command and the
    device's own text (or what netmiko's session log last saw, for a timeout)."""

    def __init__(self, driver, connect, read_timeout=120, reconnect_timeout=30):
        self.driver, self.connect = driver, connect
        self.read_timeout, self.reconnect_timeout = read_timeout, reconnect_timeout
        self.conn = None
        self.attempted = []

    def get(self):
        if self.conn is None:
            self.conn = self.connect()
        return self.conn

    def session(self, step, cmd):
        """The open session, or a ConnectError: a device that cannot be reached is not a device that
        failed a command, and the report lists it as unreachable."""
        try:
            return self.get()
        except Exception as exc:  # noqa: BLE001 - netmiko raises timeouts, auth and SSH errors alike
            self.conn = None
            raise ConnectError(step, cmd, exc)

    def close(self):
        if self.conn is not None:
            try:
                self.conn.disconnect()
            except Exception:  # noqa: BLE001 - the session may already be gone
                pass
            self.conn = None

    def fresh(self, step):
        """A new session in exec mode (the old one may be dead, in config mode, or mid-answer)."""
        self.close()
        end = time.time() + self.reconnect_timeout
        while True:
            try:
                return self.get()
            except Exception as exc:  # noqa: BLE001
                if time.time() >= end:
                    raise StepError(step, "connect", str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
                                    "could not reconnect within %ss" % self.reconnect_timeout)
                time.sleep(1)

    def _fail(self, step, cmd, exc, note=None):
        said = _log_tail(self.conn) or str(exc)
        self.close()   # never reuse a session whose state is unknown
        return StepError(step, cmd, said, note or "%s" % (type(exc).__name__,))

    def _check(self, step, cmd, out, ok=None, tolerate=None):
        pat = self.driver.error_pattern
        if pat and re.search(pat, out, re.M) and not (tolerate and re.search(tolerate, out)):
            raise StepError(step, cmd, out, "the device rejected it")
        if ok and not re.search(ok, out, re.M):
            raise StepError(step, cmd, out, "expected an answer matching %r" % ok)
        return out

    def run(self, step, cmd, ok=None, read_timeout=None, in_config=False, tolerate=None, fresh_on_error=False):
        reads = cmd.startswith("show ") or cmd.startswith("nv config show") or cmd == self.driver.show_running
        if not reads and "diff" not in cmd:
            self.attempted.append(cmd)
        try:
            conn = self.session(step, cmd)
        except ConnectError:
            if not fresh_on_error:
                raise
            conn = self.fresh(step)   # a device coming back (after a commit timer or a reload) gets its window
        try:
            # a command that leaves config mode changes the prompt: wait for any prompt end, not the old one
            kw = dict(expect_string=r"[>#\$]\s*$") if in_config else {}
            out = conn.send_command(cmd, read_timeout=read_timeout or self.read_timeout, **kw)
        except Exception as exc:  # noqa: BLE001
            if fresh_on_error:
                self.fresh(step)
                return self.run(step, cmd, ok, read_timeout, in_config, tolerate)
            raise self._fail(step, cmd, exc, _why(exc, read_timeout or self.read_timeout))
        return self._check(step, cmd, out, ok, tolerate)

    def configure(self, step, cmds, enter=None, leave=True):
        """Enter config mode (``enter`` command, the platform's default when None, none when False) and type
        each line, checking each answer: a rejected line stops the push there and names itself."""
        cmd = enter or "configure terminal"
        conn = self.session(step, cmd)
        try:
            if enter is not False:   # False: a shell-like CLI (NVUE) with no config mode
                conn.config_mode(enter) if enter else conn.config_mode()
                self.attempted.append(cmd)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(step, cmd, exc, "cannot enter config mode (%s)" % type(exc).__name__)
        for cmd in cmds:
            self.attempted.append(cmd)
            try:
                out = conn.send_config_set([cmd], enter_config_mode=False, exit_config_mode=False,
                                           read_timeout=self.read_timeout)
            except Exception as exc:  # noqa: BLE001
                raise self._fail(step, cmd, exc, _why(exc, self.read_timeout))
            try:
                self._check(step, cmd, out)
            except StepError:
                self.close()
                raise
        if leave:
            try:
                conn.exit_config_mode()
            except Exception as exc:  # noqa: BLE001
                raise self._fail(step, "end", exc)

    def save(self, step):
        cmd = self.driver.save_command or "save"
        self.attempted.append(cmd)
        conn = self.session(step, cmd)
        try:
            out = conn.save_config()
        except Exception as exc:  # noqa: BLE001
            raise self._fail(step, cmd, exc, _why(exc, self.read_timeout))
        return self._check(step, cmd, out)


def _why(exc, timeout):
    name = type(exc).__name__
    if "Timeout" in name:
        return "no answer within %ss (%s)" % (timeout, name)
    if isinstance(exc, (EOFError, OSError)) or "closed" in str(exc).lower() or "socket" in str(exc).lower():
        return "the session was lost (%s)" % name
    return "%s: %s" % (name, str(exc).strip().splitlines()[0] if str(exc).strip() else "")


def _log_tail(conn, chars=400):
    log = getattr(conn, "_aif_log", None)
    if log is None:
        return ""
    try:
        text = log.getvalue().decode("utf-8", "replace")
    except Exception:  # noqa: BLE001
        return ""
    return text[-chars:].strip()


class Applier(object):
    def __init__(self, driver, connect, intent, qos, sections=SECTIONS, commit_timer=0, name_suffix=None,
                 read_timeout=120, reconnect_timeout=30, lock_key=None, lock_dir=None, lock_timeout=300, lock_ttl=1800,
                 device_lock=True, drain="never", drain_wait=5, recheck_every=RECHECK_EVERY):
        self.driver, self.intent, self.qos = driver, intent, qos
        self.sections = tuple(sections)
        self.commit_timer = int(commit_timer or 0)
        # named, dated and attributable: the device lock marker and every session/checkpoint of this run
        self.tag = devicelock.new_tag() if not name_suffix else "aif-%s" % name_suffix
        self.io = DeviceIO(driver, connect, read_timeout, reconnect_timeout)
        self.lock_key, self.lock_dir, self.lock_timeout = lock_key, lock_dir, lock_timeout
        self.lock_ttl, self.device_lock = lock_ttl, device_lock
        # bounds first: a bad value is refused before anything is sent (devicelock.check_bounds)
        problems = devicelock.check_bounds(lock_ttl, drain_wait)
        if problems:
            raise ValueError("; ".join(problems))
        # maintenance drain (nos/drain.py): "auto" when the change can disturb forwarding, "always", "never"
        self.drain, self.drain_wait = drain, float(drain_wait)
        self.drained = None   # what the drain did on the last apply (reported by switch_config)
        self.drain_state = None   # any drain on the switch, read by plan() (reported by switch_config)
        self.fit_notes = []       # what plan() left to the switch's own machinery (driver.fit), and why
        self.disruptions = []     # what the planned change disturbs beyond its lines (driver.disruptions)
        # line-by-line NOSes: a read proving nobody else changed the switch at least this often while sending
        self.recheck_every = float(recheck_every)
        self._clock = time.monotonic   # the controller's clock for cadences (tests drive it)
        self._held = None        # the transaction holding the device lock (its marker store), while held
        self._drain_open = False  # our drain record is on the device and our drain line may be
        self.before_image = None
        self.notes = []

    # ------------------------------------------------------------------ compatibility helpers
    @property
    def attempted(self):
        return self.io.attempted

    def _conn(self, fresh=False):
        return self.io.fresh("connect") if fresh else self.io.get()

    def close(self):
        self.io.close()

    def read_image(self, step="read"):
        out = self.io.run(step, self.driver.show_running)
        try:
            return image(self.driver, out, self.intent, self.sections)
        except ValueError as exc:
            raise StepError(step, self.driver.show_running, out, str(exc))

    def read(self, fresh=False):
        if fresh:
            self.io.fresh("read")
        return self.read_image().managed

    @property
    def config_digest(self):
        return self.before_image.digest() if self.before_image is not None else None

    # ------------------------------------------------------------------ plan
    def plan(self):
        self.before_image = self.read_image("read")
        before = self.before_image.managed
        after = self.driver.render(self.intent, self.qos, self.sections)
        # what the switch's own machinery does with the rendered text (a SONiC buffer model, GCU's limits)
        after, self.fit_notes = self.driver.fit(after, self.before_image)
        self.drain_state = self.read_drain_state(self.before_image)
        cmds = self.driver.diff(before, after)
        self.disruptions = self.driver.disruptions(self.before_image, cmds)
        return before, after, cmds

    def read_drain_state(self, img):
        """Any drain on the switch (ours or an engineer's), read-only: the drain line(s) in the running config
        and, only when one is there, this collection's drain records (``<run>-d`` objects of the device lock),
        which tell a drain a killed or failed run of ours left from someone else's. None: not drained."""
        lines = drainmod.drained_by_anyone(self.driver, img.outside)
        if not lines:
            return None
        state = dict(drained=True, lines=lines, records=[], undrain=False)
        try:
            txn = self._transaction()
            with devicelock.batch(txn):
                now, seen = devicelock.markers(txn)
        except Exception as exc:  # noqa: BLE001 - the drain is reported all the same
            state["by"] = "unknown: the device lock's objects could not be read (%s)" % exc
            return state
        recs = [m for m in seen if m.drained]
        state["records"] = [m.name + "-d" for m in recs]
        ended = [m for m in recs if m.ended() or m.stale(self.lock_ttl, now)]
        if ended:
            state["undrain"] = drainmod.supported(self.driver)
            state["by"] = ("this collection: run %s drained it and ended before undraining it; the next apply takes the "
                           "drain back" % ", ".join(m.describe(now) for m in ended))
        elif recs:
            state["by"] = "this collection: run %s is draining it now" % ", ".join(m.describe(now) for m in recs)
        else:
            state["by"] = "not this collection (no drain record of ours): left drained; undrain it by hand when done"
        return state

    # ------------------------------------------------------------------ apply
    def _lock(self):
        return DeviceLock(self.lock_key or "device-%s" % self.tag, self.lock_dir, self.lock_timeout)

    def apply(self, before, after, cmds, save=True, expected_digest=None):
        try:
            with self._lock():
                return self._apply_locked(before, after, cmds, save, expected_digest)
        except RefusedError as exc:
            raise ApplyError("refused, nothing was changed: %s" % exc, list(self.attempted), str(exc), None, step="preflight")

    def _transaction(self):
        budget = 2 * self.io.read_timeout + 30
        return self.driver.transaction(self.driver, self.io, self.tag, self.commit_timer, budget, self.intent, self.sections)

    def _apply_locked(self, before, after, cmds, save, expected_digest):
        txn = self._transaction()
        if self.device_lock:
            try:
                self.notes = devicelock.acquire(txn, self.lock_ttl, self.lock_timeout, [])
            except devicelock.LockHeldError as exc:
                raise RefusedError(str(exc))
            except StepError as exc:
                devicelock.release(txn)
                if isinstance(exc, ConnectError):
                    raise
                raise RefusedError("could not take the device lock: %s" % exc)
            self.tag, self._held = txn.tag, txn   # the tag is dated by the device's clock now
            if txn.recovered_ports and self.before_image is not None:
                # the recovery brought back up ports an ended run's NOS mechanism left down (nos/gcu.py): this run's
                # own step, outside the managed view; the compare-and-swap goes on from here
                self.before_image = self.read_image("lock")
        try:
            if self.device_lock and txn.drain_records:
                self._take_back_drains(txn, txn.drain_records, save)
            result = self._apply_drained(txn, before, after, cmds, save, expected_digest) if cmds else True
        except ApplyError as exc:
            if self.device_lock and not self._release(txn) and exc.rolled_back:
                exc.rolled_back = False   # the config is restored, but our marker is still on the device
                exc.args = ("%s; but the lock marker %s is left on the device (the next run recovers it)"
                            % (exc, txn.tag),)
            self.notes = self.notes + txn.notes
            raise
        except BaseException:
            if self.device_lock:
                self._release(txn)
            raise
        if self.device_lock:
            self._release(txn)
        self.notes = self.notes + txn.notes
        return result

    def _release(self, txn):
        held, self._held = self._held, None
        if held is None and self.device_lock:
            return True   # lost to another run: it recovered our objects (a drain record stays for it)
        return devicelock.release(txn, txn.notes, keep_drain=self._drain_open)

    def _renew(self, step):
        """Still ours? Renew the lease (by the device's clock) before a long step; stop when it was taken."""
        if not self.device_lock or self._held is None:
            return
        try:
            devicelock.renew(self._held, self.lock_ttl, step)
        except devicelock.LockLostError as exc:
            self._held = None
            raise LockLost(step, None, "", str(exc))

    def _wait(self, step):
        """The drain wait, renewing the lease at least every third of the TTL."""
        end = time.monotonic() + self.drain_wait
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, self.lock_ttl / 3.0))
            self._renew(step)

    def _take_back_drains(self, txn, records, save):
        """Drain records of ended runs of ours (recovered with the lock): take their drain back first, proven,
        then remove the records. A switch without the drain line only loses the record."""
        names = ", ".join(m.name for m in records)
        now = self.read_image("undrain")
        if drainmod.supported(self.driver) and drainmod.drain_paths(self.driver, now.outside):
            try:
                got = self._push_drain(now, False)
                if save:
                    self._transaction().save()
            except StepError as exc:
                raise ApplyError("run %s left %s drained and this run could not take the drain back (%s); the switch is "
                                 "still drained and its drain record stays: remove the drain line by hand or re-run"
                                 % (names, self.driver.name, exc), list(self.attempted), exc.output or str(exc), None,
                                 step=exc.step, command=exc.command)
            if self.before_image is not None:
                self.before_image = got   # this run's own step: the compare-and-swap goes on from here
            self.notes.append("undrained the switch that run %s left drained (its drain record said so): proven by "
                              "reading the whole config back" % names)
        else:
            self.notes.append("removed the drain record of run %s: the switch holds no drain line" % names)
        for m in records:
            devicelock.clear_drain(txn, m.name)

    # ------------------------------------------------------------------ maintenance drain
    def _drain_reasons(self, before):
        if self.drain == "never":
            return []
        if self.drain == "always":
            return ["drain: always"]
        return drainmod.reasons(self.driver, before, self.intent, self.qos, self.sections) + \
            [d["message"] for d in self.disruptions]

    def _no_drain_because(self, before):
        """Why a change that calls for a drain goes on undrained, or None."""
        if not drainmod.supported(self.driver):
            return drainmod.why_not(self.driver)
        if self.drain == "auto" and drainmod.single_homed_leaf(self.intent):
            return "a leaf: its hosts are single-homed on it, so there is no other path to drain them to"
        return drainmod.blocked(self.driver, before, self.before_image.outside if self.before_image is not None else ())

    def _apply_drained(self, txn, before, after, cmds, save, expected_digest):
        """Drain, apply (verified, undone on failure), undrain: the drain is part of the transaction. Only
        the drain line moves in the drain and undrain steps, each proven by reading the whole config back."""
        why = self._drain_reasons(before)
        self.drained = None
        if not why:
            return self._apply_held(txn, before, after, cmds, save, expected_digest)
        skip = self._no_drain_because(before)
        if skip:
            self.drained = "not drained (%s): %s" % (", ".join(why), skip)
            self.notes.append(self.drained)
            return self._apply_held(txn, before, after, cmds, save, expected_digest)
        pre = self._unchanged(self.read_image("drain"), expected_digest)
        found = drainmod.drain_paths(self.driver, pre.outside)
        if found:
            self.drained = "the switch was already drained, not by this run (%s): left drained" % ", ".join(found)
            self.notes.append(self.drained)
            return self._apply_held(txn, before, after, cmds, save, None)
        try:
            self._renew("drain")
            if self.device_lock:
                devicelock.record_drain(txn)   # before the line: a run killed from here on is known as ours
                self._drain_open = True
            drained = self._push_drain(pre, True)
        except StepError as exc:
            undone = self._undrain_after_failure(txn)
            raise ApplyError("apply failed on %s at %s (drain before the change: %s); nothing of the change was sent; %s"
                             % (self.driver.name, exc, ", ".join(why), undone), list(self.attempted),
                             exc.output or str(exc), undone.startswith("undrained"), None, step=exc.step,
                             command=exc.command)
        self.before_image = drained
        try:
            self._wait("drain wait")   # neighbours move traffic away (GSHUT -> local-preference 0)
            result = self._apply_held(txn, drained.managed, after, cmds, save, None)
        except (ApplyError, StepError) as exc:
            if isinstance(exc, StepError):   # the wait itself (the lock lost): nothing of the change was sent
                exc = ApplyError("apply failed on %s at %s; nothing of the change was sent" % (self.driver.name, exc),
                                 list(self.attempted), exc.output or str(exc), False, None, step=exc.step,
                                 command=exc.command)
            undone = self._undrain_after_failure(txn)
            # "restored" now means the before-image of the whole run, read before the drain (an NX-OS
            # checkpoint taken with the lock already rolls the drain line back with the change)
            exc.rolled_back = False
            if exc.foreign is None and undone.startswith("undrained"):
                try:
                    exc.rolled_back = self.read_image("prove") == pre
                except Exception:  # noqa: BLE001 - unreadable: not proven
                    pass
            exc.args = ("%s; %s; %s" % (exc, undone, "restored: the whole running config read back equals the before-image "
                                        "read before the drain" if exc.rolled_back else "NOT restored to the before-image "
                                        "read before the drain"),)
            raise exc
        try:
            self._wait("drain wait")   # sessions the change reset come back before traffic returns
            self._renew("undrain")
            self._push_drain(self.read_image("undrain"), False)
            self._close_drain(txn)
            if save:
                self._transaction().save()
        except StepError as exc:
            raise ApplyError("the change on %s is applied and verified, but the switch is still drained: undrain failed "
                             "(%s); %s" % (self.driver.name, exc, self._left_drained()),
                             list(self.attempted), exc.output or str(exc), False, None, step=exc.step,
                             command=exc.command)
        self.drained = "drained (%s) for the change, undrained after it (proven)" % ", ".join(why)
        self.notes.append(self.drained)
        return result

    def _close_drain(self, txn):
        """The drain line is gone: remove this run's drain record (a record left behind is only cleaned up)."""
        if self._drain_open:
            try:
                devicelock.clear_drain(txn)
            except Exception as exc:  # noqa: BLE001 - the next run removes it (no drain line: nothing to undo)
                self.notes.append("drain record %s-d could not be removed (%s); the next run removes it" % (txn.tag, exc))
            self._drain_open = False

    def _left_drained(self):
        if self._drain_open:
            return ("its drain record %s-d stays on the switch: the next run of this collection takes the drain back "
                    "(or remove the drain line by hand)" % self.tag)
        return "remove the drain line by hand or re-run"

    def _push_drain(self, ref, on):
        """Add (``on``) or take back the drain line, then prove that exactly that line moved; returns the Image."""
        cmds = drainmod.commands(self.driver, ref.managed, on)
        step = "drain" if on else "undrain"
        dtx = self._transaction()
        try:
            dtx.push_reverse(cmds)
        finally:
            dtx.cleanup()
        got = self.read_image(step)
        moved = drainmod.drain_paths(self.driver, got.outside if on else ref.outside)

        def rest(img):   # everything but the drain setting (a line, or a CONFIG_DB field in either state)
            return set(p for p in img.outside if not drainmod.is_drain_setting(self.driver, p))
        if got.managed != ref.managed or rest(got) != rest(ref) or len(moved) != 1 \
                or bool(drainmod.drain_paths(self.driver, got.outside)) != on:
            raise StepError(step, "; ".join(cmds), "", "the config read back is not the %s plus only the drain line: %s"
                            % ("before-image" if on else "applied config", differences(got, ref)))
        return got

    def _undrain_after_failure(self, txn):
        """After a failed change: take our drain line back if the switch still holds it; never anything else.
        Not when this run lost its lock: the run that holds it now takes our drain back (our record says so)."""
        if self.device_lock and self._held is None:
            return ("NOT undrained: this run lost its device lock, so it touches nothing more; its drain record %s-d "
                    "stays, and the run that holds the lock now takes the drain back first" % self.tag)
        try:
            self.io.fresh("undrain")
            now = self.read_image("undrain")
            if not drainmod.drain_paths(self.driver, now.outside):
                self._close_drain(txn)
                return "undrained (no drain line left on the switch)"
            self._push_drain(now, False)
            self._close_drain(txn)
            return "undrained (the drain line was taken back, proven by reading the config back)"
        except Exception as exc:  # noqa: BLE001 - reported: the switch may still be drained
            return "NOT undrained: the switch may still announce GRACEFUL_SHUTDOWN (%s); %s" % (exc, self._left_drained())

    def _unchanged(self, image, expected_digest):
        """Compare-and-swap: ``image`` (read now) must still be what this run read, and what a reviewer saw."""
        if expected_digest and image.digest() != expected_digest:
            raise RefusedError("the running config changed since the reviewed check run (digest %s, expected %s)"
                               % (image.digest(), expected_digest))
        if self.before_image is not None and image != self.before_image:
            raise RefusedError("the running config changed since this run read it: %s" % differences(image, self.before_image))
        return image

    def _apply_held(self, txn, before, after, cmds, save, expected_digest):
        # compare-and-swap: the device must still be what this run read (and what a reviewer saw); read
        # under the device lock, so no other run of this collection can move it from here on
        base = self._unchanged(self.read_image("preflight"), expected_digest)
        if base.managed != before:
            raise RefusedError("the managed config changed since this run read it")
        check_safe(cmds, self.driver)
        want = self.driver.intended_image(base, after)
        # what a transaction may need to build the NOS's own change (CONFIG_DB: the device patch over the base)
        txn.prepare(base, want, cmds, StagingGuard(self, base, want, self.recheck_every))
        txn.preflight()

        def verify(step):
            got = self.read_image(step)
            if got != want:
                raise StepError(step, self.driver.show_running, "",
                                "the running config read back is not the before-image plus the intended change: %s"
                                % differences(got, want))

        def precheck(step):
            # just before a commit that copies a snapshot over the running config (EOS session, NVUE revision)
            self._renew(step)   # still ours, just before the commit
            got = self.read_image(step)
            if got != base:
                raise ForeignChange(step, None, "", "the running config changed since this run read it, by someone "
                                    "else; committing would overwrite it: %s" % Changes(base, want, got).describe())

        saving = False
        try:
            self._renew("begin")   # before the change: still ours (a run suspended past its TTL stops here)
            txn.begin()
            txn.stage(cmds)
            txn.commit(verify, precheck)
            if save:
                saving = True
                txn.save()
        except Exception as exc:  # noqa: BLE001 - every failure goes through undo + proof
            err = exc if isinstance(exc, StepError) else StepError("apply", None, str(exc), type(exc).__name__)
            self._undo_and_raise(txn, base, want, err, resave=saving)
        finally:
            txn.cleanup()
        return True

    def _foreign(self, txn, base, want):
        """Changes made by someone else since this run's base, or None (none, or nothing could be read:
        then the NOS's own undo proves itself by the read-back as before)."""
        if not txn.committed:
            return None   # the running config holds nothing of ours: dropping our staging touches nobody
        try:
            self.io.fresh("check")
            ch = Changes(base, want, self.read_image("check"), sent=self.driver.ops(self.attempted),
                         transient=txn.transient)
        except Exception:  # noqa: BLE001 - unreachable: the undo below gets its reconnect windows
            return None
        return ch if ch.foreign else None

    def _undo_and_raise(self, txn, base, want, err, resave):
        self._lost_before_undo(txn, err)
        foreign = self._foreign(txn, base, want)
        if foreign is not None:
            self._undo_ours_and_raise(txn, base, want, foreign, err, resave)
        undo_error, what, state, differs, restored, got = None, None, None, None, False, None
        for _attempt in (1, 2):   # a second attempt gives an unreachable device a second reconnect window
            try:
                what = txn.abort(lambda: self.read_image("abort").managed, base.managed)
                undo_error = None
                break
            except Exception as exc:  # noqa: BLE001
                undo_error = exc
        try:
            if undo_error is not None:
                self.io.fresh("prove")
            got = self.read_image("prove")
            state = got.managed
            differs = differences(got, base) if got != base else None
            txn.cleanup()
            left = txn.leftovers()
            restored = differs is None and not left
            if left:
                differs = ((differs + "; ") if differs else "") + "left on the device: " + ", ".join(left)
            if restored and resave:
                txn.save()   # startup may already hold the change: save the restored config over it
        except Exception as exc:  # noqa: BLE001
            differs = "could not read the config back to prove it: %s" % exc
        if undo_error is not None:
            undo = "undo failed (%s)" % undo_error
        else:
            undo = "undo: %s" % what
        if restored:
            claim = "restored: the whole running config read back equals the before-image"
        elif differs and differs.startswith("could not"):
            claim = "NOT proven restored: %s" % differs
        else:
            claim = "NOT restored: %s" % differs
        foreign_lines = None
        if isinstance(err, ForeignChange) and state is not None:
            ch = Changes(base, want, got)
            ours_in = len(ch.added & ch.got) + len(ch.removed - ch.got)
            foreign_lines = ch.foreign_added + ch.foreign_removed
            claim = ("someone else changed the switch before this run's commit (%s); this run's uncommitted change "
                     "was dropped and nothing of theirs was touched; %s" % (
                         ch.describe(), "%d line(s) of this run are on the switch (committed by them)" % ours_in
                         if ours_in else "no line of this run is on the switch"))
            restored = False
        msg = "apply failed on %s at %s; %s; %s" % (self.driver.name, err, undo, claim)
        raise ApplyError(msg, list(self.attempted), err.output or str(err), restored, state,
                         step=err.step, command=err.command, differs=differs, foreign=foreign_lines)

    def _lost_before_undo(self, txn, err):
        """Before any undo: this run must still hold the device lock; when another run took it, undoing could
        touch that run's change, so stop and say what this run had done."""
        if isinstance(err, LockLost) or (self.device_lock and self._held is None):
            lost = err if isinstance(err, LockLost) else None
        else:
            try:
                self._renew("undo")
                return
            except LockLost as exc:
                lost = exc
            except Exception:  # noqa: BLE001 - unreachable: the undo below gets its reconnect windows
                return
        sent = "nothing of this run's change was sent" if not txn.committed else \
            "this run's change may be on the switch (it was sent)"
        msg = "apply failed on %s at %s; %s; NOT undone: %s" % (self.driver.name, err, sent, lost or
                                                                "this run no longer holds the device lock")
        raise ApplyError(msg, list(self.attempted), err.output or str(err), None if not txn.committed else False,
                         step=err.step, command=err.command)

    def _undo_ours_and_raise(self, txn, base, want, ch, err, resave):
        """Someone else changed the switch during this run: never roll back to a before-image (that would
        undo them). Take back this run's own lines when no foreign line touches them, prove it, and say
        exactly what the switch holds; otherwise touch nothing more."""
        named = "a foreign change appeared during this run (%s)" % ch.describe()
        stopped = ""
        try:
            txn.confirm_timer()   # EOS: a running commit timer would restore the old config over theirs
        except Exception as exc:  # noqa: BLE001
            stopped = "; the commit timer could not be stopped (%s): EOS restores the config it replaced when it ends" % exc
        conflicts = ch.conflicts()
        state, proven = None, False
        if conflicts:
            outcome = ("NOT restored: it touches what this run changed (%s); nothing more was touched: the switch "
                       "holds this run's lines as applied plus the foreign change" % "; ".join(conflicts[:8]))
        else:
            try:
                # after -> before: commands on this run's lines only (a port is never removed)
                cmds = [c for c in managed_reverse(self.driver, want.managed, base.managed) if c.strip()]
                if cmds:
                    txn.push_reverse(cmds)
                got = self.read_image("prove")
                state = got.managed
                proven = paths(got) == ch.ours_only_undo_target()
                if proven and resave:
                    txn.save()
                outcome = ("this run's change was taken back and the foreign change kept (proven by reading the whole "
                           "running config back); NOT restored to the before-image, which would undo theirs"
                           if proven else "NOT restored: taking back this run's lines did not give the expected config: "
                           "%s" % differences(got, base))
            except Exception as exc:  # noqa: BLE001
                outcome = "NOT proven: taking back this run's lines failed (%s)" % exc
        msg = "apply failed on %s at %s; %s%s; %s" % (self.driver.name, err, named, stopped, outcome)
        raise ApplyError(msg, list(self.attempted), err.output or str(err), False, state, step=err.step,
                         command=err.command, differs=ch.describe(), foreign=ch.foreign_added + ch.foreign_removed)
