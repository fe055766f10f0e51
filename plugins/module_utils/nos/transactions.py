# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One transaction object per NOS, each on the NOS's native mechanism (sources in docs/switches.md#transactions):

* EOS: configuration session, ``commit timer`` longer than the verification, then confirmed with
  ``configure session NAME commit``; undone with ``configure session NAME abort`` while the timer runs.
* NX-OS: ``checkpoint NAME`` / ``rollback running-config checkpoint NAME`` / ``no checkpoint NAME``.
* NVUE: the pending revision (``nv set``, ``nv config apply``, ``nv config detach``); after an apply,
  a reverse revision of the managed paths only.
* Enterprise SONiC / AsterNOS klish: no session or checkpoint in the CLI; the reverse of the managed
  lines only (never ``no interface``), itself verified by the caller.
* FRR 8.4 (vtysh from a Linux shell): no candidate/commit for zebra, bgpd and pbrd; the change is a
  file checked with ``vtysh -C -f`` (dry run), applied with ``vtysh -f``; the reverse of the managed
  lines on failure, verified by the caller; ``write memory``.

Every object has the same shape: ``preflight()`` (refuse over a foreign pending change), ``begin()``,
``stage(cmds)``, ``commit(verify)``, ``save()``, ``abort(read_managed, before_managed)``,
``cleanup()``. The caller (apply.py) gives an ``io`` with ``run(step, cmd, ok=None, read_timeout=None)``,
``configure(step, cmds, enter=None, leave=True)`` and ``fresh(step)``; both raise ``StepError``
naming the step, the command and the device's own answer.
"""

from __future__ import annotations

import re
import time


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


class RefusedError(Exception):
    """The device holds another operator's pending change: nothing was sent."""


def _tail(text, lines=4):
    rows = [r for r in text.strip().splitlines() if r.strip()]
    return " | ".join(rows[-lines:])


# A reverse may only take back what we manage: never a whole physical interface. A Loopback or Vlan (SVI)
# interface is the underlay's own creation (section underlay, PBR on the SVI): it may go whole, since EOS keeps
# an emptied `interface VlanN` and prints it.
VIRTUAL_INTERFACE = r"(Loopback|loopback|Vlan|vlan)\d+"
FORBIDDEN = re.compile(r"^(no interface (?!%s\s*$)\S+\s*$|nv unset interface \S+\s*$)" % VIRTUAL_INTERFACE)


# ... except the virtual interfaces the underlay creates (SVI, loopback): taking those back is the undo.
CREATED = re.compile(r"^no interface (Vlan\d+|[Ll]oopback\d+)\s*$")


def check_safe(cmds):
    bad = [c for c in cmds if FORBIDDEN.match(c.strip()) and not CREATED.match(c.strip())]
    if bad:
        raise StepError("safety", bad[0], "", "refusing a command that removes a whole interface")


def managed_reverse(driver, current, target):
    """Commands taking the managed view ``current`` back to ``target`` without ever removing an
    interface: a port that has no managed line in ``target`` gets ``no <line>`` per managed child."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import parse_tree
    cmds = driver.diff(current, target)
    if not cmds or not hasattr(driver, "interface_re"):
        check_safe(cmds)
        return cmds
    cur = dict(parse_tree(current))
    out = []
    for cmd in cmds:
        m = re.match(r"^no (interface \S+)\s*$", cmd)
        if m and m.group(1) in cur and not CREATED.match(cmd) and not re.match(r"interface %s$" % VIRTUAL_INTERFACE, m.group(1)):
            out.append(m.group(1))
            pad = " " * getattr(driver, "indent", 1)
            out += [pad + "no " + child for child, kids in cur[m.group(1)]]
        else:
            out.append(cmd)
    check_safe(out)
    return out


class Transaction(object):
    mechanism = "none"
    # what the caller may rely on after abort(): the NOS restores by itself (True) or we push a reverse
    native_undo = False

    def __init__(self, driver, io, tag, commit_timer=0, verify_budget=60):
        self.driver, self.io, self.tag = driver, io, tag
        self.commit_timer = int(commit_timer or 0)
        self.verify_budget = int(verify_budget)
        self.committed = False    # the change reached the running config
        self.confirmed = False    # nothing left that the NOS could still undo by itself
        self.notes = []

    def preflight(self):
        return None

    def begin(self):
        return None

    def stage(self, cmds):
        raise NotImplementedError

    def commit(self, verify):
        verify("verify")
        self.committed = self.confirmed = True

    def save(self):
        out = self.io.save("save")
        return out

    def abort(self, read_managed, before_managed):
        """Undo on a fresh session. Returns a short description of what was done."""
        raise NotImplementedError

    def cleanup(self):
        return None

    def leftovers(self):
        """Transaction objects still on the device after abort/cleanup (pending revision, checkpoint, session)."""
        return []

    def _reverse(self, read_managed, before_managed, push):
        now = read_managed()
        if now == before_managed:
            return "nothing to undo"
        cmds = managed_reverse(self.driver, now, before_managed)
        push(cmds)
        return "pushed the reverse of the managed lines (%d commands)" % len(cmds)


class EosSessionTxn(Transaction):
    """Arista configuration session with a confirmed commit timer."""
    mechanism = "EOS configure session + commit timer (confirmed after verification)"

    def timer(self):
        # the timer must outlast the verification read(s) with margin; a shorter request is raised
        return max(self.commit_timer, self.verify_budget)

    def preflight(self):
        out = self.io.run("preflight", "show configuration sessions")
        foreign = [name for name, state in _eos_sessions(out) if state == "pending" and name != self.tag]
        if foreign:
            raise RefusedError("the switch has pending configuration session(s) %s from another operator or run; "
                               "commit or remove them (`no configure session NAME`) first" % ", ".join(foreign))

    def stage(self, cmds):
        self.io.configure("stage", list(cmds), enter="configure session %s" % self.tag, leave=False)

    def commit(self, verify):
        secs = self.timer()
        if secs != self.commit_timer and self.commit_timer:
            self.notes.append("commit timer raised from %ds to %ds (longer than verification)" % (self.commit_timer, secs))
        cmd = "commit timer %s" % _hms(secs)
        self.committed = True   # from here on the device may hold the change (a lost answer proves nothing)
        self.io.run("commit", cmd, in_config=True)
        start = time.time()
        verify("verify")
        took = time.time() - start
        if took >= secs - 1:
            raise StepError("confirm", None, "", "verification took %.1fs, not within the %ds commit timer: not confirmed" % (took, secs))
        confirm = "configure session %s commit" % self.tag
        out = self.io.run("confirm", confirm)
        if out.strip():
            # a confirmed timer answers nothing; anything else (timer gone, session unknown) is a failure
            raise StepError("confirm", confirm, out, "commit timer confirmation not accepted")
        self.confirmed = True
        verify("verify after confirm")

    def abort(self, read_managed, before_managed):
        self.io.fresh("abort")
        if not self.committed:
            # staged only: the running config never changed; drop the session
            self.io.run("abort", "no configure session %s" % self.tag, tolerate=r"not found|does not exist")
            return "configuration session %s removed (never committed)" % self.tag
        if not self.confirmed:
            self.io.run("abort", "configure session %s abort" % self.tag, tolerate=r"not found|not pending")
            return "commit timer of session %s aborted (EOS restores the previous config)" % self.tag

        def push(cmds):
            self.io.configure("abort", cmds + ["commit"], enter="configure session %s-rb" % self.tag, leave=False)
        return self._reverse(read_managed, before_managed, push)

    def leftovers(self):
        out = self.io.run("leftovers", "show configuration sessions")
        return ["pending configuration session %s" % n for n, s in _eos_sessions(out) if s == "pending" and n.startswith(self.tag)]


def _eos_sessions(text):
    """`show configuration sessions` rows -> [(name, state)] (rows: name, state, user, terminal)."""
    out = []
    for line in text.splitlines():
        toks = line.replace("*", " ", 1).split() if line.lstrip().startswith("*") else line.split()
        if len(toks) >= 2 and toks[1] in ("pending", "pendingCommitTimer", "completed") :
            out.append((toks[0], "pending" if toks[1].startswith("pending") else toks[1]))
    return out


class NxosCheckpointTxn(Transaction):
    mechanism = "NX-OS checkpoint + rollback running-config checkpoint"
    native_undo = True

    def begin(self):
        self.io.run("begin", "checkpoint %s" % self.tag, ok=r"Done|[Cc]heckpoint .*created|^\s*$")

    def stage(self, cmds):
        self.committed = True   # NX-OS applies each line as it is typed
        self.io.configure("stage", list(cmds))

    def abort(self, read_managed, before_managed):
        self.io.fresh("abort")
        self.io.run("abort", "rollback running-config checkpoint %s" % self.tag, ok=r"Rollback completed successfully",
                    read_timeout=300)
        return "rolled back to checkpoint %s" % self.tag

    def cleanup(self):
        if getattr(self, "_cleaned", False):
            return
        self._cleaned = True
        try:
            self.io.run("cleanup", "no checkpoint %s" % self.tag, fresh_on_error=True)
        except Exception as exc:  # noqa: BLE001 - reported as a leftover, the config is not affected
            self.notes.append("checkpoint %s could not be deleted: %s" % (self.tag, exc))

    def leftovers(self):
        out = self.io.run("leftovers", "show checkpoint summary")
        return ["checkpoint %s" % n for n in re.findall(r"^\s*(?:\d+\)\s*)?(%s)\b" % re.escape(self.tag), out, re.M)]


class NvueRevisionTxn(Transaction):
    mechanism = "NVUE pending revision + nv config apply; nv config detach before apply"

    def preflight(self):
        out = self.io.run("preflight", "nv config diff -o commands")
        pending = [line for line in out.splitlines() if line.strip().startswith("nv ")]
        if pending:
            raise RefusedError("the switch holds a pending NVUE revision with %d change(s) not made by this run (first: %s); "
                               "apply or detach it first (nothing was changed)" % (len(pending), pending[0].strip()))

    def stage(self, cmds):
        self.io.configure("stage", list(cmds), enter=False, leave=False)
        out = self.io.run("stage", "nv config diff -o commands")
        if not out.strip():
            raise StepError("stage", "nv config diff -o commands", out, "the pending revision is empty after staging")

    def save(self):
        return self.io.run("save", "nv config save", ok=r"saved")

    def commit(self, verify):
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

        def push(cmds):
            self.io.configure("abort", cmds, enter=False, leave=False)
            self.io.run("abort", "nv config apply -y", ok=r"applied", read_timeout=180)
        return self._reverse(read_managed, before_managed, push)

    def leftovers(self):
        out = self.io.run("leftovers", "nv config diff -o commands")
        n = len([line for line in out.splitlines() if line.strip().startswith("nv ")])
        return ["pending NVUE revision with %d change(s)" % n] if n else []


class KlishReverseTxn(Transaction):
    mechanism = "klish: reverse of the managed lines only, verified by reading the whole running config back"

    @staticmethod
    def normalize(text):
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.klish import normalize_running
        return normalize_running(text)

    def stage(self, cmds):
        self.committed = True   # klish applies each line as it is typed
        self.io.configure("stage", list(cmds))

    def abort(self, read_managed, before_managed):
        self.io.fresh("abort")
        return self._reverse(read_managed, before_managed, lambda cmds: self.io.configure("abort", cmds))


class FrrVtyshTxn(Transaction):
    """FRR 8.4: the change as a file on the router, checked by ``vtysh -C -f`` then applied by ``vtysh -f``.

    What vtysh 8.4.4 does, seen on the engine (tests/fixtures/switches/frr/vtysh-f-refusals.txt):
    ``-C -f`` parses every line without applying any and exits 2 on a parse error ("line N: % Unknown
    command"), but it cannot see a daemon's refusal (``router bgp 65001`` while bgpd runs AS 65000
    passes it); ``-f`` applies line by line, goes on after a refused line ("line N: Failure to
    communicate ... to bgpd") and still exits 0. So the dry run is only a first filter: the answer of
    ``-f`` is checked for ``line N:`` errors, the whole running config is read back (the caller's
    verify), and any failure after ``-f`` started is undone with the computed reverse of the managed
    lines, itself proven by the caller's read-back.
    """
    mechanism = "FRR vtysh: dry run (vtysh -C -f), apply (vtysh -f), read-back verify, computed reverse on failure"
    chunk = 1000   # base64 characters per shell line: a tty line holds 4095 bytes

    def path(self):
        return "/tmp/%s.conf" % self.tag

    def _shell(self, step, command, verify_echo=True):
        """One shell command on the router -> (exit status, output with stderr). Long staging lines
        wrap in the terminal's echo, so those skip netmiko's echo check (the status marker stays)."""
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

    def _put(self, step, cmds):
        """Write ``cmds`` to the router as a file (base64 in short lines), return its path."""
        import base64
        path = self.path()
        data = base64.b64encode(("\n".join(cmds) + "\n").encode("utf-8")).decode("ascii")
        self._ok(step, "rm -f %s %s.b64" % (path, path))
        for start in range(0, len(data), self.chunk):
            self._ok(step, "printf '%%s' '%s' >> %s.b64" % (data[start:start + self.chunk], path), verify_echo=False)
        self._ok(step, "base64 -d %s.b64 > %s && rm -f %s.b64" % (path, path, path))
        return path

    def _apply_file(self, step, cmds):
        path = self._put(step, cmds)
        self._ok(step, "vtysh -C -f %s" % path, note="vtysh refused the change in its dry run (nothing was applied)")
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
        return self._reverse(read_managed, before_managed, lambda cmds: self._apply_file("abort", cmds))

    def cleanup(self):
        try:
            self._shell("cleanup", "rm -f %s %s.b64" % (self.path(), self.path()))
        except Exception as exc:  # noqa: BLE001 - reported as a leftover, the config is not affected
            self.notes.append("staged file %s could not be removed: %s" % (self.path(), exc))

    def leftovers(self):
        status, _out = self._shell("leftovers", "test -e %s -o -e %s.b64" % (self.path(), self.path()))
        return ["staged file %s" % self.path()] if status == 0 else []


def _hms(seconds):
    return "%02d:%02d:%02d" % (seconds // 3600, seconds % 3600 // 60, seconds % 60)
