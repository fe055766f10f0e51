# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The maintenance drain step (part of the switch path: nos/apply.py holds the flow): before a change that can
disturb forwarding, drain the switch by its driver's declared ``drain`` (nos/drain.py), wait, apply, wait, undrain,
proving by the read-back that the drain and the undrain moved exactly the drain setting; take back a drain an ended
run of ours left; read any drain on the switch for the plan."""

from __future__ import annotations

import time

from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock
from ansible_collections.aifabric.roce.plugins.module_utils.nos import drain as drainmod
from ansible_collections.aifabric.roce.plugins.module_utils.nos.errors import StepError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import differences
from ansible_collections.aifabric.roce.plugins.module_utils.nos.undo import ApplyError


class DrainStep(object):
    """The drain steps of Applier (nos/apply.py), which provides ``driver``, ``io``, ``read_image``, ``_transaction``,
    ``_renew``, ``_apply_held`` and the lock state."""

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
            with txn.shell_session():
                now, seen = devicelock.markers(txn)
        except Exception as exc:  # noqa: BLE001 - the drain is reported all the same
            state["by"] = "unknown: the device lock's objects could not be read (%s)" % exc
            return state
        recs = [m for m in seen if m.drained]
        state["records"] = [m.name + "-d" for m in recs]
        ended = [m for m in recs if m.ended() or m.stale(self.lock_ttl, now)]
        if ended:
            state["undrain"] = bool(self.driver.drain)
            state["by"] = ("this collection: run %s drained it and ended before undraining it; the next apply takes the "
                           "drain back" % ", ".join(m.describe(now) for m in ended))
        elif recs:
            state["by"] = "this collection: run %s is draining it now" % ", ".join(m.describe(now) for m in recs)
        else:
            state["by"] = "not this collection (no drain record of ours): left drained; undrain it by hand when done"
        return state

    # ------------------------------------------------------------------ apply

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
        if self.driver.drain and self.driver.drain.paths(self.driver, now.outside):
            try:
                got = self._push_drain(now, False)
                if save:
                    self._transaction().save()
            except StepError as exc:
                raise self._failed("run %s left %s drained and this run could not take the drain back (%s); the "
                                   "switch is still drained and its drain record stays: remove the drain line by hand "
                                   "or re-run" % (names, self.driver.name, exc), exc, None)
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
        if not self.driver.drain:
            return self.driver.drain.why
        if self.drain == "auto" and drainmod.single_homed_leaf(self.intent):
            return "a leaf: its hosts are single-homed on it, so there is no other path to drain them to"
        outside = self.before_image.outside if self.before_image is not None else ()
        return self.driver.drain.blocked(self.driver, before, outside)

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
        found = self.driver.drain.paths(self.driver, pre.outside)
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
            raise self._failed("apply failed on %s at %s (drain before the change: %s); nothing of the change was "
                               "sent; %s" % (self.driver.name, exc, ", ".join(why), undone), exc,
                               undone.startswith("undrained"))
        self.before_image = drained
        try:
            self._wait("drain wait")   # neighbours move traffic away (GSHUT -> local-preference 0)
            result = self._apply_held(txn, drained.managed, after, cmds, save, None)
        except (ApplyError, StepError) as exc:
            if isinstance(exc, StepError):   # the wait itself (the lock lost): nothing of the change was sent
                exc = self._failed("apply failed on %s at %s; nothing of the change was sent" % (self.driver.name, exc),
                                   exc, False)
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
            raise self._failed("the change on %s is applied and verified, but the switch is still drained: undrain "
                               "failed (%s); %s" % (self.driver.name, exc, self._left_drained()), exc, False)
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
        cmds = self.driver.drain.commands(self.driver, ref.managed, on)
        step = "drain" if on else "undrain"
        dtx = self._transaction()
        try:
            dtx.push_reverse(cmds)
        finally:
            dtx.cleanup()
        got = self.read_image(step)
        moved = self.driver.drain.paths(self.driver, got.outside if on else ref.outside)

        def rest(img):   # everything but the drain setting (a line, or a CONFIG_DB field in either state)
            return set(p for p in img.outside if not self.driver.drain.is_setting(self.driver, p))
        if got.managed != ref.managed or rest(got) != rest(ref) or len(moved) != 1 \
                or bool(self.driver.drain.paths(self.driver, got.outside)) != on:
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
            if not self.driver.drain.paths(self.driver, now.outside):
                self._close_drain(txn)
                return "undrained (no drain line left on the switch)"
            self._push_drain(now, False)
            self._close_drain(txn)
            return "undrained (the drain line was taken back, proven by reading the config back)"
        except Exception as exc:  # noqa: BLE001 - reported: the switch may still be drained
            return "NOT undrained: the switch may still announce GRACEFUL_SHUTDOWN (%s); %s" % (exc, self._left_drained())
