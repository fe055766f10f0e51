# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The session to one device (part of the switch path: nos/apply.py holds the flow). No netmiko import: the caller
passes ``connect()``."""

from __future__ import annotations

import re
import time

from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock
from ansible_collections.aifabric.roce.plugins.module_utils.nos.errors import StepError


class ConnectError(StepError):
    """The device could not be reached or logged into (TCP, SSH, authentication): nothing was sent."""

    def __init__(self, step, command, exc):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        StepError.__init__(self, step, command, "", "cannot connect (%s: %s)" % (type(exc).__name__, first))
        self.reason = "%s: %s" % (type(exc).__name__, first)


class DeviceIO(object):
    """Commands to one device; every failure becomes a StepError with the step, the command and the
    device's own text (or what netmiko's session log last saw, for a timeout)."""

    def __init__(self, driver, connect, read_timeout=120, reconnect_timeout=30):
        self.driver, self.connect = driver, connect
        self.read_timeout, self.reconnect_timeout = read_timeout, reconnect_timeout
        self.conn = None
        self.attempted = []
        self.lease = None   # devicelock.Lease while the device lock is held (Applier)

    def fence(self, step, cmd, duration=0, conn=None, enter=None):
        """Just before a write that may run ``duration`` seconds: unless the lease as last confirmed by the device
        covers it to its end, check and renew it on the device first (leaving config mode ``conn`` is in, entered
        again with ``enter``), so a run whose lock was taken stops with LockLostError (docs/switches.md#locks). The
        lock's own steps (``lock``/``unlock``) are never fenced."""
        if self.lease is None or step in ("lock", "unlock"):
            return
        left = self.lease.left()
        if left is None or left >= duration + devicelock.FENCE_MARGIN:
            return
        if duration + devicelock.FENCE_MARGIN > self.lease.ttl and self.lease.extend is not None and conn is None:
            # one command that may run longer than the TTL (NVUE's apply 180 s, NX-OS's rollback 300 s): the lease is
            # extended on the device over its whole timeout first (devicelock.extend)
            self.lease.extend(step, duration + 2 * devicelock.FENCE_MARGIN)
            if self.lease.left() < duration + devicelock.FENCE_MARGIN:
                raise devicelock.LockLostError(step, cmd, "", "this run's lease could not be extended over %r (%ds); "
                                               "this run stops and touches nothing more" % (cmd, duration))
            return
        nested = conn is not None and cmd[:1].isspace()
        if nested and left > 0:
            # a line inside a block: leaving config mode to renew would lose its parent's mode, so it goes out while
            # the lease has not run out by this controller's clock; the next top-level line renews
            return
        if self.lease.renew is None or nested:
            raise devicelock.LockLostError(step, cmd, "", "this run's lease may have run out before %r reaches the "
                                           "switch (%.0fs of its %ds lease left); this run stops and touches nothing "
                                           "more" % (cmd, max(left, 0), self.lease.ttl))
        if conn is not None:
            try:
                conn.exit_config_mode()
            except Exception as exc:  # noqa: BLE001
                raise self._fail(step, "end", exc)
        self.lease.renew(step)   # LockLostError when another run took it
        if conn is not None:
            try:
                conn.config_mode(enter) if enter else conn.config_mode()
            except Exception as exc:  # noqa: BLE001
                raise self._fail(step, enter or "configure terminal", exc)
        if self.lease.left() < duration + devicelock.FENCE_MARGIN:
            raise devicelock.LockLostError(step, cmd, "", "this run's lease (%ds) cannot cover %r (%ds) even just "
                                           "renewed; this run stops and touches nothing more"
                                           % (self.lease.ttl, cmd, duration))

    def get(self):
        if self.conn is None:
            self.conn = self.connect()
        return self.conn

    def session(self, step, cmd):
        """The open session, or a ConnectError: a device that cannot be reached is not a device that
        failed a command, and the report lists it as unreachable."""
        try:
            return self.get()
        except Exception as exc:  # noqa: BLE001 - netmiko raises timeouts, auth and SSH errors alike
            self.conn = None
            raise ConnectError(step, cmd, exc)

    def close(self):
        if self.conn is not None:
            try:
                self.conn.disconnect()
            except Exception:  # noqa: BLE001 - the session may already be gone
                pass
            self.conn = None

    def fresh(self, step):
        """A new session in exec mode (the old one may be dead, in config mode, or mid-answer)."""
        self.close()
        end = time.time() + self.reconnect_timeout
        while True:
            try:
                return self.get()
            except Exception as exc:  # noqa: BLE001
                if time.time() >= end:
                    raise StepError(step, "connect", str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
                                    "could not reconnect within %ss" % self.reconnect_timeout)
                time.sleep(1)

    def _fail(self, step, cmd, exc, note=None):
        said = _log_tail(self.conn) or str(exc)
        self.close()   # never reuse a session whose state is unknown
        return StepError(step, cmd, said, note or "%s" % (type(exc).__name__,))

    def _check(self, step, cmd, out, ok=None, tolerate=None):
        pat = self.driver.error_pattern
        if pat and re.search(pat, out, re.M) and not (tolerate and re.search(tolerate, out)):
            raise StepError(step, cmd, out, "the device rejected it")
        if ok and not re.search(ok, out, re.M):
            raise StepError(step, cmd, out, "expected an answer matching %r" % ok)
        return out

    def run(self, step, cmd, ok=None, read_timeout=None, in_config=False, tolerate=None, fresh_on_error=False):
        reads = cmd.startswith("show ") or cmd.startswith("nv config show") or cmd == self.driver.show_running
        if not reads and "diff" not in cmd:
            self.fence(step, cmd, max(read_timeout or 0, self.read_timeout))
            self.attempted.append(cmd)
        try:
            conn = self.session(step, cmd)
        except ConnectError:
            if not fresh_on_error:
                raise
            conn = self.fresh(step)   # a device coming back (after a commit timer or a reload) gets its window
        try:
            # a command that leaves config mode changes the prompt: wait for any prompt end, not the old one
            kw = dict(expect_string=r"[>#\$]\s*$") if in_config else {}
            out = conn.send_command(cmd, read_timeout=read_timeout or self.read_timeout, **kw)
        except Exception as exc:  # noqa: BLE001
            if fresh_on_error:
                self.fresh(step)
                return self.run(step, cmd, ok, read_timeout, in_config, tolerate)
            raise self._fail(step, cmd, exc, _why(exc, read_timeout or self.read_timeout))
        return self._check(step, cmd, out, ok, tolerate)

    def configure(self, step, cmds, enter=None, leave=True):
        """Enter config mode (``enter`` command, the platform's default when None, none when False) and type
        each line, checking each answer: a rejected line stops the push there and names itself."""
        cmd = enter or "configure terminal"
        conn = self.session(step, cmd)
        try:
            if enter is not False:   # False: a shell-like CLI (NVUE) with no config mode
                conn.config_mode(enter) if enter else conn.config_mode()
                self.attempted.append(cmd)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(step, cmd, exc, "cannot enter config mode (%s)" % type(exc).__name__)
        for cmd in cmds:
            self.fence(step, cmd, conn=conn, enter=enter)
            self.attempted.append(cmd)
            try:
                out = conn.send_config_set([cmd], enter_config_mode=False, exit_config_mode=False,
                                           read_timeout=self.read_timeout)
            except Exception as exc:  # noqa: BLE001
                raise self._fail(step, cmd, exc, _why(exc, self.read_timeout))
            try:
                self._check(step, cmd, out)
            except StepError:
                self.close()
                raise
        if leave:
            try:
                conn.exit_config_mode()
            except Exception as exc:  # noqa: BLE001
                raise self._fail(step, "end", exc)

    def save(self, step):
        cmd = self.driver.save_command or "save"
        self.attempted.append(cmd)
        conn = self.session(step, cmd)
        try:
            out = conn.save_config()
        except Exception as exc:  # noqa: BLE001
            raise self._fail(step, cmd, exc, _why(exc, self.read_timeout))
        return self._check(step, cmd, out)


def _why(exc, timeout):
    name = type(exc).__name__
    if "Timeout" in name:
        return "no answer within %ss (%s)" % (timeout, name)
    if isinstance(exc, (EOFError, OSError)) or "closed" in str(exc).lower() or "socket" in str(exc).lower():
        return "the session was lost (%s)" % name
    return "%s: %s" % (name, str(exc).strip().splitlines()[0] if str(exc).strip() else "")


def _log_tail(conn, chars=400):
    log = getattr(conn, "_aif_log", None)
    if log is None:
        return ""
    try:
        text = log.getvalue().decode("utf-8", "replace")
    except Exception:  # noqa: BLE001
        return ""
    return text[-chars:].strip()
