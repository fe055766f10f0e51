# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RoCE counters of every rail NIC as Prometheus text for node_exporter's textfile collector.

Stdlib only: the rdma_telemetry role installs this file on GPU hosts and runs it from a systemd
timer; tests import it and run it on fixture trees. docs/telemetry.md lists every metric.

Inputs per rail NIC (from the plan, via the JSON config the role writes): netdev, RDMA device,
rail, leaf, leaf port. Counters are read from

* ``<root>/sys/class/infiniband/<rdma>/ports/<port>/hw_counters/<name>`` (RDMA HW counters:
  np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled, out_of_sequence, ...),
* ``<root>/sys/class/net/<netdev>/carrier_down_count`` (link down events seen by the kernel),
* ``ethtool -S <netdev>`` (mlx5 per-priority PFC counters rx/tx_prioN_pause, discards, RDMA
  packet counts), or ``<ethtool_dir>/<netdev>.txt`` when given (fixtures).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

PREFIX = "roce_"

# (metric, HELP, source kind, source name, extra labels)
HW_COUNTERS = (
    ("ecn_marked_packets_total", "RoCE packets received with ECN CE marks (np_ecn_marked_roce_packets).",
     "np_ecn_marked_roce_packets"),
    ("cnp_sent_total", "CNPs sent as notification point (np_cnp_sent).", "np_cnp_sent"),
    ("cnp_handled_total", "CNPs handled as reaction point (rp_cnp_handled).", "rp_cnp_handled"),
    ("out_of_sequence_total", "Out-of-sequence packets received (out_of_sequence).", "out_of_sequence"),
    ("packet_seq_errors_total", "NAK sequence errors received (packet_seq_err).", "packet_seq_err"),
    ("local_ack_timeouts_total", "Local ACK timeouts (local_ack_timeout_err).", "local_ack_timeout_err"),
    ("out_of_buffer_total", "Packets dropped for lack of receive WQEs (out_of_buffer).", "out_of_buffer"),
)
ETHTOOL_COUNTERS = (
    ("discards_total", "Packets discarded by the port (rx/tx_discards_phy).",
     (("rx", "rx_discards_phy"), ("tx", "tx_discards_phy"))),
    ("rdma_packets_total", "RDMA unicast packets (rx/tx_vport_rdma_unicast_packets).",
     (("rx", "rx_vport_rdma_unicast_packets"), ("tx", "tx_vport_rdma_unicast_packets"))),
)
PRIORITIES = range(8)


def parse_ethtool(text):
    """``ethtool -S`` output -> {counter: int} (lines ``     name: value``)."""
    out = {}
    for line in text.splitlines():
        name, sep, value = line.strip().partition(":")
        if not sep:
            continue
        value = value.strip()
        if value.lstrip("-").isdigit():
            out[name.strip()] = int(value)
    return out


def read_int(path):
    try:
        with open(path) as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def ethtool_stats(netdev, ethtool_dir=None):
    if ethtool_dir:
        path = os.path.join(ethtool_dir, "%s.txt" % netdev)
        if not os.path.exists(path):
            return None
        with open(path) as handle:
            return parse_ethtool(handle.read())
    try:
        text = subprocess.run(["ethtool", "-S", netdev], check=True, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_ethtool(text)


def _escape(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels):
    return "{" + ",".join('%s="%s"' % (k, _escape(labels[k])) for k in sorted(labels)) + "}"


class Exposition(object):
    """Collects samples and renders them with one HELP/TYPE block per metric."""

    def __init__(self):
        self.meta = {}
        self.samples = {}

    def add(self, name, kind, help_text, labels, value):
        full = PREFIX + name
        self.meta.setdefault(full, (kind, help_text))
        self.samples.setdefault(full, []).append((labels, value))

    def render(self):
        lines = []
        for name in sorted(self.samples):
            kind, help_text = self.meta[name]
            lines.append("# HELP %s %s" % (name, help_text))
            lines.append("# TYPE %s %s" % (name, kind))
            for labels, value in self.samples[name]:
                lines.append("%s%s %s" % (name, _labels(labels), value))
        return "\n".join(lines) + "\n"


def collect(config, root="/", ethtool_dir=None, now=None):
    """Prometheus text for every rail NIC of ``config`` ({'host': .., 'nics': [...]})."""
    out = Exposition()
    for nic in config["nics"]:
        labels = {"host": config["host"], "rail": str(nic["rail"]), "netdev": nic["netdev"],
                  "rdma": nic.get("rdma") or "", "leaf": nic.get("leaf") or "", "leaf_port": nic.get("leaf_port") or ""}
        port = str(nic.get("port", 1))
        hw_dir = os.path.join(root, "sys/class/infiniband", nic.get("rdma") or "-", "ports", port, "hw_counters")
        found = 0
        for metric, help_text, source in HW_COUNTERS:
            value = read_int(os.path.join(hw_dir, source))
            if value is not None:
                out.add(metric, "counter", help_text, labels, value)
                found += 1
        carrier = read_int(os.path.join(root, "sys/class/net", nic["netdev"], "carrier_down_count"))
        if carrier is not None:
            out.add("link_down_total", "counter", "Carrier down events of the rail netdev (carrier_down_count).",
                    labels, carrier)
            found += 1
        stats = ethtool_stats(nic["netdev"], ethtool_dir)
        if stats:
            for prio in PRIORITIES:
                for direction in ("rx", "tx"):
                    value = stats.get("%s_prio%d_pause" % (direction, prio))
                    if value is not None:
                        out.add("pfc_pause_frames_total", "counter",
                                "PFC pause frames per priority and direction (rx/tx_prioN_pause).",
                                dict(labels, priority=str(prio), direction=direction), value)
                        found += 1
            for metric, help_text, sources in ETHTOOL_COUNTERS:
                for direction, source in sources:
                    if source in stats:
                        out.add(metric, "counter", help_text, dict(labels, direction=direction), stats[source])
                        found += 1
            if "link_down_events_phy" in stats:
                out.add("phy_link_down_total", "counter", "Link down events seen by the PHY (link_down_events_phy).",
                        labels, stats["link_down_events_phy"])
        out.add("collector_nic_up", "gauge", "1 when counters of this rail NIC could be read.", labels, 1 if found else 0)
    out.add("collector_last_run_timestamp_seconds", "gauge", "When the collector last ran.",
            {"host": config["host"]}, int(now if now is not None else time.time()))
    return out.render()


def write_atomic(path, text):
    """Write then rename, so node_exporter never reads a half-written file."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as handle:
        handle.write(text)
    os.rename(tmp, path)


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--config", required=True, help="JSON: {host, nics: [{rail, netdev, rdma, leaf, leaf_port}]}")
    parser.add_argument("--output", help="textfile collector .prom file (stdout when absent)")
    parser.add_argument("--root", default="/", help="filesystem root holding sys/ (fixtures)")
    parser.add_argument("--ethtool-dir", help="read ethtool -S output from <dir>/<netdev>.txt instead of running ethtool")
    args = parser.parse_args(argv)
    with open(args.config) as handle:
        config = json.load(handle)
    text = collect(config, args.root, args.ethtool_dir)
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
