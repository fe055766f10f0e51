#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: nccl_tests
short_description: Run nccl-tests all_reduce_perf across GPU hosts and judge the bus bandwidth
description:
  - From one GPU host, launches nccl-tests C(all_reduce_perf) over O(hosts) with an MPI launcher
    (Open MPI C(mpirun -np <ranks> -H host:slots,...), one GPU per rank) and parses its table.
  - Verdict - the peak out-of-place C(busbw) over the message sizes must reach O(threshold) x O(line_rate_gbps)
    (converted to GB/s), and no size may report wrong values or out-of-bounds values.
  - When the binary or the launcher is missing, nothing runs and the finding is C(skipped) with the reason.
  - Returns probe findings (C(probe), C(status) ok/fail/skipped, C(expected), C(actual), C(message)) for the
    validation report. Never changes the host.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  hosts:
    description: Host names or addresses the launcher starts ranks on (this host included).
    type: list
    elements: str
    required: true
  gpus_per_host:
    description: Ranks (GPUs) per host.
    type: int
    required: true
  line_rate_gbps:
    description: Planned rail line rate of one host in Gb/s (sum of its rail NICs' speeds).
    type: float
    required: true
  threshold:
    description: Fraction of the line rate the busbw peak must reach.
    type: float
    default: 0.8
  binary:
    description: C(all_reduce_perf) path or name (looked up in PATH and O(search_paths)).
    type: str
    default: all_reduce_perf
  search_paths:
    description: More directories to look for O(binary) in.
    type: list
    elements: path
    default: [/opt/nccl-tests/build, /usr/local/nccl-tests/build]
  launcher:
    description: MPI launcher path or name.
    type: str
    default: mpirun
  launcher_args:
    description: Launcher options placed before C(-np) (e.g. C(--allow-run-as-root), C(-x NCCL_DEBUG=WARN)).
    type: list
    elements: str
    default: []
  args:
    description: C(all_reduce_perf) options.
    type: list
    elements: str
    default: ["-b", "512M", "-e", "8G", "-f", "2", "-g", "1"]
  timeout:
    description: Seconds before the run is abandoned (a fail finding).
    type: int
    default: 900
attributes:
  check_mode:
    support: full
    description: Nothing is launched; the finding is skipped.
  diff_mode:
    support: none
    description: Nothing on the host changes.
"""

EXAMPLES = r"""
- name: All-reduce across the GPU hosts of the play
  aifabric.roce.nccl_tests:
    hosts: "{{ ansible_play_hosts }}"
    gpus_per_host: 8
    line_rate_gbps: 3200
    threshold: 0.8
  run_once: true
"""

RETURN = r"""
findings:
  description: One finding, C(probe) C(nccl all_reduce busbw), status ok, fail or skipped.
  returned: always
  type: list
  elements: dict
command:
  description: The argv run (or that would run).
  returned: when the binary and launcher were found
  type: list
  elements: str
verdict:
  description: C(status), C(peak_busbw), C(peak_size), C(reference_gbytes), C(required), C(avg_busbw), C(message).
  returned: when the test ran
  type: dict
rows:
  description: Parsed table rows (size, count, type, redop, root, out_of_place, in_place).
  returned: when the test ran
  type: list
  elements: dict
"""

import os
import re
import shutil

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.validate import nccl_tests
from ansible_collections.aifabric.roce.plugins.module_utils import bounds

PROBE = "nccl all_reduce busbw"
_HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,252}$")


def _finding(status, message, expected=None, actual=None):
    return {"probe": PROBE, "status": status, "expected": expected, "actual": actual, "message": message}


def _find(name, extra_dirs):
    if os.path.sep in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    path = os.pathsep.join([os.environ.get("PATH", "")] + list(extra_dirs))
    return shutil.which(name, path=path)


def main():
    module = AnsibleModule(
        argument_spec=dict(hosts=dict(type="list", elements="str", required=True),
                           gpus_per_host=dict(type="int", required=True),
                           line_rate_gbps=dict(type="float", required=True),
                           threshold=dict(type="float", default=0.8),
                           binary=dict(type="str", default="all_reduce_perf"),
                           search_paths=dict(type="list", elements="path",
                                             default=["/opt/nccl-tests/build", "/usr/local/nccl-tests/build"]),
                           launcher=dict(type="str", default="mpirun"),
                           launcher_args=dict(type="list", elements="str", default=[]),
                           args=dict(type="list", elements="str", default=list(nccl_tests.DEFAULT_ARGS)),
                           timeout=dict(type="int", default=900)),
        supports_check_mode=True,
    )
    bounds.enforce(module, "nccl_tests")
    p = module.params
    bad = [h for h in p["hosts"] if not _HOST_RE.fullmatch(h)]
    if bad or not p["hosts"]:
        module.fail_json(msg="hosts: %s (host names or addresses: letters, digits, '.', '_', ':', '-')"
                         % (", ".join(repr(h) for h in bad) or "empty"))
    if p["gpus_per_host"] < 1 or p["line_rate_gbps"] <= 0 or not 0 < p["threshold"] <= 1:
        module.fail_json(msg="gpus_per_host must be >= 1, line_rate_gbps > 0 and threshold in (0, 1]")
    binary = _find(p["binary"], p["search_paths"])
    launcher = _find(p["launcher"], [])
    missing = [what for what, found in (("nccl-tests binary %s" % p["binary"], binary),
                                        ("MPI launcher %s" % p["launcher"], launcher)) if not found]
    if missing:
        module.exit_json(changed=False, skipped=True, skip_reason="not run: %s not found" % " and ".join(missing),
                         findings=[_finding("skipped", "not run: %s not found on this host" % " and ".join(missing))])
    argv = nccl_tests.command(launcher, binary, p["hosts"], p["gpus_per_host"], p["launcher_args"], p["args"])
    expected = ">= %.2f GB/s busbw" % (p["line_rate_gbps"] / 8.0 * p["threshold"])
    if module.check_mode:
        module.exit_json(changed=False, command=argv, findings=[_finding("skipped", "check mode: not run", expected)])
    timeout = shutil.which("timeout")
    run_argv = ([timeout, str(p["timeout"])] if timeout else []) + argv
    rc, out, err = module.run_command(run_argv)
    parsed = nccl_tests.parse_output(out)
    verdict = nccl_tests.judge(parsed, p["line_rate_gbps"], p["threshold"])
    if rc != 0:
        verdict["status"] = "fail"
        why = " (timeout)" if rc == 124 and timeout else ""
        verdict["message"] = "%s exited %d%s: %s" % (os.path.basename(p["launcher"]), rc, why, (err or out).strip()[-400:])
    actual = "no result"
    if verdict["peak_busbw"] is not None:
        actual = "%.2f GB/s busbw (at %s B)" % (float(verdict["peak_busbw"]), verdict["peak_size"])
    module.exit_json(changed=False, command=argv, verdict=verdict, rows=parsed["rows"],
                     findings=[_finding(verdict["status"], verdict["message"], expected, actual)])


if __name__ == "__main__":
    main()
