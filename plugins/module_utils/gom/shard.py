# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sharded GOM collector (docs/gom.md section 8): decoders that parse the agents' JSON batches, judges that judge
probe packets, one merger that localises. Pure (no Ansible, no network): the service runs each part in a process.

At 32K GPUs one collector process needs ~3 cores: JSON decoding (4,096 agents x 10 batches/s) and per-packet judging
dominate, localisation is small. The work is split so that each part stays under one core and localisation stays
exactly what one collector would decide:

* **Decoders** own agents (by host, ``host_split``: each agent's ``collector`` is its decoder's listener). A decoder
  parses its agents' JSON lines and splits every batch by the judge owning each probe; every judge that needs a host
  gets each of its batches (its own probes only, possibly none, with the batch's ``host``, ``m``, ``seq`` and
  ``dropped``), so it knows those agents' liveness and clocks exactly as one collector does. Parts travel as
  ``marshal`` blobs.
* **Judges** own probes (``assign``: hosts in G groups by a hash of the name, one judge per (source group, destination group), G ** 2
  judges; any split is exact, this one bounds the hosts a judge hears from to 2/G of them). A judge is the
  localiser's own judging (``Localiser._judge``: watermarks, one-way loss, the per-probe rings) over its probes,
  fed every batch of the hosts its probes start or end at; each tick it exports what localisation reads: every
  probe's highest judged sequence (one ``array``), and for the probes with a loss in the last 30 s their loss ring
  and first loss.
* The **merger** is a ``Localiser`` whose probes are mirrors of the judges' exports: the same strong/weak sets,
  likelihood scores, covers, switch grouping, maintenance filter and recovery, over the whole plan. What it forgets
  (a recovered fault, an ended maintenance) goes back to the judges before their next tick (``forgotten``), as one
  localiser would forget it. Round trips (event ``rtt_ms``, the metrics) are asked of the judges, which keep them.
"""
from __future__ import annotations

import array
import functools
import json
import marshal
import zlib

from .localise import Localiser, Topology, _Probe

BATCH_SCALARS = ("v", "host", "seq", "t", "m", "dropped")


def assign(probes, groups):
    """(owner, needs, judges): hosts in ``groups`` groups (by a hash of the name), and one judge per (source group,
    destination group) pair, so ``groups`` ** 2 judges; ``owner`` {probe id: judge}, ``needs`` {host: [judges]}: the
    judges whose probes it sends or receives, which get every batch of that host (liveness and clock included)."""
    if groups < 1:
        raise ValueError("groups must be >= 1")
    hosts = sorted(set(h for p in probes for h in (p["src_host"], p["dst_host"])))
    # by a hash of the name: the planner pairs hosts by position, so dealing them in order would skew the judges
    group = dict((host, zlib.crc32(host.encode()) % groups) for host in hosts)
    owner = dict((p["id"], group[p["src_host"]] * groups + group[p["dst_host"]]) for p in probes)
    needs = {}
    for host, g in group.items():
        needs[host] = sorted(set([g * groups + b for b in range(groups)] + [a * groups + g for a in range(groups)]))
    return owner, needs, groups * groups


def host_split(hosts, decoders):
    """{host: decoder index}: hosts in sorted order, dealt round robin."""
    if decoders < 1:
        raise ValueError("decoders must be >= 1")
    return dict((host, i % decoders) for i, host in enumerate(sorted(hosts)))


class Decoder(object):
    """Parses agents' JSON lines and splits each batch by the judge owning each probe."""

    def __init__(self, owner, needs, judges):
        self.owner = owner
        self.needs = needs
        self.judges = judges
        self.parts = [[] for _j in range(judges)]
        self.counters = {"lines": 0, "bad": 0, "unknown_probe": 0}

    def feed(self, line):
        try:
            batch = json.loads(line)
        except ValueError:
            batch = None
        if not isinstance(batch, dict):
            self.counters["bad"] += 1
            return
        self.counters["lines"] += 1
        owner = self.owner
        head = dict((key, batch[key]) for key in BATCH_SCALARS if key in batch)
        split = dict((j, dict(head, tx=[], rx=[], rtt=[])) for j in self.needs.get(head.get("host"), ()))
        for key in ("tx", "rx", "rtt"):
            for item in batch.get(key, ()):
                part = split.get(owner.get(item[0]))
                if part is None:
                    self.counters["unknown_probe"] += 1
                    continue
                part[key].append(item)
        for j, part in split.items():
            self.parts[j].append(part)

    def flush(self):
        """One blob per judge (``marshal``): the batches decoded since the last flush, in arrival order."""
        out = [marshal.dumps(part) for part in self.parts]
        self.parts = [[] for _j in range(self.judges)]
        return out


class _Judging(Localiser):
    """A localiser that only judges (its probes' rings and first losses); the merger localises."""

    def judge(self, now):
        self._judge(now)

    def forget(self, pids):
        for pid in pids:
            if pid in self.probes:
                self._forget(pid)


class Judge(object):
    """Judging of one judge's probes; :meth:`export` is what the merger reads."""

    def __init__(self, plan, probes, index, rate=10.0, clock=None):
        kwargs = {"rate": rate, "run_id": "judge%d" % index}
        if clock is not None:
            kwargs["clock"] = clock
        self.index = index
        self.localiser = _Judging(Topology(plan, probes), **kwargs)
        self.order = sorted(self.localiser.probes)
        self.measured_sent = set()

    def feed(self, blob, now):
        ingest = self.localiser.ingest
        for batch in marshal.loads(blob):
            ingest(batch, now)

    def tick(self, now, forgotten=()):
        """Forget what the merger forgot, judge what is due; returns the export (``marshal`` bytes)."""
        loc = self.localiser
        if forgotten:
            loc.forget(forgotten)
        loc.judge(now)
        probes = loc.probes
        highest = array.array("q", [-1 if probes[pid].eval_to is None else probes[pid].eval_to for pid in self.order])
        lossy = []
        for pid in loc.lossy:
            p = probes[pid]
            lossy.append((pid, p.last_loss, p.first_loss_t, p.first_loss_seq, bytes(p.ring), p.since_n, p.since_k))
        measured = sorted(loc.measured - self.measured_sent)
        self.measured_sent |= loc.measured
        return marshal.dumps((self.index, highest.tobytes(), lossy, measured, dict(loc.counters), dict(loc.dropped)))

    def rtt_samples(self, link, now, seconds=10.0):
        """Round trips (ms) of this judge's probes crossing ``link`` over the last ``seconds``."""
        out = []
        loc = self.localiser
        for pid in loc.topo.sig.get(link, ()):
            probe = loc.probes[pid]
            probe.rtts = [(t, ms) for t, ms in probe.rtts if t >= now - seconds]
            out.extend(ms for _t, ms in probe.rtts)
        return out


class _Mirror(object):
    """What the merger knows of one probe: its judge's highest judged sequence (read through the judge's latest
    array), and for a probe with a recent loss its ring and first loss."""
    __slots__ = ("pid", "box", "index", "ring", "last_loss", "first_loss_t", "first_loss_seq", "rtts", "since_n",
                 "since_k", "source")

    def __init__(self, pid, box, index, source):
        self.pid = pid
        self.box = box
        self.index = index
        self.source = source    # () -> the judge's own record of the probe (send times per sequence number)
        self.rtts = []
        self.clear()

    def clear(self):
        self.ring = None
        self.last_loss = -1
        self.first_loss_t = None
        self.first_loss_seq = 0
        self.since_n = self.since_k = 0

    @property
    def sent_at(self):
        """Send times per ring slot: asked of the judge (it keeps them; only faults and maintenance read them)."""
        return self.source().sent_at

    def since(self, t0, cap):
        """(judged, lost) since ``t0``: packets judged from the judge, losses as the merger knows them (none for a
        probe it forgot this tick, which its judge forgets before its next one)."""
        judged, lost = self.source().since(t0, cap)
        return (judged, lost) if self.ring is not None else (judged, 0)

    @property
    def eval_to(self):
        value = self.box[0][self.index] if self.box[0] is not None else -1
        return None if value < 0 else value

    def losses(self, count):
        """The localiser's own count over the ring (none without a recent loss)."""
        if self.ring is None:
            return 0
        return _Probe.losses(self, count)


class Merger(Localiser):
    """The localiser over the whole plan, fed by the judges' exports instead of agent batches."""

    def __init__(self, topology, owner, judges, rate=10.0, run_id=None, clock=None, rtt_source=None, probe_source=None):
        kwargs = {"rate": rate, "run_id": run_id}
        if clock is not None:
            kwargs["clock"] = clock
        Localiser.__init__(self, topology, **kwargs)
        self.boxes = [[None] for _j in range(judges)]
        orders = [sorted(pid for pid in topology.paths if owner[pid] == j) for j in range(judges)]
        self.probes = {}
        for j, order in enumerate(orders):
            for i, pid in enumerate(order):
                self.probes[pid] = _Mirror(pid, self.boxes[j], i, functools.partial(probe_source, pid))
        self.exports = []
        self.forgotten = set()
        self.rtt_source = rtt_source
        self.judge_counters = {}

    def ingest(self, batch, now=None):
        raise TypeError("the merger reads the judges' exports (feed), not agent batches")

    def feed(self, blob):
        self.exports.append(marshal.loads(blob))

    def _judge(self, now):
        """Applies the judges' exports of this tick (the single localiser judges here)."""
        lossy = {}
        for index, highest, entries, measured, counters, dropped in self.exports:
            values = array.array("q")
            values.frombytes(highest)
            self.boxes[index][0] = values
            for pid, last_loss, first_t, first_seq, ring, since_n, since_k in entries:
                probe = self.probes[pid]
                probe.ring = bytearray(ring)
                probe.last_loss, probe.first_loss_t, probe.first_loss_seq = last_loss, first_t, first_seq
                probe.since_n, probe.since_k = since_n, since_k
                lossy[pid] = last_loss
            self.measured.update(measured)
            self.judge_counters[index] = counters
            self.dropped.update(dropped)
        if self.exports:
            for pid in set(self.lossy) - set(lossy):
                self.probes[pid].clear()
            self.lossy = lossy
            totals = dict.fromkeys(("batches", "received", "lost", "unknown_probe"), 0)
            for counters in self.judge_counters.values():
                for key in ("received", "lost"):
                    totals[key] += counters.get(key, 0)
            self.counters.update(totals)
        self.exports = []

    def _forget(self, pid):
        self.probes[pid].clear()
        self.lossy.pop(pid, None)
        self.forgotten.add(pid)

    def take_forgotten(self):
        """Probe ids forgotten since the last call: the judges forget them before their next tick."""
        out, self.forgotten = self.forgotten, set()
        return sorted(out)

    def link_rtt(self, link, now=None, seconds=10.0):
        now = self.clock() if now is None else now
        samples = sorted(self.rtt_source(link, now, seconds)) if self.rtt_source else []
        if not samples:
            return None

        def at(q):
            return round(samples[min(len(samples) - 1, int(q * len(samples)))], 3)
        return {"p50": at(0.5), "p90": at(0.9), "p99": at(0.99)}


class InProcess(object):
    """Decoders, judges and the merger in one process (tests, the replay benchmark): the same hops as the sharded
    service, blobs included, so each part's CPU can be timed on its own."""

    def __init__(self, plan, probes, groups=2, decoders=1, rate=10.0, run_id=None, clock=None):
        self.owner, needs, judges = assign(probes, groups)
        mine = [[] for _j in range(judges)]
        for probe in probes:
            mine[self.owner[probe["id"]]].append(probe)
        self.judges = [Judge(plan, mine[j], j, rate, clock) for j in range(judges)]
        self.decoders = [Decoder(self.owner, needs, judges) for _d in range(decoders)]
        self.hosts = host_split(set(h for p in probes for h in (p["src_host"], p["dst_host"])), decoders)
        self.merger = Merger(Topology(plan, probes), self.owner, judges, rate, run_id, clock, self.rtt_samples,
                             self.judged_probe)
        self.forgotten = []

    def judged_probe(self, pid):
        return self.judges[self.owner[pid]].localiser.probes[pid]

    def rtt_samples(self, link, now, seconds):
        return [ms for judge in self.judges for ms in judge.rtt_samples(link, now, seconds)]

    def decoder_of(self, host):
        return self.decoders[self.hosts.get(host, 0)]

    def set_maintenance(self, switches):
        self.merger.set_maintenance(switches)
        self.forgotten.extend(self.merger.take_forgotten())

    def step(self, lines, now, cpu=None):
        """One 100 ms step: ``lines`` [(host, JSON line)] through the decoders, the judges and the merger; returns
        the merger's events. ``cpu``: a dict that gets each part's CPU seconds added (``decoder<i>``, ``judge<j>``,
        ``merger``)."""
        import time
        timer = time.process_time
        mine = [[] for _d in self.decoders]
        for host, line in lines:
            mine[self.hosts.get(host, 0)].append(line)      # the agents' connections to their decoder
        blobs = []
        for d, decoder in enumerate(self.decoders):
            start = timer()
            for line in mine[d]:
                decoder.feed(line)
            blobs.append(decoder.flush())
            self._add(cpu, "decoder%d" % d, timer() - start)
        forgotten, self.forgotten = self.forgotten, []
        exports = []
        for j, judge in enumerate(self.judges):
            start = timer()
            for parts in blobs:
                judge.feed(parts[j], now)
            exports.append(judge.tick(now, forgotten))
            self._add(cpu, "judge%d" % j, timer() - start)
        start = timer()
        for blob in exports:
            self.merger.feed(blob)
        events = self.merger.tick(now)
        self.merger.events = []
        self.forgotten.extend(self.merger.take_forgotten())
        self._add(cpu, "merger", timer() - start)
        return events

    @staticmethod
    def _add(cpu, key, seconds):
        if cpu is not None:
            cpu[key] = cpu.get(key, 0.0) + seconds
