"""Counter show commands of the simulated NOSes (test code), printed in the layouts of the real captures in
tests/fixtures/switches/ (SOURCE.md there): SONiC sonic-utilities tables, NVUE `counters qos` / `qos pfc-watchdog`,
EOS PFC and ECN JSON (ANTA's fixtures) and watchdog JSON (no capture), NX-OS PFC table.

Injection: <state-dir>/counters.json, read on every show command (tests write it while the simulator runs)::

    {"Ethernet1": {"3": {"pfc_rx": 5000, "pfc_tx": 0, "ecn_marked": 7, "drops": 0,
                         "wd_storms": 1, "wd_restores": 0, "wd_state": "stormed"}}}

Ports without an entry count zero (the EOS/NX-OS PFC tables keep the simulator's base counts on top).
"""
import json
import os


def load(state_dir):
    try:
        with open(os.path.join(state_dir, "counters.json")) as fh:
            return json.load(fh)
    except (IOError, ValueError):
        return {}


def value(table, port, prio, key):
    return int((table.get(port) or {}).get(str(prio), {}).get(key, 0))


def port_total(table, port, key):
    return sum(int(v.get(key, 0)) for v in (table.get(port) or {}).values())


def comma(n):
    return "{:,}".format(n)


def tabulate(headers, rows):
    """sonic-utilities' tabulate layout: right-aligned columns, two spaces apart, a dashed rule."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.rjust(w) for c, w in zip(cells, widths))
    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


# ----------------------------------------------------------------------------- SONiC (Linux shell)
def sonic_pfc(ports, table):
    out = []
    for key, title in (("pfc_rx", "Port Rx"), ("pfc_tx", "Port Tx")):
        rows = [[p] + [comma(value(table, p, q, key)) for q in range(8)] for p in ports]
        out.append(tabulate([title] + ["PFC%d" % q for q in range(8)], rows))
    return "\n\n".join(out) + "\n"


def sonic_queue(ports, table, wred=False):
    blocks = []
    for p in ports:
        rows = []
        for q in range(8):
            if wred:
                rows.append([p, "UC%d" % q, "0", "0", str(value(table, p, q, "ecn_marked")), "0"])
            else:
                rows.append([p, "UC%d" % q, "0", "0", str(value(table, p, q, "drops")), str(value(table, p, q, "drop_bytes"))])
        heads = (["Port", "TxQ", "WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts", "EcnMarked/bytes"] if wred else
                 ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"])
        blocks.append(tabulate(heads, rows))
    return "\n\n".join(blocks) + "\n"


def sonic_pfcwd(ports, table):
    rows = []
    for p in ports:
        for q, v in sorted((table.get(p) or {}).items()):
            if "wd_storms" in v or "wd_state" in v:
                rows.append(["%s:%s" % (p, q), v.get("wd_state", "operational"),
                             "%d/%d" % (int(v.get("wd_storms", 0)), int(v.get("wd_restores", 0))),
                             "0/0", "0/0", "0/0", "0/0"])
    return tabulate(["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP",
                     "RX LAST OK/DROP"], rows) + "\n"


# ----------------------------------------------------------------------------- NVUE
def nvue_table(title, heads, rows):
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]

    def line(cells):
        return "    " + "  ".join(c.ljust(w) for c, w in zip(cells, widths))
    return [title, "=" * (len(title) + 3), line(heads), "    " + "  ".join("-" * w for w in widths)] + [line(r) for r in rows]


def nvue_counters_qos(port, table):
    def v(q, k):
        return str(value(table, port, q, k))
    out = nvue_table("Ingress Buffer Statistics", ["priority-group", "rx-frames", "rx-buffer-discards", "rx-shared-buffer-discards"],
                     [[str(q), "0", "0 Bytes", "0 Bytes"] for q in range(8)])
    out += [""] + nvue_table("Egress Queue Statistics", ["traffic-class", "tx-frames", "tx-bytes", "tx-uc-buffer-discards", "wred-discards"],
                             [[str(q), "0", "0 Bytes", "%s Bytes" % v(q, "drop_bytes"), v(q, "drops")] for q in range(8)])
    out += [""] + nvue_table("PFC Statistics", ["switch-priority", "rx-pause-frames", "rx-pause-duration", "tx-pause-frames",
                                                "tx-pause-duration"],
                             [[str(q), v(q, "pfc_rx"), "0", v(q, "pfc_tx"), "0"] for q in range(8)])
    out += [""] + nvue_table("Qos Port Statistics", ["Counter", "Receive", "Transmit"],
                             [["ecn-marked-packets", "n/a", str(port_total(table, port, "ecn_marked"))],
                              ["mc-buffer-discards", "n/a", "0"], ["pause-frames", "0", "0"]])
    return "\n".join(out) + "\n"


def nvue_pfc_watchdog(port, table):
    out = ["                 operational  applied ", "---------------  -----------  ------- ",
           "state            enabled      enabled ", ""]
    rows = []
    for q in range(8):
        v = (table.get(port) or {}).get(str(q), {})
        rows.append([str(q), v.get("wd_state", "OK"), str(int(v.get("wd_storms", 0)))])
    out += ["PFC WD Status ", "=========================== ", "    traffic-class  status    deadlock-count ",
            "    -------------  --------  -------------- ", ""]
    out += ["    %-13s  %-8s  %s " % tuple(r) for r in rows]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- EOS
def eos_pfc_json(rows):
    """`show priority-flow-control counters | json` from [(port, rx, tx)]: the keys of Arista's ANTA fixture
    (tests/fixtures/switches/eos/anta-show-priority-flow-control-counters-json.json)."""
    return json.dumps({"interfaceCounters": dict((p, {"rxFrames": rx, "txFrames": tx}) for p, rx, tx in rows)}, indent=4)


def eos_ecn_json(ports, table):
    """`show qos interfaces ecn counters queue | json`: per tx-queue the ECN-marked packets as a string (ANTA's
    fixture, anta-show-qos-interfaces-ecn-counters-queue-json.json; ``-`` there for a queue without ECN)."""
    return json.dumps({"intfQueueCounters": dict(
        (p, {"queueCounters": dict((str(q), str(value(table, p, q, "ecn_marked"))) for q in range(8))}) for p in ports)},
        indent=4)


def eos_pfc_watchdog_json(table):
    intfs = {}
    for port, prios in sorted(table.items()):
        queues = dict((q, {"stuckCount": int(v.get("wd_storms", 0)), "recoveryCount": int(v.get("wd_restores", 0))})
                      for q, v in sorted(prios.items()) if "wd_storms" in v)
        if queues:   # EOS leaves an interface out until its first watchdog event
            intfs[port] = {"txQueues": queues}
    return json.dumps({"interfaces": intfs}, indent=2)
