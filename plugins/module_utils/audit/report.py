# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift report: check-mode results of every device -> one report (JSON, Markdown, HTML).

Input entries, one per (device, check):
    {"device": "gpu01", "kind": "host", "check": "host_network", "status": "drift",
     "items": [{"item": "rail0 mtu", "expected": "9000", "actual": "1500"}], "message": ""}
status is one of fail, unreachable, takeover, drift, warn, skipped, ok. A `takeover` entry (a switch
whose running config holds objects the plan owns whole but someone else configured: switch_config's
`takeover` list) carries them as `takeover` items next to its drift items. An entry may carry `root` (the
filesystem tree a host check read when it was not the live `/`), which the report discloses.
`items_from_diff` turns an Ansible before/after diff into items, so any module with a truthful
diff can feed the report.

The headline (`verdict`) says DRIFT or IN SYNC for configuration (NOT AUDITED when no device
could be reached), adds NOT READY when readiness
checks found errors and `N UNREACHABLE` when devices could not be audited, so a clean-looking
word never stands beside errors or unaudited devices.
"""

from __future__ import annotations

import html
import json

STATUSES = ("fail", "unreachable", "takeover", "drift", "warn", "skipped", "ok")
_MISSING = "(absent)"
# Connection failures as Ansible and netmiko (base_connection.py establish_connection) word them:
# the device could not be audited, which is not the same as a check that failed on it.
_UNREACHABLE_HINTS = ("unreachable", "cannot connect", "timed out", "timed-out", "connection refused", "no route to host",
                      "name or service not known", "could not resolve", "failed to connect", "dns failure",
                      "authentication to device failed", "no existing session", "tcp connection to device failed",
                      "sshexception occurred during connection")


def _text(value):
    """A report value as readable text: None is `(absent)`, a mapping `key=value, ...`, a list its
    members joined, never a JSON blob or the word None."""
    if value is None:
        return _MISSING
    if isinstance(value, dict):
        return ", ".join("%s=%s" % (key, _text(value[key])) for key in sorted(value, key=str)) or "(empty)"
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(member) for member in value) or "(empty)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _item(item, expected, actual):
    return {"item": str(item), "expected": _text(expected), "actual": _text(actual)}


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
        label = "%s: line" % path if path else "line"
        return [_item(label, None, line) for line in removed] + [_item(label, line, None) for line in added]
    if isinstance(actual, list) and isinstance(expected, list) and all(not isinstance(v, (dict, list)) for v in actual + expected):
        gone = [v for v in actual if v not in expected]
        new = [v for v in expected if v not in actual]
        return [_item(path, None, v) for v in gone] + [_item(path, v, None) for v in new]
    if actual != expected:
        return [_item(path or "value", expected, actual)]
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
            items.append(_item(label, change.get("after"), change.get("before")))
            continue
        value = next((change[k] for k in ("route", "rule", "address", "value", "line") if k in change), label)
        if change.get("action") in ("delete", "del", "remove", "absent"):
            items.append(_item(label, None, value))
        else:
            items.append(_item(label, value, None))
    return items


def _looks_unreachable(result):
    if result.get("unreachable"):
        return True
    message = str(result.get("msg", "")).lower()
    return any(hint in message for hint in _UNREACHABLE_HINTS)


def _synthetic_root(result):
    """The tree a host check read, when the module ran on a root other than the live `/`."""
    args = (result.get("invocation") or {}).get("module_args") or {}
    root = result.get("root", args.get("root"))
    return root if root and root != "/" else ""


def entry_from_result(device, kind, check, result):
    """One report entry from a registered Ansible task result (check mode)."""
    result = result or {}
    entry = {"device": device, "kind": kind, "check": check, "items": [], "message": ""}
    if _synthetic_root(result):
        entry["root"] = _synthetic_root(result)
    if result.get("skipped"):
        return dict(entry, status="skipped", message=_text(result.get("skip_reason", "skipped")))
    if result.get("failed") or result.get("unreachable"):
        status = "unreachable" if _looks_unreachable(result) else "fail"
        return dict(entry, status=status, message=_text(result.get("msg") or status))
    items = [_item(d.get("item", check), d.get("expected"), d.get("actual")) for d in result.get("drift") or []]
    if not items and result.get("changed") and isinstance(result.get("items"), list):
        items = items_from_change_items(result["items"])
    if not items and result.get("changed"):
        items = items_from_diff(result.get("diff"))
        if not items:
            items = [_item(check, "(as planned)", "differs (no diff returned)")]
    status = "drift" if (items or result.get("changed")) else "ok"
    message = _text(result["msg"]) if result.get("msg") else ""
    takeover = [dict(_item(t.get("item", check), t.get("expected"), t.get("actual")), message=_text(t.get("message", "")))
                for t in result.get("takeover") or [] if isinstance(t, dict)]
    if takeover:
        # not ordinary drift: objects someone else configured that the plan would replace whole
        return dict(entry, status="takeover", items=items, takeover=takeover, message=message or (
            "the plan would take over %d object(s) configured outside this collection; an apply refuses until "
            "switch_takeover is set for this switch" % len(takeover)))
    return dict(entry, status=status, items=items, message=message)


def _notes(entries):
    """Disclosures a reader needs to weigh the results: checks that read a synthetic tree."""
    trees = {}
    for entry in entries:
        root = entry.get("root")
        if root:
            trees.setdefault(root, set()).add((entry["device"], entry["check"]))
    notes = []
    for root, pairs in sorted(trees.items()):
        checks = sorted(set(pair[1] for pair in pairs))
        devices = sorted(set(pair[0] for pair in pairs))
        notes.append("%s ran on the synthetic tree %s, not the live system, on %s: their results say nothing about "
                     "the real hardware." % (", ".join(checks), root, ", ".join(devices)))
    return notes


def build_report(entries, fabric="", generated="", title="Drift audit", plan_digest="", plan_path="", roce=None):
    """Fleet summary + entries sorted by device and check. Deterministic for the same `generated`.

    Entries of category `config` (the default) are drift: their drift or fail makes the report
    drifted. Entries of category `readiness` (preflight findings) are listed and counted but are
    not configuration drift; a readiness fail makes the fleet NOT READY. A device with any
    unreachable entry is listed as unreachable rather than as drifted or clean."""
    entries = sorted((dict({"category": "config", "items": [], "message": ""}, **e) for e in entries),
                     key=lambda e: (e["kind"], e["device"], e["check"]))
    devices = {}
    for entry in entries:
        devices.setdefault(entry["device"], set()).add((entry["category"], entry["status"]))

    def having(pairs):
        return sorted(name for name, seen in devices.items() if seen & pairs)

    unreachable = having({("config", "unreachable"), ("readiness", "unreachable")})
    drifted = sorted(set(having({("config", "drift")})) - set(unreachable))
    failed = sorted(set(having({("config", "fail")})) - set(unreachable))
    takeover = sorted(set(having({("config", "takeover")})) - set(unreachable))
    not_ready = having({("readiness", "fail")})
    findings = having({("readiness", "fail"), ("readiness", "warn")})
    summary = {"devices": len(devices),
               "drifted_items": sum(len(e["items"]) for e in entries if e["status"] in ("drift", "takeover")),
               "devices_drift": drifted, "devices_fail": failed, "devices_unreachable": unreachable,
               "devices_takeover": takeover, "takeover_items": sum(len(e.get("takeover") or []) for e in entries),
               "devices_not_ready": not_ready, "devices_findings": findings,
               "devices_ok": sorted(set(devices) - set(drifted) - set(failed) - set(findings) - set(unreachable)
                                    - set(takeover))}
    by_check = {}
    for entry in entries:
        counts = by_check.setdefault(entry["check"], dict((s, 0) for s in STATUSES))
        counts[entry["status"]] += 1
    drift = bool(drifted or failed or takeover)
    audited = set(devices) - set(unreachable)
    verdict = ["DRIFT" if drift else "IN SYNC" if audited else "NOT AUDITED"]
    if takeover:
        verdict.append("%d TAKEOVER" % len(takeover))
    if not_ready:
        verdict.append("NOT READY")
    if unreachable:
        verdict.append("%d UNREACHABLE" % len(unreachable))
    report = {"title": title, "fabric": fabric, "generated": generated, "plan": {"digest": plan_digest, "path": plan_path},
              "summary": summary, "by_check": by_check, "entries": entries, "drift": drift, "ready": not not_ready,
              "verdict": " / ".join(verdict), "notes": _notes(entries)}
    if roce is not None:   # the RoCE health section (audit/roce_health.py report_section)
        report["roce"] = roce
    return report


def _headline(summary):
    """`6 devices: 1 drifted, 1 unreachable, 4 clean; 3 drifted items` - zero counts left out."""
    counts = (("with takeovers", summary.get("devices_takeover", [])),
              ("drifted", summary["devices_drift"]), ("with failed checks", summary["devices_fail"]),
              ("unreachable", summary.get("devices_unreachable", [])), ("not ready", summary.get("devices_not_ready", [])),
              ("with readiness findings", summary["devices_findings"]), ("clean", summary["devices_ok"]))
    parts = ["%d %s" % (len(names), label) for label, names in counts if names]
    items = summary["drifted_items"]
    return "%d devices: %s%s" % (summary["devices"], ", ".join(parts) or "none audited",
                                 "; %d drifted item%s" % (items, "" if items == 1 else "s") if items else "")


def _identity(report):
    """`generated <time>, plan <digest> (<path>)` - when and against which plan the audit ran."""
    parts = []
    if report.get("generated"):
        parts.append("generated %s" % report["generated"])
    plan = report.get("plan") or {}
    if plan.get("digest"):
        parts.append("plan %s%s" % (plan["digest"][:16], " (%s)" % plan["path"] if plan.get("path") else ""))
    return ", ".join(parts)


def render_json(report):
    return json.dumps(report, indent=1, sort_keys=True) + "\n"


def _cell(value):
    return str(value).replace("|", "\\|").replace("\n", " ")


_SECTIONS = (("takeover", "Takeovers (objects someone else configured that the plan would replace whole: review, "
                          "then set switch_takeover for the switch)"),
             ("drift", "Drift"), ("fail", "Failed checks and error findings"), ("unreachable", "Unreachable devices"),
             ("warn", "Warnings"), ("skipped", "Skipped checks"))


def _rows(entries, status):
    """Entries of one report section, each with the items that section shows: a takeover entry shows its
    takeover objects under Takeovers and its line-level drift under Drift."""
    if status == "takeover":
        return [dict(e, items=e.get("takeover") or []) for e in entries if e["status"] == "takeover"]
    if status == "drift":
        return [e for e in entries if e["status"] == "drift" or (e["status"] == "takeover" and e["items"])]
    return [e for e in entries if e["status"] == status]


def render_markdown(report):
    s = report["summary"]
    out = ["# %s: %s" % (report["title"], report["fabric"]), ""]
    if _identity(report):
        out += [_identity(report)[0].upper() + _identity(report)[1:] + ".", ""]
    out += ["**%s** - %s." % (report.get("verdict") or ("DRIFT" if report["drift"] else "IN SYNC"), _headline(s)), ""]
    for note in report.get("notes", []):
        out += ["> Note: %s" % note, ""]
    statuses = [st for st in STATUSES if any(c[st] for c in report["by_check"].values())] or ["ok"]
    out += ["| check | " + " | ".join(statuses) + " |", "|---|" + "---|" * len(statuses)]
    for check, counts in sorted(report["by_check"].items()):
        out.append("| %s | %s |" % (check, " | ".join(str(counts[st]) for st in statuses)))
    out += [""]
    for status, heading in _SECTIONS:  # takeovers, then drift: what an audit is for
        rows = _rows(report["entries"], status)
        if not rows:
            continue
        out += ["## %s" % heading, ""]
        itemized = [e for e in rows if e["items"]]
        bare = [e for e in rows if not e["items"]]
        if itemized:
            out += ["| device | check | item | expected | actual |", "|---|---|---|---|---|"]
            for entry in itemized:
                for item in entry["items"]:
                    cells = (entry["device"], entry["check"], _cell(item["item"]), _cell(item["expected"]), _cell(item["actual"]))
                    out.append("| %s | %s | %s | %s | %s |" % cells)
            out.append("")
        if bare:
            out += ["| device | check | reason |", "|---|---|---|"]
            out += ["| %s | %s | %s |" % (e["device"], e["check"], _cell(e["message"] or status)) for e in bare]
            out.append("")
        if status == "takeover":
            out += ["- %s: %s" % (entry["device"], item["message"]) for entry in rows for item in entry["items"]
                    if item.get("message")] + [""]
    out += _roce_markdown(report.get("roce"))
    if s["devices_ok"]:
        out += ["Clean: %s." % ", ".join(s["devices_ok"]), ""]
    return "\n".join(out)


def _roce_rows(roce):
    """(switch/host, port, priority, finding, detail, GPUs, GPU names) rows of the RoCE health section (``roce``:
    audit/roce_health.py report_section), ranked by GPUs affected."""
    rows = []
    for f in (roce or {}).get("counters", []) + (roce or {}).get("consistency", []):
        rows.append((f["switch"], f["port"], str(f.get("priority", "")), f["kind"], f["message"], len(f["gpus"]),
                     ", ".join(f["gpus"]) or "none planned"))
    return sorted(rows, key=lambda r: (-r[5],) + r[:4])


def _roce_markdown(roce):
    if not roce:
        return []
    out = ["## RoCE health: %s (%d GPUs affected)" % (roce["status"].upper(), len(roce.get("gpus_affected", []))), ""]
    rows = _roce_rows(roce)
    if not rows:
        return out + ["No pause storm, PFC watchdog event or lossless drop since the last audit; RoCE configuration "
                      "consistent.", ""]
    out += ["| device | port | priority | finding | detail | GPUs | GPUs behind the port |", "|---|---|---|---|---|---|---|"]
    out += ["| %s |" % " | ".join(_cell(c) for c in row) for row in rows]
    return out + [""]


_CSS = """body{font-family:system-ui,Helvetica,Arial,sans-serif;margin:2em;color:#222;max-width:80em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;font-size:14px;vertical-align:top}
th{background:#f3f3f3}.fail,.unreachable,.takeover{background:#f8d7da}.drift{background:#fff3cd}.warn{background:#fdf6e3}.ok{background:#d4edda}
.skipped{background:#eceff1}.banner{font-size:22px;font-weight:bold;padding:12px 16px;border-radius:6px;display:inline-block}
.meta{color:#555}.note{border-left:4px solid #e0a800;padding:4px 10px;background:#fffbea}
code{font-family:monospace;white-space:pre-wrap}.absent{color:#888;font-style:italic}"""


def _value_html(value):
    if value == _MISSING:
        return "<span class=\"absent\">absent</span>"
    return "<code>%s</code>" % html.escape(value)


def render_html(report):
    """A self-contained page (inline CSS, no scripts, every value escaped); no empty rows."""
    e = html.escape
    s = report["summary"]
    verdict = report.get("verdict") or ("DRIFT" if report["drift"] else "IN SYNC")
    banner_class = "drift" if report["drift"] or s.get("devices_unreachable") else (
        "warn" if s.get("devices_not_ready") else "ok")
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\"><title>%s: %s</title>" % (e(report["title"]), e(report["fabric"])),
           "<style>%s</style></head><body>" % _CSS, "<h1>%s: %s</h1>" % (e(report["title"]), e(report["fabric"]))]
    if _identity(report):
        out.append("<p class=\"meta\">%s</p>" % e(_identity(report)))
    out.append("<p id=\"headline\" class=\"banner %s\">%s</p>" % (banner_class, e(verdict)))
    out.append("<p>%s</p>" % e(_headline(s)))
    for note in report.get("notes", []):
        out.append("<p class=\"note\">Note: %s</p>" % e(note))
    statuses = [st for st in STATUSES if any(c[st] for c in report["by_check"].values())] or ["ok"]
    out.append("<h2>Fleet summary</h2><table><tr><th>check</th>%s</tr>" % "".join("<th>%s</th>" % st for st in statuses))
    for check, counts in sorted(report["by_check"].items()):
        out.append("<tr><td>%s</td>%s</tr>" % (e(check), "".join(
            "<td class=\"%s\">%d</td>" % (st if counts[st] else "", counts[st]) for st in statuses)))
    out.append("</table>")
    for status, heading in _SECTIONS:
        rows = _rows(report["entries"], status)
        if not rows:
            continue
        out.append("<h2>%s</h2>" % e(heading))
        itemized, bare = [x for x in rows if x["items"]], [x for x in rows if not x["items"]]
        if itemized:
            out.append("<table><tr><th>device</th><th>kind</th><th>check</th><th>item</th><th>expected</th><th>actual</th></tr>")
            for entry in itemized:
                head = "<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td>" % (
                    status, e(entry["device"]), e(entry["kind"]), e(entry["check"]))
                for item in entry["items"]:
                    out.append("%s<td>%s</td><td>%s</td><td>%s</td></tr>" % (
                        head, e(item["item"]), _value_html(item["expected"]), _value_html(item["actual"])))
            out.append("</table>")
        if bare:
            out.append("<table><tr><th>device</th><th>kind</th><th>check</th><th>reason</th></tr>")
            for entry in bare:
                out.append("<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
                    status, e(entry["device"]), e(entry["kind"]), e(entry["check"]), e(entry["message"] or status)))
            out.append("</table>")
        if status == "takeover":
            lines = ["<li>%s: %s</li>" % (e(entry["device"]), e(item["message"]))
                     for entry in rows for item in entry["items"] if item.get("message")]
            out.append("<ul>%s</ul>" % "".join(lines))
    roce = report.get("roce")
    if roce:
        out.append("<h2>RoCE health: %s (%d GPUs affected)</h2>" % (e(roce["status"].upper()), len(roce.get("gpus_affected", []))))
        rows = _roce_rows(roce)
        if rows:
            out.append("<table><tr><th>device</th><th>port</th><th>priority</th><th>finding</th><th>detail</th><th>GPUs</th>"
                       "<th>GPUs behind the port</th></tr>")
            out += ["<tr class=\"%s\">%s</tr>" % (e(roce["status"]), "".join("<td>%s</td>" % e(str(c)) for c in row))
                    for row in rows]
            out.append("</table>")
        else:
            out.append("<p>No pause storm, PFC watchdog event or lossless drop since the last audit.</p>")
    if s["devices_ok"]:
        out.append("<h2>Clean</h2><p>%s</p>" % e(", ".join(s["devices_ok"])))
    out.append("</body></html>")
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
    items = [_item(f.get("probe") or ("%s %s" % (f.get("id", check), f.get("subject", ""))).strip(),
                   f.get("expected", ""), f.get("actual", "")) for f in findings]
    entry = {"device": device, "kind": kind, "check": check, "status": status, "items": items,
             "message": "; ".join(f.get("message", "") for f in findings if f.get("message"))}
    synthetic = [f for f in findings if f.get("id") == "synthetic_root"]
    if synthetic:
        entry["root"] = _text(synthetic[0].get("actual"))
    return entry


def collect_entries(hostvars, hosts, checks, kind, category="config", reach_variable="audit_reach"):
    """Entries for `hosts` from their registered results: checks = {check name: variable name}.
    A variable holding `findings` is read as findings; otherwise as a task result. A host whose
    reachability probe (`reach_variable`) came back unreachable gets one unreachable entry instead of
    one per check; a host that never registered a check variable gets a fail entry saying so."""
    entries = []
    for host in hosts:
        variables = hostvars[host]
        get = variables.get if hasattr(variables, "get") else (lambda name: None)
        reach = get(reach_variable)
        if isinstance(reach, dict) and (reach.get("unreachable") or reach.get("failed")):
            if category == "config":  # one entry per device, not one per check
                entries.append({"device": host, "kind": kind, "check": "reachable", "status": "unreachable", "items": [],
                                "message": _text(reach.get("msg") or "unreachable"), "category": category})
            continue
        for check, variable in sorted(checks.items()):
            result = get(variable)
            if result is None:
                entries.append({"device": host, "kind": kind, "check": check, "status": "fail", "items": [],
                                "message": "no result: the check did not run (%s not registered)" % variable})
            elif isinstance(result, dict) and "findings" in result and not result.get("failed"):
                entries.append(entry_from_findings(host, kind, check, result["findings"]))
            else:
                entries.append(entry_from_result(host, kind, check, result))
    for entry in entries:
        entry["category"] = category
    return entries
