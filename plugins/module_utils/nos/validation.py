# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switch-side traffic validation against the plan: which commands to run and how to judge their output (module
switch_validate runs them over the switch's session). Checks, each yielding findings ``{probe, status ok/fail/skipped,
expected, actual, message}``: ``bgp_sessions`` (nos/bgp_state.py), ``ppd_paths`` (per host port, the path to another
leaf's host goes via the bound spine on the bound uplink and a same-leaf destination is not pinned: the kernel's ``ip
route get`` on FRR, the NOS's own PBR state elsewhere, nos/ppd_state.py) and ``failover`` (on request: a bound uplink
down, the path leaves for the ECMP set and returns; times measured on the switch). Witnessed on FRR 8.4 (the routed
twin, captures in tests/fixtures/switches/frr/). A check not in the driver's ``checks`` is reported skipped, never
silently. Pure: no Ansible, no I/O."""

from __future__ import annotations

import json
import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos.bgp_state import finding

CHECKS = ("bgp_sessions", "ppd_paths", "failover")
FAILOVER_TIMEOUT_MS = 5000


def unsupported(driver, checks):
    """One skipped finding per requested check the driver has no witnessed implementation of (its ``checks``)."""
    return [finding(check, "skipped", "checked on the switch", "unverified: not implemented for %s" % driver.name,
                    "unverified: %s is not implemented for %s (no witness of its show output yet)" % (check, driver.name))
            for check in checks if check not in driver.checks]


# --- BGP sessions ---------------------------------------------------------------------------
def explain_peers_without_bgp(plan, record, findings, platforms_without_bgp):
    """A failed session towards a platform this collection configures no BGP on (``platforms_without_bgp``) says so in
    its expected text; the status stays failed."""
    devices = dict(list((plan.get("leafs") or {}).items()) + list((plan.get("spines") or {}).items()))
    by_address = dict((n["address"], n) for n in (record.get("bgp") or {}).get("neighbors", []))
    why = {}
    for address, n in by_address.items():
        platform = (devices.get(n.get("peer")) or {}).get("platform")
        if platform in platforms_without_bgp:
            why[address] = "%s runs %s, where this collection configures no BGP (only by hand)" % (n["peer"], platform)
    out, towards = [], []
    for f in findings:
        address = f["probe"][len("bgp "):] if f["probe"].startswith("bgp ") else None
        if f["status"] == "fail" and address in why:
            f = dict(f, expected="%s; %s" % (f["expected"], why[address]))
            towards.append(by_address[address]["peer"])
        out.append(f)
    if towards:
        note = " (%d towards %s: no BGP configured there by this collection)" % (len(towards), ", ".join(sorted(set(towards))))
        out = [dict(f, expected=f["expected"] + note) if f["probe"] == "bgp_sessions" and f["status"] == "fail" else f
               for f in out]
    return out


# --- PPD paths --------------------------------------------------------------------------------
def ingress_of(intent, binding):
    """The L3 interface a host's packets enter: the SVI (scheme A, Linux name ``vlan<id>``) or the routed host port."""
    for iface in intent.get("host_interfaces") or []:
        if iface["kind"] == "svi":
            return "vlan%d" % iface["vlan"]
    return binding["ingress"]


def route_get(dst, src, iif):
    return "ip route get %s from %s iif %s" % (dst, src, iif)


def route_batch(queries):
    """One shell command asking all ``queries``: iproute2's batch mode (``ip -j -force -batch -``), one JSON line per
    answer, a refusal printing its reason and ``Command failed -:N`` (N: its batch line); forms checked on iproute2 6.1
    (the twin routers)."""
    lines = " ".join("'route get %s from %s iif %s'" % (q["dst"], q["src"], q["iif"]) for q in queries)
    return "printf '%%s\\n' %s | ip -j -force -batch -" % lines


FAILED_LINE = re.compile(r"^Command failed -:(\d+)\s*$")


def parse_route_batch(text, queries):
    """``route_batch``'s output (stdout and stderr interleaved) -> per query (got {via, dev, table} or {"error"}, the
    answer in ``ip route get``'s text form); answers matched by (dst, from), refusals by their batch line."""
    answers, errors, reason = {}, {}, []
    for line in (text or "").splitlines():
        line = line.strip()
        failed = FAILED_LINE.match(line)
        if line.startswith("["):
            try:
                for entry in json.loads(line):
                    answers.setdefault((entry.get("dst"), entry.get("from")), []).append(entry)
            except ValueError:
                reason.append(line)
        elif failed:
            errors[int(failed.group(1))] = " ".join(reason) or "refused"
            reason = []
        elif line:
            reason.append(line)
    out = []
    for number, q in enumerate(queries, 1):
        found = answers.get((q["dst"], q["src"])) or []
        if found:
            entry = found.pop(0)
            got = {"via": entry.get("gateway"), "dev": entry.get("dev"), "table": entry.get("table")}
            words = [q["dst"], "from", q["src"]] + ["%s %s" % (key, got[key]) for key in ("via", "dev", "table") if got[key]]
            out.append((got, " ".join(words)))
        else:
            why = errors.get(number) or "no answer"
            out.append(({"error": why}, why))
    return out


def path_queries(intent, remote):
    """The ``ip route get`` queries of a leaf: per binding one towards ``remote`` (a host on another leaf of the plane,
    or None) and one towards the next host of this leaf, a ring: 128 queries on a 64-port leaf, where every pair would
    be 4,032 for no rule the ring misses (a port's PBR matches by destination prefix, the same for every local host)."""
    queries = []
    hosts = [d["host_address"] for d in intent.get("downlinks") or [] if d.get("host_address")]
    for binding in intent.get("bindings") or []:
        src = binding["source"].split("/")[0]
        iif = ingress_of(intent, binding)
        if remote:
            queries.append({"probe": "pinned %s -> %s" % (src, remote), "kind": "pinned", "command": route_get(remote, src, iif),
                            "dst": remote, "src": src, "iif": iif,
                            "expected": "via %s dev %s (%s)" % (binding["next_hop"], binding["uplink"], binding["spine"]),
                            "next_hop": binding["next_hop"], "uplink": binding["uplink"]})
        dst = next_local_host(hosts, src)
        if dst:
            queries.append({"probe": "local %s -> %s" % (src, dst), "kind": "local", "command": route_get(dst, src, iif),
                            "dst": dst, "src": src, "iif": iif,
                            "expected": "on this leaf, not pinned (no via, main table)"})
    return queries


def next_local_host(hosts, src):
    """The host after ``src`` in the leaf's host list, wrapping around; None when the leaf has no other host."""
    ring = hosts
    if src in hosts:
        position = hosts.index(src)
        ring = hosts[position + 1:] + hosts[:position]
    return next((h for h in ring if h != src), None)


def parse_route_get(text):
    """First line of ``ip route get`` (iproute2) -> {via, dev, table} (None when absent), or {"error": text}."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if not lines or re.search(r"RTNETLINK answers|Error|unreachable|prohibit|blackhole", lines[0]):
        return {"error": lines[0].strip() if lines else "no answer"}
    words = lines[0].split()
    got = {}
    for key in ("via", "dev", "table"):
        got[key] = words[words.index(key) + 1] if key in words and words.index(key) + 1 < len(words) else None
    return got


def judge_path(query, output):
    """Judge one ``ip route get`` text answer (iproute2's text form)."""
    return judge_route_answer(query, parse_route_get(output),
                              output.strip().splitlines()[0].strip() if output.strip() else "no answer")


def judge_route_answer(query, got, actual):
    """Judge one answer, parsed (``got``: {via, dev, table} or {"error": ...}) with its text form ``actual``."""
    if "error" in got:
        return finding(query["probe"], "fail", query["expected"], got["error"])
    if query["kind"] == "pinned":
        ok = got["via"] == query["next_hop"] and got["dev"] == query["uplink"]
    else:
        ok = got["via"] is None and got["table"] in (None, "main")
    return finding(query["probe"], "ok" if ok else "fail", query["expected"], actual)


def remote_destination(plan, leaf_name):
    """A host address on another leaf of the same plane (reached through this leaf's spines), or None."""
    leaf = plan["leafs"][leaf_name]
    for name in sorted(plan["leafs"]):
        other = plan["leafs"][name]
        if name != leaf_name and other.get("plane") == leaf.get("plane"):
            for down in other.get("downlinks") or []:
                if down.get("host_address"):
                    return down["host_address"]
    return None


# --- failover -----------------------------------------------------------------------------------
def failover_command(uplink, dst, src, iif, timeout_ms=FAILOVER_TIMEOUT_MS):
    """A Linux router's shell command: ``uplink`` down until the path leaves it, up until it returns, both times
    printed; under ``nohup`` with a bounded wait, so a lost SSH session still brings the link back."""
    query = route_get(dst, src, iif)
    script = (
        "ms() { echo $(( $(date +%%s%%N) / 1000000 )); }; "
        "t0=$(ms); ip link set %(up)s down; "
        "while ip route get %(q)s | head -1 | grep -q \" dev %(up)s \"; do "
        "[ $(( $(ms) - t0 )) -gt %(t)d ] && break; sleep 0.01; done; "
        "echo AIF-FALLBACK-MS=$(( $(ms) - t0 )); echo AIF-FALLBACK-PATH=$(ip route get %(q)s | head -1); "
        "t1=$(ms); ip link set %(up)s up; "
        "until ip route get %(q)s | head -1 | grep -q \" dev %(up)s \"; do "
        "[ $(( $(ms) - t1 )) -gt %(t)d ] && break; sleep 0.01; done; "
        "echo AIF-BACK-MS=$(( $(ms) - t1 )); echo AIF-BACK-PATH=$(ip route get %(q)s | head -1)"
    ) % {"up": uplink, "q": query.replace("ip route get ", ""), "t": timeout_ms}
    # the output goes to a file, not the terminal: nohup keeps the shell alive through a lost session
    # (SIGHUP), and no pipe can kill it (SIGPIPE) between "down" and "up"
    out = "/tmp/aif-failover-$$.out"
    return "nohup sh -c '%s' > %s 2>&1 < /dev/null; cat %s; rm -f %s" % (script, out, out, out)


def failover_findings(binding, output, timeout_ms=FAILOVER_TIMEOUT_MS):
    """Judge the failover command's output: fallback off the uplink (not dropped), then back on the pin."""
    marks = dict(re.findall(r"^AIF-([A-Z-]+)=(.*)$", output, re.M))
    uplink, hop = binding["uplink"], binding["next_hop"]
    src = binding["source"].split("/")[0]
    if "FALLBACK-MS" not in marks or "BACK-MS" not in marks:
        return [finding("failover %s" % src, "fail", "fallback and return measured", output.strip()[-300:],
                        "the failover run did not complete; check that %s is up" % uplink)]
    fallback = parse_route_get(marks.get("FALLBACK-PATH", ""))
    back = parse_route_get(marks.get("BACK-PATH", ""))
    fell = "error" not in fallback and fallback["dev"] not in (None, uplink) and fallback["table"] in (None, "main")
    returned = "error" not in back and back["via"] == hop and back["dev"] == uplink
    return [
        finding("failover %s: %s down" % (src, uplink), "ok" if fell and int(marks["FALLBACK-MS"]) <= timeout_ms else "fail",
                "path leaves %s for the ECMP set (not dropped)" % uplink,
                "%s after %s ms" % (marks.get("FALLBACK-PATH", "").strip(), marks["FALLBACK-MS"])),
        finding("failover %s: %s up" % (src, uplink), "ok" if returned and int(marks["BACK-MS"]) <= timeout_ms else "fail",
                "pinned again via %s dev %s" % (hop, uplink),
                "%s after %s ms" % (marks.get("BACK-PATH", "").strip(), marks["BACK-MS"])),
    ]
