# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switch RoCE counters: one parser per NOS and show command, each tested on real captured output
(tests/fixtures/switches/SOURCE.md, tests/unit/nos/test_counters.py); a driver declares its ``counters`` and
``counter_evidence``. Every parser returns ``{port: {priority: {counter: value}}}``: ``priority`` the PFC priority /
traffic class as a string, or ``"all"`` where the NOS counts per port only; counters ``COUNTERS`` plus ``wd_state`` (the
watchdog's word for the queue now), absent where the NOS does not give them. Pure: no Ansible, no network."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Read

COUNTERS = ("pfc_rx", "pfc_tx", "ecn_marked", "drops", "drop_bytes", "wd_storms", "wd_restores")


def _num(text):
    """'15,437' -> 15437; 'N/A' / 'n/a' -> None; '0 Bytes' -> 0."""
    text = text.strip().split()[0] if text.strip() else ""
    text = text.replace(",", "")
    return int(text) if text.isdigit() else None


def _put(out, port, prio, **values):
    values = dict((k, v) for k, v in values.items() if v is not None)
    if values:
        out.setdefault(port, {}).setdefault(str(prio), {}).update(values)
    return out


def merge(*tables):
    """Several parsers' results for one switch -> one table (later values win per counter)."""
    out = {}
    for table in tables:
        for port, prios in (table or {}).items():
            for prio, values in prios.items():
                _put(out, port, prio, **values)
    return out


# ------------------------------------------------------------------------------------- SONiC / AsterNOS
# Community SONiC's Click CLI (sonic-utilities: pfcstat, queuestat, pfcwd), in the Linux shell.
def parse_sonic_pfc(text):
    """`show pfc counters`: a `Port Rx` and a `Port Tx` table, one column per priority PFC0..PFC7."""
    out, key = {}, None
    for line in text.splitlines():
        head = re.match(r"^\s*Port (Rx|Tx)\s+PFC0", line)
        if head:
            key = "pfc_rx" if head.group(1) == "Rx" else "pfc_tx"
            continue
        cols = line.split()
        if key and len(cols) == 9 and not cols[0].startswith("-"):
            for prio, cell in enumerate(cols[1:]):
                n = _num(cell)
                if n is not None:
                    _put(out, cols[0], prio, **{key: n})
    return out


def _queue_rows(text):
    """Rows `PORT  UCn|ALLn  a  b  c  d` of queuestat tables (MC queues are not the lossless unicast ones)."""
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+)\s+(UC|ALL)(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", line)
        if m:
            yield m.group(1), int(m.group(3)), [_num(c) for c in m.group(4, 5, 6, 7)]


def parse_sonic_queue(text):
    """`show queue counters`: Counter/pkts Counter/bytes Drop/pkts Drop/bytes per queue (UCn; AsterNOS ALLn)."""
    out = {}
    for port, queue, (dummy_pkts, dummy_bytes, drops, drop_bytes) in _queue_rows(text):
        _put(out, port, queue, drops=drops, drop_bytes=drop_bytes)
    return out


def parse_sonic_wred(text):
    """`show queue wredcounters`: WredDrp/pkts WredDrp/bytes EcnMarked/pkts EcnMarked/bytes per queue."""
    out = {}
    for port, queue, (dummy_wred, dummy_wred_bytes, ecn, dummy_ecn_bytes) in _queue_rows(text):
        _put(out, port, queue, ecn_marked=ecn)
    return out


def parse_sonic_pfcwd(text):
    """`show pfcwd stats`: `PORT:QUEUE  STATUS  DETECTED/RESTORED  ...`; a later table in the text wins."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+):(\d+)\s+(\S+)\s+(\d+)/(\d+)\s", line)
        if m:
            _put(out, m.group(1), m.group(2), wd_state=m.group(3), wd_storms=int(m.group(4)), wd_restores=int(m.group(5)))
    return out


# ------------------------------------------------------------------------------------- EOS / NX-OS
def _port_table(text, abbrev=()):
    """`PORT ... RX TX` rows (the last two numbers of a row), short port names expanded."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+)\s+.*?(\d[\d,]*)\s+(\d[\d,]*)\s*$", line)
        if not m or not re.search(r"\d", m.group(1)):
            continue
        port = m.group(1)
        for short, full in abbrev:
            if re.match(short + r"\d", port):
                port = full + port[len(short):]
        _put(out, port, "all", pfc_rx=_num(m.group(2)), pfc_tx=_num(m.group(3)))
    return out


def _json(text):
    return json.loads(text) if text.strip() else {}


def parse_eos_pfc(text):
    """EOS `show priority-flow-control counters | json`: interfaceCounters -> IF -> rxFrames / txFrames (ANTA)."""
    out = {}
    for port, cnt in sorted((_json(text).get("interfaceCounters") or {}).items()):
        _put(out, port, "all", pfc_rx=cnt.get("rxFrames"), pfc_tx=cnt.get("txFrames"))
    return out


def parse_eos_ecn(text):
    """EOS `show qos interfaces ecn counters queue | json`: intfQueueCounters -> IF -> queueCounters -> {TXQ: "N"},
    ECN-marked packets per tx-queue as strings; ``-`` where ECN is not configured on that queue (left out)."""
    out = {}
    for port, intf in sorted((_json(text).get("intfQueueCounters") or {}).items()):
        for queue, cell in sorted((intf.get("queueCounters") or {}).items()):
            _put(out, port, queue, ecn_marked=_num(str(cell)))
    return out


def parse_eos_pfc_watchdog(text):
    """EOS `show priority-flow-control counters watchdog | json`: interfaces -> IF -> txQueues -> Q ->
    stuckCount / recoveryCount (key names as an operator's health check reads them; no captured output)."""
    out = {}
    for port, intf in sorted((_json(text).get("interfaces") or {}).items()):
        for queue, q in sorted((intf.get("txQueues") or {}).items()):
            _put(out, port, queue, wd_storms=q.get("stuckCount"), wd_restores=q.get("recoveryCount"))
    return out


def parse_nxos_pfc(text):
    """NX-OS `show interface priority-flow-control`: `Port Mode Oper(VL bmap) RxPPP TxPPP`, per port."""
    return _port_table(text)


# ------------------------------------------------------------------------------------- NVUE
def _sections(text):
    """NVUE's titled tables: {title: [rows of cells]} (a title line is followed by a `===` line)."""
    lines = text.splitlines()
    out, title = {}, None
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and re.match(r"^\s*=+\s*$", lines[i + 1]) and line.strip():
            title = line.strip()
            out[title] = []
            continue
        if title and line.strip() and not re.match(r"^\s*[-=]+(\s+-+)*\s*$", line):
            out[title].append(line.split())
    return out


def parse_nvue_counters_qos(text, port):
    """`nv show interface PORT counters qos` (CL 5.5+): PFC pause frames per switch priority, egress queue
    discards per traffic class, ingress buffer discards per priority group, the port's ECN-marked packets."""
    out = {}
    for title, rows in _sections(text).items():
        for row in rows:
            if not row or not row[0].isdigit() and title != "Qos Port Statistics":
                continue
            if title == "PFC Statistics" and len(row) >= 5:
                _put(out, port, row[0], pfc_rx=_num(row[1]), pfc_tx=_num(row[3]))
            elif title == "Egress Queue Statistics" and len(row) >= 7:
                # tx-frames, tx-bytes (N Bytes), tx-uc-buffer-discards (N Bytes), wred-discards
                _put(out, port, row[0], drops=_num(row[6]), drop_bytes=_num(row[4]))
            elif title == "Ingress Buffer Statistics" and len(row) >= 4:
                slot = out.setdefault(port, {}).setdefault(row[0], {})
                if _num(row[2]):
                    slot["drop_bytes"] = slot.get("drop_bytes", 0) + _num(row[2])
            elif title == "Qos Port Statistics" and row[0] == "ecn-marked-packets" and len(row) >= 3:
                _put(out, port, "all", ecn_marked=_num(row[2]))
    return out


def parse_nvue_pfc_watchdog(text, port):
    """`nv show interface PORT qos pfc-watchdog` (CL 5.6+): per traffic class `status deadlock-count`."""
    out = {}
    for row in _sections(text).get("PFC WD Status", []):
        if len(row) >= 3 and row[0].isdigit():
            _put(out, port, row[0], wd_state=row[1], wd_storms=_num(row[2]))
    return out


# ------------------------------------------------------------------------------------- FRR / Linux
def parse_linux_ip_link(text):
    """`ip -s -j link show` (iproute2 JSON): per interface rx+tx dropped packets."""
    out = {}
    for link in json.loads(text) if text.strip() else []:
        stats = link.get("stats64") or link.get("stats") or {}
        drops = sum((stats.get(d) or {}).get("dropped", 0) for d in ("rx", "tx"))
        _put(out, link["ifname"], "all", drops=drops)
    return out


def parse_linux_tc(text):
    """`tc -s qdisc show`: ECN marks per device, summed over its qdiscs (fq_codel `ecn_mark N`, red `marked N`)."""
    out, dev = {}, None
    for line in text.splitlines():
        m = re.match(r"^qdisc \S+ \S+ dev (\S+)", line)
        if m:
            dev = m.group(1)
            continue
        m = re.search(r"\b(?:ecn_mark|marked) (\d+)", line)
        if dev and m:
            slot = out.setdefault(dev, {}).setdefault("all", {})
            slot["ecn_marked"] = slot.get("ecn_marked", 0) + int(m.group(1))
    return out


# ------------------------------------------------------------------------------------- shared reads
# ``counter_evidence``: "verified" tested on real captured or vendor-printed output, "unverified" the format known only
# from code or docs (tests/fixtures/switches/SOURCE.md); absent: the NOS's commands do not give it.
# SONiC's sonic-utilities tables, from the Linux shell under klish (Dell SONiC, AsterNOS):
SONIC = [Read("show pfc counters", parse_sonic_pfc, "shell"), Read("show queue counters", parse_sonic_queue, "shell"),
         Read("show queue wredcounters", parse_sonic_wred, "shell"), Read("show pfcwd stats", parse_sonic_pfcwd, "shell")]
ALL_VERIFIED = dict((c, "verified") for c in COUNTERS)
ALL_UNVERIFIED = dict((c, "unverified") for c in COUNTERS)


def commands(driver, ports):
    """[(command as sent, parser, where, port or None)] of a driver's ``counters`` for the plan's ports."""
    out = []
    for read in driver.counters:
        if read.where == "port":
            out.extend((read.command.format(port=p), read.parser, read.where, p) for p in ports)
        else:
            out.append((read.command, read.parser, read.where, None))
    return out


def parse(driver, answers, ports):
    """{command: output} of one switch -> the merged counter table for the plan's ports only."""
    tables = []
    for cmd, parser, dummy_where, port in commands(driver, ports):
        if cmd in answers:
            tables.append(parser(answers[cmd], port) if port else parser(answers[cmd]))
    merged = merge(*tables)
    return dict((p, merged[p]) for p in sorted(merged) if p in set(ports))


def evidence(driver):
    """{counter: verified|unverified|null} for every counter name."""
    known = driver.counter_evidence
    return dict((c, known.get(c)) for c in COUNTERS)
