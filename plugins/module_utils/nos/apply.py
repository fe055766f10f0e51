# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The held flow of one switch change, for every NOS (the driver's ``transaction`` knows the mechanism; nothing here
names a NOS): read and plan (``Applier.plan`` -> ``Plan``), then under the controller's and the device's locks apply
inside the NOS's own transaction, verify the whole running config, save; on any failure undo and *prove* the undo by
reading the whole running config back. Its other jobs: nos/session.py, lock.py, devicelock.py, drainstep.py, undo.py,
editcheck.py. No Ansible and no netmiko import: the caller passes ``connect()``, a netmiko-like connection factory.
"""

from __future__ import annotations

import time

from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock
from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover as brownfield
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import SECTIONS
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drainstep import DrainStep
from ansible_collections.aifabric.roce.plugins.module_utils.nos.errors import StepError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.editcheck import EditCheck
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import Changes, differences, read
from ansible_collections.aifabric.roce.plugins.module_utils.nos.lock import (
    RECHECK_EVERY, DeviceLock, ForeignChange, StagingGuard)
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command
from ansible_collections.aifabric.roce.plugins.module_utils.nos.session import ConnectError, DeviceIO
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import RefusedError, check_safe
from ansible_collections.aifabric.roce.plugins.module_utils.nos.undo import ApplyError, Undo

__all__ = ["Applier", "ApplyError", "ConnectError", "Plan", "refusal"]


def refusal(driver, intent, qos, sections):
    """Why a change of ``sections`` on this driver is refused before anything is read or sent, or None: the driver's
    own refusal (what its NOS documents: AsterNOS's Easy RoCE), or a section it does not render (data, not a name
    check: each driver lists its ``sections``)."""
    why = driver.refuse(intent, qos, sections)
    if why:
        return why
    refused = [s for s in sections if s not in driver.sections]
    if refused:
        return ("section(s) %s not rendered by the %s driver (it renders %s); remove them from sections"
                % (", ".join(refused), driver.name, ", ".join(driver.sections)))
    return None


class Plan(object):
    """What a run would do on one switch, read-only: the managed views ``before`` (read) and ``after`` (rendered),
    ``ops`` (``Driver.diff``'s typed ops between them; ``commands`` is the NOS's view of them, ``Driver.commands``:
    what check mode shows and an apply sends), ``digest`` of the config read, ``drain`` (any drain on the switch:
    DrainStep.read_drain_state, None when not drained), ``takeover`` (what a first apply would replace: nos/takeover.py),
    ``fitted`` (what the switch's own machinery does with the rendered text: Driver.fit) and ``disruptions`` (what the
    change disturbs beyond its lines: Driver.disruptions).
    Reads as the tuple ``(before, after, commands)`` too."""

    def __init__(self, driver, before, after, ops, digest, drain, takeover, fitted=(), disruptions=()):
        self.driver, self.before, self.after, self.ops = driver, before, after, list(ops)
        self.digest, self.drain, self.takeover = digest, drain, takeover
        self.fitted, self.disruptions = list(fitted), list(disruptions)

    @property
    def commands(self):
        """The NOS's ``Command`` s for ``ops`` (``Driver.commands``), each knowing its op."""
        return self.driver.commands(self.ops)

    def __iter__(self):
        return iter((self.before, self.after, self.commands))

    def __getitem__(self, index):
        return tuple(self)[index]

    @property
    def undrain(self):
        """A drain an ended run of ours left, which the next apply takes back."""
        return bool(self.drain and self.drain.get("undrain"))


class Applier(DrainStep, Undo, EditCheck):
    def __init__(self, driver, connect, intent, qos, sections=SECTIONS, commit_timer=0, name_suffix=None,
                 read_timeout=120, reconnect_timeout=30, lock_key=None, lock_dir=None, lock_timeout=300, lock_ttl=1800,
                 device_lock=True, drain="never", drain_wait=5, recheck_every=RECHECK_EVERY):
        self.driver, self.intent, self.qos = driver, intent, qos
        self.sections = tuple(sections)
        self.commit_timer = int(commit_timer or 0)
        # named, dated and attributable: the device lock marker and every session/checkpoint of this run
        self.tag = devicelock.new_tag(ttl=lock_ttl) if not name_suffix else "aif-%s" % name_suffix
        self.io = DeviceIO(driver, connect, read_timeout, reconnect_timeout)
        self.lock_key, self.lock_dir, self.lock_timeout = lock_key, lock_dir, lock_timeout
        self.lock_ttl, self.device_lock = lock_ttl, device_lock
        # bounds first: a bad value is refused before anything is sent (devicelock.check_bounds)
        problems = devicelock.check_bounds(lock_ttl, drain_wait, read_timeout=read_timeout if device_lock else None)
        if problems:
            raise ValueError("; ".join(problems))
        # the lease as this controller knows it: no write goes out that the lease may not cover to its end
        self.io.lease = devicelock.Lease(lock_ttl, self._now, self._renew, self._extend) if device_lock else None
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

    @property
    def attempted(self):
        return self.io.attempted

    def _conn(self):
        return self.io.get()

    def close(self):
        self.io.close()

    def read_image(self, step="read"):
        return read(self.io, self.driver, self.intent, self.sections, step)

    def read(self):
        return self.read_image().managed

    @property
    def config_digest(self):
        return self.before_image.digest() if self.before_image is not None else None

    # ------------------------------------------------------------------ plan
    def plan(self):
        """Read the switch and plan the change (a Plan; nothing is sent)."""
        self.before_image = self.read_image("read")
        before = self.before_image.managed
        after = self.driver.render(self.intent, self.qos, self.sections)
        # what the switch's own machinery does with the rendered text (a SONiC buffer model, GCU's limits)
        after, self.fit_notes = self.driver.fit(after, self.before_image)
        self.drain_state = self.read_drain_state(self.before_image)
        ops = self.driver.diff(before, after)
        self.disruptions = self.driver.disruptions(self.before_image, ops)
        return Plan(self.driver, before, after, ops, self.config_digest, self.drain_state,
                    brownfield.find(self.driver, self.before_image, after, self.intent, self.sections),
                    self.fit_notes, self.disruptions)

    def apply(self, before, after, cmds, save=True, expected_digest=None):
        """Apply ``cmds`` (``Command`` s, or the plan's typed ops) under the locks, in the NOS's transaction."""
        try:
            cmds = self._sendable(cmds)
            with DeviceLock(self.lock_key or "device-%s" % self.tag, self.lock_dir, self.lock_timeout):
                return self._apply_locked(before, after, cmds, save, expected_digest)
        except RefusedError as exc:
            raise ApplyError("refused, nothing was changed: %s" % exc, list(self.attempted), str(exc), None, step="preflight")

    def _sendable(self, cmds):
        """Typed ops (``Plan.ops``: no string among them) rendered by ``Driver.commands``; a plain string refused by name
        (a ``Command`` without an op is the NOS's own framing its driver adds: ``exit``, ``end``)."""
        cmds = list(cmds)
        if cmds and not any(isinstance(cmd, str) for cmd in cmds):
            return self.driver.commands(cmds)
        plain = [cmd for cmd in cmds if not isinstance(cmd, Command)]
        if plain:
            raise RefusedError("command %r carries no op (a plain string: this run's own line would read back as "
                               "someone else's); pass Command objects from Driver.commands(ops) (nos/ops.py)" % plain[0])
        return cmds

    def _transaction(self):
        budget = 2 * self.io.read_timeout + 30
        return self.driver.transaction(self.driver, self.io, self.tag, self.commit_timer, budget, self.intent, self.sections)

    def _apply_locked(self, before, after, cmds, save, expected_digest):
        txn = self._transaction()
        if self.device_lock:
            try:
                proved = []
                self.notes = devicelock.acquire(txn, self.lock_ttl, self.lock_timeout, [], confirmed=proved)
                # held from the listing that proved it, at the latest (in this Applier's clock)
                self.io.lease.confirm(self._clock() - (time.monotonic() - proved[0]))
            except devicelock.LockHeldError as exc:
                raise RefusedError(str(exc))
            except StepError as exc:
                devicelock.release(txn)
                if isinstance(exc, ConnectError):
                    raise
                raise RefusedError("could not take the device lock: %s" % exc)
            self.tag, self._held = txn.tag, txn   # the tag is dated by the device's clock now
            if txn.recovered_ports and self.before_image is not None:
                # the recovery brought back up ports an ended run's NOS mechanism left down (a GCU patch): this run's
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

    def _now(self):
        return self._clock()   # looked up at each call: tests drive _clock

    def _renew(self, step):
        """Still ours? Renew the lease (by the device's clock) before a long step; stop when it was taken."""
        self._lease_step(lambda held: devicelock.renew(held, self.lock_ttl, step), self.io.lease.confirm)

    def _extend(self, step, seconds):
        """Still ours? Extend the lease ``seconds`` by the device's clock before one command longer than the TTL."""
        self._lease_step(lambda held: devicelock.extend(held, self.lock_ttl, seconds, step),
                         lambda started: self.io.lease.extended(started, seconds))

    def _lease_step(self, act, confirm):
        if not self.device_lock or self._held is None:
            return
        started = self._clock()
        try:
            act(self._held)
        except devicelock.LockLostError:
            self._held = None
            raise
        confirm(started)

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
        self._record_open(txn)   # where the NOS's record of who changed what stands before this read (NX-OS)
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

        saving, window = False, None
        try:
            self._renew("begin")   # before the change: still ours (a run suspended past its TTL stops here)
            window = self._record_clock(txn)
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
        self._overwritten(txn, window, base, want)
        return True
