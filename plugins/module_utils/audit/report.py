# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift report: check-mode results of every device -> one report (JSON, Markdown, HTML).

Input entries, one per (device, check):
    {"device": "gpu01", "kind": "host", "check": "host_network", "status": "drift",
     "items": [{"item": "rail0 mtu", "expected": "9000", "actual": "1500"}], "message": ""}
status is one of ok, drift, fail, warn, skipped. `items_from_diff` turns an Ansible
before/after diff into items, so any module with a truthful diff can feed the report.
"""

from __future__ import annotations

import html
import json

STATUSES = ("fail", "drift", "warn", "skipped", "ok")
_MISSING = "(absent)"


def _text(value):
    if value is None:
        return _MISSING
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def items_from_diff(diff, prefix=""):
    """Items that differ between diff['before'] and diff['after'].

    Dicts are compared key by key (recursively, with dotted paths); lists of scalars as sets
    (members added/removed); text line by line. `expected` is the after side (the intent),
    `actual` the before side (the device).
    """
    if isinstance(diff, list):
        items = []
        for part in diff:
            items.extend(items_from_diff(part, prefix))
        return items
    if not isinstance(diff, dict) or ("before" not in diff and "after" not in diff):
        return []
    return _compare(diff.get("before"), diff.get("after"), prefix or diff.get("after_header") or diff.get("before_header") or "")


def _compare(actual, expected, path):
    if isinstance(actual, dict) and isinstance(expected, dict):
        items = []
        for key in sorted(set(actual) | set(expected), key=str):
            child = "%s.%s" % (path, key) if path else str(key)
            items.extend(_compare(actual.get(key), expected.get(key), child))
        return items
    if isinstance(actual, str) and isinstance(expected, str) and ("\n" in actual or "\n" in expected):
        before, after = actual.splitlines(), expected.splitlines()
        removed = [line for line in before if line not in set(after)]
        added = [line for line in after if line not in set(before)]
        items = [{"item": "%s: line" % path if path else "line", "expected": _MISSING, "actual": line} for line in removed]
        items += [{"item": "%s: line" % path if path else "line", "expected": line, "actual": _MISSING} for line in added]
        return items
    if isinstance(actual, list) and isinstance(expected, list) and all(not isinstance(v, (dict, list)) for v in actual + expected):
        gone = [v for v in actual if v not in expected]
        new = [v for v in expected if v not in actual]
        return ([{"item": path, "expected": _MISSING, "actual": _text(v)} for v in gone]
                + [{"item": path, "expected": _text(v), "actual": _MISSING} for v in new])
    if actual != expected:
        return [{"item": path or "value", "expected": _text(expected), "actual": _text(actual)}]
    return []


def items_from_change_items(changes):
    """Structured change items ({kind, action, before/after or the changed value}) -> report items."""
    items = []
    for change in changes:
        if not isinstance(change, dict) or "kind" not in change:
            continue
        subject = change.get("dev") or change.get("name") or change.get("interface") or ""
        label = ("%s %s" % (change["kind"], subject)).strip()
        if "before" in change or "after" in change:
            items.append({"item": label, "expected": _text(change.get("after")), "actual": _text(change.get("before"))})
            continue
        value = next((change[k] for k in ("route", "rule", "address", "value", "line") if k in change), label)
        if change.get("action") in ("delete", "del", "remove", "absent"):
            items.append({"item": label, "expected": _MISSING, "actual": _text(value)})
        else:
            items.append({"item": label, "expected": _text(value), "actual": _MISSING})
    return items


def entry_from_result(device, kind, check, result):
    """One report entry from a registered Ansible task result (check mode)."""
    result = result or {}
    if result.get("skipped"):
        return {"device": device, "kind": kind, "check": check, "status": "skipped", "items": [],
                "message": result.get("skip_reason", "")}
    if result.get("failed") or result.get("unreachable"):
        return {"device": device, "kind": kind, "check": check, "status": "fail", "items": [],
                "message": _text(result.get("msg", "failed"))}
    items = list(result.get("drift") or [])
    if not items and result.get("changed") and isinstance(result.get("items"), list):
        items = items_from_change_items(result["items"])
    if not items and result.get("changed"):
        items = items_from_diff(result.get("diff"))
        if not items:
            items = [{"item": check, "expected": "(as planned)", "actual": "differs (no diff returned)"}]
    status = "drift" if (items or result.get("changed")) else "ok"
    return {"device": device, "kind": kind, "check": check, "status": status, "items": items,
            "message": _text(result.get("msg")) if result.get("msg") else ""}


def build_report(entries, fabric="", generated="", title="Drift audit"):
    """Fleet summary + entries sorted by device and check. Deterministic.

    Entries of category `config` (the default) are drift: their drift or fail makes the report
    drifted. Entries of category `readiness` (preflight findings) are listed and counted but are
    not configuration drift."""
    entries = sorted((dict({"category": "config"}, **e) for e in entries), key=lambda e: (e["kind"], e["device"], e["check"]))
    devices = {}
    for entry in entries:
        devices.setdefault(entry["device"], set()).add((entry["category"], entry["status"]))

    def having(pairs):
        return sorted(name for name, seen in devices.items() if seen & pairs)

    drifted = having({("config", "drift")})
    failed = having({("config", "fail")})
    findings = having({("readiness", "fail"), ("readiness", "warn")})
    summary = {"devices": len(devices), "drifted_items": sum(len(e["items"]) for e in entries if e["status"] == "drift"),
               "devices_drift": drifted, "devices_fail": failed, "devices_findings": findings,
               "devices_ok": sorted(set(devices) - set(drifted) - set(failed) - set(findings))}
    by_check = {}
    for entry in entries:
        counts = by_check.setdefault(entry["check"], dict((s, 0) for s in STATUSES))
        counts[entry["status"]] += 1
    return {"title": title, "fabric": fabric, "generated": generated, "summary": summary, "by_check": by_check,
            "entries": entries, "drift": bool(drifted or failed)}


def _headline(summary):
    return "%d devices: %d drifted, %d failed checks, %d with readiness findings, %d clean; %d drifted items" % (
        summary["devices"], len(summary["devices_drift"]), len(summary["devices_fail"]), len(summary["devices_findings"]),
        len(summary["devices_ok"]), summary["drifted_items"])


def render_json(report):
    return json.dumps(report, indent=1, sort_keys=True) + "\n"


def _cell(value):
    return str(value).replace("|", "\\|").replace("\n", " ")


def render_markdown(report):
    s = report["summary"]
    out = ["# %s: %s" % (report["title"], report["fabric"]), ""]
    if report["generated"]:
        out += ["Generated %s." % report["generated"], ""]
    out += ["**%s** - %s." % ("DRIFT" if report["drift"] else "IN SYNC", _headline(s)), ""]
    out += ["| check | " + " | ".join(STATUSES) + " |", "|---|" + "---|" * len(STATUSES)]
    for check, counts in sorted(report["by_check"].items()):
        cells = " | ".join(str(counts[st]) for st in STATUSES)
        out.append("| %s | %s |" % (check, cells))
    out += [""]
    for status in ("drift", "fail", "warn"):  # drift first: it is what an audit is for
        rows = [e for e in report["entries"] if e["status"] == status]
        if not rows:
            continue
        out += ["## %s" % {"fail": "Failed checks and error findings", "drift": "Drift", "warn": "Warnings"}[status], ""]
        out += ["| device | check | item | expected | actual |", "|---|---|---|---|---|"]
        for entry in rows:
            if not entry["items"]:
                out.append("| %s | %s | %s | | |" % (entry["device"], entry["check"], _cell(entry["message"])))
            for item in entry["items"]:
                cells = (entry["device"], entry["check"], _cell(item["item"]), _cell(item["expected"]), _cell(item["actual"]))
                out.append("| %s | %s | %s | %s | %s |" % cells)
        out.append("")
    return "\n".join(out)


_CSS = """body{font-family:system-ui,Helvetica,Arial,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;font-size:14px}
th{background:#f3f3f3}.fail{background:#f8d7da}.drift{background:#fff3cd}.warn{background:#fdf6e3}.ok{background:#d4edda}
.banner{font-size:20px;padding:10px;border-radius:6px;display:inline-block}code{font-family:monospace}"""


def render_html(report):
    """A self-contained page (inline CSS, no scripts, every value escaped)."""
    e = html.escape
    s = report["summary"]
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\"><title>%s: %s</title>" % (e(report["title"]), e(report["fabric"])),
           "<style>%s</style></head><body>" % _CSS, "<h1>%s: %s</h1>" % (e(report["title"]), e(report["fabric"]))]
    if report["generated"]:
        out.append("<p>Generated %s.</p>" % e(report["generated"]))
    out.append("<p class=\"banner %s\">%s &mdash; %s</p>" % (
        "drift" if report["drift"] else "ok", "DRIFT" if report["drift"] else "IN SYNC", e(_headline(s))))
    out.append("<h2>Fleet summary</h2><table><tr><th>check</th>%s</tr>" % "".join("<th>%s</th>" % st for st in STATUSES))
    for check, counts in sorted(report["by_check"].items()):
        out.append("<tr><td>%s</td>%s</tr>" % (e(check), "".join(
            "<td class=\"%s\">%d</td>" % (st if counts[st] else "", counts[st]) for st in STATUSES)))
    out.append("</table>")
    out.append("<h2>Per device</h2><table><tr><th>device</th><th>kind</th><th>check</th><th>status</th><th>item</th>"
               "<th>expected</th><th>actual</th></tr>")
    row = ("<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td><code>%s</code></td>"
           "<td><code>%s</code></td></tr>")
    rank = dict((status, index) for index, status in enumerate(("drift", "fail", "warn", "skipped", "ok")))
    for entry in sorted(report["entries"], key=lambda e: rank[e["status"]]):
        rows = entry["items"] or [{"item": entry["message"], "expected": "", "actual": ""}]
        for item in rows:
            cells = (entry["status"], entry["device"], entry["kind"], entry["check"], entry["status"], item["item"],
                     item["expected"], item["actual"])
            out.append(row % tuple(e(str(cell)) for cell in cells))
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"


def _finding_level(finding):
    if finding.get("severity") == "error" or finding.get("status") == "fail":
        return "fail"
    if finding.get("severity") == "warning" or finding.get("status") == "warn":
        return "warn"
    return finding.get("status") or "warn"


def entry_from_findings(device, kind, check, findings):
    """One entry from check findings: preflight ({id, severity, subject, expected, actual, message})
    or probes ({probe, status ok/fail/skipped, expected, actual}). The entry takes the worst level
    (fail > warn > skipped > ok); every finding that is not ok becomes an item."""
    findings = [f for f in (findings or []) if _finding_level(f) != "ok"]
    levels = set(_finding_level(f) for f in findings)
    status = next((level for level in ("fail", "warn", "skipped") if level in levels), "ok")
    items = [{"item": f.get("probe") or "%s %s" % (f.get("id", check), f.get("subject", "")),
              "expected": _text(f.get("expected")), "actual": _text(f.get("actual"))} for f in findings]
    return {"device": device, "kind": kind, "check": check, "status": status, "items": items,
            "message": "; ".join(f.get("message", "") for f in findings if f.get("message"))}


def collect_entries(hostvars, hosts, checks, kind, category="config"):
    """Entries for `hosts` from their registered results: checks = {check name: variable name}.
    A variable holding `findings` is read as findings; otherwise as a task result. A host that
    never registered the variable (unreachable, not in play) gets a fail entry saying so."""
    entries = []
    for host in hosts:
        variables = hostvars[host]
        for check, variable in sorted(checks.items()):
            result = variables.get(variable) if hasattr(variables, "get") else None
            if result is None:
                entries.append({"device": host, "kind": kind, "check": check, "status": "fail", "items": [],
                                "message": "no result: host unreachable or check did not run (%s)" % variable})
            elif isinstance(result, dict) and "findings" in result and not result.get("failed"):
                entries.append(entry_from_findings(host, kind, check, result["findings"]))
            else:
                entries.append(entry_from_result(host, kind, check, result))
    for entry in entries:
        entry["category"] = category
    return entries
