# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Processes of the RDMA bandwidth probes (stdlib only), for the `rail_validate` module.

`run_command` runs one command and waits; the bandwidth mesh needs servers that outlive the module
(started detached, in their own session, output to a log file) and clients that run at once.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import subprocess
import tempfile
import time

from ansible_collections.aifabric.roce.plugins.module_utils.validate.perftest import listening_ports


def listening():
    """TCP ports in LISTEN state on this host (/proc/net/tcp and tcp6)."""
    ports = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as handle:
                ports |= listening_ports(handle.read())
        except (IOError, OSError):
            continue
    return ports


def log_tail(path):
    """Last non-empty line of a log file ('' when none)."""
    try:
        with open(path) as handle:
            lines = [line.strip() for line in handle if line.strip()]
    except (IOError, OSError):
        return ""
    return lines[-1] if lines else ""


def start_detached(argv, label):
    """Start `argv` in its own session (it survives the module), stdin from /dev/null, stdout and
    stderr to a new log file. Returns {'process', 'pid', 'log'}."""
    handle, log = tempfile.mkstemp(prefix="aifabric-%s-" % label, suffix=".log")
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    finally:
        os.close(handle)
    return {"process": process, "pid": process.pid, "log": log}


def wait_listening(started, wait):
    """For each (port, started) pair: 'listening', 'exited' or 'running' (alive, port not seen within
    `wait` seconds), in the same order."""
    states = [None] * len(started)
    deadline = time.time() + wait
    while True:
        ports = listening()
        for index, (port, server) in enumerate(started):
            if states[index] is not None:
                continue
            if server["process"].poll() is not None:
                states[index] = "exited"
            elif port in ports:
                states[index] = "listening"
            elif time.time() >= deadline:
                states[index] = "running"
        if all(state is not None for state in states):
            return states
        time.sleep(0.1)


def run_all(commands, timeout):
    """Run all `commands` at once; [(rc, output, timed_out)] in order. A command still running
    after `timeout` seconds (counted from the start of all) is killed."""
    running = [subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                universal_newlines=True) for argv in commands]
    deadline = time.time() + timeout
    results = []
    for process in running:
        try:
            output = process.communicate(timeout=max(1.0, deadline - time.time()))[0]
            results.append((process.returncode, output, False))
        except subprocess.TimeoutExpired:
            process.kill()
            output = process.communicate()[0]
            results.append((process.returncode, output, True))
    return results
