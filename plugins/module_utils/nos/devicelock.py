# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lock every controller sees: a lease held through named objects on the device itself (the rule, the names, the
lease by the device's clock, ended and stale markers: docs/switches.md#locks). None of the CLIs we drive offers a
configuration lock an SSH client can take, so the lock is an object the run creates on the device; a NOS gives it a
*marker store* (``MarkerStore``: its transaction object), everything else is here. A run holds the lock only when,
after creating its own marker, it sees no live marker of another run; otherwise it removes its own, waits a random
moment and tries again: whichever run created its marker second always sees the first. The objects of one run share
its name as a prefix: ``-l<device epoch>`` a lease renewal, ``-x<device epoch>`` a lease extension (``extend``),
``-d`` a drain record (nos/drain.py), ``-c``/``-rb`` an EOS work session.
"""

from __future__ import annotations

import calendar
import functools
import hashlib
import os
import random
import re
import socket
import time

from ansible_collections.aifabric.roce.plugins.module_utils.nos.errors import StepError

# the run's lease time is in its name (``-t<seconds>``): every controller ages a marker by its holder's TTL
NAME_RE = re.compile(r"^aif-(\d{12})-([a-z0-9]{1,10})-([0-9a-f]{6})-(\d{1,7})-([0-9a-f]{3})(?:-t(\d{2,5}))?$")
# earlier versions: no machine part (never judged by pid), and EOS `aif-<pid>-<ms>` sessions
OLD_NAME_RE = re.compile(r"^aif-(\d{12})-([a-z0-9]{1,10})-(\d{1,7})-([0-9a-f]{3})$")
LEGACY_RE = re.compile(r"^aif-\d+-\d+$")
PART_RE = re.compile(r"^(aif-[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*?)(-c|-rb|-d|-l\d{1,12}|-x\d{1,12})?$")

# the bounds of the lease (seconds), checked before anything is sent (check_bounds)
TTL_MIN, TTL_MAX = 60, 86400
# a marker dated more than this after the device's clock means the clock was stepped back (a few seconds are the
# listing's own round trip and clock granularity)
CLOCK_SLACK = 5
DRAIN_WAIT_MIN, DRAIN_WAIT_MAX = 0, 600

# tags of the runs active in this process (a test runs several Appliers in one process)
ACTIVE = set()


class MarkerStore(object):
    """What a NOS gives the device lock (each transaction class implements it on its own objects)."""
    # how an engineer removes a hold on this NOS, with a {name} placeholder (said in a refusal); None: by hand
    hold_removal = None

    def listing(self):
        """(device clock in epoch seconds, {name: detail}) of every ``aif-*`` lock object, one round trip."""
        raise NotImplementedError

    def make(self, name):
        """Create the object ``name``; raise StepError when it exists or cannot be created."""
        raise NotImplementedError

    def drop(self, name):
        """Remove the object ``name`` (no error when it is already gone)."""
        raise NotImplementedError


def _read(path):
    try:
        with open(path) as fh:
            return fh.read().strip()
    except (IOError, OSError):
        return ""


@functools.lru_cache(maxsize=None)
def machine_key():
    """6 hex digits naming this machine + boot + PID namespace (+ host name). Without a boot id (not Linux)
    a random value per process: then no other process's marker is ever judged by its pid."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        pidns = "%d:%d" % (os.stat("/proc/self/ns/pid").st_dev, os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        pidns = ""
    if not boot or not pidns:
        boot, pidns = "%032x" % random.getrandbits(128), str(os.getpid())
    seed = "|".join((_read("/etc/machine-id"), boot, pidns, socket.gethostname()))
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:6]


def controller_id():
    """A readable hint (first 10 lowercase alphanumerics of the host name): NOT an identity, see machine_key."""
    host = re.sub(r"[^a-z0-9]", "", socket.gethostname().lower())
    return (host or "ctrl")[:10]


def new_tag(now=None, rand=None, ttl=None):
    """A run's name, dated ``now`` (the device's clock when known, else this controller's), with its lease time
    ``ttl`` (seconds) when given, so that every other controller judges it by this run's TTL."""
    now = time.time() if now is None else now
    rand = random.randrange(0x1000) if rand is None else rand
    return "aif-%s-%s-%s-%d-%03x%s" % (time.strftime("%y%m%d%H%M%S", time.gmtime(now)), controller_id(), machine_key(),
                                       os.getpid() % 10000000, rand, "-t%d" % ttl if ttl else "")


def redate(tag, now):
    """``tag`` with its date replaced by ``now`` (the device's clock at lock time)."""
    return re.sub(r"^aif-\d{12}-", "aif-%s-" % time.strftime("%y%m%d%H%M%S", time.gmtime(now)), tag)


# a lease must outlast the longest single command by this much (the listing's round trip, a renewal's)
LEASE_MARGIN = 30


def lease_covers(lock_ttl, read_timeout, ttl_key="lock_ttl", read_key="read_timeout"):
    """The lease must outlast the longest single command by LEASE_MARGIN (one problem naming both keys)."""
    numbers = [v for v in (lock_ttl, read_timeout) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) == 2 and lock_ttl < read_timeout + LEASE_MARGIN:
        return ["%s is %s: it must exceed %s (%s, the longest a single switch command may run) by %d seconds, or "
                "another controller could take the lock while one command runs. Fix: raise %s or lower %s"
                % (ttl_key, lock_ttl, read_key, read_timeout, LEASE_MARGIN, ttl_key, read_key)]
    return []


def check_bounds(lock_ttl, drain_wait, ttl_key="lock_ttl", wait_key="drain_wait", read_timeout=None,
                 read_key="read_timeout"):
    """Problems with the lease and drain bounds (before anything is sent), each naming the key. The lease must
    outlast the longest single command (``read_timeout``, how long one may run) by LEASE_MARGIN: a command is
    never sent unless the lease covers it to its end (a GCU apply-patch runs as one command)."""
    out = lease_covers(lock_ttl, read_timeout, ttl_key, read_key) if read_timeout is not None else []
    for key, value, low, high, what in ((ttl_key, lock_ttl, TTL_MIN, TTL_MAX, "the device lock's lease time"),
                                        (wait_key, drain_wait, DRAIN_WAIT_MIN, DRAIN_WAIT_MAX,
                                         "the wait after a drain and after the change")):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            out.append("%s must be a number of seconds (%s), not %r" % (key, what, value))
        elif not low <= value <= high:
            out.append("%s is %s: it must be between %d and %d seconds (%s)" % (key, value, low, high, what))
    return out


class Marker(object):
    """One run's objects on the device: ``name`` (the run's tag), ``parts`` (suffixes seen: "" for the
    marker itself, "-d", "-l<epoch>", ...), ``created``/``controller``/``machine``/``pid`` parsed from a name
    of ours (None for an undated ``aif-*`` object), ``detail`` what the device shows."""

    def __init__(self, name, detail="", parts=("",)):
        self.name, self.detail = name, detail
        self.parts = set(parts)
        self.created = self.controller = self.machine = self.pid = self.ttl = None
        m, old = NAME_RE.match(name), OLD_NAME_RE.match(name)
        if m:
            self.created = calendar.timegm(time.strptime(m.group(1), "%y%m%d%H%M%S"))
            self.controller, self.machine, self.pid = m.group(2), m.group(3), int(m.group(4))
            self.ttl = int(m.group(6)) if m.group(6) else None
        elif old:
            self.created = calendar.timegm(time.strptime(old.group(1), "%y%m%d%H%M%S"))
            self.controller, self.pid = old.group(2), int(old.group(3))

    def renewed_by(self, now):
        """The latest date of this run's objects that is not after the device's clock ``now`` (a renewal
        written after the switch's clock was stepped back), else the latest of all."""
        if self.created is None:
            return None
        dates = [self.created] + [int(p[2:]) for p in self.parts if p.startswith("-l")]
        past = [d for d in dates if d <= now + CLOCK_SLACK]
        return max(past) if past else max(dates)

    def ahead(self, now):
        """Seconds by which every date of this run is after the device's clock ``now`` (0 when one is not):
        the switch's clock was stepped back since the run dated its objects."""
        if self.created is None:
            return 0
        first = self.renewed_by(now)
        return first - now if first > now + CLOCK_SLACK else 0

    @property
    def drained(self):
        return "-d" in self.parts

    def objects(self):
        return [self.name + p for p in sorted(self.parts)]

    def age(self, now):
        return None if self.created is None else now - self.renewed_by(now)

    def describe(self, now=None):
        if self.created is None:
            return "%s (%s)" % (self.name, self.detail or "undated")
        extra = ", " + self.detail if self.detail else ""
        held = "machine %s, " % self.machine if self.machine else ""
        held += "lease %ds, " % self.ttl if self.ttl else ""
        age = ", %ds since its last renewal by the device's clock" % self.age(now) if now is not None else ""
        if now is not None and self.ahead(now):
            age = (", dated %ds AFTER the device's clock: the switch's clock was stepped back since that run wrote "
                   "it (NTP or by hand), so its age cannot be read from the device's clock" % self.ahead(now))
        drained = ", drain record: the switch was drained by it" if self.drained else ""
        if self.extended is not None:
            drained += ", its lease extended until the device's time %s for one long command" % _stamp(self.extended)
        return "%s (controller %s, %spid %d%s%s%s)" % (self.name, self.controller, held, self.pid, age, drained, extra)

    def ended(self):
        """True when the run that made it cannot be running: its marker object is gone (only its leftovers
        are listed), or this machine and PID namespace made it and the process is gone (or, in this very
        process, the run finished). Never judged by pid for another machine or namespace."""
        if "" not in self.parts:
            return True
        if self.machine is None or self.machine != machine_key():
            return False
        if self.pid == os.getpid() % 10000000:
            return self.name not in ACTIVE
        return not _pid_alive(self.pid)

    def lease(self, ttl):
        """The lease this marker is judged by: its holder's own TTL when its name records it (a controller with a
        shorter TTL never takes a live run's lock early), else ``ttl`` (a marker of an earlier version)."""
        return self.ttl or ttl

    @property
    def extended(self):
        """The device time until which the run extended its lease for one long command (``-x<epoch>``), or None."""
        ends = [int(p[2:]) for p in self.parts if p.startswith("-x")]
        return max(ends) if ends else None

    def stale(self, ttl, now):
        """Not renewed within its holder's TTL (``ttl`` when the name does not record it) of the device's clock
        ``now``, nor extended past ``now``. An undated object is never stale: it is someone's hold (removed by hand),
        not a run of ours."""
        if self.created is None or (self.extended is not None and now <= self.extended):
            return False
        return now - self.renewed_by(now) > self.lease(ttl)

    def release_hint(self, ttl, now, removal=None):
        """What releases this marker, exactly (for a refusal)."""
        ttl = self.lease(ttl)
        how = ("remove it (%s)" % removal.format(name=self.name)) if removal else "remove it by hand"
        if self.created is None:
            return ("%s is an undated aif-* object, a hold someone placed by hand: it never expires; %s to release "
                    "the switch" % (self.name, how))
        if self.ahead(now):
            return ("%s is released when its run renews it (then it is aged from that renewal), when it goes "
                    "%ds without a renewal while a run waits for it (lock_timeout of at least lock_ttl), at the "
                    "device's time %s at the latest (its date plus lock_ttl), or when someone who knows that run "
                    "is dead will %s" % (self.name, ttl, _stamp(self.renewed_by(now) + ttl), how))
        return ("%s is released when its run ends, or when it is not renewed for %ds by the device's clock "
                "(%s; at the device's time %s if never renewed again), or when someone who knows "
                "that run is dead will %s" % (self.name, ttl, "its holder's lock_ttl" if self.ttl else "lock_ttl of this run",
                                              _stamp(self.renewed_by(now) + ttl), how))


def group(names):
    """{object name: detail} -> [Marker], one per run (its marker, leases, drain record, work sessions)."""
    runs = {}
    for name, detail in sorted(names.items()):
        m = PART_RE.match(name)
        run, part = (m.group(1), m.group(2) or "") if m else (name, "")
        if not (NAME_RE.match(run) or OLD_NAME_RE.match(run) or LEGACY_RE.match(run)):
            run, part = name, ""   # an aif-* object of another shape: one hold of its own
        entry = runs.setdefault(run, [set(), []])
        entry[0].add(part)
        if detail:
            entry[1].append(detail)
    return [Marker(run, "; ".join(dict.fromkeys(details)), parts) for run, (parts, details) in sorted(runs.items())]


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# a write goes out only with at least this much of the lease left beyond its own run time (seconds)
FENCE_MARGIN = 10


class Lease(object):
    """This run's lease as the controller knows it: ``confirm(t)`` when the device proved the marker ours by a
    listing sent at monotonic time ``t`` (the device renews or checks it then, at the latest); ``left()`` the
    seconds of the TTL left by this controller's monotonic clock (None before the lock is held), or of an extension
    (``extended(t, seconds)``: the device holds the lock ``seconds`` from a listing sent at ``t``) when longer.
    Another controller can take the lock only after the TTL has passed on the device's clock since that listing,
    and never before an extension's end."""

    def __init__(self, ttl, monotonic=time.monotonic, renew=None, extend=None):
        self.ttl, self.monotonic, self.confirmed, self.until = ttl, monotonic, None, None
        self.renew = renew     # renew(step): check and renew it on the device (raises when it was taken)
        self.extend = extend   # extend(step, seconds): check it and extend it on the device that long (same)

    def confirm(self, at):
        self.confirmed = at

    def extended(self, at, seconds):
        self.confirmed, self.until = at, at + seconds

    def left(self):
        if self.confirmed is None:
            return None
        now = self.monotonic()
        return max(self.ttl - (now - self.confirmed), (self.until - now) if self.until is not None else 0)


class LockHeldError(Exception):
    """Another run holds the device lock past the wait: nothing was sent."""


class LockLostError(StepError):
    """This run's lock was taken by another run (it was not renewed within the TTL): stop, touch nothing. A
    StepError, so the flow reports its step."""


def markers(store):
    """(device clock, [Marker]) read in one round trip."""
    now, names = store.listing()
    return now, group(names)


def acquire(txn, ttl=1800, timeout=300, notes=None, sleep=time.sleep, monotonic=time.monotonic, confirmed=None):
    """Take the device lock through ``txn`` (a MarkerStore with ``tag`` and ``recover(marker)``). The tag
    is re-dated by the device's clock first. Returns the notes (recovered or unremovable markers).
    Raises LockHeldError naming the holder when a live marker of another run stays past ``timeout``."""
    with txn.shell_session():   # one hop for the lock's steps where the NOS needs one (klish -> Linux shell)
        notes = notes if notes is not None else []
        txn.drain_records = []
        end = monotonic() + timeout
        now, _names = txn.listing()
        if NAME_RE.match(txn.tag):
            txn.tag = redate(txn.tag, now)
        ACTIVE.add(txn.tag)
        skipped = set()
        watched = {}   # a marker dated after the device's clock -> (its objects, when this run first saw them so)
        while True:
            txn.make(txn.tag)
            listed = monotonic()
            now, seen = markers(txn)
            others = [m for m in seen if m.name != txn.tag and m.name not in skipped]
            unrenewed = set()
            for m in others:
                if m.ahead(now):
                    parts, since = watched.setdefault(m.name, (frozenset(m.parts), monotonic()))
                    if parts != frozenset(m.parts):
                        watched[m.name] = (frozenset(m.parts), monotonic())
                    elif monotonic() - since > m.lease(ttl):
                        unrenewed.add(m.name)
            gone = [m for m in others if m.ended() or m.stale(ttl, now) or m.name in unrenewed]
            live = [m for m in others if m not in gone]
            if not live:
                for m in gone:
                    why = ("its run ended" if m.ended() else "not renewed within the %ds lock TTL" % m.lease(ttl)
                           if m.name not in unrenewed else
                           "the switch's clock was stepped back %ds and the run did not renew it for %ds of this "
                           "controller's own monotonic clock (lock TTL)" % (m.ahead(now), m.lease(ttl)))
                    try:
                        done = txn.recover(m)
                    except Exception as exc:  # noqa: BLE001 - e.g. another login user's file in a sticky /tmp
                        skipped.add(m.name)
                        notes.append("could not remove %s left by an earlier run (%s): %s; skipped it - remove it as "
                                     "the user that created it" % (m.describe(now), why, _first(exc)))
                        continue
                    notes.append("recovered %s left by an earlier run (%s): %s" % (m.describe(now), why, done))
                    if m.drained:
                        txn.drain_records.append(m)
                if confirmed is not None:
                    confirmed.append(listed)   # the lease is proved from this listing on
                return notes
            txn.drop(txn.tag)
            if monotonic() >= end:
                ACTIVE.discard(txn.tag)
                removal = txn.hold_removal
                runs = [m for m in live if m.created is not None]
                holds = [m for m in live if m.created is None]
                what = "; ".join(m.describe(now) for m in live)
                raise LockHeldError("%s the device lock: %s. %s" % (
                    "a hold blocks" if holds and not runs else "another run holds" if not holds else
                    "another run and a hold block", what,
                    "; ".join(m.release_hint(ttl, now, removal) for m in live)))
            sleep(random.uniform(0.1, 0.8))


def renew(txn, ttl, step="lock"):
    """Re-check that this run still holds the device lock and renew its lease when a third of the TTL has
    passed (by the device's clock). Raises LockLostError when the marker is gone (another run took it)."""
    with txn.shell_session():
        now, seen = markers(txn)
        mine = [m for m in seen if m.name == txn.tag and "" in m.parts]
        if not mine:
            raise LockLostError(step, None, "", "this run's device lock %s is gone at step %s: another run took it "
                                "(its lease was not renewed within the %ds lock TTL, e.g. the controller was "
                                "suspended); this run stops and touches nothing more" % (txn.tag, step, ttl))
        if mine[0].age(now) * 3 >= ttl or mine[0].ahead(now):   # after a clock step back: renew at once
            lease = "%s-l%d" % (txn.tag, now)
            txn.make(lease)
            for part in mine[0].parts:
                if part.startswith("-l") and txn.tag + part != lease:
                    txn.drop(txn.tag + part)
        return now


def extend(txn, ttl, seconds, step="lock"):
    """Before one command that may run longer than the TTL (NVUE's `nv config apply`, NX-OS's rollback): re-check
    that this run holds the lock and extend its lease to ``seconds`` from now by the device's clock, with an object
    ``<tag>-x<device epoch of its end>`` every controller honours whatever its own TTL (``Marker.stale``); earlier
    extensions are dropped. Raises LockLostError when the marker is gone. Returns the device's time."""
    with txn.shell_session():
        now = renew(txn, ttl, step)
        until = "%s-x%d" % (txn.tag, now + int(seconds) + 1)
        txn.make(until)
        _now, seen = markers(txn)
        for m in seen:
            if m.name == txn.tag:
                for part in m.parts:
                    if part.startswith("-x") and txn.tag + part != until:
                        txn.drop(txn.tag + part)
        return now


def record_drain(txn):
    """Write this run's drain record (``<tag>-d``) before the drain line is sent: a run killed from here
    on leaves the record, and the next run knows the drain is ours to take back."""
    txn.make(txn.tag + "-d")


def clear_drain(txn, tag=None):
    txn.drop((tag or txn.tag) + "-d")


def release(txn, notes=None, keep_drain=False):
    """Remove this run's objects (leases, then the marker last; the drain record too unless ``keep_drain``);
    returns False when one could not be removed (reported in ``notes`` as a leftover the next run
    recovers), never raises."""
    try:
        with txn.shell_session():
            _now, seen = markers(txn)
            mine = [m for m in seen if m.name == txn.tag]
            parts = sorted(mine[0].parts, key=lambda p: p == "") if mine else [""]   # the marker itself last
            for part in parts:
                if part != "-d" or not keep_drain:
                    txn.drop(txn.tag + part)
        return True
    except Exception as exc:  # noqa: BLE001 - the config is not affected; the next run recovers it
        if notes is not None:
            notes.append("lock marker %s could not be removed (%s); the next run recovers it" % (txn.tag, _first(exc)))
        return False
    finally:
        ACTIVE.discard(txn.tag)


def _stamp(epoch):
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def _first(exc):
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
