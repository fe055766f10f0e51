# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""BGP session state from a switch's own show output, one parser per NOS (a driver declares ``bgp_summary =
Read(command, parser)``), judged against the plan by ``judge``: every planned neighbor Established with the planned
remote AS, no unplanned session. Each parser is tested on a capture (tests/fixtures/switches/SOURCE.md): frr on FRR 8.4
itself (the routed twin); eos (``vrfs.default.peers``, the AS a string, asdot where the switch prints it) and nxos
(``TABLE_vrf`` ... ``ROW_neighbor``, a single ROW given as an object) on the answers captured for napalm's drivers,
which send these commands; nvue on the Cumulus Linux 5.12+ ``Neighbor AS State ... Afi-Safi`` table (NVIDIA's CL user
guide, Troubleshooting BGP, 5.12 and 5.14; its ``-o json`` form has no published example). A driver's module may hold
its own parser on the shared pieces (``as_number``, ``dash_table``). Pure: no Ansible, no I/O."""

from __future__ import annotations

import json
import re


def finding(probe, status, expected="", actual="", message=""):
    return {"probe": probe, "status": status, "expected": expected, "actual": actual, "message": message}


def as_number(value):
    """An AS as the NOS prints it (int, "65001", asdot "65001.1028", blank) -> int, or None when there is none."""
    if value is None or isinstance(value, int):
        return value
    text = str(value).strip()
    if not text:
        return None
    if "." in text:
        high, low = text.split(".", 1)
        return int(high) * 65536 + int(low)
    return int(text)


# --- parsers: output -> {address: {"state": as printed, "remote_as": int or None}} ------------------------------
def parse_frr(text):
    peers = json.loads(text).get("peers", {})
    return dict((a, {"state": p.get("state"), "remote_as": as_number(p.get("remoteAs"))}) for a, p in peers.items())


def parse_eos(text):
    data = json.loads(text)
    peers = ((data.get("vrfs") or {}).get("default") or {}).get("peers") or {}
    return dict((a, {"state": p.get("peerState"), "remote_as": as_number(p.get("asn"))}) for a, p in peers.items())


def _rows(table, row):
    """NX-OS JSON: ``{TABLE_x: {ROW_x: [..] or {..}}}`` -> the rows as a list (a single row comes as an object)."""
    rows = (table or {}).get(row) or []
    return rows if isinstance(rows, list) else [rows]


def parse_nxos(text, vrf_name="default"):
    data = json.loads(text)
    out = {}
    for vrf in _rows(data.get("TABLE_vrf"), "ROW_vrf"):
        if vrf.get("vrf-name-out") != vrf_name:
            continue
        for af in _rows(vrf.get("TABLE_af"), "ROW_af"):
            for saf in _rows(af.get("TABLE_saf"), "ROW_saf"):
                if saf.get("af-name") != "IPv4 Unicast":
                    continue
                for n in _rows(saf.get("TABLE_neighbor"), "ROW_neighbor"):
                    out[n["neighborid"]] = {"state": n.get("state"), "remote_as": as_number(n.get("neighboras"))}
    return out


NVUE_HEAD = re.compile(r"^Neighbor\s+AS\s+State\s")


def parse_nvue(text):
    """The ``Neighbor AS State ...`` table: a neighbor's first line names it, its further address-family lines leave
    the neighbor column blank. A neighbor that shows no ipv4-unicast line (and some other family) is not an IPv4
    unicast session, as FRR's ``show bgp ipv4 unicast summary`` leaves it out."""
    col, rows = dash_table(text, NVUE_HEAD, "Neighbor AS State")
    if not {"Neighbor", "AS", "State", "Afi-Safi"} <= set(col):
        raise ValueError("table columns %s" % ", ".join(sorted(col, key=col.get)))
    peers, families, current = {}, {}, None
    for cells in rows:
        if not any(cells):
            continue
        if cells[col["Neighbor"]]:
            current = cells[col["Neighbor"]]
            peers[current] = {"state": cells[col["State"]], "remote_as": as_number(cells[col["AS"]])}
            families[current] = []
        if current is not None and cells[col["Afi-Safi"]]:
            families[current].append(cells[col["Afi-Safi"]])
    return dict((a, p) for a, p in peers.items() if not families[a] or "ipv4-unicast" in families[a])


def dash_table(text, head, what):
    """The table under a ``head`` line and a dash line -> ({column: index}, rows of cells cut at the dashes' starts);
    ValueError naming ``what`` when there is none."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if head.match(ln)), None)
    if start is None or start + 1 >= len(lines) or not re.match(r"^-+(\s+-+)*\s*$", lines[start + 1]):
        raise ValueError("no `%s` table" % what)
    starts = [m.start() for m in re.finditer(r"-+", lines[start + 1])]
    spans = [(s, starts[i + 1] if i + 1 < len(starts) else None) for i, s in enumerate(starts)]

    def cells(line):
        return [line[s:e].strip() for s, e in spans]

    return dict((name, i) for i, name in enumerate(cells(lines[start]))), [cells(line) for line in lines[start + 2:]]


# --- judging ----------------------------------------------------------------------------------------------------
def established(state):
    return str(state or "").lower() == "established"   # NVUE prints the states in lower case


def findings(driver, intent, text):
    """``bgp_sessions`` findings from the output of the driver's ``bgp_summary`` read: one per planned and unplanned
    session, then the check's own; an output not in the command's format (refused, BGP not running) fails the check."""
    read = driver.bgp_summary
    try:
        peers = read.parser(text)
    except (ValueError, AttributeError, TypeError, KeyError) as exc:
        return [finding("bgp_sessions", "fail", "BGP summary (`%s`)" % read.command, (text or "").strip()[:200],
                        "cannot read the BGP summary (BGP not running, or the command refused): %s" % exc)]
    return judge(intent, peers)


def judge(intent, peers):
    planned = dict((n["address"], n) for n in (intent.get("bgp") or {}).get("neighbors", []))
    out, up = [], 0
    for address in sorted(planned, key=_ip_key):
        n = planned[address]
        want = "Established, AS %d (%s %s)" % (n["remote_as"], n.get("peer", "?"), n.get("port", "?"))
        peer = peers.get(address)
        if peer is None:
            out.append(finding("bgp %s" % address, "fail", want, "not configured"))
            continue
        ok = established(peer["state"]) and peer["remote_as"] == n["remote_as"]
        up += ok
        out.append(finding("bgp %s" % address, "ok" if ok else "fail", want, _actual(peer)))
    for address in sorted(set(peers) - set(planned), key=_ip_key):
        out.append(finding("bgp %s" % address, "fail", "no session (not in the plan)", _actual(peers[address])))
    out.append(finding("bgp_sessions", "ok" if up == len(planned) == len(peers) else "fail",
                       "%d planned sessions Established" % len(planned), "%d of %d Established" % (up, len(peers))))
    return out


def _actual(peer):
    return "%s, AS %s" % (peer["state"], peer["remote_as"] if peer["remote_as"] is not None else "not shown")


def _ip_key(address):
    try:
        return tuple(int(part) for part in address.split("."))
    except ValueError:
        return (999, address)
