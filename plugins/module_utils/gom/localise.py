# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GOM's localiser: probe results in, per-probe and per-link loss and RTT out, faults named by the probes' paths.
Pure (no Ansible, no network, no Prometheus): the collector service (collector.py) feeds it agent batches and
calls :meth:`Localiser.tick` every 100 ms; docs/gom.md has the event schema it emits.

Loss accounting is one-way and exact: the sender reports the highest sequence number it sent per probe, the
receiving agent reports the sequence numbers it received. A sequence is judged once the receiving agent has
reported a batch it composed at least ONE_WAY after the sender composed the batch that reported it sent (both
times mapped to the collector's clock by a minimum-delay offset per agent, as NTP's clock filter does): a starved,
late or bursty agent delays judging, never turns a received packet into a loss. (A fixed grace after the sender's
report counted every receiver batch later than 0.25 s as loss: the false alarms of a loaded machine.) A reverse-path fault never shows as forward loss, so a
probe's loss belongs to its planned path only. RTT comes from the echo the receiver sends back (both directions).

Localisation (boolean tomography over the 1-identifiable plan, deTector ATC'17; NetBouncer/007's idea that a link
is suspected only if every path across it is bad):
- ``weak``: probes with any loss in the last 30 s of packets; ``strong``: those whose losses since their first
  one fail a sequential binomial test against background loss NOISE (false-alarm probability ALPHA per look).
- adaptive confirmation (:meth:`Localiser.boosts`): the probes crossing an unexplained loss's links are asked of
  their agents at BOOST_RATE for a while, so the evidence below accrues in a fraction of a second.
- a link is a candidate when ``strong`` is inside its signature (the probes crossing it); candidates are scored by
  a generalised likelihood ratio (one loss rate over the link's probes, background loss NOISE off it) and the best,
  leading the next by LOG_MARGIN and with every path across it bad (each of its probes lost a packet since the
  first loss: NetBouncer's rule), named twice in a row is a ``link_fault``; candidates the plan cannot tell apart
  (equal signatures) are one ``unlocalised`` event listing them. No candidate: the fewest links with all-lossy
  signatures covering ``strong`` (greedy); >= 3 of them on one switch are a ``switch_fault``, the others a fault
  each (``candidates`` lists the cover); no cover for 30 s: ``unlocalised``.
- probes crossing a switch under maintenance (lock marker, drain record, silence) are left out of the above and
  reported as one ``maintenance`` event per switch and maintenance period.
"""
from __future__ import annotations

import itertools
import math
import os
import time

SCHEMA = "aifabric.gom.event/1"
AGENT_SETTLE = 0.2   # s a receiving agent must have reported before a packet to it is judged
AGENT_SILENT = 1.0   # s without a batch from the receiving agent: its probes are not judged (not measured)
GRACE = 0.25         # s after the sender's report before a packet counts as lost, for batches without ``m`` only
ONE_WAY = 0.05       # s a probe packet may take to reach the receiving agent (queues included)
DRIFT = 1e-4         # s per s the agents' monotonic clocks may drift from the collector's (100 ppm)
RING = 512           # outcomes kept per probe (seq % RING); > 30 s at 10 probes/s
SHORT, LONG = 1.0, 30.0
REROUTE_HOLD = 3.0   # s after a fabric cable came up during which losses between its two switches are rerouting
NOISE = 1e-3         # background loss per packet the detection test holds a probe's losses against
ALPHA = 1e-6         # false-alarm probability per probe and look of that test (a binomial tail)
CLEAR_AFTER = 1.0    # s of clean probes before a fault is recovered
CLEAR_ALPHA = 0.01   # ... and n packets with (1 - loss) ** n below this
LOG_NOISE = -6.9     # log of the background loss per packet assumed off the named link (1e-3)
LOG_MARGIN = 4.6     # log-likelihood lead (100:1) the named link needs over the next explanation
UNLOCALISED_TICKS = 300  # ticks (of 100 ms) of unexplained failing probes before an unlocalised event
# ticks the same several-link explanation (a cover) must hold: the second link's probes may not have lost yet (a
# cable down: both directions fail, and their probes' first losses differ)
COVER_TICKS = 4
REFUTE_Z = 2.33      # one-sided 99 % bound on a link's loss rate when its clean sibling probes refute a wider link
REFUTE_ALPHA = 0.01  # ... and the probability of so few losses on them at that rate
GROUP_MIN = 3        # failing links on one switch that make a switch fault
BOOST_RATE = 100.0   # probes/s asked of the agents for the probes that tell a loss's candidate links apart
BOOST_SECONDS = 5.0  # how long one request holds (renewed while the loss is not explained)
BOOST_HOLD = 10.0    # s after a probe's last loss that its candidates' probes stay boosted
BOOST_MAX = 64       # probes boosted at once, fabric-wide (the agents cap their own share: boost_max_probes)
STATE = {"up": 0, "fault": 1, "maintenance": 2, "grouped": 3, "unmeasured": 4, "down": 5}
CLASSES = {"U": "host_up", "D": "host_down", "Lu": "leaf_up", "Sd": "spine_down"}


class Topology(object):
    """Probes (id -> path) and links (class, ends, GPUs behind) from a probe plan and its fabric plan."""

    def __init__(self, plan, probes, uncovered=()):
        self.paths = dict((p["id"], tuple(p["path"])) for p in probes)
        self.probe = dict((p["id"], p) for p in probes)
        sig = {}
        for pid, path in self.paths.items():
            for link in path:
                sig.setdefault(link, set()).add(pid)
        self.sig = dict((link, frozenset(ids)) for link, ids in sig.items())
        self.info = link_info(plan, self.sig)
        # switches each probe crosses (for the maintenance filter), links per switch
        self.switches_of = dict((pid, frozenset(s for link in path for s in self.info[link]["switches"]))
                                for pid, path in self.paths.items())
        self.probes_of_pair = {}    # frozenset of a fabric link's two switches -> probes crossing a link between them
        for pid, path in self.paths.items():
            for link in path:
                if self.info[link]["link_class"] in ("leaf_up", "spine_down"):
                    self.probes_of_pair.setdefault(frozenset(self.info[link]["switches"]), set()).add(pid)
        self.links_of_switch = {}
        for link, info in self.info.items():
            for switch in info["switches"]:
                self.links_of_switch.setdefault(switch, set()).add(link)
        # leaf<->spine links by their ends' ports (a switch's link-state feed: linkstate.py), both directions of each
        # cable, also a direction no probe crosses (its state reads "not measured"; a cable down still names it)
        fabric = [link for link, info in self.info.items() if info["link_class"] in ("leaf_up", "spine_down")]
        reverse = sorted(set(">".join(link.split(">")[::-1]) for link in fabric) - set(self.info))
        self.info.update(link_info(plan, reverse))
        # links the probe plan reaches with no probe (its ``uncovered``): listed, state "not measured", never dropped
        self.uncovered = sorted(set(uncovered) - set(self.sig))
        self.info.update(link_info(plan, sorted(set(self.uncovered) - set(self.info))))
        self.fabric_ports = {}
        for link in fabric + reverse:
            info = self.info[link]
            self.fabric_ports.setdefault((info["from"], info["from_port"]), set()).add(link)
            self.fabric_ports.setdefault((info["to"], info["to_port"]), set()).add(link)


def link_info(plan, links):
    """Per directed link: class, ends, switches it touches and the GPUs (NICs) whose traffic crosses it."""
    hosts = plan["hosts"]
    nics = {}
    bound = {}
    on_leaf = {}
    for host, entry in hosts.items():
        for nic in entry["nics"]:
            gpu = {"host": host, "netdev": nic["netdev"], "rail": nic["rail"], "address": nic["address"]}
            nics["%s:%s" % (host, nic["netdev"])] = gpu
            on_leaf.setdefault(nic["leaf"], []).append(gpu)
    for leaf_name, leaf in plan["leafs"].items():
        for binding in leaf.get("bindings") or []:
            bound.setdefault((leaf_name, binding["uplink"]), []).append(binding["ingress"])
    port_gpu = {}
    for host, entry in hosts.items():
        for nic in entry["nics"]:
            port_gpu[(nic["leaf"], nic["leaf_port"])] = nics["%s:%s" % (host, nic["netdev"])]
    out = {}
    for link in links:
        a, b = link.split(">")
        a_dev, a_port = a.split(":", 1)
        b_dev, b_port = b.split(":", 1)
        if a in nics:
            kind, gpus, switches = "U", [nics[a]], (b_dev,)
        elif b in nics:
            kind, gpus, switches = "D", [nics[b]], (a_dev,)
        elif a_dev in plan["leafs"]:
            kind, switches = "Lu", (a_dev, b_dev)
            gpus = [port_gpu[(a_dev, p)] for p in bound.get((a_dev, a_port), ()) if (a_dev, p) in port_gpu]
        else:
            kind, switches = "Sd", (a_dev, b_dev)
            gpus = list(on_leaf.get(b_dev, ()))
        out[link] = {"link_class": CLASSES[kind], "from": a_dev, "from_port": a_port, "to": b_dev, "to_port": b_port,
                     "switches": switches, "gpus": sorted(gpus, key=lambda g: (g["host"], g["netdev"]))}
    return out


class _Probe(object):
    __slots__ = ("pid", "eval_to", "due", "rx", "ring", "sent_at", "rtts", "last_loss", "first_loss_t", "first_loss_seq", "lost_total",
                 "since_n", "since_k",
                 "recv_total")

    def __init__(self, pid):
        self.pid = pid
        self.eval_to = None         # highest sequence judged (None: nothing reported yet)
        self.due = []               # [(collector time, highest seq sent)] not yet judged
        self.rx = set()             # received sequence numbers not yet judged
        self.ring = bytearray(RING)  # 1 = lost, per seq % RING (judged ones)
        self.sent_at = [0.0] * RING  # estimated send time per seq % RING
        self.rtts = []              # (time, rtt ms), last 10 s
        self.last_loss = -1         # seq of the last loss
        self.first_loss_t = None    # send time of the first loss of the current lossy period
        self.first_loss_seq = 0
        self.since_n = self.since_k = 0  # packets judged and lost since the first loss of the lossy period
        self.lost_total = self.recv_total = 0

    def since(self, t0, cap):
        """(judged, lost) among this probe's sequence numbers sent at or after ``t0`` (at most ``cap``, the ring)."""
        if not self.eval_to:
            return 0, 0
        judged = lost = 0
        seq = self.eval_to
        low = max(1, self.eval_to - min(cap, RING) + 1)
        ring, sent_at = self.ring, self.sent_at
        while seq >= low:
            slot = seq % RING
            if sent_at[slot] < t0:
                break
            judged += 1
            lost += ring[slot]
            seq -= 1
        return judged, lost

    def losses(self, count):
        """Losses among the last ``count`` judged sequence numbers."""
        if count <= 0 or not self.eval_to:
            return 0
        hi = self.eval_to
        lo = max(1, hi - count + 1)
        a, b = lo % RING, hi % RING
        if a <= b:
            return self.ring[a:b + 1].count(1)
        return self.ring[a:].count(1) + self.ring[:b + 1].count(1)


class Localiser(object):
    """Ingests agent batches, judges probe packets, keeps per-link state and emits events (dicts)."""

    def __init__(self, topology, rate=10.0, run_id=None, clock=time.time):
        self.topo = topology
        self.rate = float(rate)
        self.clock = clock
        self.run_id = run_id or "gom%x" % int(clock())
        self.probes = dict((pid, _Probe(pid)) for pid in topology.paths)
        self.lossy = {}             # pid -> seq of last loss (probes with a loss in the last LONG s)
        self.events = []            # emitted, not yet taken by the service
        self.seq = itertools.count(1)
        self.open = {}              # link or "switch:<name>" -> opening event
        self.pending = {}           # key -> times named in a row
        self.open_q = {}            # key -> loss rate of the open fault (how long its probes must be clean)
        self.link_state = {}        # link -> state name (absent: up)
        self.maintenance = {}       # switch -> {"by", "holder", "since"} (set by the service)
        self.maint_reported = set()
        self.maint_probes = set()   # probes a maintenance event of this period already explained
        self.dropped = {}           # host -> batches the agent dropped (its own count)
        self.last_seen, self.first_seen = {}, {}   # host -> collector time of its agent's last / first batch
        self.offset = {}            # host -> (collector time - agent monotonic time) estimate, when its batch arrived
        self.batch_no = {}          # host -> last batch number (a smaller one: the agent restarted)
        self.watermark = {}         # host -> collector-clock time its latest batch was composed (rx complete to it)
        self.dst_host = dict((pid, p.get("dst_host")) for pid, p in topology.probe.items())
        self.counters = {"batches": 0, "received": 0, "lost": 0, "unknown_probe": 0}
        self.measured = set()       # probes with at least one judged sequence
        self.detect_t = None        # first tick of the current episode with failing probes
        self.boosted = {}           # probe id -> collector time its requested boost ends
        self.ports_down = {}        # switch -> its ports the switch reports down (link-state feed), or absent
        self.down_open = {}         # link -> its open link_down event
        self.rerouting = {}         # frozenset((switch, switch)) -> until when losses between them are rerouting
        self.boost_rate, self.boost_seconds = BOOST_RATE, BOOST_SECONDS

    # ---- ingest -------------------------------------------------------------------------------------------------
    def ingest(self, batch, now=None):
        """One agent batch: ``tx`` [[probe id, highest seq sent]], ``rx`` [[probe id, [[first, last], ...]]],
        ``rtt`` [[probe id, [ms, ...]]], ``dropped`` (the agent's count of batches it dropped)."""
        now = self.clock() if now is None else now
        probes = self.probes
        self.counters["batches"] += 1
        host = batch.get("host")
        composed = self._composed(host, batch, now)
        if host:
            self.last_seen[host] = now
            self.first_seen.setdefault(host, now)
            self.watermark[host] = max(self.watermark.get(host, composed), composed)
            if "dropped" in batch:
                self.dropped[host] = int(batch["dropped"])
        for pid, hi in batch.get("tx", ()):
            probe = probes.get(pid)
            if probe is None:
                self.counters["unknown_probe"] += 1
                continue
            probe.due.append((composed, int(hi)))
        for pid, ranges in batch.get("rx", ()):
            probe = probes.get(pid)
            if probe is None:
                self.counters["unknown_probe"] += 1
                continue
            floor = probe.eval_to if probe.eval_to is not None else 0
            rx = probe.rx
            for first, last in ranges:
                if last - first > RING:
                    first = last - RING
                for seq in range(max(first, floor + 1), last + 1):
                    rx.add(seq)
        for pid, samples in batch.get("rtt", ()):
            probe = probes.get(pid)
            if probe is not None:
                probe.rtts.extend((now, float(ms)) for ms in samples[-50:])

    def _composed(self, host, batch, now):
        """When the agent composed ``batch``, on the collector's clock: its monotonic time ``m`` plus the smallest
        (collector time - ``m``) seen from it (the least delayed batch), allowed to drift DRIFT; ``now`` for a
        batch without ``m``. A batch that waited in the agent's queue or in transit keeps its early time."""
        mono = batch.get("m")
        if mono is None or not host:
            return now
        mono = float(mono)
        number = batch.get("seq")
        sample = now - mono
        known = self.offset.get(host)
        restarted = number is not None and number <= self.batch_no.get(host, 0)
        if number is not None:
            self.batch_no[host] = number
        if known is None or restarted:
            offset = sample
        else:
            offset = min(known[0] + DRIFT * (now - known[1]), sample)
        self.offset[host] = (offset, now)
        return mono + offset

    # ---- judging ------------------------------------------------------------------------------------------------
    def _ready(self, dst, sent_t, now):
        """The receiving agent has reported everything it got up to ONE_WAY after ``sent_t`` (or it is silent:
        then the packet is not measured)."""
        if dst is None:
            return sent_t <= now - GRACE
        mark = self.watermark.get(dst)
        if mark is not None and mark >= sent_t + ONE_WAY:
            return True
        last = self.last_seen.get(dst)
        return last is None or last < now - AGENT_SILENT or sent_t <= now - LONG

    def _judge(self, now):
        long_n = int(LONG * self.rate)
        lossy = self.lossy
        for probe in self.probes.values():
            due = probe.due
            if not due:
                continue
            hi = -1
            dst = self.dst_host.get(probe.pid)
            if not self._ready(dst, due[0][0], now):
                continue
            while due and self._ready(dst, due[0][0], now):
                sent_t, hi = due.pop(0)
                if dst is not None and not self._listening(dst, sent_t, now):
                    # the receiving agent was not up (not started yet, restarting, or silent): not measured
                    if probe.eval_to is None or hi > probe.eval_to:
                        probe.eval_to = hi
                        probe.rx = set(seq for seq in probe.rx if seq > hi)
                    continue
                self._judge_to(probe, hi, sent_t)
            if probe.last_loss >= 0 and probe.eval_to - probe.last_loss < long_n:
                lossy[probe.pid] = probe.last_loss
        for pid in list(lossy):
            probe = self.probes[pid]
            if probe.eval_to - probe.last_loss >= long_n:
                del lossy[pid]
                probe.first_loss_t = None

    def _listening(self, host, sent_t, now):
        """The receiving host's agent reported before the packet was sent and is still reporting."""
        first, last = self.first_seen.get(host), self.last_seen.get(host)
        return first is not None and first <= sent_t - AGENT_SETTLE and last >= now - AGENT_SILENT

    def _judge_to(self, probe, hi, sent_t):
        if probe.eval_to is None:
            # first report: agents number from 1; a collector joining late judges from the last one reported on
            probe.eval_to = 0 if hi <= self.rate else hi - 1
        elif hi + 2 * self.rate < probe.eval_to:
            # the agent restarted (its numbers start again; what it received before was reported under the old
            # numbers): judge from its next report on
            probe.eval_to = hi
            probe.rx = set()
            return
        start = probe.eval_to + 1
        if hi < start:
            return
        if hi - start >= RING:           # a gap longer than the ring (agent restart): judge the last RING only
            start = hi - RING + 1
        rx, ring, sent_at = probe.rx, probe.ring, probe.sent_at
        lost = 0
        for seq in range(start, hi + 1):
            slot = seq % RING
            sent_at[slot] = sent_t
            if seq in rx:
                rx.discard(seq)
                ring[slot] = 0
            else:
                ring[slot] = 1
                lost += 1
                probe.last_loss = seq
                if probe.first_loss_t is None:
                    probe.first_loss_t = sent_t - 1.0 / self.rate
                    probe.first_loss_seq = seq
                    probe.since_n = probe.since_k = 0
            if probe.first_loss_t is not None:
                probe.since_n += 1
                probe.since_k += ring[slot]
        probe.eval_to = hi
        probe.lost_total += lost
        probe.recv_total += hi - start + 1 - lost
        self.counters["lost"] += lost
        self.counters["received"] += hi - start + 1 - lost
        self.measured.add(probe.pid)
        if len(rx) > RING:
            for seq in [s for s in rx if s <= hi]:
                rx.discard(seq)

    # ---- figures ------------------------------------------------------------------------------------------------
    def probe_loss(self, pid, seconds=SHORT):
        probe = self.probes[pid]
        count = max(1, int(round(seconds * self.rate)))
        judged = min(count, probe.eval_to or 0)
        return float(probe.losses(count)) / judged if judged > 0 else None

    def link_loss(self, link, seconds=SHORT):
        """A link is as lossy as its cleanest probe shows (the lowest loss of the probes crossing it)."""
        values = [self.probe_loss(pid, seconds) for pid in self.topo.sig.get(link, ())]
        values = [v for v in values if v is not None]
        return min(values) if values else None

    def link_rtt(self, link, now=None, seconds=10.0):
        """p50, p90, p99 (ms) of the round trips of the link's probes over the last ``seconds``."""
        now = self.clock() if now is None else now
        samples = []
        for pid in self.topo.sig.get(link, ()):
            probe = self.probes[pid]
            probe.rtts = [(t, ms) for t, ms in probe.rtts if t >= now - seconds]
            samples.extend(ms for _t, ms in probe.rtts)
        if not samples:
            return None
        samples.sort()

        def at(q):
            return round(samples[min(len(samples) - 1, int(q * len(samples)))], 3)
        return {"p50": at(0.5), "p90": at(0.9), "p99": at(0.99)}

    # ---- localisation -------------------------------------------------------------------------------------------
    def _sets(self):
        """``weak``: probes with a loss in the last LONG s of packets; ``strong``: those whose losses since their
        first one cannot be background loss (a sequential test: the k - 1 losses among the n - 1 packets after the
        first loss have a binomial tail at NOISE of at most ALPHA)."""
        strong, weak = set(), set()
        for pid in self.lossy:
            probe = self.probes[pid]
            weak.add(pid)
            if significant(probe.since_k - 1, probe.since_n - 1):
                strong.add(pid)
        return strong, weak

    def _candidates(self, strong):
        sig, paths = self.topo.sig, self.topo.paths
        links = set(link for pid in strong for link in paths[pid])
        return [link for link in links if strong <= sig[link]]

    def _loglik(self, link, t0, weak):
        """Log-likelihood of "``link`` drops packets, at one rate q, and nothing else does" for the losses of the
        probes' packets sent since ``t0`` (the first loss; per probe, so a probe the agents were asked to send
        faster weighs by its packets: q at its maximum-likelihood value; a loss on a probe not crossing ``link``
        is background loss, NOISE per packet)."""
        lost = judged = 0
        cap = int(LONG * self.boost_rate)
        sig = self.topo.sig[link]
        outside = sum(self.probes[pid].since(t0, cap)[1] for pid in weak - sig)
        for pid in sig:
            n, m = self.probes[pid].since(t0, cap)
            lost += m
            judged += n
        if judged == 0 or lost == 0:
            return float("-inf")
        q = float(lost) / judged
        return lost * math.log(q) + ((judged - lost) * math.log(1.0 - q) if lost < judged else 0.0) + outside * LOG_NOISE

    def _all_paths_bad(self, link, t0, weak):
        """NetBouncer's rule: a link is named only when every path across it is bad: each of its probes that sent
        packets since ``t0`` has lost one of them (a faulty link drops on all its paths; a link whose other probes
        stay clean is not the one, however the likelihoods compare at a low loss rate)."""
        for pid in self.topo.sig[link]:
            if pid in weak:
                continue
            if self.probes[pid].since(t0, RING)[0] > 0:
                return False
        return True

    def _refuted(self, best, wider, t0):
        """``best``'s probes are a subset of ``wider``'s: only the clean packets of ``wider``'s other probes tell
        them apart. They refute ``wider`` when, at the lowest loss rate ``best``'s own packets allow (the Wilson
        score bound, one-sided, z = REFUTE_Z), so few losses among them has probability REFUTE_ALPHA at most. The
        likelihood ratio alone, with the rate estimated from a few losses at 2 %, named the subset before the
        wider link's other probes had lost one."""
        cap = int(LONG * self.boost_rate)
        sig = self.topo.sig
        judged = lost = 0
        for pid in sig[best]:
            n, k = self.probes[pid].since(t0, cap)
            judged += n
            lost += k
        n_other = k_other = 0
        for pid in sig[wider] - sig[best]:
            n, k = self.probes[pid].since(t0, cap)
            n_other += n
            k_other += k
        if not judged or not lost:
            return False
        low = wilson_low(lost, judged, REFUTE_Z)
        if k_other >= n_other * low:
            return False        # as lossy as that rate, or more: no refutation
        return binomial_cdf(k_other, n_other, low) <= REFUTE_ALPHA

    def _cover(self, strong, weak):
        """Fewest links (greedy) whose signatures are all lossy and cover ``strong``; None when impossible."""
        sig, paths = self.topo.sig, self.topo.paths
        pool = set(link for pid in strong for link in paths[pid] if sig[link] <= weak)
        left, chosen = set(strong), []
        while left:
            best = max(sorted(pool), key=lambda link: len(sig[link] & left), default=None)
            if best is None or not sig[best] & left:
                return None
            chosen.append(best)
            left -= sig[best]
            pool.discard(best)
        return chosen

    def tick(self, now=None):
        """Judge what is due, localise, open and close faults; returns the events emitted by this tick."""
        now = self.clock() if now is None else now
        self._judge(now)
        strong, weak = self._sets()
        rerouted = self._rerouted(now)
        if rerouted:
            strong, weak = strong - rerouted, weak - rerouted
        maint = set(self.maintenance)
        emitted = []
        if maint:
            under = dict((pid, self.topo.switches_of[pid] & maint) for pid in strong | weak)
            in_maint = set(pid for pid, switches in under.items() if switches)
            emitted.extend(self._maintenance(strong & in_maint, weak & in_maint, now))
            strong, weak = strong - in_maint, weak - in_maint
        named = {}
        if strong:
            if self.detect_t is None:
                self.detect_t = now
            # a probe crossing an open fault's links is explained by it: only its losses since that fault was named
            # are evidence of another fault (its earlier ones would name a link crossed by it alone once the
            # fault's other probes are clean: the false alarms at 2 % loss)
            since = self._explained()
            fresh = set(pid for pid in strong if pid not in since or self._significant_since(pid, since[pid]))
            floor = max([since[pid] for pid in fresh if pid in since] or [None], key=lambda x: x or 0.0)
            named = self._localise(fresh, weak, now, floor, set(since) - fresh) if fresh else {}
        elif not self.open:
            self.detect_t = None
        emitted.extend(self._update(named, strong, weak, now))
        emitted.extend(self._link_down(now))
        for key in [k for k in self.pending if k not in named]:
            del self.pending[key]
        self.maint_reported &= maint
        if not maint:
            self.maint_probes = set()
        self.events.extend(emitted)
        return emitted

    def _localise(self, strong, weak, now, floor=None, stale=frozenset()):
        """{key: (kind, links, candidates, probes)} for this tick's evidence.

        One link whose probes hold every strong probe: the likeliest of them (generalised likelihood ratio: one
        loss rate over its probes, the others clean) once it beats the next by LOG_MARGIN; else a cover."""
        cands = self._candidates(strong)
        if cands:
            firsts = [self.probes[pid].first_loss_t for pid in weak - stale if self.probes[pid].first_loss_t is not None]
            t0 = max(min(firsts), now - LONG) if firsts else now - SHORT
            if floor is not None:
                t0 = max(t0, floor)     # losses an open fault explains are not weighed again
            scored = sorted(((self._loglik(link, t0, weak), link) for link in cands), key=lambda x: (-x[0], x[1]))
            best_ll, best = scored[0]
            if best_ll == float("-inf"):
                return {}
            sig = self.topo.sig
            tied = sorted(link for _ll, link in scored if sig[link] == sig[best])
            if len(tied) > 1:
                # links the plan cannot tell apart (probe_plan's ``ambiguous``): more packets will not help
                return {"ambiguous:" + "|".join(tied): ("unlocalised", tied, [[link] for link in tied], sorted(strong))}
            if len(scored) > 1 and best_ll - scored[1][0] < LOG_MARGIN:
                return {}
            if not self._all_paths_bad(best, t0, weak):
                return {}
            if any(sig[best] < sig[link] and not self._refuted(best, link, t0) for _ll, link in scored[1:]):
                return {}
            return {best: ("link_fault", [best], [[best]], sorted(strong))}
        sig = self.topo.sig
        cover = self._cover(strong, weak)
        if cover is None:
            return {"unlocalised": ("unlocalised", [], [], sorted(strong))}
        out = {}
        # links of the cover sharing a switch, GROUP_MIN or more: one switch fault (the switch with the most first)
        left = list(cover)
        while True:
            counts = {}
            for link in left:
                for switch in self.topo.info[link]["switches"]:
                    counts[switch] = counts.get(switch, 0) + 1
            top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            if not top or top[0][1] < GROUP_MIN:
                break
            switch = top[0][0]
            mine = [link for link in left if switch in self.topo.info[link]["switches"]]
            links = sorted(link for link in self.topo.links_of_switch[switch] if sig[link] <= weak)
            probes = set(pid for link in mine for pid in sig[link]) & strong
            out["switch:" + switch] = ("switch_fault", links, [mine], sorted(probes))
            left = [link for link in left if link not in mine]
        for link in left:
            out[link] = ("link_fault", [link], [cover], sorted(sig[link] & strong))
        return out

    def _update(self, named, strong, weak, now):
        out = []
        for key, (kind, links, candidates, probes) in sorted(named.items()):
            if key in self.open:
                continue
            self.pending[key] = self.pending.get(key, 0) + 1
            # named twice in a row; failing probes nothing explains: only after LONG seconds of it (partial loss
            # leaves some of a link's probes clean for a while)
            if self.pending[key] < need_ticks(key, kind, candidates):
                continue
            event = self._event(kind, key, links, candidates, probes, now)
            self.open[key] = event
            self.open_q[key] = self._loss_rate(links) if links else 1.0
            for link in links:
                self.link_state[link] = "grouped" if kind == "switch_fault" else "fault"
            out.append(event)
        # recovery: every probe of the fault clean for CLEAR_AFTER, and for long enough that the fault's own loss rate
        # would have shown (2 % loss: ~15 s); the closed fault's losses are then forgotten
        for key, event in list(self.open.items()):
            if event["links"] and not any(self.topo.sig.get(link) for link in event["links"]):
                continue    # no probe crosses its links any more (GOR steered them off): no evidence either way
            probes = set(event["probes"])
            for link in event["links"]:
                probes |= self.topo.sig.get(link, frozenset())
            q = self.open_q.get(key, 1.0)
            clean_n = int(CLEAR_AFTER * self.rate)
            if q < 1.0:
                clean_n = max(clean_n, int(math.ceil(math.log(CLEAR_ALPHA) / math.log(1.0 - q))))
            clean_n = min(clean_n, int(LONG * self.rate))
            if not all(self.probes[pid].eval_to and self.probes[pid].eval_to - max(self.probes[pid].last_loss, 0) >= clean_n
                       for pid in probes):
                continue
            del self.open[key]
            self.open_q.pop(key, None)
            for link in event["links"]:
                self.link_state.pop(link, None)
            for pid in probes:
                self._forget(pid)
            rec = self._event("recovered", key, event["links"], [], event["probes"], now)
            rec.update(fault_id=event["id"], first_loss=event["first_loss"], detected=event["detected"],
                       localised=event["localised"], cleared=now, switch=event["switch"], link=event["link"],
                       link_class=event["link_class"])
            out.append(rec)
        return out

    def boosts(self, now=None):
        """Adaptive confirmation (NetBouncer NSDI'19, 007 NSDI'18: more evidence only where a loss was seen):
        {probe id: (rate, seconds)} to ask of the sending agents now. For the probes that lost a packet in the last
        BOOST_HOLD s and no open fault or maintenance explains, every probe crossing one of their links (the
        candidate links' signatures: the probes that tell the candidates apart, and the lossy ones) is asked to
        send at ``boost_rate`` for ``boost_seconds``, renewed while the loss stays unexplained; at most BOOST_MAX
        probes at once, those crossing the fewest candidates (the most telling) first. Empty when boosting is off
        (``boost_seconds`` 0)."""
        now = self.clock() if now is None else now
        for pid in [p for p, until in self.boosted.items() if until <= now]:
            del self.boosted[pid]
        if not self.boost_seconds or not self.lossy:
            return {}
        since = self._explained()
        explained = set(pid for event in self.open.values() for pid in event["probes"] if pid not in since)
        explained |= set(pid for pid, t in since.items() if not self._significant_since(pid, t)) | self.maint_probes
        maint = set(self.maintenance)
        paths, sig = self.topo.paths, self.topo.sig
        counts = {}
        for pid in self.lossy:
            probe = self.probes[pid]
            if pid in explained or (maint and self.topo.switches_of[pid] & maint):
                continue
            if probe.sent_at[probe.last_loss % RING] < now - BOOST_HOLD:
                continue
            for link in paths[pid]:
                for other in sig[link]:
                    counts[other] = counts.get(other, 0) + 1
        out = {}
        room = BOOST_MAX - len(self.boosted)
        for pid in sorted(counts, key=lambda p: (counts[p], p)):
            until = self.boosted.get(pid)
            if until is not None and until > now + 1.0:
                continue            # held long enough; renewed in its last second
            if until is None:
                if room <= 0:
                    continue
                room -= 1
            self.boosted[pid] = now + self.boost_seconds
            out[pid] = (self.boost_rate, self.boost_seconds)
        return out

    def _explained(self):
        """{probe: when the last open fault whose links it crosses was named} (its losses until then have an
        explanation)."""
        out = {}
        for event in self.open.values():
            for link in event["links"]:
                for pid in self.topo.sig.get(link, ()):
                    out[pid] = max(out.get(pid, 0.0), event["localised"] or event["detected"])
        return out

    def _significant_since(self, pid, t0):
        """The probe's losses among its packets sent since ``t0`` fail the detection test (``strong`` again)."""
        judged, lost = self.probes[pid].since(t0, RING)
        return significant(lost - 1, judged - 1)

    def _rerouted(self, now):
        """Probes crossing a link between two switches joined by a cable that is down, or came up less than
        REROUTE_HOLD s ago: routing is moving flows between the parallel links (ECMP groups shrink and grow, the
        plan's source ports may land elsewhere for a while), so their losses belong to the link_down event."""
        pairs = set(frozenset(self.topo.info[link]["switches"]) for link in self.down_open)
        ended = set()
        for pair, until in list(self.rerouting.items()):
            if until < now:
                del self.rerouting[pair]
                ended.add(pair)
            else:
                pairs.add(pair)
        for pair in ended - pairs:
            # what they lost while routing moved them belongs to the link_down: never judged again as a fault
            for pid in self.topo.probes_of_pair.get(pair, ()):
                self._forget(pid)
        out = set()
        for pair in pairs:
            out |= self.topo.probes_of_pair.get(pair, set())
        return out

    def set_ports_down(self, switch, ports):
        """What ``switch`` reports of its ports now (the link-state feed, linkstate.py): the set of ports down;
        None when the switch could not be read (its links keep their last state)."""
        if ports is not None:
            self.ports_down[switch] = set(ports)

    def _link_down(self, now):
        """``link_down`` for each leaf<->spine link (both directions of a cable) whose port a switch reports down,
        ``recovered`` when it is up again. Loss cannot show these: routing moves the probes to a sibling path at
        once, so the switches' own link state is the signal (docs/gom.md). On a switch under maintenance it is
        state ``maintenance``, no event."""
        down = set()
        for switch, ports in self.ports_down.items():
            for port in ports:
                down |= self.topo.fabric_ports.get((switch, port), set())
        out = []
        maint = set(self.maintenance)
        for link in sorted(down - set(self.down_open)):
            if maint & set(self.topo.info[link]["switches"]):
                self.link_state[link] = "maintenance"
                continue
            event = self._event("link_down", link, [link], [[link]], [], now)
            self.down_open[link] = event
            self.link_state[link] = "down"
            out.append(event)
        for link in sorted(set(self.down_open) - down):
            event = self.down_open.pop(link)
            self.rerouting[frozenset(self.topo.info[link]["switches"])] = now + REROUTE_HOLD
            if self.link_state.get(link) == "down":
                del self.link_state[link]
            rec = self._event("recovered", link, [link], [], [], now)
            rec.update(fault_id=event["id"], detected=event["detected"], localised=event["localised"], cleared=now)
            out.append(rec)
        return out

    def _forget(self, pid):
        probe = self.probes[pid]
        probe.ring = bytearray(RING)
        probe.last_loss = -1
        probe.first_loss_t = None
        self.lossy.pop(pid, None)

    def _loss_rate(self, links):
        lost = judged = 0
        n = int(LONG * self.rate)
        for pid in set(pid for link in links for pid in self.topo.sig.get(link, ())):
            probe = self.probes[pid]
            if probe.first_loss_t is None:
                continue
            m = min(n, (probe.eval_to or 0) - probe.first_loss_seq + 1)
            lost += probe.losses(m)
            judged += m
        return max(0.001, float(lost) / judged) if judged else 1.0

    def _maintenance(self, strong, weak, now):
        out = []
        if not strong:
            return out
        for switch in sorted(set(s for pid in strong for s in self.topo.switches_of[pid]) & set(self.maintenance)):
            if switch in self.maint_reported:
                continue
            mine = set(pid for pid in strong if switch in self.topo.switches_of[pid]) - self.maint_probes
            if not mine:
                continue        # only probes another switch's maintenance already explained
            self.maint_reported.add(switch)
            self.maint_probes |= mine
            sig = self.topo.sig
            links = sorted(link for link in self.topo.links_of_switch[switch] if sig[link] <= weak and sig[link] & mine)
            for link in links:
                self.link_state[link] = "maintenance"
            event = self._event("maintenance", "switch:" + switch, links, [], sorted(mine), now)
            event["switch"] = switch
            event["maintenance"] = dict(self.maintenance[switch], switch=switch)
            out.append(event)
        return out

    def settled(self, switch, ended, now):
        """Every probe crossing ``switch`` has been judged clean for CLEAR_AFTER seconds of packets, counted from
        when its maintenance record went away (``ended``) or from its last loss if later: the routes around it
        settled."""
        if now - ended < CLEAR_AFTER:
            return False
        for pid, crossed in self.topo.switches_of.items():
            if switch not in crossed:
                continue
            probe = self.probes[pid]
            if not probe.eval_to:
                continue
            since = ended
            if probe.last_loss > 0 and probe.eval_to - probe.last_loss < RING:
                since = max(since, probe.sent_at[probe.last_loss % RING])
            if probe.sent_at[probe.eval_to % RING] < since + CLEAR_AFTER:
                return False
        return True

    def set_maintenance(self, switches):
        """{switch: {"by", "holder", "since"}} under change, drain or silence now; links of switches leaving it
        return to ``up`` (their probes are judged afresh)."""
        for switch in set(self.maintenance) - set(switches):
            for link in self.topo.links_of_switch.get(switch, ()):
                if self.link_state.get(link) == "maintenance":
                    del self.link_state[link]
            # what its probes lost during the maintenance belongs to it: never judged again as a fault
            for pid, crossed in self.topo.switches_of.items():
                if switch in crossed:
                    self._forget(pid)
        self.maintenance = dict(switches)

    def _event(self, kind, key, links, candidates, probes, now):
        info = self.topo.info
        one = links[0] if len(links) == 1 and kind != "switch_fault" else None
        firsts = [self.probes[pid].first_loss_t for pid in probes if self.probes[pid].first_loss_t is not None]
        gpus = {}
        for link in links:
            for gpu in info[link]["gpus"]:
                gpus[(gpu["host"], gpu["netdev"])] = gpu
        loss = round(self._loss_rate(links), 4) if links and kind not in ("recovered", "link_down") else None
        event = {
            "schema": SCHEMA, "id": "%s-%d" % (self.run_id, next(self.seq)), "kind": kind,
            "link": one, "link_class": info[one]["link_class"] if one else None,
            "from": info[one]["from"] if one else None, "from_port": info[one]["from_port"] if one else None,
            "to": info[one]["to"] if one else None, "to_port": info[one]["to_port"] if one else None,
            "switch": key[7:] if key.startswith("switch:") else None,
            "links": list(links), "candidates": candidates, "loss": loss,
            "rtt_ms": self.link_rtt(one, now) if one else None,
            "first_loss": round(min(firsts), 3) if firsts else None,
            "detected": round(self.detect_t if self.detect_t is not None and kind != "link_down" else now, 3),
            "localised": round(now, 3) if kind in ("link_fault", "switch_fault", "maintenance", "link_down") else None,
            "cleared": None, "probes": list(probes), "gpus": [gpus[k] for k in sorted(gpus)], "maintenance": None,
        }
        event["fault_id"] = event["id"]
        return event

    # ---- state for the exporter ----------------------------------------------------------------------------------
    def state(self, link):
        if link in self.link_state:
            return self.link_state[link]
        if not any(pid in self.measured for pid in self.topo.sig.get(link, ())):
            return "unmeasured"
        return "up"


def need_ticks(key, kind, candidates):
    """Ticks in a row an explanation must hold before it is reported: one link named by the likelihood ratio 2,
    a cover of several links (or a switch fault) COVER_TICKS, nothing explained UNLOCALISED_TICKS."""
    if key == "unlocalised":
        return UNLOCALISED_TICKS
    if kind == "switch_fault" or (kind == "link_fault" and candidates and len(candidates[0]) > 1):
        return COVER_TICKS
    return 2


def wilson_low(k, n, z):
    """Lower end of the Wilson score interval for k successes in n trials (one-sided, z standard deviations)."""
    p = float(k) / n
    centre = p + z * z / (2.0 * n)
    spread = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return max(0.0, (centre - spread) / (1.0 + z * z / n))


def binomial_cdf(k, n, p):
    """P(Binomial(n, p) <= k)."""
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    return min(1.0, sum(math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * log_p + (n - j) * log_q)
                        for j in range(0, k + 1)))


def significant(k, n, p=NOISE, alpha=ALPHA):
    """P(Binomial(n, p) >= k) <= alpha: k losses in n packets are not background loss at rate p."""
    if k <= 0 or n <= 0 or k > n:
        return False
    log_p, log_q = math.log(p), math.log1p(-p)
    tail = 0.0
    for j in range(k, min(n, k + 40) + 1):
        term = math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * log_p + (n - j) * log_q
        tail += math.exp(term)
        if term < math.log(alpha) - 20:
            break
    return tail <= alpha


def write_events(path, events):
    """Appends events as JSON lines (one write per batch of events, flushed)."""
    import json
    if not events or not path:
        return
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        os.makedirs(directory, exist_ok=True)
    with open(path, "a") as handle:
        handle.write("".join(json.dumps(e, sort_keys=True) + "\n" for e in events))
