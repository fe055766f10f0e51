# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Undo and its proof (part of the switch path: nos/apply.py holds the flow): on a failed change, take it back by the
NOS's own mechanism or a computed reverse and prove it by reading the whole running config back; when someone else
changed the switch meanwhile, take back this run's own lines only, or touch nothing, and say what the switch holds.
``ApplyError`` is the one error the flow raises to its caller."""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import Changes, differences
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import sent_ops
from ansible_collections.aifabric.roce.plugins.module_utils.nos.devicelock import LockLostError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.lock import ForeignChange


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


class Undo(object):
    """The undo steps of Applier (nos/apply.py), which provides ``driver``, ``io``, ``read_image`` and the lock state."""

    def _failed(self, msg, err, rolled_back, **more):
        """The ApplyError ``msg`` of the failed step ``err`` (its step, command and the device's answer)."""
        return ApplyError(msg, list(self.attempted), err.output or str(err), rolled_back, step=err.step,
                          command=err.command, **more)

    def _foreign(self, txn, base, want):
        """Changes made by someone else since this run's base, or None (none, or nothing could be read:
        then the NOS's own undo proves itself by the read-back as before)."""
        if not txn.committed:
            return None   # the running config holds nothing of ours: dropping our staging touches nobody
        try:
            self.io.fresh("check")
            ch = Changes(base, want, self.read_image("check"), sent=sent_ops(self.attempted),
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
        undo = "undo failed (%s)" % undo_error if undo_error is not None else "undo: %s" % what
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
        raise self._failed(msg, err, restored, state=state, differs=differs, foreign=foreign_lines)

    def _lost_before_undo(self, txn, err):
        """Before any undo: this run must still hold the device lock; when another run took it, undoing could
        touch that run's change, so stop and say what this run had done."""
        if isinstance(err, LockLostError) or (self.device_lock and self._held is None):
            lost = err if isinstance(err, LockLostError) else None
        else:
            try:
                self._renew("undo")
                return
            except LockLostError as exc:
                lost = exc
            except Exception:  # noqa: BLE001 - unreachable: the undo below gets its reconnect windows
                return
        sent = "nothing of this run's change was sent" if not txn.committed else \
            "this run's change may be on the switch (it was sent)"
        msg = "apply failed on %s at %s; %s; NOT undone: %s" % (self.driver.name, err, sent, lost or
                                                                "this run no longer holds the device lock")
        raise self._failed(msg, err, None if not txn.committed else False)

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
                cmds = [c for c in self.driver.safe_reverse(want.managed, base.managed) if c.strip()]
                if cmds:
                    txn.push_reverse(cmds)
                got = self.read_image("prove")
                state = got.managed
                proven = got.paths() == ch.ours_only_undo_target()
                if proven and resave:
                    txn.save()
                outcome = ("this run's change was taken back and the foreign change kept (proven by reading the whole "
                           "running config back); NOT restored to the before-image, which would undo theirs"
                           if proven else "NOT restored: taking back this run's lines did not give the expected config: "
                           "%s" % differences(got, base))
            except Exception as exc:  # noqa: BLE001
                outcome = "NOT proven: taking back this run's lines failed (%s)" % exc
        msg = "apply failed on %s at %s; %s%s; %s" % (self.driver.name, err, named, stopped, outcome)
        raise self._failed(msg, err, False, state=state, differs=ch.describe(),
                           foreign=ch.foreign_added + ch.foreign_removed)
