# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Concurrent edits this run overwrote (docs/switches.md#concurrent-edits). An engineer's edit of the very key this run
is sending, landing while our line is in flight, is overwritten by our line and leaves nothing a read-back could see:
only the NOS's own record of who changed what tells, which each transaction parses into ``Edit`` s
(nos/transactions.py); ``overwritten`` keeps those of someone else, in this run's window, that the switch no longer
holds."""

from __future__ import annotations

import calendar
import time
from collections import namedtuple

from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import _setting


MONTHS = dict((m, i) for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1))


def stamped(mon, day, hms, near=None, year=None):
    """A record's stamp (month name, day, "HH:MM:SS") as epoch seconds, the device clock read as UTC; None for an
    unknown month. Syslog stamps carry no year: one is dated in the year that puts it nearest ``near`` (the window's
    start), so a line of 1 January read in a window that opened on 31 December is the new year's, not a year old."""
    if mon not in MONTHS:
        return None
    rest = (MONTHS[mon], int(day)) + tuple(int(x) for x in hms.split(":")) + (0, 0, 0)
    if year is not None:
        return calendar.timegm((int(year),) + rest)
    this = time.gmtime(near).tm_year
    return min((calendar.timegm((y,) + rest) for y in (this - 1, this, this + 1)), key=lambda at: abs(at - near))


class Edit(namedtuple("Edit", "at user where path seq", defaults=(None,))):
    """One setting someone made, as the NOS recorded it: ``at`` the device's time (epoch seconds, the device clock
    read as UTC like ``transactions.device_clock``), ``user``, ``where`` (terminal, address), ``path`` the line
    with its parents (``interface Ethernet1/1 > mtu 1500``), as ``Driver.paths`` names a setting; ``seq`` the
    record's sequence number where the NOS prints one (NX-OS), else None."""
    __slots__ = ()


class Window(namedtuple("Window", "by start seen")):
    """Where this run's window lies in the NOS's record, ``by`` "seq" (the record's sequence numbers: exact) or "at"
    (the device's clock, whole seconds). ``start``: the first position that may hold someone else's edit this run
    could overwrite; ``seen``: up to which position an edit may predate the image this run read under its lock (one
    that image holds was seen and changed on purpose, not lost in flight)."""
    __slots__ = ()

    def position(self, edit):
        return edit.seq if self.by == "seq" else edit.at

    def opens(self, edit):
        """Whether ``edit`` lies in the window (a record without a sequence number never does by sequence)."""
        pos = self.position(edit)
        return pos is not None and pos >= self.start


def settings(edits):
    """Drop the records that only enter a block (NX-OS records ``interface X`` before ``interface X ; mtu N``):
    a path that is the parent of another record's path from the same terminal sets nothing by itself."""
    parents = set()
    for e in edits:
        parts = e.path.split(" > ")
        for i in range(1, len(parts)):
            parents.add((e.where, " > ".join(parts[:i])))
    return [e for e in edits if (e.where, e.path) not in parents]


def holds(edit, paths):
    """Whether a config whose paths are ``paths`` holds what ``edit`` set: its line (NX-OS shows some unsets,
    ``no switchport``, as lines), or for an unset (``no ...``) no line of that setting."""
    if edit.path in paths:
        return True
    if edit.path.rpartition(" > ")[2].startswith("no "):
        key = _setting(edit.path)
        return not any(_setting(p) == key for p in paths)
    return False


def overwritten(edits, since, sent_paths, final_paths, read=None, by="at"):
    """The edits of someone else, recorded at or after ``since`` (device epoch; by="seq": sequence number), that the
    switch no longer holds:
    for each setting (``fullconfig._setting``: parent and key, whatever the value), only the last such edit counts
    (a later edit by anyone replaced the earlier one); an edit identical to a line this run sent is this run's own.
    ``final_paths``: the paths of the running config read back after the change (the verified image).
    ``read``: (``until``, paths of the image this run read under its lock before ``since`` was taken). The record
    counts whole seconds, so an edit stamped up to ``until`` may predate that read: one the read already held was
    seen by this run and changed on purpose (a previous run finishing in the same second), not lost in flight.
    By sequence number the same ``read`` is exact: ``until`` is the last index after that read."""
    window = Window(by, since, None)
    last = {}
    for e in settings(edits):   # in the record's order
        if window.opens(e) and e.path not in sent_paths:
            last[_setting(e.path)] = e
    until, read_paths = read if read is not None else (None, ())
    lost = []
    for e in sorted(last.values(), key=window.position):
        if holds(e, final_paths):
            continue
        if until is not None and window.position(e) <= until and holds(e, read_paths):
            continue
        lost.append(e)
    return lost


def describe(edit):
    """``overwrote a concurrent edit by admin at 2026-11-28 23:40:01 (pts/3): interface Ethernet1/1 > mtu 1500``."""
    where = " (%s)" % edit.where if edit.where else ""
    return "overwrote a concurrent edit by %s at %s%s: %s" % (
        edit.user or "an unknown user", time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(edit.at)), where, edit.path)
