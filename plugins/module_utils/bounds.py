# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bounds of every numeric and path argument of the collection's modules (issue 37 item 7).

Ansible's argument_spec types a value but never bounds it: ``lock_timeout: -1``, ``port: 70000`` or ``lock_dir: /proc``
pass its checks. Each module calls :func:`enforce` right after AnsibleModule has typed its arguments (the action
plugins call :func:`check`), so a value outside its range fails the task before anything is read or sent, with one
message per argument naming it, its range, why, and the fix. tests/unit/modules/test_bounds.py walks every module's
documented options and fails on a numeric or path option without a bound here, and on a bound its module ignores.

Numeric bounds are keyed by (module, argument) or ("*", argument) for one meaning shared by several modules. Path
arguments are checked by type: not empty, no NUL byte, and, for the paths a module writes (WRITTEN), not inside a
kernel pseudo-filesystem (/proc, /sys, /dev), where a write can only fail or do harm. Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import math
import os

from ansible_collections.aifabric.roce.plugins.module_utils.nos.devicelock import (
    DRAIN_WAIT_MAX, DRAIN_WAIT_MIN, TTL_MAX, TTL_MIN)

DAY = 86400
PSEUDO_FS = ("/proc", "/sys", "/dev")

# (module or "*", argument) -> (lowest, highest, unit, what it is / why the range)
NUMERIC = {
    # switch connection (doc fragment switch_connection) and switch_config
    ("*", "port"): (1, 65535, "", "a TCP port"),
    ("*", "timeout"): (1, 3600, "s", "the SSH connect and login timeout"),
    ("*", "read_timeout"): (1, 7200, "s",
                            "how long one switch command may run; it must outlast the longest single command"),
    ("*", "reconnect_timeout"): (0, 3600, "s", "how long a dropped session is retried (0: not retried)"),
    ("*", "lock_timeout"): (0, DAY, "s", "how long to wait for the controller-side lock (0: do not wait)"),
    ("*", "lock_ttl"): (TTL_MIN, TTL_MAX, "s", "the device lock's lease time"),
    ("*", "drain_wait"): (DRAIN_WAIT_MIN, DRAIN_WAIT_MAX, "s", "the wait after a drain and after the change"),
    ("*", "commit_timer"): (0, 3600, "s", "the confirm window of a commit (0: just long enough for verification); "
                                          "longer leaves the switch an hour on an unconfirmed change"),
    ("*", "workers"): (1, 256, "", "switches read at once by one controller process"),
    ("switch_validate", "failover_timeout_ms"): (1, 600000, "ms", "how long a failover may take"),
    # sizing: the largest GPU clusters built are ~10^5 GPUs; the rest bound what real hardware offers
    ("fabric_sizing", "gpus"): (1, 10000000, "", "GPUs to size for (ten million at most)"),
    ("fabric_sizing", "gpus_per_server"): (1, 64, "", "GPUs in one server"),
    ("fabric_sizing", "nics_per_server"): (1, 64, "", "rail NICs in one server"),
    ("fabric_sizing", "nic_gbps"): (1, 3200, "Gb/s", "one NIC port's speed"),
    ("fabric_sizing", "leaf_ports"): (2, 2048, "", "a leaf's port count"),
    ("fabric_sizing", "leaf_port_gbps"): (1, 3200, "Gb/s", "one leaf port's speed"),
    ("fabric_sizing", "spine_ports"): (2, 2048, "", "a spine's port count"),
    ("fabric_sizing", "spine_port_gbps"): (1, 3200, "Gb/s", "one spine port's speed"),
    ("fabric_sizing", "radix"): (2, 2048, "", "a switch's port count"),
    ("fabric_sizing", "tiers"): (2, 5, "", "switch tiers of a fat tree"),
    # host checks and tests
    # GOR (docs/gor.md)
    ("gor_steer", "hold_down"): (0, DAY, "s",
                                 "how long a link must be healthy before the bindings moved for it go back"),
    ("gor_steer", "now"): (0, 1 << 40, "s", "the current time in epoch seconds"),
    ("nccl_tests", "gpus_per_host"): (1, 64, "", "GPUs in one host"),
    ("nccl_tests", "line_rate_gbps"): (1, 3200, "Gb/s", "one NIC port's line rate"),
    ("nccl_tests", "threshold"): (0.01, 1.0, "", "the share of line rate a result must reach"),
    ("nccl_tests", "timeout"): (1, DAY, "s", "how long the NCCL test may run"),
    ("probe_plan", "udp_dport"): (1, 65535, "", "a UDP port"),
    ("rail_network", "owned_tables"): (1, 2 ** 31, "", "a routing table id, as fabric.routing.table_base"),
    ("rail_network", "owned_rule_priorities"): (1, 32765, "", "an ip rule priority above 0 (the local rule) and "
                                                              "below 32766 (the main table's rule)"),
    ("rail_validate", "ping_count"): (1, 100, "", "pings per path"),
    ("rail_validate", "timeout"): (1, 60, "s", "one ping's wait"),
    ("rail_validate", "rdma_bw_server_timeout"): (1, 3600, "s", "how long an ib_write_bw server waits"),
    ("rank_order", "message_bytes"): (1, 1 << 40, "bytes", "the collective's message size"),
    ("rank_order", "slots"): (1, 1024, "", "ranks per host"),
    ("rdma_preflight", "gid_index"): (0, 255, "", "a GID table index"),
    ("rdma_preflight", "mtu"): (68, 9216, "bytes", "an Ethernet MTU"),
    ("roce_health", "pause_threshold"): (0, 1 << 62, "frames", "PFC pause frames that make a port suspect"),
    ("validation_probes", "peers_per_rail"): (1, 64, "", "peers probed per rail"),
    ("validation_probes", "rdma_bw_threshold"): (0.01, 1.0, "", "the share of line rate a result must reach"),
    ("validation_probes", "rdma_bw_duration"): (1, 3600, "s", "one ib_write_bw run"),
    ("validation_probes", "rdma_bw_base_port"): (1024, 64511, "",
                                                 "the first ib_write_bw TCP port (the probes use up to 1024 from it)"),
    ("validation_probes", "rdma_bw_qps"): (1, 1024, "", "queue pairs per ib_write_bw run"),
}

# values inside a range that are still refused: the kernel's own tables (ip-route(8)), never ours to empty
EXCLUDED = {
    ("rail_network", "owned_tables"): {253: "the kernel's default table", 254: "the main table",
                                       255: "the kernel's local table"},
}

# path arguments a module writes (files or directories): never in a kernel pseudo-filesystem
WRITTEN = {
    ("*", "dest"), ("*", "lock_dir"), ("roce_health", "state"), ("gor_steer", "record_path"),
}


class BoundsError(ValueError):
    """One or more arguments out of bounds; ``problems`` holds one message each."""

    def __init__(self, problems):
        ValueError.__init__(self, "; ".join(problems))
        self.problems = problems


def bound(module, name):
    """The numeric bound of argument ``name`` of ``module``, or None."""
    return NUMERIC.get((module, name)) or NUMERIC.get(("*", name))


def _numeric(module, key, name, value, spec_type):
    low, high, unit, what = bound(module, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return ["%s is %r: it must be a number%s (%s)" % (key, value, " of %s" % unit if unit else "", what)]
    if not low <= value <= high:
        unit = " " + unit if unit else ""
        return ["%s is %s: it must be between %s and %s%s (%s). Fix: set %s within that range"
                % (key, value, low, high, unit, what, key)]
    excluded = EXCLUDED.get((module, name), {})
    if value in excluded:
        return ["%s is %s, %s: this module would empty it. Fix: remove %s from %s"
                % (key, value, excluded[value], value, name)]
    return []


def _path(module, key, name, value):
    if not isinstance(value, str) or not value.strip():
        return ["%s is empty: give a path. Fix: set %s to a file or directory path, or leave it out" % (key, key)]
    if "\0" in value:
        return ["%s holds a NUL byte: no path can. Fix: remove it" % key]
    if (module, name) in WRITTEN or ("*", name) in WRITTEN:
        real = os.path.realpath(os.path.abspath(value))
        for fs in PSEUDO_FS:
            if real == fs or real.startswith(fs + "/"):
                return ["%s is %s, inside the kernel's %s filesystem, where nothing can be kept. Fix: give a "
                        "directory on a real filesystem (e.g. under /var/lib or the playbook's build dir)"
                        % (key, value, fs)]
        if name == "lock_dir" and os.path.exists(real) and not os.path.isdir(real):
            return ["%s %s exists and is not a directory. Fix: give a directory" % (key, value)]
    return []


def check(module, params, spec, prefix=""):
    """Problems (one message per argument, naming it) with the values of ``params`` (typed by Ansible) against
    the bounds of ``module``; walks suboptions (``switches[2].port``)."""
    out = []
    for name, opts in sorted(spec.items()):
        value = params.get(name) if isinstance(params, dict) else None
        if value is None:
            continue
        key = prefix + name
        kind, elements = opts.get("type", "str"), opts.get("elements")
        if kind in ("int", "float") and bound(module, name):
            out += _numeric(module, key, name, value, kind)
        elif kind == "path":
            out += _path(module, key, name, value)
        elif kind == "list" and elements in ("int", "float", "path"):
            for index, item in enumerate(value):
                if item is None:
                    continue
                if elements == "path":
                    out += _path(module, "%s[%d]" % (key, index), name, item)
                elif bound(module, name):
                    out += _numeric(module, "%s[%d]" % (key, index), name, item, elements)
        elif opts.get("options") and isinstance(value, dict):
            out += check(module, value, opts["options"], key + ".")
        elif opts.get("options") and isinstance(value, list):
            for index, item in enumerate(value):
                out += check(module, item, opts["options"], "%s[%d]." % (key, index))
    return out


def enforce(module, name):
    """Fail the AnsibleModule ``module`` (named ``name``, e.g. "switch_config") if an argument is out of bounds,
    before the module does anything."""
    problems = check(name, module.params, module.argument_spec)
    if problems:
        module.fail_json(msg="; ".join(problems), problems=problems)


def bounds_doc():
    """docs/argument-bounds.md (tools/gen_docs.py writes it; a unit test keeps it current)."""
    lines = ["# Argument bounds", "",
             "<!-- generated by tools/gen_docs.py from plugins/module_utils/bounds.py: do not edit -->", "",
             "Every numeric and path argument of every module is bounded. A value outside its range fails the task "
             "before anything is read, written or sent, with one message per argument naming it, its range and the "
             "fix (`lock_timeout is -1: it must be between 0 and 86400 s ...`). A module of this collection that "
             "adds a numeric argument without a bound here fails its unit test (tests/unit/modules/test_bounds.py).",
             "", "| module | argument | lowest | highest | unit | what |", "|---|---|---|---|---|---|"]
    for (module, name), (low, high, unit, what) in sorted(NUMERIC.items(), key=lambda i: (i[0][0] != "*", i[0])):
        extra = EXCLUDED.get((module, name))
        if extra:
            what += "; refused: " + ", ".join("%d (%s)" % (k, v) for k, v in sorted(extra.items()))
        who = "every module" if module == "*" else "`%s`" % module
        lines.append("| %s | `%s` | %s | %s | %s | %s |" % (who, name, low, high, unit, what))
    lines += ["", "Path arguments: never empty and never holding a NUL byte; a path a module writes (%s) is refused "
              "inside %s, and `lock_dir` must be a directory if it exists."
              % (", ".join("`%s`" % n for _m, n in sorted(WRITTEN)), ", ".join("`%s`" % p for p in PSEUDO_FS)), ""]
    return "\n".join(lines)
