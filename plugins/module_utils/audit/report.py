# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift report: check-mode results of every device -> one report (JSON, Markdown, HTML).

Input entries, one per (device, check):
    {"device": "gpu01", "kind": "host", "check": "host_network", "status": "drift",
     "items": [{"item": "rail0 mtu", "expected": "9000", "actual": "1500"}], "message": ""}
status is one of fail, unreachable, takeover, drift, not_run, warn, skipped, ok: `not_run` is a required check
that did not run (the device is NOT VERIFIED, never clean), `skipped` one nobody asked for or that does not apply.
An entry may carry `results`, one record per probe or check, passed, failed or not run (audit/results.py); an
entry without them counts as one result (ok passed; drift, takeover, fail failed; anything else not run). A `takeover` entry (a switch
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
import re

from ansible_collections.aifabric.roce.plugins.module_utils.audit.results import counts, is_probe_finding, normalise, result
from ansible_collections.aifabric.roce.plugins.module_utils.audit.roce_health import coverage_line, gpu_name, gpus_behind

STATUSES = ("fail", "unreachable", "takeover", "drift", "not_run", "warn", "skipped", "ok")
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
        subject = change.get("dev") or change.get("name") or change.get("interface") or change.get("path") or ""
        label = ("%s %s" % (change["kind"], subject)).strip()
        if change["kind"] == "file" and change.get("path"):
            items.append(_file_item(label, change))
            continue
        if "before" in change or "after" in change:
            items.append(_item(label, change.get("after"), change.get("before")))
            continue
        value = next((change[k] for k in ("route", "rule", "address", "value", "line") if k in change), label)
        if change.get("action") in ("delete", "del", "remove", "absent"):
            items.append(_item(label, None, value))
        else:
            items.append(_item(label, value, None))
    return items


def _lines(text):
    count = len(str(text).splitlines())
    return "%d line%s" % (count, "" if count == 1 else "s")


def _file_item(label, change):
    """A persistence file as `file <path>`: what the plan writes and what the file holds, summed up in words
    (the contents are in the module's diff)."""
    before, after, action = change.get("before") or "", change.get("after") or "", change.get("action")
    if action == "link":
        return _item(label, "link to %s" % change.get("target"), "not that link")
    if action == "remove":
        return _item(label, None, "stale file (%s), not in the plan" % _lines(before))
    if not before:
        return _item(label, "as planned (%s)" % _lines(after), None)
    changed = len(set(before.splitlines()) ^ set(after.splitlines()))
    return _item(label, "as planned (%s)" % _lines(after), "differs (%d line%s)" % (changed, "" if changed == 1 else "s"))


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
    if result.get("skipped"):   # the check did not run: nothing about this device was verified by it
        return dict(entry, status="not_run", message="not run: %s" % _text(result.get("skip_reason", "skipped")))
    if result.get("failed") or result.get("unreachable"):
        status = "unreachable" if _looks_unreachable(result) else "fail"
        return dict(entry, status=status, message=_text(result.get("msg") or status))
    items = [_item(d.get("item", check), d.get("expected"), d.get("actual")) for d in result.get("drift") or []]
    drained = result.get("drain_state") if isinstance(result.get("drain_state"), dict) else None
    if drained and drained.get("undrain"):
        # a run of ours drained it and ended: the next apply takes the drain back (switch_config drain_state)
        items.append(_item("drain", "undrained", "drained: %s" % ", ".join(drained.get("lines") or [])))
    if not items and result.get("changed") and isinstance(result.get("items"), list):
        items = items_from_change_items(result["items"])
    if not items and result.get("changed"):
        items = items_from_diff(result.get("diff"))
        if not items:
            items = [_item(check, "(as planned)", "differs (no diff returned)")]
    status = "drift" if (items or result.get("changed")) else "ok"
    message = _text(result["msg"]) if result.get("msg") else ""
    if drained and drained.get("drained"):
        # any drain is reported (ours or an engineer's): a spine left drained halves its plane
        entry["drained"] = dict(lines=drained.get("lines") or [], by=_text(drained.get("by", "")),
                                undrain=bool(drained.get("undrain")))
        if status == "ok":
            status, message = "warn", message or "drained (%s): %s" % (", ".join(entry["drained"]["lines"]),
                                                                       entry["drained"]["by"])
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


_ENTRY_RESULT = {"ok": "passed", "drift": "failed", "takeover": "failed", "fail": "failed", "warn": "passed"}
WORDS = {"audit": ("DRIFT", "IN SYNC"), "validation": ("FAILED", "PASSED")}


def entry_results(entry):
    """The entry's results; an entry without them (a check-mode task result) is one result of its own."""
    if entry.get("results"):
        return entry["results"]
    outcome = _ENTRY_RESULT.get(entry["status"], "not_run")
    why = entry["message"] or ("%d item(s) differ from the plan" % len(entry["items"]) if entry["items"] else "")
    if outcome == "not_run" and not why:
        why = entry["status"]
    return [result(entry["check"], entry["device"], outcome, why if outcome != "passed" else "",
                   required=entry["status"] != "skipped")]


def build_report(entries, fabric="", generated="", title="Drift audit", plan_digest="", plan_path="", roce=None,
                 purpose="audit", gpus=None):
    """Fleet summary + entries sorted by device and check. Deterministic for the same `generated`.

    Entries of category `config` (the default) are drift: their drift or fail makes the report
    drifted. Entries of category `readiness` (preflight findings) are listed and counted but are
    not configuration drift; a readiness fail makes the fleet NOT READY. A device with any
    unreachable entry is listed as unreachable rather than as drifted or clean. A device with a
    required check that did not run (`not_run`), or none that ran at all, is NOT VERIFIED: never clean.
    `purpose` `validation` words the verdict FAILED / PASSED instead of DRIFT / IN SYNC. `gpus`
    ({device: {port or netdev: [host:gpuN, ...]}}, `gpus_by_object`) names the GPUs behind each drift item."""
    entries = sorted((dict({"category": "config", "items": [], "message": ""}, **e) for e in entries),
                     key=lambda e: (e["kind"], e["device"], e["check"]))
    for entry in entries:
        entry["results"] = entry_results(entry)
        _name_gpus(entry, (gpus or {}).get(entry["device"]) or {})
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
    drained = sorted(set(e["device"] for e in entries if e.get("drained")))
    findings = having({("readiness", "fail"), ("readiness", "warn")})
    ran = set(e["device"] for e in entries for r in e["results"] if r["result"] != "not_run")
    not_verified = sorted((set(having({("config", "not_run"), ("readiness", "not_run")})) | (set(devices) - ran))
                          - set(unreachable))
    all_results = [r for e in entries for r in e["results"]]
    summary = {"devices": len(devices),
               "drifted_items": sum(len(e["items"]) for e in entries if e["status"] in ("drift", "takeover")),
               "devices_drift": drifted, "devices_fail": failed, "devices_unreachable": unreachable,
               "devices_takeover": takeover, "takeover_items": sum(len(e.get("takeover") or []) for e in entries),
               "devices_not_ready": not_ready, "devices_findings": findings, "devices_not_verified": not_verified,
               "devices_drained": drained, "checks": counts(all_results),
               "devices_ok": sorted(set(devices) - set(drifted) - set(failed) - set(findings) - set(unreachable)
                                    - set(takeover) - set(not_verified) - set(drained))}
    by_check = {}
    for entry in entries:
        tally = by_check.setdefault(entry["check"], dict((s, 0) for s in STATUSES))
        tally[entry["status"]] += 1
    drift = bool(drifted or failed or takeover)
    audited = set(devices) - set(unreachable)
    bad_word, good_word = WORDS.get(purpose, WORDS["audit"])
    if drift:
        verdict = [bad_word] + (["%d NOT VERIFIED" % len(not_verified)] if not_verified else [])
    else:
        verdict = ["NOT VERIFIED" if not_verified else good_word if audited else "NOT AUDITED"]
    if takeover:
        verdict.append("%d TAKEOVER" % len(takeover))
    if drained:
        verdict.append("%d DRAINED" % len(drained))
    if not_ready:
        verdict.append("NOT READY")
    if unreachable:
        verdict.append("%d UNREACHABLE" % len(unreachable))
    report = {"title": title, "fabric": fabric, "generated": generated, "plan": {"digest": plan_digest, "path": plan_path},
              "summary": summary, "by_check": by_check, "entries": entries, "drift": drift, "ready": not not_ready,
              "verified": not not_verified, "verdict": " / ".join(verdict), "notes": _notes(entries), "purpose": purpose}
    if roce is not None:   # the RoCE health section (audit/roce_health.py report_section)
        report["roce"] = roce
    return report


def gpus_by_object(plan):
    """{device: {port or netdev: [host:gpuN, ...]}} from the plan: a host's rail netdevs (the GPU that NIC serves)
    and every switch port with GPUs behind it (audit/roce_health.py gpus_behind)."""
    out = {}
    for (switch, port), names in gpus_behind(plan).items():
        out.setdefault(switch, {})[port] = names
    for host, record in sorted((plan.get("hosts") or {}).items()):
        for nic in record.get("nics") or []:
            if nic.get("netdev"):
                out.setdefault(host, {})[nic["netdev"]] = [gpu_name(host, nic)]
            if nic.get("address"):   # a PBR rule names its GPU by the source address the leaf pins
                for device in (host, nic.get("leaf")):
                    if device:
                        out.setdefault(device, {})[nic["address"]] = [gpu_name(host, nic)]
    return out


_TOKEN = re.compile(r"[^A-Za-z0-9_/.-]+")
_ADDRESS = re.compile(r"^\d+\.\d+\.\d+\.\d+$")


def _name_gpus(entry, objects):
    """Give each item that names a port or netdev of this device the GPUs behind it (`gpus`)."""
    if not objects:
        return
    for item in list(entry["items"]) + list(entry.get("takeover") or []):
        names, by_address = set(), set()
        for token in _TOKEN.split("%s %s %s" % (item["item"], item["expected"], item["actual"])):
            # a netdev with its key (ens2np0.mtu), an address with its prefix (10.101.0.1/32), a port inside a rule
            # name (AIF-BIND-Ethernet1: the ingress port of a PBR class on EOS and NX-OS)
            for candidate in set([token, token.split(".")[0], token.split("/")[0]] + token.split("-")):
                (by_address if _ADDRESS.match(candidate) else names).update(objects.get(candidate, ()))
        if by_address or names:   # a rule's own source address names its GPU better than the ports it crosses
            item["gpus"] = sorted(by_address or names)


def _headline(summary):
    """`6 devices: 1 drifted, 1 unreachable, 4 clean; 3 drifted items` - zero counts left out."""
    counts_ = (("with takeovers", summary.get("devices_takeover", [])), ("drained", summary.get("devices_drained", [])),
               ("drifted", summary["devices_drift"]), ("with failed checks", summary["devices_fail"]),
               ("unreachable", summary.get("devices_unreachable", [])),
               ("not verified", summary.get("devices_not_verified", [])), ("not ready", summary.get("devices_not_ready", [])),
               ("with readiness findings", summary["devices_findings"]), ("clean", summary["devices_ok"]))
    parts = ["%d %s" % (len(names), label) for label, names in counts_ if names]
    items = summary["drifted_items"]
    return "%d devices: %s%s" % (summary["devices"], ", ".join(parts) or "none audited",
                                 "; %d drifted item%s" % (items, "" if items == 1 else "s") if items else "")


def _checks_line(summary):
    """`Checks: 120 run - 112 passed, 8 failed; 16 not run (8 not requested or not applicable).`"""
    c = summary.get("checks") or counts([])
    optional = c["not_run"] - c["not_run_required"]
    return "Checks: %d run - %d passed, %d failed; %d not run%s." % (
        c["run"], c["passed"], c["failed"], c["not_run"],
        " (%d not requested or not applicable)" % optional if optional else "")


def _explanations(report):
    """One line each for NOT VERIFIED and NOT READY: what the word means here and where the detail is."""
    s, out = report["summary"], []
    if s.get("devices_not_verified"):
        out.append(("notverified", "NOT VERIFIED: %d device(s) have required checks that did not run (see \"Not run\" for "
                                   "why); a device is never counted clean without a check that ran."
                    % len(s["devices_not_verified"])))
    if s.get("devices_not_ready"):
        out.append(("notready", "NOT READY: readiness checks found errors on %d device(s) - what a RoCE job needs that "
                                "configuration does not set (kernel modules, RDMA NICs, GPUDirect, firmware); not drift, "
                                "listed under \"Readiness\" after the drift." % len(s["devices_not_ready"])))
    return out


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


# Reading order: what an audit is for (drift) first, then what could not be judged, then readiness.
_SECTIONS = (("takeover", "Takeovers (objects someone else configured that the plan would replace whole: review, "
                          "then set switch_takeover for the switch)"),
             ("drift", "Drift"), ("fail", "Failed checks"), ("unreachable", "Unreachable devices"),
             ("not_run", "Not run (required checks: the devices stay NOT VERIFIED)"),
             ("readiness", "Readiness findings (not drift)"), ("warn", "Warnings"),
             ("skipped", "Not requested or not applicable"))


def _rows(entries, status):
    """Rows of one report section: {device, kind, check, item, expected, actual, gpus} (item None: the entry has no
    items and `actual` is its message). A takeover entry shows its takeover objects under Takeovers and its
    line-level drift under Drift; readiness entries (preflight) have a section of their own."""
    config = [e for e in entries if e["category"] != "readiness"]
    if status == "takeover":
        picked = [(e, e.get("takeover") or []) for e in config if e["status"] == "takeover"]
    elif status == "drift":
        picked = [(e, e["items"]) for e in config if e["status"] == "drift" or (e["status"] == "takeover" and e["items"])]
    elif status == "readiness":
        picked = [(e, e["items"]) for e in entries if e["category"] == "readiness" and e["status"] in ("fail", "warn")]
    elif status in ("not_run", "skipped"):
        required = status == "not_run"
        rows = []
        for e in entries:
            for r in e["results"]:
                if r["result"] == "not_run" and bool(r.get("required", True)) == required:
                    rows.append({"device": e["device"], "kind": e["kind"], "check": e["check"], "item": r["subject"],
                                 "expected": "", "actual": r["why"], "gpus": []})
        return rows
    else:
        picked = [(e, [i for i in e["items"] if not i["actual"].startswith("not run: ")])
                  for e in config if e["status"] == status]
    rows = []
    for entry, items in picked:
        base = {"device": entry["device"], "kind": entry["kind"], "check": entry["check"]}
        if not items:
            rows.append(dict(base, item=None, expected="", actual=entry["message"] or entry["status"], gpus=[]))
        for item in items:
            rows.append(dict(base, item=item["item"], expected=item["expected"], actual=item["actual"],
                             gpus=item.get("gpus") or [], message=item.get("message", "")))
    return rows


def _group(rows, status):
    """One row per finding, with every device that has it: {devices, kind, check, item, expected, actual, gpus,
    subjects}. Not-run rows group by (check, why) and keep what did not run as `subjects`; the biggest groups of
    readiness and not-run findings come first, drift keeps the device order."""
    groups, order = {}, []
    for row in rows:
        if status in ("not_run", "skipped"):
            key = (row["check"], row["actual"])
        else:
            key = (row["check"], row["kind"], row["item"], row["expected"], row["actual"])
        if key not in groups:
            groups[key] = dict(row, devices=[], gpus=[], subjects=[])
            order.append(key)
        group = groups[key]
        if row["device"] not in group["devices"]:
            group["devices"].append(row["device"])
        group["gpus"] += [g for g in row["gpus"] if g not in group["gpus"]]
        if status in ("not_run", "skipped") and row["item"] not in group["subjects"]:
            group["subjects"].append(row["item"])
    out = [groups[key] for key in order]
    if status not in ("takeover", "drift"):
        out.sort(key=lambda g: -len(g["devices"]))
    return out


def _short_list(names, keep=5):
    if len(names) <= keep:
        return ", ".join(names)
    return "%s and %d more" % (", ".join(names[:keep]), len(names) - keep)


def _passed(report):
    """{check: [(device, subject, actual), ...]} of every passed result."""
    out = {}
    for entry in report["entries"]:
        for r in entry["results"]:
            if r["result"] == "passed":
                out.setdefault(entry["check"], []).append((entry["device"], r["subject"], r["actual"]))
    return out


MARKDOWN_PASSED_ROWS = 100   # beyond this the Markdown lists passes per check only (JSON and HTML list each)


def render_markdown(report):
    s = report["summary"]
    out = ["# %s: %s" % (report["title"], report["fabric"]), ""]
    if _identity(report):
        out += [_identity(report)[0].upper() + _identity(report)[1:] + ".", ""]
    out += ["**%s** - %s." % (report.get("verdict") or ("DRIFT" if report["drift"] else "IN SYNC"), _headline(s)), "",
            _checks_line(s), ""]
    for _kind, line in _explanations(report):
        out += ["> %s" % line, ""]
    for note in report.get("notes", []):
        out += ["> Note: %s" % note, ""]
    drained = [e for e in report["entries"] if e.get("drained")]
    if drained:   # a spine left drained halves its plane: before everything else
        out += ["## Drained switches (announcing GRACEFUL_SHUTDOWN or in maintenance)", "",
                "| device | drain | whose | taken back by the next apply |", "|---|---|---|---|"]
        out += ["| %s | %s | %s | %s |" % (e["device"], _cell(", ".join(e["drained"]["lines"])), _cell(e["drained"]["by"]),
                                           "yes" if e["drained"]["undrain"] else "no") for e in drained]
        out.append("")
    for status, heading in _SECTIONS:
        groups = _group(_rows(report["entries"], status), status)
        if not groups:
            continue
        out += ["## %s" % heading, ""]
        if status in ("not_run", "skipped"):
            out += ["| devices | check | not run | why |", "|---|---|---|---|"]
            out += ["| %s | %s | %s | %s |" % (_cell(_devices_md(g)), g["check"], _cell(_short_list(g["subjects"], 3)),
                                               _cell(g["actual"])) for g in groups]
            out.append("")
            continue
        itemized = [g for g in groups if g["item"] is not None]
        bare = [g for g in groups if g["item"] is None]
        if itemized:
            gpus = any(g["gpus"] for g in itemized)
            out += ["| device | check | item | expected | actual |%s" % (" GPUs behind it |" if gpus else ""),
                    "|---|---|---|---|---|%s" % ("---|" if gpus else "")]
            for g in itemized:
                cells = [_devices_md(g), g["check"], g["item"], g["expected"], g["actual"]]
                if gpus:
                    cells.append(_short_list(g["gpus"]) or "-")
                out.append("| %s |" % " | ".join(_cell(c) for c in cells))
            out.append("")
        if bare:
            out += ["| device | check | reason |", "|---|---|---|"]
            out += ["| %s | %s | %s |" % (_cell(_devices_md(g)), g["check"], _cell(g["actual"])) for g in bare]
            out.append("")
        if status == "takeover":
            out += ["- %s: %s" % (", ".join(g["devices"]), g["message"]) for g in groups if g.get("message")] + [""]
    out += _summary_markdown(report)
    out += _roce_markdown(report.get("roce"))
    passed = _passed(report)
    if passed:
        out += ["## Passed", ""]
        rows = sum(len(v) for v in passed.values())
        for check, found in sorted(passed.items()):
            out.append("- %s: %d passed on %d device(s)" % (check, len(found), len(set(d for d, _s, _a in found))))
        out.append("")
        if rows <= MARKDOWN_PASSED_ROWS:
            out += ["| device | check | passed | actual |", "|---|---|---|---|"]
            out += ["| %s | %s | %s | %s |" % (d, check, _cell(subject), _cell(actual or "-"))
                    for check, found in sorted(passed.items()) for d, subject, actual in found]
            out.append("")
    if s["devices_ok"]:
        out += ["Clean (every required check ran and passed): %s." % ", ".join(s["devices_ok"]), ""]
    return "\n".join(out)


def _devices_md(group):
    names = group["devices"]
    return names[0] if len(names) == 1 else "**%d devices**: %s" % (len(names), _short_list(names))


def _summary_markdown(report):
    statuses = [st for st in STATUSES if any(c[st] for c in report["by_check"].values())] or ["ok"]
    out = ["## Fleet summary", "", "| check | " + " | ".join(statuses) + " |", "|---|" + "---|" * len(statuses)]
    for check, tally in sorted(report["by_check"].items()):
        out.append("| %s | %s |" % (check, " | ".join(str(tally[st]) for st in statuses)))
    return out + [""]


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
    if coverage_line(roce):
        out += [coverage_line(roce), ""]
    rows = _roce_rows(roce)
    if not rows:
        return out + ["No pause storm, PFC watchdog event or lossless drop since the last audit; RoCE configuration "
                      "consistent.", ""]
    out += ["| device | port | priority | finding | detail | GPUs | GPUs behind the port |", "|---|---|---|---|---|---|---|"]
    out += ["| %s |" % " | ".join(_cell(c) for c in row) for row in rows]
    return out + [""]


# Banner colours: drift/failed orange, configuration in sync but not ready blue, not verified grey, all good green.
_CSS = """body{font-family:system-ui,Helvetica,Arial,sans-serif;margin:2em;color:#222;max-width:80em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;font-size:14px;vertical-align:top}
th{background:#f3f3f3}.fail,.unreachable,.takeover{background:#f8d7da}.drift{background:#fff3cd}.warn,.readiness{background:#fdf6e3}
.ok,.passed{background:#d4edda}.skipped,.not_run{background:#eceff1}
.banner{font-size:22px;font-weight:bold;padding:12px 16px;border-radius:6px;display:inline-block}
.v-drift{background:#fd9843;color:#3d1a00}.v-notready{background:#9ec5fe;color:#052c65}.v-notverified{background:#adb5bd;color:#111}
.v-ok{background:#75b798;color:#051b11}.explain{padding:4px 10px;border-left:6px solid}
.explain.notready{border-color:#9ec5fe}.explain.notverified{border-color:#adb5bd}
.meta{color:#555}.note{border-left:4px solid #e0a800;padding:4px 10px;background:#fffbea}summary{cursor:pointer}
code{font-family:monospace;white-space:pre-wrap}.absent{color:#888;font-style:italic}"""


def banner_class(report):
    """v-drift (DRIFT/FAILED, takeovers), v-notverified (NOT VERIFIED, NOT AUDITED, unreachable devices),
    v-notready (in sync but NOT READY), v-ok."""
    s = report["summary"]
    if report["drift"]:
        return "v-drift"
    if s.get("devices_not_verified") or s.get("devices_unreachable") or not s.get("devices"):
        return "v-notverified"
    return "v-notready" if s.get("devices_not_ready") else "v-ok"


def _value_html(value):
    if value == _MISSING:
        return "<span class=\"absent\">absent</span>"
    return "<code>%s</code>" % html.escape(value)


def _collapsed(names, noun, keep=3):
    e = html.escape
    if len(names) <= keep:
        return e(", ".join(names))
    return "<details><summary>%d %s</summary>%s</details>" % (len(names), noun, e(", ".join(names)))


def _html_section(status, heading, groups):
    e = html.escape
    out = ["<h2 id=\"%s\">%s</h2>" % (status, e(heading))]
    css = "readiness" if status == "readiness" else status
    if status in ("not_run", "skipped"):
        out.append("<table><tr><th>devices</th><th>check</th><th>not run</th><th>why</th></tr>")
        out += ["<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            css, _collapsed(g["devices"], "devices"), e(g["check"]), _collapsed(g["subjects"], "probes"), e(g["actual"]))
            for g in groups]
        return out + ["</table>"]
    itemized = [g for g in groups if g["item"] is not None]
    bare = [g for g in groups if g["item"] is None]
    if itemized:
        gpus = any(g["gpus"] for g in itemized)
        out.append("<table><tr><th>device</th><th>kind</th><th>check</th><th>item</th><th>expected</th><th>actual</th>%s</tr>"
                   % ("<th>GPUs behind it</th>" if gpus else ""))
        for g in itemized:
            out.append("<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>%s</tr>" % (
                css, _collapsed(g["devices"], "devices"), e(g["kind"]), e(g["check"]), e(g["item"]),
                _value_html(g["expected"]), _value_html(g["actual"]),
                ("<td>%s</td>" % (_collapsed(g["gpus"], "GPUs", 4) or "-")) if gpus else ""))
        out.append("</table>")
    if bare:
        out.append("<table><tr><th>device</th><th>kind</th><th>check</th><th>reason</th></tr>")
        out += ["<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            css, _collapsed(g["devices"], "devices"), e(g["kind"]), e(g["check"]), e(g["actual"])) for g in bare]
        out.append("</table>")
    if status == "takeover":
        lines = ["<li>%s: %s</li>" % (e(", ".join(g["devices"])), e(g["message"])) for g in groups if g.get("message")]
        out.append("<ul>%s</ul>" % "".join(lines))
    return out


def render_html(report):
    """A self-contained page (inline CSS, no scripts, every value escaped); no empty rows. Drift comes first; a
    finding shared by many devices is one row with the devices collapsed."""
    e = html.escape
    s = report["summary"]
    verdict = report.get("verdict") or ("DRIFT" if report["drift"] else "IN SYNC")
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\"><title>%s: %s</title>" % (e(report["title"]), e(report["fabric"])),
           "<style>%s</style></head><body>" % _CSS, "<h1>%s: %s</h1>" % (e(report["title"]), e(report["fabric"]))]
    if _identity(report):
        out.append("<p class=\"meta\">%s</p>" % e(_identity(report)))
    out.append("<p id=\"headline\" class=\"banner %s\">%s</p>" % (banner_class(report), e(verdict)))
    out.append("<p>%s<br>%s</p>" % (e(_headline(s)), e(_checks_line(s))))
    for kind, line in _explanations(report):
        out.append("<p class=\"explain %s\">%s</p>" % (kind, e(line)))
    for note in report.get("notes", []):
        out.append("<p class=\"note\">Note: %s</p>" % e(note))
    for status, heading in _SECTIONS:
        groups = _group(_rows(report["entries"], status), status)
        if groups:
            out += _html_section(status, heading, groups)
    statuses = [st for st in STATUSES if any(c[st] for c in report["by_check"].values())] or ["ok"]
    out.append("<h2>Fleet summary</h2><table><tr><th>check</th>%s</tr>" % "".join("<th>%s</th>" % st for st in statuses))
    for check, tally in sorted(report["by_check"].items()):
        out.append("<tr><td>%s</td>%s</tr>" % (e(check), "".join(
            "<td class=\"%s\">%d</td>" % (st if tally[st] else "", tally[st]) for st in statuses)))
    out.append("</table>")
    drained = [x for x in report["entries"] if x.get("drained")]
    if drained:
        out.append("<h2>Drained switches (announcing GRACEFUL_SHUTDOWN or in maintenance)</h2>")
        out.append("<table><tr><th>device</th><th>drain</th><th>whose</th><th>taken back by the next apply</th></tr>")
        out += ["<tr class=\"warn\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            e(x["device"]), e(", ".join(x["drained"]["lines"])), e(x["drained"]["by"]),
            "yes" if x["drained"]["undrain"] else "no") for x in drained]
        out.append("</table>")
    roce = report.get("roce")
    if roce:
        out.append("<h2>RoCE health: %s (%d GPUs affected)</h2>" % (e(roce["status"].upper()), len(roce.get("gpus_affected", []))))
        if coverage_line(roce):
            out.append("<p class=\"%s\">%s</p>" % ("note" if roce.get("not_read") else "meta", e(coverage_line(roce))))
        rows = _roce_rows(roce)
        if rows:
            out.append("<table><tr><th>device</th><th>port</th><th>priority</th><th>finding</th><th>detail</th><th>GPUs</th>"
                       "<th>GPUs behind the port</th></tr>")
            out += ["<tr class=\"%s\">%s</tr>" % (e(roce["status"]), "".join("<td>%s</td>" % e(str(c)) for c in row))
                    for row in rows]
            out.append("</table>")
        else:
            out.append("<p>No pause storm, PFC watchdog event or lossless drop since the last audit.</p>")
    passed = _passed(report)
    if passed:
        out.append("<h2 id=\"passed\">Passed</h2>")
        for check, found in sorted(passed.items()):
            out.append("<details><summary>%s: %d passed on %d device(s)</summary><table><tr><th>device</th><th>passed</th>"
                       "<th>actual</th></tr>%s</table></details>" % (
                           e(check), len(found), len(set(d for d, _s, _a in found)),
                           "".join("<tr class=\"passed\"><td>%s</td><td>%s</td><td>%s</td></tr>" % (
                               e(d), e(subject), e(actual or "-")) for d, subject, actual in found)))
    if s["devices_ok"]:
        out.append("<h2>Clean</h2><p>Every required check ran and passed on: %s</p>" % _collapsed(s["devices_ok"], "devices", 20))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _finding_level(finding):
    if finding.get("severity") == "error" or finding.get("status") == "fail":
        return "fail"
    if finding.get("severity") == "warning" or finding.get("status") == "warn":
        return "warn"
    return finding.get("status") or "warn"


def entry_from_findings(device, kind, check, findings):
    """One entry from check findings: probe results ({probe, status ok/fail/skipped, ...} or the result shape of
    audit/results.py), kept whole in `results` - the passed ones too - and preflight readiness findings ({id,
    severity, subject, expected, actual, message}). Status: fail (a failed probe or an error finding) > warn >
    not_run (a required probe did not run) > skipped (only probes nobody asked for) > ok. Every result that did
    not pass and every readiness finding that is not ok becomes an item."""
    findings = [f for f in (findings or []) if isinstance(f, dict)]
    results = [normalise(f, check) for f in findings if is_probe_finding(f)]
    readiness = [f for f in findings if not is_probe_finding(f) and _finding_level(f) != "ok"]
    levels = set(_finding_level(f) for f in readiness) | set(
        "fail" if r["result"] == "failed" else "not_run" if r["required"] else "skipped"
        for r in results if r["result"] != "passed")
    status = next((level for level in ("fail", "warn", "not_run") if level in levels), None)
    if status is None:
        ran = not results or any(r["result"] != "not_run" for r in results)
        status = "ok" if ran else "skipped"
    items = [_item(("%s %s" % (f.get("id", check), f.get("subject", ""))).strip(), f.get("expected", ""), f.get("actual", ""))
             for f in readiness]
    for record in results:
        if record["result"] == "failed":
            items.append(_item(record["subject"], record["expected"], record["actual"] or record["why"]))
        elif record["result"] == "not_run":
            items.append(_item(record["subject"], record["expected"] or "run", "not run: %s" % record["why"]))
    messages = [f.get("message", "") for f in readiness if f.get("message")] + [
        r["why"] for r in results if r["result"] in ("failed", "not_run") and r["why"]]
    entry = {"device": device, "kind": kind, "check": check, "status": status, "items": items,
             "message": "; ".join(messages), "results": results}
    synthetic = [f for f in readiness if f.get("id") == "synthetic_root"]
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
