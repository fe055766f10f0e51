# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The locks around one run's change (part of the switch path: nos/apply.py holds the flow) and the events that stop
a run: ``ForeignChange`` here, nos/devicelock.py ``LockLostError`` (the device lock itself)."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time

from ansible_collections.aifabric.roce.plugins.module_utils.nos.errors import StepError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import Changes
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import sent_ops
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import RefusedError

# seconds of line-by-line sending between two reads of the whole running config (StagingGuard): the window in
# which an operator's edit of a key this run sets later could still be overwritten (docs/switches.md)
RECHECK_EVERY = 1.0

__all__ = ["DeviceLock", "ForeignChange", "RECHECK_EVERY", "StagingGuard"]


class ForeignChange(StepError):
    """The switch changed under this run, by someone else (another controller, a CLI user)."""


class StagingGuard(object):
    """Between the blocks of a push the NOS applies line by line (NX-OS, klish, AsterNOS) and before FRR's ``vtysh -f``:
    renew the lease at a third of the TTL and re-read the running config, stopping before the next line when someone
    else changed the switch since this run's read (docs/switches.md#locks). Due every ``every`` seconds."""

    def __init__(self, applier, base, want, every):
        self.applier, self.base, self.want, self.every = applier, base, want, float(every)
        self.checked = self.renewed = applier._clock()

    def due(self):
        now = self.applier._clock()
        return now - self.checked >= self.every or now - self.renewed >= self.applier.lock_ttl / 3.0

    def __call__(self, step):
        run = self.applier
        if run._clock() - self.renewed >= run.lock_ttl / 3.0:
            run._renew(step)   # still ours, the lease renewed by the device's clock (LockLostError otherwise)
            self.renewed = run._clock()
        got = run.read_image(step)
        self.checked = run._clock()
        ch = Changes(self.base, self.want, got, sent=sent_ops(run.attempted))
        if ch.foreign:
            raise ForeignChange(step, None, "", "someone else changed the switch while this run was sending its "
                                "change; this run stopped before its next line, which could overwrite it: %s"
                                % ch.describe())


class DeviceLock(object):
    """Per-device lock on this controller (flock on a file per host:port): two runs of one controller queue here
    before they meet at the device lock. Its directory is this user's own (0700, owner checked) and the file is opened
    with O_NOFOLLOW and checked to be a regular file of ours, so a planted link is refused, not written."""

    def __init__(self, key, directory=None, timeout=300):
        self.directory = directory or os.path.join(tempfile.gettempdir(), "aifabric-switch-locks-%d" % os.getuid())
        self.path = os.path.join(self.directory, re.sub(r"[^A-Za-z0-9_.-]", "_", key) + ".lock")
        self.timeout, self.fd = timeout, None

    def _safe_directory(self):
        try:
            os.mkdir(self.directory, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(self.directory)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise RefusedError("the controller lock directory %s is not a directory owned by this user (uid %d): "
                               "refusing to use it" % (self.directory, os.getuid()))

    def _open(self):
        self._safe_directory()
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise RefusedError("the controller lock file %s is a symlink: refusing to follow it" % self.path)
            raise
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            os.close(fd)
            raise RefusedError("the controller lock file %s is not a regular file of this user" % self.path)
        return fd

    def __enter__(self):
        import fcntl
        self.fd = self._open()
        end = time.time() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except (IOError, OSError) as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.time() >= end:
                    holder = os.pread(self.fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"
                    os.close(self.fd)
                    raise RefusedError("another run holds the controller lock %s (%s) for more than %ss"
                                       % (self.path, holder, self.timeout))
                time.sleep(0.2)
        os.ftruncate(self.fd, 0)   # our own regular file (checked above), held under flock
        os.pwrite(self.fd, ("pid %d since %s" % (os.getpid(), time.strftime("%H:%M:%S"))).encode(), 0)
        return self

    def __exit__(self, *exc):
        import fcntl
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        return False
