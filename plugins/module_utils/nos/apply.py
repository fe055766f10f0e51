# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Apply a driver's remediation inside the NOS's transaction, verify, save; roll back on failure.

No Ansible and no netmiko import here: the caller passes ``connect()``, a factory returning a
netmiko-like connection (send_command, send_config_set, save_config, disconnect).
"""

from __future__ import annotations

import time

from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import SECTIONS


class ApplyError(Exception):
    def __init__(self, msg, attempted, device_error, rolled_back, state=None):
        Exception.__init__(self, msg)
        self.attempted = attempted
        self.device_error = device_error
        self.rolled_back = rolled_back
        self.state = state


class Applier(object):
    def __init__(self, driver, connect, intent, qos, sections=SECTIONS, commit_timer=0, name_suffix=None):
        self.driver, self.connect, self.intent, self.qos = driver, connect, intent, qos
        self.sections = tuple(sections)
        self.commit_timer = int(commit_timer or 0)
        self.tag = "aif-%s" % (name_suffix or int(time.time() * 1000) % 100000000)
        self.conn = None
        self.attempted = []

    # ------------------------------------------------------------------ helpers
    def _conn(self, fresh=False):
        if fresh and self.conn is not None:
            try:
                self.conn.disconnect()
            except Exception:  # noqa: BLE001 - the old session may already be gone
                pass
            self.conn = None
        if self.conn is None:
            self.conn = self.connect()
        return self.conn

    def read(self, fresh=False):
        conn = self._conn(fresh)
        return self.driver.parse(conn.send_command(self.driver.show_running), self.intent, self.sections)

    def close(self):
        if self.conn is not None:
            try:
                self.conn.disconnect()
            except Exception:  # noqa: BLE001
                pass
            self.conn = None

    def _send(self, cmds, **kw):
        self.attempted.extend(cmds)
        return self._conn().send_config_set(cmds, error_pattern=self.driver.error_pattern, **kw)

    # ------------------------------------------------------------------ plan
    def plan(self):
        before = self.read()
        after = self.driver.render(self.intent, self.qos, self.sections)
        return before, after, self.driver.diff(before, after)

    # ------------------------------------------------------------------ apply
    def apply(self, before, after, cmds, save=True):
        tx = self.driver.transaction
        try:
            if tx == "checkpoint":
                self._conn().send_command("checkpoint %s" % self.tag)
            if tx == "revision":
                self._conn().send_command("nv config detach")
            self._push(cmds)
            got = self.read()
            if got != after:
                raise ApplyError("verification failed: managed config differs from intent after apply",
                                 self.attempted, _first_diff(got, after), False)
            if tx == "session" and self.commit_timer:
                self._conn().send_command("configure session %s commit" % self.tag)
            if save:
                self.save()
        except Exception as exc:  # noqa: BLE001 - any failure leads to rollback
            device_error = getattr(exc, "device_error", None) or str(exc)
            ok, state = self.rollback(before)
            raise ApplyError("apply failed on %s (%s); rollback %s" % (
                self.driver.name, device_error.strip().splitlines()[-1] if device_error.strip() else type(exc).__name__,
                "restored the previous config" if ok else "DID NOT restore the previous config"),
                list(self.attempted), device_error, ok, state)
        finally:
            if tx == "checkpoint":
                try:
                    self._conn().send_command("no checkpoint %s" % self.tag)
                except Exception:  # noqa: BLE001
                    pass
        return True

    def _push(self, cmds):
        tx = self.driver.transaction
        if tx == "session":
            commit = "commit timer %s" % _hms(self.commit_timer) if self.commit_timer else "commit"
            self._send(list(cmds) + [commit], config_mode_command="configure session %s" % self.tag, exit_config_mode=False)
        elif tx == "revision":
            self._send(list(cmds), enter_config_mode=False, exit_config_mode=False)
            pending = self._conn().send_command("nv config diff -o commands")
            if not pending.strip():
                raise ApplyError("NVUE pending revision is empty after staging", self.attempted, pending, False)
            self.attempted.append("nv config apply -y")
            out = self._conn().send_command("nv config apply -y", read_timeout=120)
            if "applied" not in out:
                raise ApplyError("nv config apply failed", self.attempted, out, False)
        else:
            self._send(list(cmds))

    def save(self):
        if self.driver.transaction == "revision":
            self._conn().send_command("nv config save")
        else:
            self._conn().save_config()

    # ------------------------------------------------------------------ rollback
    def rollback(self, before):
        """Bring the managed sections back to ``before``; returns (ok, managed state seen)."""
        tx = self.driver.transaction
        state = None
        try:
            try:
                conn = self._conn()
                conn.find_prompt()
            except Exception:  # noqa: BLE001 - session lost: open a new one
                conn = self._conn(fresh=True)
            if tx == "session":
                try:
                    conn.send_command("abort") if conn.check_config_mode() else None
                except Exception:  # noqa: BLE001
                    pass
            if tx == "checkpoint":
                conn.send_command("rollback running-config checkpoint %s" % self.tag, read_timeout=120)
            if tx == "revision":
                conn.send_command("nv config detach")
            state = self.read()
            if state != before:
                # session committed / revision applied / klish partial: apply the computed reverse
                back = self.driver.diff(state, before)
                if tx == "session":
                    conn.send_config_set(back + ["commit"], config_mode_command="configure session %s-rb" % self.tag,
                                         exit_config_mode=False, error_pattern=self.driver.error_pattern)
                elif tx == "revision":
                    conn.send_config_set(back, enter_config_mode=False, exit_config_mode=False, error_pattern=self.driver.error_pattern)
                    conn.send_command("nv config apply -y", read_timeout=120)
                else:
                    conn.send_config_set(back, error_pattern=self.driver.error_pattern)
                state = self.read()
            return state == before, state
        except Exception:  # noqa: BLE001
            return False, state


def _hms(seconds):
    return "%02d:%02d:%02d" % (seconds // 3600, seconds % 3600 // 60, seconds % 60)


def _first_diff(got, want):
    g, w = set(got.splitlines()), set(want.splitlines())
    return "missing: %s; unexpected: %s" % (sorted(w - g)[:5], sorted(g - w)[:5])
