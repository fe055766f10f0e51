# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors the planner raises for bad fabric intent.

Every problem names the key path (``fabric.addressing.rail_pools[2]``) and says what to fix,
so a user never has to read a traceback to correct an inventory.
"""

from __future__ import annotations


class FabricProblem(object):
    """One inconsistency in the fabric intent."""

    __slots__ = ("path", "message", "fix")

    def __init__(self, path, message, fix):
        self.path = path
        self.message = message
        self.fix = fix

    def __str__(self):
        return "%s: %s. Fix: %s" % (self.path, self.message, self.fix)

    def as_dict(self):
        return {"path": self.path, "message": self.message, "fix": self.fix}


class FabricError(Exception):
    """The fabric intent is invalid; carries every problem found, none applied."""

    def __init__(self, problems):
        self.problems = list(problems)
        Exception.__init__(self, self.render())

    def render(self):
        lines = ["fabric intent is invalid (%d problem%s, nothing was planned or applied):"
                 % (len(self.problems), "" if len(self.problems) == 1 else "s")]
        lines.extend("  - %s" % p for p in self.problems)
        return "\n".join(lines)

    def paths(self):
        return [p.path for p in self.problems]


def fail(path, message, fix):
    """Raise a FabricError for a single problem."""
    raise FabricError([FabricProblem(path, message, fix)])
