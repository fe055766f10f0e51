# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lock every controller sees: a marker object on the device itself.

None of the CLIs we drive offers a configuration lock an SSH client can take (EOS and NX-OS lock only
through NETCONF/eAPI sessions, NVUE, SONiC klish and FRR have none), so the lock is a named object the
run creates on the device (docs/switches.md#locks): EOS a configuration session, NX-OS a checkpoint,
the Linux-based NOSes (NVUE, Dell SONiC, AsterNOS, FRR) a marker file. Creation and listing are
serialised by the device, which gives mutual exclusion with this rule: a run holds the lock only when,
after creating its own marker, it sees no live marker of another run; otherwise it removes its own,
waits a random moment and tries again. Whichever run created its marker second always sees the first.

Every marker is named, dated and attributable: ``aif-<UTC yymmddHHMMSS>-<controller>-<pid>-<rand>``.
A marker is *dead* when its run cannot be alive (same controller, process gone or finished) and
*stale* past the TTL; both are recovered with a message naming the holder; a live one blocks until
the timeout, then the run is refused, naming it.
"""

from __future__ import annotations

import calendar
import os
import random
import re
import socket
import time

PREFIX = "aif-"
NAME_RE = re.compile(r"^aif-(\d{12})-([a-z0-9]{1,10})-(\d{1,7})-([0-9a-f]{3})$")

# tags of the runs active in this process (a test runs several Appliers in one process)
ACTIVE = set()


def controller_id():
    """Short, CLI-safe name of this controller (hostname, lowercased alphanumerics, 10 chars)."""
    host = re.sub(r"[^a-z0-9]", "", socket.gethostname().lower())
    return (host or "ctrl")[:10]


def new_tag(now=None, rand=None):
    now = time.time() if now is None else now
    rand = random.randrange(0x1000) if rand is None else rand
    return "aif-%s-%s-%d-%03x" % (time.strftime("%y%m%d%H%M%S", time.gmtime(now)), controller_id(),
                                  os.getpid() % 10000000, rand)


class Marker(object):
    """One marker seen on the device: ``name`` as listed; ``created``/``controller``/``pid`` parsed
    from a name of ours (None for a foreign or older-format object); ``detail`` what the device shows."""

    def __init__(self, name, detail=""):
        self.name, self.detail = name, detail
        m = NAME_RE.match(name)
        self.created = self.controller = self.pid = None
        if m:
            self.created = calendar.timegm(time.strptime(m.group(1), "%y%m%d%H%M%S"))
            self.controller, self.pid = m.group(2), int(m.group(3))

    def ours(self):
        return self.name.startswith(PREFIX)

    def describe(self, now=None):
        now = time.time() if now is None else now
        if self.created is None:
            return "%s (%s)" % (self.name, self.detail or "undated")
        extra = ", " + self.detail if self.detail else ""
        return "%s (controller %s, pid %d, %ds old%s)" % (self.name, self.controller, self.pid, now - self.created, extra)

    def dead(self):
        """True when the run that made it cannot be running: same controller and its process is gone,
        or this very process with the run finished."""
        if self.controller is None or self.controller != controller_id():
            return False
        if self.pid == os.getpid() % 10000000:
            return self.name not in ACTIVE
        return not _pid_alive(self.pid)

    def stale(self, ttl, now=None):
        now = time.time() if now is None else now
        return self.created is None or now - self.created > ttl


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LockHeldError(Exception):
    """Another run holds the device lock past the wait: nothing was sent."""


def acquire(txn, ttl=1800, timeout=300, notes=None, sleep=time.sleep, clock=time.time):
    """Take the device lock through ``txn`` (``mark()``, ``markers()``, ``unmark(name)``,
    ``recover(marker)``). Returns the list of recovered markers' descriptions. Raises LockHeldError
    naming the holder when a live marker of another run stays past ``timeout`` seconds."""
    notes = notes if notes is not None else []
    end = clock() + timeout
    ACTIVE.add(txn.tag)
    while True:
        txn.mark()
        others = [m for m in txn.markers() if m.name != txn.tag]
        gone = [m for m in others if m.dead() or m.stale(ttl, clock())]
        live = [m for m in others if m not in gone]
        if not live:
            for m in gone:
                why = "its run ended" if m.dead() else "older than the %ds lock TTL" % ttl
                notes.append("recovered %s left by an earlier run (%s): %s" % (m.describe(clock()), why, txn.recover(m)))
            return notes
        txn.unmark(txn.tag)
        if clock() >= end:
            ACTIVE.discard(txn.tag)
            raise LockHeldError("another run holds the device lock: %s; it expires %ds after it was taken "
                                "(lock_ttl), or remove it once that run is known dead"
                                % ("; ".join(m.describe(clock()) for m in live), ttl))
        sleep(random.uniform(0.1, 0.8))


def release(txn, notes=None):
    """Remove this run's marker; returns False when it could not (reported in ``notes`` as a leftover
    the next run recovers), never raises."""
    try:
        txn.unmark(txn.tag)
        return True
    except Exception as exc:  # noqa: BLE001 - the config is not affected; the next run recovers it
        if notes is not None:
            notes.append("lock marker %s could not be removed (%s); the next run recovers it" % (txn.tag, exc))
        return False
    finally:
        ACTIVE.discard(txn.tag)
