# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GOM agent: runs on every GPU host (stdlib only; the role ``gom_agent`` installs this file as a script).

    python3 agent.py --config /etc/aifabric/gom-agent.json

Config (JSON, written by the role from probe_plan's ``probes_by_host``): ``host``, ``collector``
(``HOST:PORT`` or ``unix:/path``), ``addresses`` (this host's rail addresses: it answers probes sent to them),
``probes`` (``id``, ``src_address``, ``src_netdev``, ``src_rdma``, ``dst_address``, ``udp_sport``, ``udp_dport``),
and optional ``rate`` (probes per second per probe, default 10), ``dscp`` (default 26, the RoCE data DSCP),
``dport`` (default 4792), ``batch_interval`` (s, default 0.1), ``max_batches`` (default 600: one minute),
``transport`` (``auto`` or ``udp``), and the bounds of the collector's boost requests: ``boost_rate`` (probes per
second a boosted probe may reach, default 100 or ``rate`` if higher), ``boost_seconds`` (longest request, default 5;
0: never boost), ``boost_max_probes`` (probes boosted at once, default 16). The collector asks, on the same
connection, for a few probes to be sent faster while a loss is being localised (``{"boost": [[id, rate, s]]}``):
the extra load is at most boost_max_probes x (boost_rate - rate) packets per second, for as long as losses last.

Each probe is a UDP datagram from ``src_address:udp_sport`` to ``dst_address:udp_dport`` at the DSCP (IP_TOS):
magic ``GOM1``, type (1 request, 2 echo), probe id, sequence number, the sender's monotonic send time (ns). The
receiving agent counts what it received (per probe, sequence ranges) and echoes the datagram back, so the sender
measures the round trip. Every ``batch_interval`` the agent queues one batch
``{"v": 1, "host", "seq", "t", "m", "tx": [[id, highest seq sent]], "rx": [[id, [[first, last], ...]]],
"rtt": [[id, [ms, ...]]], "errors", "dropped"}`` (``m``: its monotonic clock when composed, after reading every
socket) and writes the queue to the collector as JSON lines over one
stream connection. The queue is bounded (``max_batches``): while the collector is away the oldest batches are
dropped and counted (``dropped``, reported in the next batch that gets through).

RDMA UD (R-Pingmesh, SIGCOMM'24: probes on the RoCE NIC's own path, RoCEv2's UDP 4791) is NOT built: with
``auto`` the agent only detects, through rdma-core's ``pyverbs``, which probes could use it (their ``src_rdma``
device is listed) and reports the count (``rdma_ud_capable``); every probe is sent over UDP. Detection is
unit-tested on fakes (no RDMA device on the project machine): docs/gom.md.
"""
from __future__ import annotations

import collections
import errno
import json
import os
import selectors
import socket
import struct
import sys
import time

MAGIC = b"GOM1"
HEADER = struct.Struct("!4sBxHIIQ")    # magic, type, pad, reserved, probe id, seq, send time ns
REQUEST, ECHO = 1, 2
PAYLOAD = 64                           # bytes on the wire after UDP (header + padding)
IP_FREEBIND = 15                       # linux/in.h: bind an address not (yet) up
DEFAULTS = {"rate": 10.0, "dscp": 26, "dport": 4792, "batch_interval": 0.1, "max_batches": 600, "transport": "auto",
            "boost_rate": None, "boost_seconds": 5.0, "boost_max_probes": 16}
MAX_COMMAND = 64 * 1024                # bytes of unread collector commands kept (a longer line is dropped)


def pack(kind, pid, seq, sent_ns):
    return HEADER.pack(MAGIC, kind, 0, pid, seq & 0xFFFFFFFF, sent_ns).ljust(PAYLOAD, b"\0")


def unpack(data):
    if len(data) < HEADER.size:
        return None
    magic, kind, _res, pid, seq, sent_ns = HEADER.unpack_from(data)
    if magic != MAGIC or kind not in (REQUEST, ECHO):
        return None
    return kind, pid, seq, sent_ns


def load_config(path):
    with open(path) as handle:
        config = json.load(handle)
    return check_config(config)


def check_config(config):
    """The config with defaults; ValueError naming the key and the fix on a bad value."""
    out = dict(DEFAULTS)
    out.update(config)
    for key in ("host", "collector"):
        if not isinstance(out.get(key), str) or not out[key]:
            raise ValueError("gom agent config: %s must be a non-empty string" % key)
    if not 0.1 <= float(out["rate"]) <= 1000:
        raise ValueError("gom agent config: rate is %r: give 0.1-1000 probes per second per probe" % out["rate"])
    if not 0 <= int(out["dscp"]) <= 63:
        raise ValueError("gom agent config: dscp is %r: give 0-63 (26: the RoCE data DSCP)" % out["dscp"])
    if not 1 <= int(out["dport"]) <= 65535:
        raise ValueError("gom agent config: dport is %r: give a UDP port (default 4792, not 4791)" % out["dport"])
    if not 0.01 <= float(out["batch_interval"]) <= 10:
        raise ValueError("gom agent config: batch_interval is %r: give 0.01-10 s" % out["batch_interval"])
    if not 1 <= int(out["max_batches"]) <= 100000:
        raise ValueError("gom agent config: max_batches is %r: give 1-100000" % out["max_batches"])
    if out["boost_rate"] is None:
        out["boost_rate"] = max(100.0, float(out["rate"]))
    if not float(out["rate"]) <= float(out["boost_rate"]) <= 1000:
        raise ValueError("gom agent config: boost_rate is %r: give rate-1000 probes per second (default 100)"
                         % out["boost_rate"])
    if not 0 <= float(out["boost_seconds"]) <= 60:
        raise ValueError("gom agent config: boost_seconds is %r: give 0-60 s (0: never boost)" % out["boost_seconds"])
    if not 0 <= int(out["boost_max_probes"]) <= 1024:
        raise ValueError("gom agent config: boost_max_probes is %r: give 0-1024" % out["boost_max_probes"])
    if out["transport"] not in ("auto", "udp"):
        raise ValueError("gom agent config: transport is %r: give auto or udp (RDMA UD is not built)" % out["transport"])
    for index, probe in enumerate(out.get("probes") or []):
        for key in ("id", "src_address", "dst_address"):
            if key not in probe:
                raise ValueError("gom agent config: probes[%d].%s is missing (regenerate with probe_plan)" % (index, key))
    return out


def ranges(seqs):
    """Sorted sequence numbers -> [[first, last], ...]."""
    out = []
    for seq in sorted(seqs):
        if out and seq == out[-1][1] + 1:
            out[-1][1] = seq
        elif not out or seq > out[-1][1]:
            out.append([seq, seq])
    return out


class Outbox(object):
    """Bounded queue of encoded batches: full -> the oldest is dropped and counted."""

    def __init__(self, limit):
        self.queue = collections.deque()
        self.limit = limit
        self.dropped = 0

    def put(self, line):
        if len(self.queue) >= self.limit:
            self.queue.popleft()
            self.dropped += 1
        self.queue.append(line)


class CollectorLink(object):
    """One stream connection to the collector (TCP or Unix socket), non-blocking writes of whole lines;
    reconnects at most once a second."""

    def __init__(self, address, clock=time.monotonic):
        self.address = address
        self.clock = clock
        self.sock = None
        self.pending = b""
        self.inbox = b""
        self.next_try = 0.0
        self.errors = 0

    def _connect(self):
        if self.address.startswith("unix:"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            target = self.address[5:]
        else:
            host, _sep, port = self.address.rpartition(":")
            sock = socket.socket(socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET, socket.SOCK_STREAM)
            target = (host.strip("[]"), int(port))
        sock.settimeout(0.2)
        try:
            sock.connect(target)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        return sock

    def flush(self, outbox):
        """Write queued batches; returns the number of whole batches handed to the kernel."""
        if self.sock is None:
            if self.clock() < self.next_try:
                return 0
            try:
                self.sock = self._connect()
            except OSError:
                self.errors += 1
                self.next_try = self.clock() + 1.0
                return 0
        sent = 0
        while self.pending or outbox.queue:
            if not self.pending:
                self.pending = outbox.queue.popleft()
                sent += 1
            try:
                count = self.sock.send(self.pending)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.close()
                self.next_try = self.clock() + 1.0
                break
            self.pending = self.pending[count:]
        return sent

    def commands(self):
        """The collector's requests on the same connection (JSON lines, non-blocking): a list of dicts."""
        if self.sock is None:
            return []
        try:
            data = self.sock.recv(MAX_COMMAND)
        except (BlockingIOError, InterruptedError):
            return []
        except OSError:
            return []
        self.inbox += data
        lines = self.inbox.split(b"\n")
        self.inbox = lines.pop()
        if len(self.inbox) > MAX_COMMAND:
            self.inbox = b""
        out = []
        for line in lines:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict):
                out.append(item)
        return out

    def close(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        # a half-written line is dropped with the connection: the collector never sees half a batch
        self.pending = b""
        self.inbox = b""


def udp_socket(address, port, dscp, freebind=False):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, int(dscp) << 2)
        if freebind:
            sock.setsockopt(socket.IPPROTO_IP, IP_FREEBIND, 1)
    else:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, int(dscp) << 2)
    sock.bind((address, port or 0))
    sock.setblocking(False)
    return sock


def rdma_ud_available(probe, loader=None):
    """True when pyverbs imports and the probe's RDMA device is listed by it (``loader``: tests pass a fake)."""
    try:
        verbs = loader() if loader else __import__("pyverbs.device", fromlist=["get_device_list"])
    except ImportError:
        return False
    name = probe.get("src_rdma")
    if not name:
        return False
    try:
        names = [d.name.decode() if isinstance(d.name, bytes) else d.name for d in verbs.get_device_list()]
    except Exception:  # noqa: BLE001 - any verbs error: fall back to UDP
        return False
    return name in names


class Agent(object):
    """The probe sender, echo responder and batcher of one host (one thread, a selector)."""

    def __init__(self, config, clock=time.monotonic, wall=time.time, link=None, verbs_loader=None):
        self.config = check_config(config)
        self.clock, self.wall = clock, wall
        self.rate = float(self.config["rate"])
        self.interval = 1.0 / self.rate
        self.outbox = Outbox(int(self.config["max_batches"]))
        self.link = link or CollectorLink(self.config["collector"])
        self.selector = selectors.DefaultSelector()
        self.probes = []
        self.tx = {}            # probe id -> highest seq sent
        self.rx = {}            # probe id -> seqs received since the last batch
        self.rtt = {}           # probe id -> rtt ms since the last batch
        self.errors = collections.Counter()
        self.batch_seq = 0
        self.transports = collections.Counter()
        self.verbs_loader = verbs_loader
        self.sockets = []
        self.by_id = {}
        self.boosts = 0         # boost requests applied

    def open(self):
        dscp = self.config["dscp"]
        for address in self.config.get("addresses") or []:
            sock = udp_socket(address, int(self.config["dport"]), dscp, freebind=True)
            self.selector.register(sock, selectors.EVENT_READ, ("responder", sock))
            self.sockets.append(sock)
        probes = self.config.get("probes") or []
        now = self.clock()
        for index, probe in enumerate(probes):
            if self.config["transport"] == "auto" and rdma_ud_available(probe, self.verbs_loader):
                self.transports["rdma_ud_capable"] += 1     # detected only: the UD path is not built
            self.transports["udp"] += 1
            sock = udp_socket(probe["src_address"], probe.get("udp_sport"), dscp, freebind=True)
            self.selector.register(sock, selectors.EVENT_READ, ("sender", sock))
            self.sockets.append(sock)
            dport = int(probe.get("udp_dport") or self.config["dport"])
            # spread the first sends over one interval so the host's probes do not leave in a burst
            self.probes.append({"id": int(probe["id"]), "sock": sock, "dst": (probe["dst_address"], dport),
                                "seq": 0, "next": now + self.interval * index / max(1, len(probes)),
                                "boost_until": 0.0, "boost_interval": self.interval})
            self.by_id[int(probe["id"])] = self.probes[-1]

    def close(self):
        for sock in self.sockets:
            try:
                self.selector.unregister(sock)
            except (KeyError, ValueError):
                pass
            sock.close()
        self.sockets = []
        self.link.close()

    def send_due(self, now):
        mono_ns = time.monotonic_ns()
        for probe in self.probes:
            if probe["next"] > now:
                continue
            try:
                probe["sock"].sendto(pack(REQUEST, probe["id"], probe["seq"] + 1, mono_ns), probe["dst"])
                probe["seq"] += 1
                self.tx[probe["id"]] = probe["seq"]
            except OSError as exc:
                # not sent (a full send buffer on a starved host: EAGAIN/ENOBUFS): the number is used again, so the
                # collector never counts a packet this host did not send as lost on the network
                self.errors["send_" + errno.errorcode.get(exc.errno, str(exc.errno))] += 1
            interval = probe["boost_interval"] if probe["boost_until"] > now else self.interval
            probe["next"] += interval
            if probe["next"] < now:          # fell behind (suspended): do not burst to catch up
                probe["next"] = now + interval

    def boost(self, command, now):
        """A collector's ``{"boost": [[probe id, rate, seconds], ...]}``: send those of this host's probes faster
        for a while (adaptive confirmation, docs/gom.md), within this agent's own bounds: at most ``boost_rate``
        per probe, ``boost_seconds`` per request, ``boost_max_probes`` probes boosted at once. Returns how many
        requests it applied."""
        limit_rate = float(self.config["boost_rate"])
        limit_s = float(self.config["boost_seconds"])
        limit_n = int(self.config["boost_max_probes"])
        applied = 0
        for item in command.get("boost") or []:
            try:
                pid, rate, seconds = int(item[0]), float(item[1]), float(item[2])
            except (TypeError, ValueError, IndexError):
                self.errors["bad_command"] += 1
                continue
            probe = self.by_id.get(pid)
            if probe is None or rate <= 0 or seconds <= 0:
                continue
            if probe["boost_until"] <= now and sum(1 for p in self.probes if p["boost_until"] > now) >= limit_n:
                self.errors["boost_refused"] += 1
                continue
            interval = 1.0 / min(max(rate, self.rate), limit_rate)
            probe["boost_interval"] = interval
            probe["boost_until"] = now + min(seconds, limit_s)
            probe["next"] = min(probe["next"], now + interval)
            self.boosts += 1
            applied += 1
        return applied

    def on_readable(self, role, sock):
        for _n in range(64):
            try:
                data, peer = sock.recvfrom(2048)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self.errors["recv_" + errno.errorcode.get(exc.errno, str(exc.errno))] += 1
                return
            head = unpack(data)
            if head is None:
                self.errors["bad_packet"] += 1
                continue
            kind, pid, seq, sent_ns = head
            if role == "responder" and kind == REQUEST:
                self.rx.setdefault(pid, set()).add(seq)
                try:
                    sock.sendto(pack(ECHO, pid, seq, sent_ns), peer)
                except OSError:
                    self.errors["echo_send"] += 1
            elif role == "sender" and kind == ECHO:
                self.rtt.setdefault(pid, []).append(round((time.monotonic_ns() - sent_ns) / 1e6, 3))

    def drain(self):
        for key in list(self.selector.get_map().values()):
            if isinstance(key.data, tuple):
                self.on_readable(*key.data)

    def make_batch(self):
        self.batch_seq += 1
        # what already reached the host's sockets belongs in this batch: the collector judges a packet lost only
        # after a batch composed later than it could arrive (``m``, localise.py)
        self.drain()
        batch = {"v": 1, "host": self.config["host"], "seq": self.batch_seq, "t": round(self.wall(), 3),
                 "m": round(self.clock(), 4),
                 "tx": sorted([pid, hi] for pid, hi in self.tx.items()),
                 "rx": sorted([pid, ranges(seqs)] for pid, seqs in self.rx.items()),
                 "rtt": sorted([pid, values[-50:]] for pid, values in self.rtt.items()),
                 "errors": dict(self.errors), "dropped": self.outbox.dropped, "boosts": self.boosts,
                 "transports": dict(self.transports)}
        self.rx, self.rtt = {}, {}
        self.outbox.put((json.dumps(batch, separators=(",", ":")) + "\n").encode())
        return batch

    def run(self, seconds=None, stop=None):
        self.open()
        start = self.clock()
        next_batch = start + float(self.config["batch_interval"])
        try:
            while True:
                now = self.clock()
                if (seconds is not None and now - start >= seconds) or (stop is not None and stop()):
                    break
                self.send_due(now)
                if now >= next_batch:
                    self.make_batch()
                    self.link.flush(self.outbox)
                    for command in self.link.commands():
                        self.boost(command, self.clock())
                    next_batch += float(self.config["batch_interval"])
                    if next_batch < now:
                        next_batch = now + float(self.config["batch_interval"])
                wake = min([p["next"] for p in self.probes] + [next_batch])
                for key, _mask in self.selector.select(max(0.0, wake - self.clock())):
                    self.on_readable(*key.data)
        finally:
            self.make_batch()
            self.link.flush(self.outbox)
            self.close()


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description="GOM probe agent (docs/gom.md)")
    parser.add_argument("--config", required=True)
    parser.add_argument("--seconds", type=float, help="stop after this many seconds (tests)")
    parser.add_argument("--stop-file", help="stop once this file exists (tests)")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
    except (OSError, ValueError) as exc:
        sys.stderr.write("%s\n" % exc)
        return 2
    agent = Agent(config)
    stop = (lambda: os.path.exists(args.stop_file)) if args.stop_file else None
    try:
        agent.run(args.seconds, stop)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
