# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One transaction class per NOS, each on the NOS's native mechanism (EOS configuration session with a commit timer,
NX-OS checkpoint, NVUE pending revision, klish / AsterNOS REST / FRR vtysh with a computed reverse of the managed view;
mechanisms and vendor sources: docs/switches.md#transactions). Every class has the same verbs (``Transaction``) and is
driven by nos/apply.py through an ``io`` (nos/session.py DeviceIO) whose failures are ``StepError`` s naming the step,
the command and the device's own answer. The NOS records of who changed what (nos/edits.py) are parsed here too.
"""

from __future__ import annotations

import base64
import calendar
import contextlib
import getpass
import re
import time

from ansible_collections.aifabric.roce.plugins.module_utils.nos.devicelock import (
    LockHeldError, MarkerStore, controller_id, machine_key)
from ansible_collections.aifabric.roce.plugins.module_utils.nos import asterlog, sudolog
from ansible_collections.aifabric.roce.plugins.module_utils.nos.edits import Edit, Window, stamped
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import _setting
from ansible_collections.aifabric.roce.plugins.module_utils.nos.errors import StepError


class RefusedError(Exception):
    """The device holds another operator's pending change: nothing was sent."""


# A reverse may only take back what we manage: never a whole physical interface. A Loopback or Vlan (SVI)
# interface is the underlay's own creation (section underlay, PBR on the SVI): it may go whole, since EOS keeps
# an emptied `interface VlanN` and prints it.
VIRTUAL_INTERFACE = r"(Loopback|loopback|Vlan|vlan)\d+"
FORBIDDEN = re.compile(r"^(no interface (?!%s\s*$)\S+\s*$|nv unset interface \S+\s*$)" % VIRTUAL_INTERFACE)


# ... except the virtual interfaces the underlay creates (SVI, loopback): taking those back is the undo.
CREATED = re.compile(r"^no interface (Vlan\d+|[Ll]oopback\d+)\s*$")


def removes_port(cmd):
    """A CLI command that removes a whole physical interface (a created loopback/SVI excepted)."""
    return bool(FORBIDDEN.match(cmd.strip()) and not CREATED.match(cmd.strip()))


def check_safe(cmds, driver=None):
    """Refuse a command list holding one that removes what a reverse must never remove: the driver's
    ``protected`` (nos/base.py) when given, else any NOS's whole-interface removal."""
    bad = [c for c in cmds if (driver.protected(c) if driver is not None else removes_port(c))]
    if bad:
        raise StepError("safety", bad[0], "", "refusing a command that removes a whole interface")


def blocks(cmds):
    """A command list -> its top-level blocks (a line without indent and the indented lines under it)."""
    out = []
    for cmd in cmds:
        if not out or not cmd[:1].isspace():
            out.append([])
        out[-1].append(cmd)
    return out


class Transaction(MarkerStore):
    """One run's change on one switch. Built with what it needs (``intent``, ``sections``); ``prepare(base, want,
    commands, guard)`` hands it the change before ``preflight``. Every attribute a caller reads is declared here, with
    the value that means "this NOS has none" (never probed with getattr)."""
    mechanism = "none"
    # what the caller may rely on after abort(): the NOS restores by itself (True) or we push a reverse
    native_undo = False
    # for a NOS that applies line by line: ``guard.due()`` says when, between two top-level blocks, ``guard(step)``
    # must run (renew the lease, re-read the switch and stop on someone else's change); None elsewhere
    guard = None
    base_image = None    # the Image this run started from (prepare)
    want_image = None    # the Image it intends (prepare)
    pending = ()         # the commands of the change (prepare)
    # paths the NOS's own mechanism moves while it applies the change and moves back at its end (GCU's port
    # admin-down around port-critical changes): never someone else's change
    transient = ()
    # the drain records (devicelock ``-d`` objects) of ended runs found when the lock was taken (devicelock.acquire)
    drain_records = ()
    # ports an ended run's change left down that the lock's recovery brought back up (a GCU patch's admin-down): the switch moved
    # since this run read it, by this run's own step
    recovered_ports = ()

    def __init__(self, driver, io, tag, commit_timer=0, verify_budget=60, intent=None, sections=()):
        self.driver, self.io, self.tag = driver, io, tag
        self.commit_timer = int(commit_timer or 0)
        self.verify_budget = int(verify_budget)
        self.intent, self.sections = intent, tuple(sections)
        self.committed = False    # the change reached the running config
        self.confirmed = False    # nothing left that the NOS could still undo by itself
        self.notes = []

    def prepare(self, base, want, commands, guard=None):
        """The change this transaction carries: the before-image, the intended image, the commands, and the guard
        between blocks (StagingGuard) on a NOS that applies line by line."""
        self.base_image, self.want_image, self.pending, self.guard = base, want, list(commands), guard

    def confirm_timer(self):
        """Stop a running commit timer keeping the running config (EOS, before taking back only this run's lines when
        someone else changed the switch: the timer would undo theirs too); nothing where the NOS has no timer."""
        return None

    @contextlib.contextmanager
    def shell_session(self, step="lock"):
        """One hop for several shell commands (the device lock's steps) where the NOS needs one (klish -> Linux
        shell); none elsewhere."""
        yield self

    # the device lock's marker store (listing/make/drop: devicelock.MarkerStore) is each NOS's own objects
    def recover(self, marker):
        """Clean what an ended or stale run left (its marker and its transaction objects); its drain record
        (``-d``) stays for the caller, which takes the drain back first. Returns what was done."""
        for name in marker.objects():
            if not name.endswith("-d"):
                self.drop(name)
        return "marker removed"

    def preflight(self):
        return None

    def begin(self):
        return None

    def stage(self, cmds):
        raise NotImplementedError

    def commit(self, verify, precheck=None):
        verify("verify")
        self.committed = self.confirmed = True

    def save(self):
        return self.io.save("save")

    def abort(self, read_managed, before_managed):
        """Undo on a fresh session (here: the computed reverse of the managed view, ``_push``ed). Returns a short
        description of what was done."""
        self.io.fresh("abort")
        return self._reverse(read_managed, before_managed)

    def push_reverse(self, cmds):
        """Push ``cmds`` (a reverse of this run's own lines) on a fresh session."""
        self.io.fresh("abort")
        self._push(list(cmds))

    def _push(self, cmds):
        """How this NOS applies a reverse: typed in config mode here."""
        self.io.configure("abort", cmds)

    def cleanup(self):
        return None

    def leftovers(self):
        """Transaction objects still on the device after abort/cleanup (pending revision, checkpoint, session)."""
        return []

    # the NOS's own record of who changed what, read after the change (nos/edits.py): how it is read, or None where
    # this collection reads none on this NOS (then an edit landing on a key while our line for it is in flight is
    # not detected: docs/switches.md#concurrent-edits)
    edit_record = None

    def record_open(self):
        """Just before the image this run changes is read under its lock: where the NOS's record stands (a NOS that
        numbers its records), kept for ``record_clock``. Nothing where the window is placed by the clock alone."""
        return None

    def record_clock(self):
        """Just before the change: this run's window in the NOS's record (``edits.Window``), in which it is searched
        for someone else's edits. None where the NOS has no record this collection reads."""
        return None

    def recorded_edits(self, window, final_paths):
        """[edits.Edit] of every configuration line the NOS recorded in ``window`` (ours included; more is harmless,
        edits.overwritten places each); ``final_paths``: the paths of the config read back (which lines open a block,
        where the record does not say)."""
        return []

    def push_guarded(self, step, cmds):
        """Type ``cmds`` (line by line live) a top-level block at a time; when the guard is due between two
        blocks, config mode is left and the guard runs first, so no block goes out more than the guard's
        interval after the last read that proved nobody else changed the switch."""
        # from here the running config may hold part of the change: an undo then looks for someone else's lines
        # first (never a checkpoint rollback over them), even when the guard stops it before the first line
        self.committed = True
        if self.guard is None:
            self.io.configure(step, list(cmds))
            return
        in_config = False
        for block in blocks(cmds):
            if self.guard.due():
                if in_config:
                    self.io.configure(step, [], enter=False, leave=True)   # leave config mode for the read
                    in_config = False
                self.guard(step)
            self.io.configure(step, block, enter=False if in_config else None, leave=False)
            in_config = True
        if in_config:
            self.io.configure(step, [], enter=False, leave=True)

    def _reverse(self, read_managed, before_managed, push=None):
        """Push (``push``, else ``_push``) the driver's safe reverse of the managed view back to ``before_managed``."""
        now = read_managed()
        if now == before_managed:
            return "nothing to undo"
        cmds = self.driver.safe_reverse(now, before_managed)
        (push or self._push)(cmds)
        return "pushed the reverse of the managed lines (%d commands)" % len(cmds)


# Lock markers on a Linux-based NOS: one file per run in the device's /tmp (or $AIF_LOCK_DIR when the
# device sets it: the twin's routers share one filesystem). `set -C` makes the shell refuse an existing
# file or symlink (O_EXCL), so a marker is never written through a planted link.
MARKER_DIR = '"${AIF_LOCK_DIR:-/tmp}"'
SAFE_NAME = re.compile(r"^aif-[A-Za-z0-9_-]{1,80}$")


def _safe(name):
    if not SAFE_NAME.match(name or ""):
        raise StepError("lock", None, "", "refusing an unexpected marker name %r read from the device" % name)
    return name


# the device's local wall clock from its Linux shell, as syslog stamps its lines (sudolog.clock reads it as UTC)
WALL_CLOCK = "echo AIF-CLOCK=$(date +%Y-%m-%dT%H:%M:%S)"


class ShellMarkers(object):
    """Commands to the Linux shell under a NOS (NVUE, FRR, AsterNOS; klish after leaving the CLI), each answer ending
    with its exit status so that a refusal is never mistaken for silence; lock objects as files
    ``aifabric-lock.<name>``, the device's clock ``date +%s`` in the same shell line as their listing."""
    hold_removal = "in the switch's Linux shell: rm -f \"${{AIF_LOCK_DIR:-/tmp}}/aifabric-lock.{name}\""

    def _wall_clock(self, step):
        """The device's wall clock (epoch seconds read as UTC), from its Linux shell."""
        out = self._ok(step, WALL_CLOCK)
        try:
            return sudolog.clock(out)
        except ValueError:
            raise StepError(step, "date", out, "the device did not tell its clock")

    def _shell(self, step, command, verify_echo=True):
        """One shell command on the router -> (exit status, output with stderr). Long staging lines
        wrap in the terminal's echo, so those skip netmiko's echo check (the status marker stays)."""
        self.io.fence(step, command, self.io.read_timeout)   # under a lease that covers it (the lock's own steps aside)
        conn = self.io.session(step, command)
        try:
            out = conn.send_command("%s 2>&1; echo AIF-RC=$?" % command, read_timeout=self.io.read_timeout,
                                    cmd_verify=verify_echo)
        except Exception as exc:  # noqa: BLE001 - netmiko timeouts and lost sessions alike
            raise self.io._fail(step, command, exc)
        m = re.search(r"AIF-RC=(\d+)\s*$", out)
        if not m:
            raise StepError(step, command, out, "the shell gave no exit status")
        return int(m.group(1)), out[:m.start()]

    def _ok(self, step, command, note=None, verify_echo=True):
        status, out = self._shell(step, command, verify_echo)
        if status or re.search(self.driver.error_pattern, out, re.M):
            raise StepError(step, command, out, note or "exit status %d" % status)
        return out

    chunk = 1000   # base64 characters per shell line: a tty line holds 4095 bytes

    def put_file(self, step, path, text):
        """Write ``text`` to ``path`` on the device as base64 in short shell lines (a tty line holds 4095 bytes)."""
        data = base64.b64encode(text.encode("utf-8")).decode("ascii")
        self._ok(step, "rm -f %s %s.b64" % (path, path))
        for start in range(0, len(data), self.chunk):
            self._ok(step, "printf '%%s' '%s' >> %s.b64" % (data[start:start + self.chunk], path), verify_echo=False)
        self._ok(step, "base64 -d %s.b64 > %s && rm -f %s.b64" % (path, path, path))
        return path

    def holder(self):
        try:
            user = re.sub(r"[^A-Za-z0-9_.-]", "", getpass.getuser())[:32]
        except Exception:  # noqa: BLE001 - no user name in the environment (containers)
            user = "unknown"
        return "controller=%s machine=%s user=%s" % (controller_id(), machine_key(), user or "unknown")

    def make(self, name):
        self._ok("lock", "( set -C; printf '%%s\\n' '%s' > %s/aifabric-lock.%s )" % (self.holder(), MARKER_DIR, _safe(name)),
                 note="could not create the lock marker")

    def listing(self):
        # every aifabric-lock.aif-* entry, whatever characters follow (an engineer's `aif-hold.bob` or
        # `aif-bob's hold`) and empty or not (grep would skip an empty file: a `touch`ed hold): one line each,
        # "AIF-LOCK <name><TAB><its first line>" (bash: ${f##*/} strips the directory; head/tr are coreutils)
        status, out = self._shell("lock", "echo AIF-NOW=$(date +%%s); for f in %s/aifabric-lock.aif-*; do "
                                  "[ -e \"$f\" ] || [ -L \"$f\" ] || continue; n=${f##*/aifabric-lock.}; "
                                  "printf 'AIF-LOCK %%s\\t%%s\\n' \"$n\" \"$(head -n 1 \"$f\" 2>/dev/null | tr -d '\\t')\"; "
                                  "done" % MARKER_DIR)
        if status != 0:
            raise StepError("lock", "ls", out, "cannot list the lock markers (exit status %d)" % status)
        now = re.search(r"^AIF-NOW=(\d+)\s*$", out, re.M)
        if not now:
            raise StepError("lock", "date +%s", out, "the device did not tell its clock")
        found = re.findall(r"^AIF-LOCK (aif-[^\t\n]*)\t(.*)$", out, re.M)
        return int(now.group(1)), dict((name, detail.strip()) for name, detail in found)

    def drop(self, name):
        self._ok("unlock", "rm -f %s/aifabric-lock.%s" % (MARKER_DIR, _safe(name)), note="could not remove the lock marker")


class EosSessionTxn(Transaction):
    """Arista configuration session with a confirmed commit timer. The lock marker is an empty session named after
    the run (``show configuration sessions`` lists it to every user); the change goes into its own session
    ``<tag>-c``, whose commit copies its snapshot over the running config, "overwriting any other configuration
    changes made since the session was created" (Arista, Configure Session): hence the precheck before the commit."""
    mechanism = "EOS configure session + commit timer (confirmed after verification)"
    hold_removal = "configure: no configure session {name}"

    @property
    def work(self):
        return "%s-c" % self.tag

    def make(self, name):
        self.io.configure("lock", [], enter="configure session %s" % _safe(name), leave=True)

    def listing(self):
        now = device_clock(self.io.run("lock", "show clock"))
        out = self.io.run("lock", "show configuration sessions")
        return now, dict((name, "session") for name, state in _eos_sessions(out)
                         if state == "pending" and name.startswith("aif-"))

    def drop(self, name):
        self.io.run("unlock", "no configure session %s" % _safe(name), tolerate=r"not found|does not exist")

    def recover(self, marker):
        out = self.io.run("lock", "show configuration sessions")
        mine = [(n, s) for n, s in _eos_sessions(out, raw=True) if n == marker.name or n.startswith(marker.name + "-")]
        timers = [n for n, s in mine if s == "pendingCommitTimer"]
        if timers:
            raise RefusedError("session %s of run %s still has a commit timer running: EOS restores the config it "
                               "replaced when the timer ends; re-run after that" % (timers[0], marker.name))
        for name, state in mine:
            if state == "pending" and not name.endswith("-d"):
                self.drop(name)
        return "removed its uncommitted configuration session(s) %s" % ", ".join(n for n, _s in mine if not n.endswith("-d"))

    def preflight(self):
        out = self.io.run("preflight", "show configuration sessions")
        foreign = [name for name, state in _eos_sessions(out) if state == "pending" and not name.startswith("aif-")]
        if foreign:
            raise RefusedError("the switch has pending configuration session(s) %s from another operator; "
                               "commit or remove them (`no configure session NAME`) first" % ", ".join(foreign))

    def stage(self, cmds):
        self.io.configure("stage", list(cmds), enter="configure session %s" % self.work, leave=False)

    def commit(self, verify, precheck=None):
        # the timer must outlast the verification read(s) with margin; a shorter request is raised
        secs = max(self.commit_timer, self.verify_budget)
        if secs != self.commit_timer and self.commit_timer:
            self.notes.append("commit timer raised from %ds to %ds (longer than verification)" % (self.commit_timer, secs))
        if precheck is not None:
            # the session's diff against the running config, now and again right before the commit: the
            # session holds still, so the same diff means the same running config (Arista: `show
            # session-config diffs` compares system:/running-config with the session's config)
            seen = _session_diff(self.io.run("precheck", "show session-config diffs"))
            self.io.run("precheck", "end", in_config=True)   # leave the session pending; read in exec mode
            precheck("precheck")
            self.io.configure("stage", [], enter="configure session %s" % self.work, leave=False)
            last = _session_diff(self.io.run("precheck", "show session-config diffs"))
            if last != seen:
                self.io.run("precheck", "end", in_config=True)
                precheck("precheck")   # names what someone else changed (a ForeignChange)
                moved = sorted(set(last) ^ set(seen))
                raise StepError("precheck", "show session-config diffs", "", "the running config changed just before "
                                "the commit, by someone else; committing would overwrite it: the session's diff "
                                "moved by %s" % "; ".join(x.strip() for x in moved[:8]))
        cmd = "commit timer %s" % time.strftime("%H:%M:%S", time.gmtime(secs))   # secs < 24 h (bounds.py)
        self.committed = True   # from here on the device may hold the change (a lost answer proves nothing)
        self.io.run("commit", cmd, in_config=True)
        start = time.time()
        verify("verify")
        took = time.time() - start
        if took >= secs - 1:
            raise StepError("confirm", None, "", "verification took %.1fs, not within the %ds commit timer: not confirmed" % (took, secs))
        confirm = "configure session %s commit" % self.work
        out = self.io.run("confirm", confirm)
        if out.strip():
            # a confirmed timer answers nothing; anything else (timer gone, session unknown) is a failure
            raise StepError("confirm", confirm, out, "commit timer confirmation not accepted")
        self.confirmed = True
        verify("verify after confirm")

    edit_record = "show logging (command accounting: aaa accounting commands all default start-stop logging)"

    def record_clock(self):
        return clock_window(device_clock(self.io.run("record", "show clock")))

    def recorded_edits(self, window, final_paths):
        now = device_clock(self.io.run("record", "show clock"))
        minutes = int(max(0, now - window.start) // 60) + 2
        text = self.io.run("record", "show logging last %d minutes" % minutes)
        return eos_accounting(text, window.start, final_paths)

    def confirm_timer(self):
        if self.committed and not self.confirmed:
            self.io.fresh("abort")
            out = self.io.run("abort", "configure session %s commit" % self.work, tolerate=r"not found|not pending")
            self.confirmed = True
            return not out.strip()
        return False

    def abort(self, read_managed, before_managed):
        self.io.fresh("abort")
        if not self.committed:
            # staged only: the running config never changed; drop the session
            self.io.run("abort", "no configure session %s" % self.work, tolerate=r"not found|does not exist")
            return "configuration session %s removed (never committed)" % self.work
        if not self.confirmed:
            out = self.io.run("abort", "configure session %s abort" % self.work, tolerate=r"not found|not pending")
            if not re.search(r"not found|not pending", out):
                return "commit timer of session %s aborted (EOS restores the previous config)" % self.work
            # the timer is gone: the confirm ran (its answer was lost) or the timer already fired; only a
            # read tells, and the reverse below does nothing when the config is already the before-image
        return self._reverse(read_managed, before_managed)

    def _push(self, cmds):
        self.io.configure("abort", cmds + ["commit"], enter="configure session %s-rb" % self.tag, leave=False)

    def cleanup(self):
        for name in (self.work, self.tag + "-rb"):
            try:
                self.io.run("cleanup", "no configure session %s" % name, tolerate=r"not found|does not exist",
                            fresh_on_error=True)
            except Exception as exc:  # noqa: BLE001 - reported as a leftover
                self.notes.append("session %s could not be removed: %s" % (name, exc))

    def leftovers(self):
        out = self.io.run("leftovers", "show configuration sessions")
        return ["pending configuration session %s" % n for n, s in _eos_sessions(out)
                if s == "pending" and n.startswith(self.tag + "-") and not re.search(r"-(l\d+|x\d+|d)$", n)]


CLOCK = (
    # EOS `show clock`: "Mon Jan 14 18:42:49 2013" (ntc-templates arista_eos_show_clock)
    re.compile(r"^\s*\w{3}\s+(?P<mon>\w{3})\s+(?P<day>\d+)\s+(?P<hms>\d+:\d+:\d+)\s+(?P<year>\d{4})\s*$", re.M),
    # NX-OS `show clock`: "18:57:38.347 UTC Mon Oct 19 2015", "*" or "." first when not synchronised
    re.compile(r"^\s*[*.]?(?P<hms>\d+:\d+:\d+)(?:\.\d+)?\s+\S+\s+\w{3}\s+(?P<mon>\w{3})\s+(?P<day>\d+)\s+(?P<year>\d{4})\s*$",
               re.M),
)


def _epoch(m, near=None):
    """The date a record or clock matched by ``m`` shows (groups mon, day, hms, and year where it prints one) as epoch
    seconds read as UTC, a year-less one dated nearest ``near`` (edits.stamped); None when nothing matched."""
    if m is None:
        return None
    year = m.group("year") if "year" in m.re.groupindex else None
    return stamped(m.group("mon"), m.group("day"), m.group("hms"), near, year)


def device_clock(text):
    """The device's wall clock from `show clock` as epoch seconds, read as if it were UTC: the lock only
    ever subtracts two readings of this same clock, so the zone cancels out (tests/fixtures/switches/clock)."""
    for rx in CLOCK:
        at = _epoch(rx.search(text or ""))
        if at is not None:
            return at
    raise StepError("lock", "show clock", text, "cannot read the device's clock")


# NX-OS `show accounting log`: "Mon Feb 10 09:30:45 2020:type=update:id=192.168.12.138@pts/3:user=ethan:cmd=configure
# terminal ; interface Ethernet1/10 ; description "..." (SUCCESS)", one record per line typed, with its modes
# (syedur-rahman/networkcoder nxos_account_parse README); Cisco's NX-API reference prints the same fields without
# their keys, after a sequence number: "17882650:Mon Jul 30 13:02:18 2018:update:64.103.223.233@pts/2:admin:configure
# terminal ; aaa bypass-user test (FAILURE)" (tests/fixtures/switches/accounting/SOURCE.md): both are read
NXOS_ACCT = re.compile(r"^(?:(?P<seq>\d+):)?(?P<at>\w{3}\s+\w{3}\s+\d+\s+\d\d:\d\d:\d\d\s+\d{4}):(?:type=)?update:(?:id=)?(?P<where>[^:]*?)"
                       r":(?:user=)?(?P<user>[^:]*):(?:cmd=)?(?P<cmd>.*?)\s+\((?P<res>SUCCESS|FAILURE)\)\s*$", re.M)


def nxos_accounting(text):
    """`show accounting log` -> [edits.Edit] of its configuration records that succeeded (their modes as parents)."""
    out = []
    for m in NXOS_ACCT.finditer(text or ""):
        parts = [p.strip() for p in m.group("cmd").split(" ; ")]
        if m.group("res") != "SUCCESS" or parts[0] not in ("configure terminal", "configure") or len(parts) < 2 \
                or parts[-1] in ("exit", "end"):
            continue
        at = calendar.timegm(time.strptime(" ".join(m.group("at").split()), "%a %b %d %H:%M:%S %Y"))
        seq = int(m.group("seq")) if m.group("seq") else None
        out.append(Edit(at, m.group("user"), m.group("where"), " > ".join(parts[1:]), seq))
    return out


def nxos_last_index(text):
    """`show accounting log last-index` -> the sequence number of the log's last record: "accounting-log last-index
    : 17882653" (zongzw/ruby-monit-ng reads it so from a Nexus, tests/fixtures/switches/accounting/SOURCE.md)."""
    m = re.search(r"^\s*accounting-log last-index\s*:\s*(-?\d+)\s*$", text or "", re.M)
    if not m:
        raise StepError("record", "show accounting log last-index", text, "no last index in the answer")
    return int(m.group(1))


def clock_window(since):
    """The window by the device's clock read just before the change (``since``, epoch): the record counts whole
    seconds, so it opens a second early and an edit up to ``since`` may predate the image read under the lock."""
    return Window("at", since - 1, since)


# EOS command accounting to syslog (`aaa accounting commands all default start-stop logging`), `show logging`:
# "Mar 24 20:33:52 eos Aaa: %ACCOUNTING-6-CMD: admin vty6 192.168.2.1 stop task_id=17 start_time=1521923632.5
# timezone=UTC service=shell priv-lvl=15 cmd=show interfaces status" (tests/fixtures/switches/accounting/SOURCE.md):
# one record per command as typed, without its mode: the mode is rebuilt per terminal from the commands before it
EOS_ACCT = re.compile(r"^\s*(?P<mon>[A-Z][a-z]{2})\s+(?P<day>\d+)\s+(?P<hms>\d\d:\d\d:\d\d)\s+\S+\s+Aaa:\s+%ACCOUNTING-6-CMD:\s+"
                      r"(?P<user>\S+)\s+(?P<tty>\S+)\s+(?P<addr>\S+)\s+stop\s.*?\bcmd=(?P<cmd>.*?)(?:\s+<cr>)?\s*$", re.M)


def eos_accounting(text, near, final_paths):
    """EOS's accounting records -> [edits.Edit] of the configuration lines that reached the running config: a line
    typed in `configure` at once, a line of a configuration session when that session commits (a session left with
    `end` stays pending and is resumed by name, from any terminal). The record has no mode: each line is placed at the
    deepest open block where the config read back (``final_paths``) holds that line, or a line of the same setting,
    or a block it opens; else under the innermost open block (`interface X` always opens one at the top)."""
    index = _final_index(final_paths)
    out, state, sessions = [], {}, {}
    for m in EOS_ACCT.finditer(text or ""):
        at = _epoch(m, near)
        if at is None:
            continue
        where, cmd = "%s %s" % (m.group("tty"), m.group("addr")), m.group("cmd").strip()
        st = state.setdefault(where, {"mode": None, "stack": []})
        opened = re.match(r"^configure session (\S+)$", cmd)
        if re.match(r"^configure( terminal)?$", cmd):
            st.update(mode="", stack=[])
        elif opened:
            st.update(mode=opened.group(1), stack=[])
            sessions.setdefault(opened.group(1), [])
        elif st["mode"] is None or cmd.startswith("show "):
            continue
        elif st["mode"] and cmd == "abort":
            sessions.pop(st["mode"], None)
            st.update(mode=None, stack=[])
        elif st["mode"] and re.match(r"^commit( timer \S+)?$", cmd):
            out.extend(Edit(at, m.group("user"), where, path) for path in sessions.pop(st["mode"], []))
            st.update(mode=None, stack=[])
        else:
            path = _line_path(st, cmd, index)
            if path is not None and st["mode"]:
                sessions[st["mode"]].append(path)
            elif path is not None:
                out.append(Edit(at, m.group("user"), where, path))
    return out


def _line_path(st, cmd, index):
    """A configuration-mode line on a terminal whose modes ``st`` tracks -> the path it set (``_place``), or None when
    it only left a block (``exit``) or config mode (``end``, ``exit`` at the top)."""
    if cmd == "end" or (cmd == "exit" and not st["stack"]):
        st.update(mode=None, stack=[])
    elif cmd == "exit":
        st["stack"].pop()
    else:
        path, st["stack"] = _place(st["stack"], cmd, index)
        return path
    return None


def _final_index(final_paths):
    """(paths, the blocks they open, their settings) of the config read back: where a record with no mode is placed."""
    final = set(final_paths)
    heads = set(" > ".join(p.split(" > ")[:i]) for p in final for i in range(1, p.count(" > ") + 1))
    return final | heads, heads, set(_setting(p) for p in final)


def _place(stack, cmd, index):
    """A line typed with ``stack`` open -> (its path, the stack after it): at the deepest open block where the config
    read back holds that line, a line of the same setting, or a block it opens; else under the innermost open block
    (`interface X` always opens one at the top)."""
    known, heads, keys = index
    level = 0 if cmd.startswith("interface ") else next(
        (i for i in range(len(stack), -1, -1) if " > ".join(stack[:i] + [cmd]) in known or
         _setting(" > ".join(stack[:i] + [cmd])) in keys), len(stack))
    path = " > ".join(stack[:level] + [cmd])
    return path, (stack[:level] + [cmd] if (path in heads or cmd.startswith("interface ")) else stack[:level])


# Enterprise SONiC klish command logging (SONiC "Audit Log" HLD, sonic-net/SONiC doc/audit-log/Audit_Log_HLD.md: the
# management framework logs each command to syslog local4, rsyslog writes local4 to /var/log/audit.log, `show audit-log`
# prints its tail and `show audit-log all` all of it): "Jun 2 22:57:09.060819 sonic INFO mgmt-framework#clish: User
# "admin" command "tacacs-server key mykey"  status - success" (tests/fixtures/switches/accounting/SOURCE.md). One record
# per command as typed, exec commands too, with no mode ("will not have command hierarchy information") and no session
KLISH_AUDIT = re.compile(r'^\s*(?:(?P<year>\d{4})\s+)?(?P<mon>[A-Z][a-z]{2})\s+(?P<day>\d+)\s+(?P<hms>\d\d:\d\d:\d\d)(?:\.\d+)?\s+\S+\s+'
                         r'(?:[A-Z]+\s+)?\S*?[ck]lish(?:\[\d+\])?:\s+User\s+"(?P<user>[^"]*)"\s+command\s+"(?P<cmd>.*)"\s+'
                         r'status\s+-\s+(?P<res>\w+)\s*$', re.M)
THIS_RUN = "klish (this run)"
KLISH_EXEC = ("show ", "write ", "clear ", "copy ", "ping", "traceroute", "terminal ", "reload", "sonic-cli", "do ")


def _klish_records(text, near):
    """(device time, match) of each audit-log line of a klish command."""
    for m in KLISH_AUDIT.finditer(text or ""):
        at = _epoch(m, near)
        if at is not None:
            yield at, m


def klish_audit(text, near, final_paths, ours=(), since=None):
    """Enterprise SONiC's audit log -> [edits.Edit] of the configuration lines that succeeded. The record names no
    session, so the lines of this run are told apart by order: ``ours``, the commands this run typed in the window, are
    matched in sequence from ``since`` on (an engineer's identical line is this run's own line anyway), its ``end``
    taken while its own block is done; every other line is someone else's, one stream per user. Each stream rebuilds
    its modes as EOS's does (``_place``: the config read back, ``final_paths``, says which lines open a block)."""
    index = _final_index(final_paths)
    expected = [c.strip() for c in ours if c.strip()]
    out, state, i = [], {}, 0
    for at, m in _klish_records(text, near):
        if m.group("res") != "success":
            continue
        cmd, user = m.group("cmd").strip(), m.group("user")
        mine = state.get(THIS_RUN, {}).get("mode")
        ahead = next((k for k in range(i, min(i + 3, len(expected))) if cmd == expected[k]), None)
        if since is not None and at < since:
            where = "klish"
        elif ahead is not None:   # this run's next line (one or two it typed may be missing from the record)
            where, i = THIS_RUN, ahead + 1
        elif cmd in ("end", "exit") and mine is not None and (
                i == len(expected) or expected[i] == "configure terminal" or expected[i].startswith(("write ", "show "))):
            where = THIS_RUN   # leaving the block this run finished (netmiko's exit_config_mode, not in ours)
        else:
            where = "klish"
        st = state.setdefault(where if where == THIS_RUN else (where, user), {"mode": None, "stack": []})
        if cmd in ("configure terminal", "configure"):
            st.update(mode="", stack=[])
        elif not cmd.startswith(KLISH_EXEC):   # klish refuses a configuration line outside config mode
            path = _line_path(st, cmd, index)
            if path is not None:
                out.append(Edit(at, user, where, path))
    return out


def _session_diff(text):
    """`show session-config diffs` -> its changed lines (the ``---``/``+++`` file names and hunk positions
    dropped: an unchanged running config gives the same list)."""
    return [line.rstrip() for line in (text or "").splitlines()
            if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))]


def _eos_sessions(text, raw=False):
    """`show configuration sessions` rows -> [(name, state)] (rows: name, state, user, terminal); states
    pending and pendingCommitTimer read as "pending" unless ``raw``."""
    out = []
    for line in text.splitlines():
        toks = line.replace("*", " ", 1).split() if line.lstrip().startswith("*") else line.split()
        if len(toks) >= 2 and toks[1] in ("pending", "pendingCommitTimer", "completed"):
            out.append((toks[0], toks[1] if raw or not toks[1].startswith("pending") else "pending"))
    return out


class NxosCheckpointTxn(Transaction):
    """The run's checkpoint is both its lock marker (``show checkpoint summary`` lists it to every user)
    and its rollback point. ``rollback running-config checkpoint`` restores the whole config of that
    moment, so it is used only when nothing but this run changed the switch since (apply.py checks)."""
    mechanism = "NX-OS checkpoint + rollback running-config checkpoint"
    hold_removal = "no checkpoint {name}"
    native_undo = True

    def make(self, name):
        self.io.run("lock", "checkpoint %s" % _safe(name), ok=r"Done|[Cc]heckpoint .*created|^\s*$")

    def listing(self):
        now = device_clock(self.io.run("lock", "show clock"))
        out = self.io.run("lock", "show checkpoint summary")
        names = re.findall(r"^\s*(?:\d+\)\s*)?(aif-\S+?):?\s*$", out, re.M)   # any aif-* checkpoint name
        return now, dict((n, "checkpoint") for n in names)

    def drop(self, name):
        self.io.run("unlock", "no checkpoint %s" % _safe(name), fresh_on_error=True)

    def recover(self, marker):
        Transaction.recover(self, marker)
        return "deleted its checkpoint(s) (the running config was not rolled back)"

    def stage(self, cmds):
        self.push_guarded("stage", cmds)   # NX-OS applies each line as it is typed

    def abort(self, read_managed, before_managed):
        self.io.fresh("abort")
        self.io.run("abort", "rollback running-config checkpoint %s" % self.tag, ok=r"Rollback completed successfully",
                    read_timeout=300)
        return "rolled back to checkpoint %s" % self.tag

    edit_record = "show accounting log"
    _opened = None   # the accounting log's last index before the locked read (None: the clock places the window)

    def record_open(self):
        # `show accounting log last-index` answers "accounting-log last-index : N" (the sequence number of the last
        # record; docs/switch-commands-sources.md); a NOS that refuses it gets the clock window (record_clock)
        self._opened = None
        try:
            self._opened = nxos_last_index(self.io.run("record", "show accounting log last-index"))
        except StepError as exc:
            self.notes.append("the accounting log's sequence numbers could not be read (%s): the concurrent-edit "
                              "window is placed by the device's clock in whole seconds" % exc)

    def record_clock(self):
        if self._opened is not None:
            try:
                seen = nxos_last_index(self.io.run("record", "show accounting log last-index"))
            except StepError as exc:
                seen, why = None, "could not be read again (%s)" % exc
            else:
                why = "went back (%d, then %d: the log was cleared?)" % (self._opened, seen)
            if seen is not None and seen >= self._opened:
                return Window("seq", self._opened + 1, seen)
            self.notes.append("the accounting log's last index %s: the concurrent-edit window is placed by the "
                              "device's clock in whole seconds" % why)
        return clock_window(device_clock(self.io.run("record", "show clock")))

    def recorded_edits(self, window, final_paths):
        if window.by == "seq":
            # only the records from the window's first sequence number on (Cisco's NX-API CLI reference)
            return nxos_accounting(self.io.run("record", "show accounting log start-seqnum %d" % max(window.start, 1)))
        return nxos_accounting(self.io.run("record", "show accounting log"))

    def leftovers(self):
        # the run's own checkpoint is its lock marker, removed when the lock is released (apply.py)
        out = self.io.run("leftovers", "show checkpoint summary")
        return ["checkpoint %s" % n for n in re.findall(r"^\s*(?:\d+\)\s*)?(%s-\S+?):?\s*$" % re.escape(self.tag), out, re.M)
                if not re.search(r"-(l\d+|x\d+|d)$", n)]   # its lease and drain records go with the lock


class NvueRevisionTxn(ShellMarkers, Transaction):
    mechanism = "NVUE pending revision + nv config apply; nv config detach before apply"

    def _pending(self, step):
        """The lines of the pending revision (``nv config diff -o commands``)."""
        out = self.io.run(step, "nv config diff -o commands")
        return [line.strip() for line in out.splitlines() if line.strip().startswith("nv ")]

    def preflight(self):
        pending = self._pending("preflight")
        if pending:
            raise RefusedError("the switch holds a pending NVUE revision with %d change(s) not made by this run (first: %s); "
                               "apply or detach it first (nothing was changed)" % (len(pending), pending[0]))

    def stage(self, cmds):
        self.io.configure("stage", list(cmds), enter=False, leave=False)
        out = self.io.run("stage", "nv config diff -o commands")
        if not out.strip():
            raise StepError("stage", "nv config diff -o commands", out, "the pending revision is empty after staging")

    def recover(self, marker):
        """A dead run of ours may have left its staged revision (an outage during staging): detach it when
        every pending line is one this collection manages on this switch; anything else is an operator's
        work and stays (the preflight then refuses, naming it)."""
        pending = self._pending("lock")
        done = "marker removed"
        if pending and all(self._managed_line(line) for line in pending):
            self.io.run("lock", "nv config detach")
            done = "detached its pending revision (%d change(s), all on managed paths)" % len(pending)
        Transaction.recover(self, marker)
        return done

    def _managed_line(self, line):
        if self.intent is None:
            return False
        path = re.sub(r"^nv (un)?set ", "", line)
        return bool(self.driver.managed_path(path, self.intent, self.sections))

    def save(self):
        return self.io.run("save", "nv config save", ok=r"saved")

    def commit(self, verify, precheck=None):
        if precheck is not None:
            precheck("precheck")   # the applied config is still the run's base: nobody applied since
        self.committed = True   # from here on the revision may be applied (a lost answer proves nothing)
        self.io.run("commit", "nv config apply -y", ok=r"applied", read_timeout=180)
        self.confirmed = True
        verify("verify")

    def abort(self, read_managed, before_managed):
        self.io.fresh("abort")
        # our staged revision (preflight proved the pending revision was empty before us)
        self.io.run("abort", "nv config detach")
        if not self.committed:
            return "pending revision detached (never applied)"
        return self._reverse(read_managed, before_managed)

    def _push(self, cmds):
        self.io.configure("abort", cmds, enter=False, leave=False)
        self.io.run("abort", "nv config apply -y", ok=r"applied", read_timeout=180)

    def push_reverse(self, cmds):
        self.io.fresh("abort")
        self.io.run("abort", "nv config detach")
        self._push(list(cmds))

    def leftovers(self):
        n = len(self._pending("leftovers"))
        return ["pending NVUE revision with %d change(s)" % n] if n else []


@contextlib.contextmanager
def klish_shell(conn):
    """The one klish -> Linux shell hop (netmiko's dell_sonic ``_return_shell``): ``exit`` to the ``$`` prompt,
    then back with ``sonic-cli`` and paging off; used by the lock's steps and by switch_facts' counters."""
    conn.send_command("exit", expect_string=r"\$\s*$", cmd_verify=False)
    try:
        yield conn
    finally:
        conn.send_command("sonic-cli", expect_string=r"#\s*$", cmd_verify=False)
        conn.disable_paging()


class KlishReverseTxn(ShellMarkers, Transaction):
    mechanism = "klish: reverse of the managed lines only, verified by reading the whole running config back"

    in_shell = False

    def _shell(self, step, command, verify_echo=True):
        """klish has no shell commands: each runs in the Linux shell, within ``shell_session()`` (one hop per command
        outside one)."""
        with self.shell_session(step):
            return ShellMarkers._shell(self, step, command, verify_echo)

    @contextlib.contextmanager
    def shell_session(self, step="lock"):
        """One klish -> Linux shell hop for several shell commands (the device lock's steps: listing, marker,
        recovery, release), instead of a hop per command; nested sessions share the outer hop."""
        if self.in_shell:
            yield self
            return
        conn = self.io.session(step, "exit")
        try:
            with klish_shell(conn):
                self.in_shell = True
                try:
                    yield self
                finally:
                    self.in_shell = False
        except (StepError, LockHeldError):   # a held lock is the lock's answer, not a broken hop: keep its holder's name
            raise
        except Exception as exc:  # noqa: BLE001 - never reuse a session in an unknown mode (closed by _fail)
            raise self.io._fail(step, "exit / sonic-cli", exc)

    def stage(self, cmds):
        self.push_guarded("stage", cmds)   # klish applies each line as it is typed

    # who typed what: the audit log (SONiC "Audit Log" HLD; `show audit-log`), by the device's wall clock
    edit_record = "show audit-log (klish command logging to /var/log/audit.log)"
    _typed = 0   # this run's commands before the window (io.attempted)

    def record_clock(self):
        at = self._wall_clock("record")   # the audit log stamps its lines by this clock
        self._typed = len(self.io.attempted)
        return clock_window(at)

    def recorded_edits(self, window, final_paths):
        ours = self.io.attempted[self._typed:]
        text = self.io.run("record", "show audit-log")
        if not any(at < window.start for at, _m in _klish_records(text, window.start)):
            # the short form prints the log's last 8 KB: read all of it when that does not reach back to the window
            text = self.io.run("record", "show audit-log all", read_timeout=120)
        return klish_audit(text, window.start, final_paths, ours, since=window.start)


class AsterNosRestTxn(ShellMarkers, Transaction):
    """AsterNOS Easy RoCE over its REST model (nos/asternos.py), ``curl`` in the switch's Linux shell: no transaction
    in the REST manual's readable part, so each call is applied as it is made; the undo is the computed reverse."""
    mechanism = "Easy RoCE REST calls (curl on the switch), computed reverse of the managed REST leaves, read-back check"

    def _calls(self, step, cmds):
        for cmd in cmds:
            self.io.attempted.append(cmd)
            if step == "stage":
                self.committed = True   # the switch applies each call as it is made
            self._ok(step, cmd, note="the switch rejected the REST call", verify_echo=False)

    def stage(self, cmds):
        """One REST call after another; between two, when due, the guard (lock.StagingGuard) renews the lease and
        re-reads GET /rest/v1/running/roce."""
        for cmd in cmds:
            if self.guard is not None and self.guard.due():
                self.guard("stage")
            self._calls("stage", [cmd])

    def _push(self, cmds):
        self._calls("abort", cmds)

    # who changed the switch while this run's calls were in flight (a PATCH replaces the leaves it carries, and the
    # read-back cannot tell): klish's command log and sudo's records, from the Linux shell (nos/asterlog.py)
    edit_record = asterlog.RECORD

    def record_clock(self):
        return clock_window(self._wall_clock("record"))

    def recorded_edits(self, window, final_paths):
        present = asterlog.present(self._shell("record", asterlog.LIST)[1])
        if asterlog.AUDIT not in present:
            self.notes.append("%s is absent on this switch: only sudo's records were read for concurrent edits"
                              % asterlog.AUDIT)
        status, out = self._shell("record", asterlog.read_command(present))
        klish = [(at, m.group("user"), m.group("cmd")) for at, m in _klish_records(out, window.start)
                 if m.group("res") == "success"]
        got, note = asterlog.checked(status, out, klish, list(sudolog.records(out, window.start)), window.start)
        self.notes.extend([note] if note else [])
        return got


class FrrVtyshTxn(ShellMarkers, Transaction):
    """FRR 8.4: the change as a file on the router, checked by ``vtysh -C -f`` (a parse error only: it cannot see a
    daemon's refusal) then applied by ``vtysh -f``, which goes on after a refused line and still exits 0 (seen on the
    engine: tests/fixtures/switches/frr/vtysh-f-refusals.txt), so its answer is checked for ``line N:`` errors and a
    failure after it started is undone with the computed reverse."""
    mechanism = "FRR vtysh: dry run (vtysh -C -f), apply (vtysh -f), read-back verify, computed reverse on failure"

    def path(self):
        return "/tmp/%s.conf" % self.tag

    def _apply_file(self, step, cmds):
        path = self.put_file(step, self.path(), "\n".join(cmds) + "\n")
        self._ok(step, "vtysh -C -f %s" % path, note="vtysh refused the change in its dry run (nothing was applied)")
        if self.guard is not None and step == "stage":
            self.guard(step)   # the last read before vtysh -f applies the file (line by line, in one go)
        self.committed = True   # vtysh -f applies line by line: from here the router may hold part of it
        self.io.attempted.extend(cmds)
        self._ok(step, "vtysh -f %s" % path, note="vtysh refused a line (it applies the lines around a refused one)")

    def stage(self, cmds):
        self._apply_file("stage", list(cmds))

    def save(self):
        return self._ok("save", self.driver.save_command, note="write memory failed")

    def abort(self, read_managed, before_managed):
        self.io.fresh("abort")
        if not self.committed:
            return "nothing was applied (stopped before vtysh -f)"
        return self._reverse(read_managed, before_managed)

    def _push(self, cmds):
        self._apply_file("abort", cmds)

    def cleanup(self):
        try:
            self._shell("cleanup", "rm -f %s %s.b64" % (self.path(), self.path()))
        except Exception as exc:  # noqa: BLE001 - reported as a leftover, the config is not affected
            self.notes.append("staged file %s could not be removed: %s" % (self.path(), exc))

    def leftovers(self):
        status, _out = self._shell("leftovers", "test -e %s -o -e %s.b64" % (self.path(), self.path()))
        return ["staged file %s" % self.path()] if status == 0 else []
