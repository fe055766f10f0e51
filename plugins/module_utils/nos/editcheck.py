# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The concurrent-edit check of a switch change (part of the switch path: nos/apply.py holds the flow; the record and
its window: nos/edits.py). A NOS whose transaction declares no ``edit_record`` gets a note that the check did not
run."""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.nos import edits
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import sent_ops
from ansible_collections.aifabric.roce.plugins.module_utils.nos.undo import ApplyError


class EditCheck(object):
    """The concurrent-edit steps of Applier (nos/apply.py), which provides ``driver`` and ``attempted``."""

    def _record_open(self, txn):
        """Before the image this run changes is read under its lock: where the NOS's record stands (NX-OS: the
        accounting log's last sequence number), so the window is exact. A failure only leaves the clock window."""
        try:
            txn.record_open()
        except Exception as exc:  # noqa: BLE001 - the clock places the window instead
            txn.notes.append("where %s stood before this run's read could not be read (%s): the concurrent-edit "
                             "window is placed by the device's clock" % (txn.edit_record, exc))

    def _record_clock(self, txn):
        """This run's window in the NOS's record (edits.Window) before the first write, or None with a note saying
        why."""
        if txn.edit_record is None:
            txn.notes.append("NOT checked for a concurrent edit overwritten while this run's line for it was in flight: "
                             "this collection reads no record of who changed what on %s (unverified; "
                             "docs/switches.md#concurrent-edits)" % self.driver.name)
            return None
        try:
            return txn.record_clock()
        except Exception as exc:  # noqa: BLE001 - the check is reported as not run, the change goes on
            txn.notes.append("NOT checked for a concurrent edit overwritten in flight: the device's clock could not "
                             "be read (%s)" % exc)
            return None

    def _overwritten(self, txn, window, base, want):
        """After the change is verified (and saved): the edits of someone else that the NOS recorded in this run's
        window and that the switch no longer holds, named with who, when, the key and their value (nos/edits.py).
        ``base``: the image read under the lock before the window's ``seen`` (an edit it holds, recorded up to there,
        was seen by this run, not lost in flight).
        Raises ApplyError (changed, nothing undone: this run's change is what it intended) when there is one."""
        if window is None:
            return
        final = want.paths()   # the verify read proved the running config equals want
        try:
            recorded = txn.recorded_edits(window, final)
        except Exception as exc:  # noqa: BLE001
            txn.notes.append("NOT checked for a concurrent edit overwritten in flight: %s could not be read (%s)"
                             % (txn.edit_record, exc))
            return
        sent = set()
        for op in sent_ops(self.attempted):
            for line in op.lines():
                sent.add(" > ".join(op.path[:-1] + (line,)))
                if op.kind == "unset":
                    sent.add(" > ".join(op.path[:-1] + ("no " + line,)))
        if sent and not any(e.path in sent for e in edits.settings(recorded) if window.opens(e)):
            txn.notes.append("NOT checked for a concurrent edit overwritten in flight: %s records none of this run's "
                             "own lines (command accounting off?)" % txn.edit_record)
            return
        lost = edits.overwritten(recorded, window.start, sent, final, read=(window.seen, base.paths()), by=window.by)
        if lost:
            raise ApplyError("applied and verified on %s, but this run %s; their value is NOT on the switch (this "
                             "run's is): nothing was undone; agree which value stands and re-apply it"
                             % (self.driver.name, "; ".join(edits.describe(e) for e in lost)),
                             list(self.attempted), "", False, step="concurrent edit",
                             foreign=[e.path for e in lost])
