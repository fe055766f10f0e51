# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Root-relative file access and a tool runner that can replay captured output.

Every read of /sys, /proc and /etc in the host readers goes through a SysRoot, so a fixture
tree can stand in for the real filesystem (``root='/'`` on a host, a directory in tests).
External tools (nvidia-smi, ethtool, dcb, mlnx_qos) go through a ToolRunner: it runs the real
binary when present, or reads ``<capture_dir>/<key>.txt`` when pointed at captured output.
A missing file, device or tool is a value (``None`` / ``ToolResult(missing=True)``), never an
exception.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re
import shutil
import subprocess


class SysRoot(object):
    """Filesystem view rooted at ``root`` (``/`` for the live system)."""

    def __init__(self, root="/"):
        self.root = os.path.realpath(root or "/")

    @property
    def live(self):
        return self.root == "/"

    def path(self, rel):
        return os.path.join(self.root, rel.lstrip("/"))

    def exists(self, rel):
        return os.path.lexists(self.path(rel))

    def isdir(self, rel):
        return os.path.isdir(self.path(rel))

    def read(self, rel, default=None):
        """Stripped text of a file, or ``default`` when it is missing or unreadable."""
        try:
            with open(self.path(rel), "r") as handle:
                return handle.read().strip()
        except (IOError, OSError, UnicodeDecodeError):
            return default

    def read_bytes(self, rel):
        try:
            with open(self.path(rel), "rb") as handle:
                return handle.read()
        except (IOError, OSError):
            return None

    def read_int(self, rel, default=None, base=10):
        text = self.read(rel)
        if text is None:
            return default
        try:
            return int(text, base)
        except ValueError:
            return default

    def listdir(self, rel):
        try:
            return sorted(os.listdir(self.path(rel)))
        except (IOError, OSError):
            return []

    def link_name(self, rel):
        """Basename of a symlink's resolved target (``device`` -> ``0000:1a:00.0``), or None."""
        full = self.path(rel)
        if not os.path.islink(full):
            return None
        return os.path.basename(os.path.realpath(full))

    def realpath(self, rel):
        """Resolved path relative to the root (``/sys/devices/...``), or None when missing."""
        full = os.path.realpath(self.path(rel))
        if not os.path.exists(full):
            return None
        if self.root == "/":
            return full
        if full != self.root and not full.startswith(self.root + os.sep):
            return None
        return "/" + os.path.relpath(full, self.root)

    def write(self, rel, value):
        with open(self.path(rel), "w") as handle:
            handle.write(value)


class ToolResult(object):
    """Output of one tool invocation; ``missing`` when the tool (or its capture) is absent."""

    def __init__(self, argv, rc=0, stdout="", stderr="", missing=False, source="live"):
        self.argv = list(argv)
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.missing = missing
        self.source = source

    @property
    def ok(self):
        return not self.missing and self.rc == 0

    def as_dict(self):
        return {"argv": self.argv, "rc": self.rc, "missing": self.missing, "source": self.source,
                "stderr": self.stderr.strip()[:400]}


def capture_key(argv):
    """File name of a captured invocation: ``nvidia-smi topo -m`` -> ``nvidia-smi_topo_-m``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(argv)).strip("_")


class ToolRunner(object):
    """Run read-only tool queries, live or from a directory of captured outputs.

    capture_dir: when set, ``argv`` is answered from ``<capture_dir>/<capture_key(argv)>.txt``;
    no capture means the tool is reported missing. When unset and ``live`` is False (an alternate
    root without captures), tools are reported missing too: the live tool would describe this
    machine, not the tree under test.
    """

    def __init__(self, capture_dir=None, live=True, timeout=20):
        self.capture_dir = capture_dir
        self.live = live and not capture_dir
        self.timeout = timeout

    def available(self, tool):
        if self.capture_dir:
            prefix = capture_key([tool])
            try:
                return any(name.startswith(prefix) for name in os.listdir(self.capture_dir))
            except OSError:
                return False
        return self.live and shutil.which(tool) is not None

    def run(self, argv):
        if self.capture_dir:
            path = os.path.join(self.capture_dir, capture_key(argv) + ".txt")
            try:
                with open(path, "r") as handle:
                    return ToolResult(argv, stdout=handle.read(), source=path)
            except (IOError, OSError):
                return ToolResult(argv, rc=None, missing=True, source=path)
        if not self.live or shutil.which(argv[0]) is None:
            return ToolResult(argv, rc=None, missing=True, source="PATH")
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    universal_newlines=True)
            out, err = proc.communicate(timeout=self.timeout)
        except (OSError, subprocess.SubprocessError) as exc:
            return ToolResult(argv, rc=None, stderr=str(exc), missing=True)
        return ToolResult(argv, rc=proc.returncode, stdout=out, stderr=err)


def parse_cpulist(text):
    """``0-3,8,10-11`` -> [0, 1, 2, 3, 8, 10, 11] (kernel cpulist format)."""
    cpus = set()
    for part in (text or "").replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            cpus.update(range(int(low), int(high) + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def format_cpulist(cpus):
    """[0, 1, 2, 3, 8] -> ``0-3,8``."""
    parts = []
    run = []
    for cpu in sorted(set(cpus)):
        if run and cpu == run[-1] + 1:
            run.append(cpu)
            continue
        if run:
            parts.append(str(run[0]) if len(run) == 1 else "%d-%d" % (run[0], run[-1]))
        run = [cpu]
    if run:
        parts.append(str(run[0]) if len(run) == 1 else "%d-%d" % (run[0], run[-1]))
    return ",".join(parts)
