# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GOM collector: one Python service that ingests the agents' batches, runs the localiser every 100 ms, writes
the event stream (JSON lines) and serves Prometheus metrics (prometheus-client) and the recent events over HTTP.

    python3 collector.py --plan plan.json --probes probes.json --listen 0.0.0.0:9720 [--listen unix:/run/gom.sock]
                         --http 0.0.0.0:9721 --events /var/lib/aifabric-gom/events.jsonl
                         [--markers SWITCH=DIR ...] [--silences silences.json] [--steer-record gor.json]

Maintenance (docs/gom.md): ``--markers SWITCH=DIR`` names the directory where this collection's lock markers for
that switch appear (``aifabric-lock.aif-*``, nos/transactions.py ShellMarkers: a Linux-based NOS's marker files, or
their mirror); a live marker (renewed within ``--lock-ttl``) is a change under way, a ``-d`` drain record a drain,
both read with nos/devicelock.py's own parser. ``--silences`` is a JSON file ``[{"switch", "until", "reason"}]``
an operator writes to silence a switch (the runbook). Both are re-read every second. ``--steer-record`` is GOR's
record of steered bindings: the probes follow them (planwatch.py); it and ``--probes`` are re-read when they change.
"""
from __future__ import annotations

import json
import os
import selectors
import shlex
import subprocess
import socket
import sys
import threading
import time

# run as a script, the collection's package must be on PYTHONPATH (role gom_collector installs it in its layout)
from ansible_collections.aifabric.roce.plugins.module_utils.gom import planwatch
from ansible_collections.aifabric.roce.plugins.module_utils.gom.linkstate import LinkStateError, ports_down
from ansible_collections.aifabric.roce.plugins.module_utils.gom.localise import STATE, Localiser, Topology, write_events
from ansible_collections.aifabric.roce.plugins.module_utils.nos.devicelock import group

TICK = 0.1
# s between reads of the lock marker directories and the silences (a change's first lost packet must find its switch
# already under maintenance)
MARKERS_EVERY = 0.25
MAX_LINE = 4 * 1024 * 1024
GPU_LABEL_MAX = 16


def read_markers(directory, now=None, ttl=1800):
    """This collection's lock markers in ``directory``: {"by": "lock" or "drain", "holder", "since"} or None."""
    try:
        names = [n[len("aifabric-lock."):] for n in os.listdir(directory) if n.startswith("aifabric-lock.aif-")]
    except OSError:
        return None
    details = {}
    for name in names:
        try:
            with open(os.path.join(directory, "aifabric-lock." + name)) as handle:
                details[name] = handle.read().strip()
        except OSError:
            continue
    now = time.time() if now is None else now
    found = None
    for marker in group(details):
        live = "" in marker.parts and not marker.stale(ttl, now)
        if marker.drained:
            return {"by": "drain", "holder": marker.describe(), "since": marker.created}
        if live:
            found = {"by": "lock", "holder": marker.describe(), "since": marker.created}
    return found


def read_silences(path, now=None):
    now = time.time() if now is None else now
    if not path or not os.path.exists(path):
        return {}
    try:
        with open(path) as handle:
            entries = json.load(handle)
    except (OSError, ValueError):
        return {}
    out = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("switch") and float(entry.get("until") or 0) > now:
            out[entry["switch"]] = {"by": "silence", "holder": entry.get("reason") or "operator silence",
                                    "since": entry.get("since")}
    return out


def gpu_label(info):
    """The ``gpus`` label of a link: ``host:netdev`` comma-joined, at most GPU_LABEL_MAX, then ``+N``."""
    gpus = ["%s:%s" % (g["host"], g["netdev"]) for g in info["gpus"]]
    return ",".join(gpus[:GPU_LABEL_MAX]) + (",+%d" % (len(gpus) - GPU_LABEL_MAX) if len(gpus) > GPU_LABEL_MAX else "")


class Metrics(object):
    """prometheus-client collector: built at scrape time from the localiser's state (no per-tick gauge writes)."""

    def __init__(self, service):
        self.service = service

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
        loc = self.service.localiser
        with self.service.lock:
            state = GaugeMetricFamily("gom_link_state", "GOM link state: 0 up, 1 fault, 2 maintenance, 3 fault grouped "
                                      "in a switch fault, 4 not measured", labels=["link", "link_class", "from", "to", "gpus"])
            loss = GaugeMetricFamily("gom_link_loss_ratio", "Loss of the link's cleanest probe over the last second",
                                     labels=["link"])
            rtt = GaugeMetricFamily("gom_link_rtt_seconds", "Round trip of the link's probes over the last 10 s",
                                    labels=["link", "quantile"])
            for link, info in sorted(loc.topo.info.items()):
                state.add_metric([link, info["link_class"], info["from"], info["to"], gpu_label(info)],
                                 STATE[loc.state(link)])
                value = loc.link_loss(link)
                if value is not None:
                    loss.add_metric([link], value)
            for link in sorted(set(x for pid in loc.lossy for x in loc.topo.paths[pid]) | set(loc.link_state)):
                quantiles = loc.link_rtt(link)
                for q, key in (("0.5", "p50"), ("0.9", "p90"), ("0.99", "p99")):
                    if quantiles:
                        rtt.add_metric([link, q], quantiles[key] / 1000.0)
            switch = GaugeMetricFamily("gom_switch_fault", "1 while a switch fault is open", labels=["switch"])
            grouped = GaugeMetricFamily("gom_switch_fault_link", "1 for each failing link of an open switch fault",
                                        labels=["switch", "link", "link_class", "from", "to", "gpus"])
            for key in sorted(loc.open):
                if key.startswith("switch:"):
                    switch.add_metric([key[7:]], 1)
                    for link in loc.open[key]["links"]:
                        info = loc.topo.info[link]
                        grouped.add_metric([key[7:], link, info["link_class"], info["from"], info["to"], gpu_label(info)], 1)
            packets = CounterMetricFamily("gom_probe_packets", "Probe packets judged", labels=["result"])
            packets.add_metric(["received"], loc.counters["received"])
            packets.add_metric(["lost"], loc.counters["lost"])
            batches = CounterMetricFamily("gom_ingest_batches", "Agent batches ingested")
            batches.add_metric([], loc.counters["batches"])
            dropped = CounterMetricFamily("gom_agent_dropped_batches", "Batches agents dropped while the collector "
                                          "was away (their own count)", labels=["host"])
            for host, count in sorted(loc.dropped.items()):
                dropped.add_metric([host], count)
            events = CounterMetricFamily("gom_events", "Events emitted", labels=["kind"])
            for kind, count in sorted(self.service.event_counts.items()):
                events.add_metric([kind], count)
            probes = GaugeMetricFamily("gom_probes", "Probes in the plan")
            probes.add_metric([], len(loc.probes))
            repathed = GaugeMetricFamily("gom_probes_repathed", "Probes whose path GOR's steer record moved off the plan")
            repathed.add_metric([], len(self.service.repathed))
            unmeasured = GaugeMetricFamily("gom_faults_unmeasured", "Open faults no probe crosses now (steered off)")
            unmeasured.add_metric([], len(planwatch.unmeasured_faults(loc)))
            uncovered = GaugeMetricFamily("gom_link_uncovered", "1 for each link the probe plan reaches with no probe "
                                          "(probe_plan's uncovered: a loss there is invisible)", labels=["link"])
            for link in loc.topo.uncovered:
                uncovered.add_metric([link], 1)
        return [state, loss, rtt, switch, grouped, packets, batches, dropped, events, probes, repathed,
                unmeasured, uncovered]


class LinkStatePoller(object):
    """A thread that runs each switch's link-state command (``ip -j link show`` there: ``ip -n NS ...`` on the
    twin, ``ssh ... ip -j link show`` on a Linux-based NOS) every ``interval`` seconds and keeps the ports it
    shows down (linkstate.py); a command that fails or times out leaves that switch unread (None)."""

    def __init__(self, commands, ports, interval=1.0, timeout=5.0, run=None):
        self.commands = commands        # switch -> argv
        self.ports = ports              # switch -> its planned fabric ports
        self.interval, self.timeout = interval, timeout
        self.run_cmd = run or self._run
        self.latest = {}                # switch -> set of ports down, or None
        self.errors = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()

    def _run(self, argv):
        """Start ``argv``; returns a function that waits for it and returns its output."""
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def wait():
            try:
                out, err = proc.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise
            if proc.returncode:
                raise OSError("%s: exit %d %s" % (" ".join(argv), proc.returncode, err.strip()[:200]))
            return out
        return wait

    def poll_once(self):
        """Every switch's command at once (one read cycle takes as long as the slowest switch, not their sum)."""
        started = {}
        for switch, argv in sorted(self.commands.items()):
            try:
                started[switch] = self.run_cmd(argv)
            except OSError as exc:
                started[switch] = exc
        for switch, wait in sorted(started.items()):
            try:
                if isinstance(wait, Exception):
                    raise wait
                found = ports_down(wait(), self.ports.get(switch, ()))
            except (OSError, subprocess.SubprocessError, LinkStateError) as exc:
                found = None
                self.errors[switch] = str(exc)
            with self.lock:
                self.latest[switch] = found

    def loop(self):
        while not self.stopped.is_set():
            started = time.monotonic()
            self.poll_once()
            self.stopped.wait(max(0.0, self.interval - (time.monotonic() - started)))

    def start(self):
        thread = threading.Thread(target=self.loop, daemon=True)
        thread.start()
        return thread

    def take(self):
        with self.lock:
            return dict(self.latest)


class Service(object):
    """Ingest listeners + tick loop (main thread) and the HTTP endpoint (a thread)."""

    def __init__(self, localiser, events_path=None, markers=None, silences=None, lock_ttl=1800, clock=time.time,
                 linger=10.0):
        self.localiser = localiser
        self.events_path = events_path
        self.markers = markers or {}
        self.silences = silences
        self.lock_ttl = lock_ttl
        self.linger = linger
        self.held = {}          # switch -> (last time under maintenance, its record)
        self.clock = clock
        self.lock = threading.Lock()
        self.selector = selectors.DefaultSelector()
        self.buffers = {}
        self.recent = []
        self.event_counts = {}
        self.next_maint = 0.0
        self.cpu = 0.0
        self.conns = {}         # host -> its agent's connection (boost requests go back on it)
        self.poller = None      # LinkStatePoller, when switches' link-state commands are given
        self.boost_sent = 0
        self.watched = None     # (plan, probes path, steer record path): re-pathed when the files change
        self.stamp = None
        self.repathed = []

    def listen(self, address):
        if address.startswith("unix:"):
            path = address[5:]
            if os.path.exists(path):
                os.unlink(path)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(path)
            os.chmod(path, 0o666)
        else:
            host, _sep, port = address.rpartition(":")
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host or "0.0.0.0", int(port)))
        sock.listen(1024)
        sock.setblocking(False)
        self.selector.register(sock, selectors.EVENT_READ, "listener")
        return sock

    def _accept(self, sock):
        conn, _addr = sock.accept()
        conn.setblocking(False)
        self.buffers[conn] = b""
        self.selector.register(conn, selectors.EVENT_READ, "conn")

    def _read(self, conn, now):
        try:
            data = conn.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            for host in [h for h, c in self.conns.items() if c is conn]:
                del self.conns[host]
            self.selector.unregister(conn)
            conn.close()
            self.buffers.pop(conn, None)
            return
        buf = self.buffers[conn] + data
        lines = buf.split(b"\n")
        self.buffers[conn] = lines.pop()
        if len(self.buffers[conn]) > MAX_LINE:
            self.buffers[conn] = b""
        with self.lock:
            for line in lines:
                if not line:
                    continue
                try:
                    batch = json.loads(line)
                except ValueError:
                    continue
                if isinstance(batch, dict):
                    self.localiser.ingest(batch, now)
                    if batch.get("host"):
                        self.conns[batch["host"]] = conn

    def refresh_maintenance(self, now):
        """Switches under change, drain or silence now: for as long as the lock marker or drain record lives
        (switch_config's own waits after a drain and after the change are inside it), then until the probes
        crossing the switch have been clean for a second since it ended (routes settled: BGP reconverged, a
        drained switch took its traffic back), at most ``linger`` seconds."""
        found = {}
        for switch, directory in self.markers.items():
            marker = read_markers(directory, now, self.lock_ttl)
            if marker:
                found[switch] = marker
        found.update(read_silences(self.silences, now))
        for switch, marker in found.items():
            self.held[switch] = (now, marker)
        for switch, (seen, marker) in list(self.held.items()):
            if switch in found:
                continue
            if now - seen <= self.linger and not self.localiser.settled(switch, seen, now):
                found[switch] = dict(marker, ended=seen)
            else:
                del self.held[switch]
        self.localiser.set_maintenance(found)

    def watch(self, plan, probes_path, record_path=None):
        """Follow the fabric: when the probe plan or GOR's steer record changes, the probes are re-pathed on the
        bindings as they are now and the localiser's state is carried over (planwatch.py, docs/gom.md)."""
        self.watched = (plan, probes_path, record_path)
        self.stamp = self._stamp()

    def _stamp(self):
        out = []
        for path in self.watched[1:]:
            try:
                out.append(os.stat(path).st_mtime_ns if path else None)
            except OSError:
                out.append(None)
        return tuple(out)

    def reload_if_changed(self):
        if self.watched is None:
            return False
        stamp = self._stamp()
        if stamp == self.stamp:
            return False
        self.stamp = stamp      # a bad file is reported once, read again when it changes
        plan, probes_path, record_path = self.watched
        try:
            probes, moved = read_probes(plan, probes_path, record_path)
            uncovered = read_uncovered(probes_path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            sys.stderr.write("gom collector: plan or steer record not reloaded (%s); kept the running one\n" % exc)
            return False
        old = self.localiser
        new = Localiser(Topology(plan, probes, uncovered), rate=old.rate, run_id=old.run_id, clock=old.clock)
        with self.lock:
            self.localiser = planwatch.carry(old, new, plan)
            self.repathed = moved
        return True

    def tick(self, now):
        if now >= self.next_maint:
            self.reload_if_changed()
            self.refresh_maintenance(now)
            self.next_maint = now + MARKERS_EVERY
        with self.lock:
            if self.poller is not None:
                for switch, down in self.poller.take().items():
                    self.localiser.set_ports_down(switch, down)
            events = self.localiser.tick(now)
            self.localiser.events = []
            for event in events:
                self.event_counts[event["kind"]] = self.event_counts.get(event["kind"], 0) + 1
            self.recent = (self.recent + events)[-1000:]
        write_events(self.events_path, events)
        self.send_boosts(now)
        return events

    def send_boosts(self, now):
        """The localiser's boost requests, one JSON line per sending agent on its own connection (best effort:
        a full socket or a gone agent drops the request; the next tick asks again while the loss lasts)."""
        with self.lock:
            wanted = self.localiser.boosts(now)
        by_host = {}
        for pid, (rate, seconds) in sorted(wanted.items()):
            host = self.localiser.topo.probe[pid].get("src_host")
            if host in self.conns:
                by_host.setdefault(host, []).append([pid, rate, seconds])
        for host, items in by_host.items():
            line = (json.dumps({"boost": items}, separators=(",", ":")) + "\n").encode()
            try:
                if self.conns[host].send(line) == len(line):
                    self.boost_sent += len(items)
            except OSError:
                continue

    def run(self, seconds=None, stop=None):
        start = self.clock()
        next_tick = start + TICK
        while True:
            now = self.clock()
            if (seconds is not None and now - start >= seconds) or (stop is not None and stop()):
                break
            for key, _mask in self.selector.select(max(0.0, next_tick - now)):
                if key.data == "listener":
                    self._accept(key.fileobj)
                else:
                    self._read(key.fileobj, self.clock())
            now = self.clock()
            if now >= next_tick:
                cpu = time.process_time()
                self.tick(now)
                self.cpu += time.process_time() - cpu
                next_tick += TICK
                if next_tick < now:
                    next_tick = now + TICK

    def serve_http(self, address):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from prometheus_client import CollectorRegistry, generate_latest
        registry = CollectorRegistry()
        registry.register(Metrics(self))
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                if self.path.startswith("/metrics"):
                    body, kind = generate_latest(registry), "text/plain; version=0.0.4"
                elif self.path.startswith("/events"):
                    with service.lock:
                        body = "".join(json.dumps(e, sort_keys=True) + "\n" for e in service.recent).encode()
                    kind = "application/x-ndjson"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        host, _sep, port = address.rpartition(":")
        server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        return server


def read_uncovered(probes_path):
    """The links probe_plan reached with no probe (its ``uncovered``; none in a file without the key)."""
    with open(probes_path) as handle:
        return json.load(handle).get("uncovered") or []


def read_probes(plan, probes_path, record_path=None):
    """(probes, moved ids): probe_plan's probes re-pathed on GOR's steer record when there is one."""
    with open(probes_path) as handle:
        probes = json.load(handle)["probes"]
    record = None
    if record_path and os.path.exists(record_path):
        with open(record_path) as handle:
            record = json.load(handle)
    return planwatch.repath(plan, probes, record)


def build(plan_path, probes_path, rate=10.0, record_path=None):
    """(localiser, plan): the probes re-pathed on GOR's steer record when one is given."""
    with open(plan_path) as handle:
        plan = json.load(handle)
    probes, _moved = read_probes(plan, probes_path, record_path)
    return Localiser(Topology(plan, probes, read_uncovered(probes_path)), rate=rate), plan


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description="GOM collector and localiser (docs/gom.md)")
    parser.add_argument("--plan", required=True, help="plan.json (fabric_plan)")
    parser.add_argument("--probes", required=True, help="probes.json (probe_plan dest)")
    parser.add_argument("--listen", action="append", default=[], help="HOST:PORT or unix:/path (repeatable)")
    parser.add_argument("--http", default="127.0.0.1:9721", help="HOST:PORT of /metrics and /events")
    parser.add_argument("--events", default="/var/lib/aifabric-gom/events.jsonl")
    parser.add_argument("--rate", type=float, default=10.0, help="the agents' probes per second per probe")
    parser.add_argument("--markers", action="append", default=[], help="SWITCH=DIR of its lock markers (repeatable)")
    parser.add_argument("--silences", help="JSON file of operator silences")
    parser.add_argument("--lock-ttl", type=int, default=1800)
    parser.add_argument("--maintenance-linger", type=float, default=10.0,
                        help="at most this many seconds a switch stays under maintenance after its marker, drain "
                        "record or silence ends (it ends sooner once the switch's probes are clean for 1 s)")
    parser.add_argument("--boost-rate", type=float, default=100.0,
                        help="probes per second asked of the agents for the probes that tell a loss's links apart")
    parser.add_argument("--boost-seconds", type=float, default=5.0, help="length of one boost request; 0: never boost")
    parser.add_argument("--link-state", action="append", default=[],
                        help="SWITCH=COMMAND printing `ip -j link show` of that switch (repeatable): leaf-spine "
                        "cables down are reported as link_down")
    parser.add_argument("--link-state-interval", type=float, default=1.0, help="seconds between link-state reads")
    parser.add_argument("--steer-record", help="GOR's steer record (gor_record_path): probes follow its steered bindings")
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--stop-file")
    args = parser.parse_args(argv)
    markers = {}
    for item in args.markers:
        switch, sep, directory = item.partition("=")
        if not sep or not switch or not directory:
            parser.error("--markers %r: give SWITCH=DIR" % item)
        markers[switch] = directory
    localiser, plan = build(args.plan, args.probes, args.rate, args.steer_record)
    service = Service(localiser, args.events, markers, args.silences, args.lock_ttl, linger=args.maintenance_linger)
    service.watch(plan, args.probes, args.steer_record)
    service.localiser.boost_rate, service.localiser.boost_seconds = args.boost_rate, args.boost_seconds
    commands = {}
    for item in args.link_state:
        switch, sep, command = item.partition("=")
        if not sep or not switch or not command.strip():
            parser.error("--link-state %r: give SWITCH=COMMAND (e.g. leaf0='ssh admin@leaf0 ip -j link show')" % item)
        commands[switch] = shlex.split(command)
    if commands:
        ports = {}
        for switch, port in service.localiser.topo.fabric_ports:
            ports.setdefault(switch, set()).add(port)
        service.poller = LinkStatePoller(commands, ports, interval=args.link_state_interval)
        service.poller.start()
    for address in args.listen or ["127.0.0.1:9720"]:
        service.listen(address)
    if args.http:
        service.serve_http(args.http)
    stop = (lambda: os.path.exists(args.stop_file)) if args.stop_file else None
    try:
        service.run(args.seconds, stop)
    except KeyboardInterrupt:
        pass
    sys.stdout.write(json.dumps(dict(service.localiser.counters, cpu_seconds=round(service.cpu, 3), boosts=service.boost_sent,
                                     events=service.event_counts), sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
