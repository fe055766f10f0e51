# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One result per probe or check: passed, failed or not run (with why). Nothing passes by default.

The record every validation and audit check is reduced to (docs/playbooks.md, "Results"):
    {"check": "switch_validate", "subject": "pinned 10.100.0.1 -> 10.100.1.2", "result": "passed",
     "why": "", "expected": "dev Ethernet5 via 10.254.0.1", "actual": "dev Ethernet5 via 10.254.0.1",
     "required": true}
result is one of RESULTS. `why` says why a check failed or did not run. `required: false` marks a check
nobody asked for or that does not apply (the RDMA bandwidth mesh without validate_rdma_bw, failover on a
spine): it is listed as not run but does not leave the device NOT VERIFIED; every other not-run result does.

Emitters may write this shape directly (``result`` key) or the older finding shape
``{probe, status: ok|fail|skipped, expected, actual, message}``, which `normalise` maps onto it.
"""

from __future__ import annotations

RESULTS = ("passed", "failed", "not_run")
_LEGACY = {"ok": "passed", "pass": "passed", "passed": "passed", "fail": "failed", "failed": "failed", "error": "failed",
           "skipped": "not_run", "not_run": "not_run", "skip": "not_run"}


def result(check, subject, outcome, why="", expected="", actual="", required=True):
    """A result record (the shape above)."""
    if outcome not in RESULTS:
        raise ValueError("result %r of %s %s: must be one of %s" % (outcome, check, subject, ", ".join(RESULTS)))
    return {"check": check, "subject": subject, "result": outcome, "why": why, "expected": expected, "actual": actual,
            "required": bool(required)}


def _text(value):
    return "" if value is None else str(value)


def is_probe_finding(finding):
    """A probe/check finding (as opposed to a preflight readiness finding with a severity)."""
    return isinstance(finding, dict) and ("result" in finding or "probe" in finding)


def normalise(finding, check):
    """A finding in either shape -> a result record. An unknown status is a failed result that says so,
    never a pass."""
    if "result" in finding:
        outcome = _LEGACY.get(str(finding["result"]).lower())
        why = _text(finding.get("why") or finding.get("message"))
    else:
        outcome = _LEGACY.get(str(finding.get("status", "")).lower())
        why = _text(finding.get("message"))
        if outcome == "not_run" and not why:
            why = _text(finding.get("actual"))   # rail_validate puts the reason there
    if outcome is None:
        outcome, why = "failed", "unknown result %r: not counted as passed" % (finding.get("result", finding.get("status")),)
    subject = _text(finding.get("subject") or finding.get("probe") or finding.get("check") or check)
    if outcome == "not_run" and not why:
        why = "no reason given"
    return result(_text(finding.get("check")) or check, subject, outcome, why, _text(finding.get("expected")),
                  _text(finding.get("actual")), finding.get("required", True))


def counts(results):
    """{'run': N, 'passed': P, 'failed': F, 'not_run': M, 'not_run_required': R}."""
    out = dict((name, 0) for name in RESULTS)
    required = 0
    for record in results:
        out[record["result"]] += 1
        required += record["result"] == "not_run" and record.get("required", True)
    out["run"] = out["passed"] + out["failed"]
    out["not_run_required"] = required
    return out
