# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric-wide RoCE check (pure: no Ansible, no network).

Two questions, per audit:

* **Is the RoCE configuration the same everywhere?** Every switch's managed QoS (lossless priority, DSCP map, ECN
  thresholds, PFC watchdog) read by switch_facts equals the one fabric QoS profile rendered for that switch, and the
  MTU chain holds on every path: host NIC MTU (rdma_facts / host facts) = the plan's host MTU <= the leaf port MTU,
  and leaf uplink / spine port MTUs >= the host MTU.
* **Are the counters healthy?** Against the previous audit's counters (kept in the build dir): a pause storm (PFC
  pause frames on a lossless priority rising by more than a threshold), a PFC watchdog event (storm count rising, or
  the queue stormed now) or drops on a lossless queue since then is a finding with the switch, port, priority and
  the GPUs behind that port (from the plan: leaf downlink -> server NIC -> GPU; a leaf uplink or spine port -> the
  GPUs whose planned binding (PPD) uses that link), ranked by GPUs affected.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


KINDS = ("watchdog", "pause_storm", "lossless_drops")
SEVERITY = {"watchdog": "fail", "lossless_drops": "fail", "pause_storm": "warn"}


def gpu_name(host, nic):
    return "%s:gpu%s" % (host, nic.get("gpu", nic.get("rail")))


def gpus_behind(plan):
    """{(switch, port): [host:gpuN, ...]} for every leaf downlink, leaf uplink and spine port of the plan."""
    out = {}
    nic_of = {}
    for host, rec in sorted((plan.get("hosts") or {}).items()):
        for nic in rec.get("nics") or []:
            if nic.get("leaf") and nic.get("leaf_port"):
                out.setdefault((nic["leaf"], nic["leaf_port"]), []).append(gpu_name(host, nic))
                nic_of[(nic["leaf"], host)] = nic
    for leaf, rec in sorted((plan.get("leafs") or {}).items()):
        for b in rec.get("bindings") or []:
            nic = nic_of.get((leaf, b.get("server")))
            if nic is None:
                continue
            gpu = gpu_name(b["server"], nic)
            out.setdefault((leaf, b["uplink"]), []).append(gpu)
            up = next((u for u in rec.get("uplinks") or [] if u["port"] == b["uplink"]), None)
            if up:
                out.setdefault((up["spine"], up["spine_port"]), []).append(gpu)
    return dict((k, sorted(set(v))) for k, v in out.items())


def _delta(now, before, key):
    if key not in now:
        return 0
    base = before.get(key, 0) if before else 0
    return now[key] - base if now[key] >= base else now[key]   # a cleared counter counts from zero


def counter_findings(plan, current, previous=None, pause_threshold=1000):
    """Findings from the counters of every switch now (``current``: {switch: switch_facts counters}) against
    ``previous`` (the same shape, from the last audit; None: the first audit compares with zero)."""
    qos = plan.get("qos") or {}
    lossless = set(str(p) for p in qos.get("lossless_priorities") or [qos.get("roce_priority", 3)])
    behind = gpus_behind(plan)
    findings = []
    for switch, ports in sorted((current or {}).items()):
        for port, prios in sorted((ports or {}).items()):
            for prio, now in sorted(prios.items()):
                if prio not in lossless and prio != "all":
                    continue
                before = (((previous or {}).get(switch) or {}).get(port) or {}).get(prio) or {}
                events = []
                storms = _delta(now, before, "wd_storms")
                if storms > 0 or now.get("wd_state") in ("stormed", "DEADLOCK"):
                    events.append(("watchdog", storms, "PFC watchdog: %d storm(s) since the last audit%s" % (
                        storms, ", queue %s now" % now["wd_state"] if now.get("wd_state") in ("stormed", "DEADLOCK") else "")))
                pause = max(_delta(now, before, "pfc_rx"), _delta(now, before, "pfc_tx"))
                if pause > pause_threshold:
                    events.append(("pause_storm", pause, "%d PFC pause frames since the last audit (threshold %d)"
                                   % (pause, pause_threshold)))
                drops = _delta(now, before, "drops")
                if drops > 0 and prio != "all":
                    events.append(("lossless_drops", drops, "%d packets dropped on lossless priority %s" % (drops, prio)))
                gpus = behind.get((switch, port), [])
                for kind, count, message in events:
                    findings.append({"kind": kind, "severity": SEVERITY[kind], "switch": switch, "port": port,
                                     "priority": prio, "count": count, "gpus": gpus, "message": message})
    findings.sort(key=lambda f: (-len(f["gpus"]), KINDS.index(f["kind"]), f["switch"], f["port"], f["priority"]))
    return findings


def consistency_findings(plan, switch_sections, expected_sections, host_mtus=None, switch_mtus=None):
    """RoCE configuration fabric-wide.

    ``switch_sections``: {switch: {"qos": text, "mtu": text}} as switch_facts read them; ``expected_sections``: the
    same rendered from the plan for each switch (the one QoS profile); ``host_mtus``: {host: {netdev: mtu}} read on
    the hosts (optional); ``switch_mtus``: {switch: {port: mtu}}, each switch's MTU section as its driver reads it
    (``Driver.port_mtus``; optional). Findings: a switch whose QoS differs from the profile (the lines), a host NIC whose MTU is
    not the plan's, a port on a RoCE path whose MTU is below the host MTU."""
    qos = plan.get("qos") or {}
    host_mtu = int(qos.get("host_mtu") or 0)
    findings = []
    for switch in sorted(switch_sections):
        have, want = switch_sections[switch], expected_sections.get(switch) or {}
        lines_have = set((have.get("qos") or "").splitlines())
        lines_want = set((want.get("qos") or "").splitlines())
        missing, extra = sorted(lines_want - lines_have), sorted(lines_have - lines_want)
        if missing or extra:
            findings.append({"kind": "qos_profile", "severity": "fail", "switch": switch, "port": "", "gpus": [],
                             "expected": "; ".join(ln.strip() for ln in missing) or "(nothing else)",
                             "actual": "; ".join(ln.strip() for ln in extra) or "(lines missing)",
                             "message": "QoS differs from the fabric profile (priority %s lossless, DSCP %s -> %s, ECN %s-%s KB)"
                             % (qos.get("roce_priority"), qos.get("roce_dscp"), qos.get("roce_priority"),
                                qos.get("ecn_min_kbytes"), qos.get("ecn_max_kbytes"))})
    behind = gpus_behind(plan)
    mtus = switch_mtus or {}
    for (switch, port), gpus in sorted(behind.items()):
        mtu = (mtus.get(switch) or {}).get(port)
        if mtu is not None and mtu < host_mtu:
            findings.append({"kind": "mtu_chain", "severity": "fail", "switch": switch, "port": port, "gpus": gpus,
                             "expected": ">= %d" % host_mtu, "actual": str(mtu),
                             "message": "port MTU below the host MTU on a RoCE path"})
    for host, rec in sorted((plan.get("hosts") or {}).items()):
        for nic in rec.get("nics") or []:
            got = ((host_mtus or {}).get(host) or {}).get(nic["netdev"])
            if got is not None and int(got) != int(nic.get("mtu") or host_mtu):
                findings.append({"kind": "mtu_chain", "severity": "fail", "switch": host, "device_kind": "host", "port": nic["netdev"],
                                 "gpus": [gpu_name(host, nic)], "expected": str(nic.get("mtu") or host_mtu),
                                 "actual": str(got), "message": "host NIC MTU is not the plan's"})
    findings.sort(key=lambda f: (-len(f["gpus"]), f["switch"], f["port"]))
    return findings


def snapshot(current):
    """The counters kept for the next audit (only what the comparison reads)."""
    keep = ("pfc_rx", "pfc_tx", "drops", "wd_storms", "wd_restores")
    return dict((s, dict((p, dict((q, dict((k, v) for k, v in c.items() if k in keep)) for q, c in prios.items()))
                         for p, prios in (ports or {}).items())) for s, ports in sorted((current or {}).items()))


def report_section(counter, consistency, read=None, not_read=None, left_to_switch=None):
    """The drift report's "RoCE health" section: findings ranked by GPUs affected, and a verdict word.

    ``read``: {switch: [what was read: its sections, "counters"]}; ``not_read``: {switch: why}. The section says which
    switches it covers, so a switch left out (unreachable, or its read failed) is named, never counted healthy.
    ``left_to_switch``: {switch: [notes]}, what the driver's fit left to the switch's own machinery (not compared)."""
    allf = counter + consistency
    status = "fail" if any(f["severity"] == "fail" for f in allf) else "warn" if allf else "ok"
    gpus = sorted(set(g for f in allf for g in f["gpus"]))
    out = {"status": status, "counters": counter, "consistency": consistency, "gpus_affected": gpus}
    if read is not None or not_read is not None:
        out["read"] = dict((k, list(v)) for k, v in sorted((read or {}).items()))
        out["not_read"] = dict(sorted((not_read or {}).items()))
    if left_to_switch is not None:
        out["left_to_switch"] = dict((k, list(v)) for k, v in sorted(left_to_switch.items()))
    return out


def coverage_line(section):
    """One line: the switches the section read (and what of each), and the ones it did not (why); "" when unknown."""
    if "read" not in section and "not_read" not in section:
        return ""
    read = ", ".join("%s (%s)" % (name, ", ".join(what) or "nothing") for name, what in sorted(section.get("read", {}).items()))
    line = "Read on %d switch(es): %s." % (len(section.get("read", {})), read or "none")
    if section.get("not_read"):
        line += " Not read on %d switch(es), not counted healthy: %s." % (
            len(section["not_read"]), "; ".join("%s (%s)" % kv for kv in sorted(section["not_read"].items())))
    if section.get("left_to_switch"):
        line += " Left to the switch, not compared: %s." % "; ".join(
            "%s: %s" % (name, " / ".join(notes)) for name, notes in sorted(section["left_to_switch"].items()))
    return line


def entries(section):
    """drift_report entries (category ``readiness``): one per switch/host with RoCE findings."""
    by_dev = {}
    for f in section["counters"] + section["consistency"]:
        by_dev.setdefault(f["switch"], []).append(f)
    out = []
    for dev, found in sorted(by_dev.items()):
        items = [{"item": "%s %s%s" % (f["kind"], f["port"], " prio %s" % f["priority"] if f.get("priority") else ""),
                  "expected": f.get("expected", "no new events"),
                  "actual": "%s; GPUs: %s" % (f.get("actual", f["message"]), ", ".join(f["gpus"]) or "none planned")}
                 for f in found]
        status = "fail" if any(f["severity"] == "fail" for f in found) else "warn"
        out.append({"device": dev, "kind": found[0].get("device_kind", "switch"), "check": "roce_health", "status": status, "items": items,
                    "category": "readiness", "message": "; ".join(f["message"] for f in found)})
    return out
