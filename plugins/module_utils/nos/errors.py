# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The error of one step on a device (which step, which command, what the device said): raised by sessions,
transactions and the device lock alike (nos/session.py, nos/transactions.py, nos/devicelock.py)."""

from __future__ import annotations


class StepError(Exception):
    """A step of the transaction failed: which step, which command, what the device said."""

    def __init__(self, step, command, output, note=None):
        self.step, self.command, self.output = step, command, (output or "").strip()
        text = "step %s, command %r" % (step, command) if command else "step %s" % step
        if note:
            text += ": %s" % note
        if self.output:
            text += "; device said: %s" % _tail(self.output)
        Exception.__init__(self, text)


def _tail(text, lines=4):
    rows = [r for r in text.strip().splitlines() if r.strip()]
    return " | ".join(rows[-lines:])
