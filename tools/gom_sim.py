"""Replays GOM agents' batches for a probe plan, with faults injected on directed links (tests and benchmarks).

Each probe sends at its rate (the agent's ``rate``, or a boost the collector asked for); a packet is lost when a
link of its path is faulty (with that link's loss probability, seeded). Every step (100 ms) yields one batch per
host, shaped as the agent's (plugins/module_utils/gom/agent.py ``make_batch``): ``tx`` of its own probes, ``rx`` of
the probes it received, ``rtt`` of the echoes, ``m`` the agent's monotonic time when it composed the batch.
``stall`` (probability per host and step, longest stall in s) starves agents as a loaded machine does: a stalled
agent sends nothing and composes no batch; what reached it meanwhile is in its first batch after the stall.
This is a stand-in for the network, not for the localiser: the localiser under test is the real one, and the twin
campaign (tests/lab/twin/gom_live.py) runs the real agents over the real kernels.
"""
import random


class Replay(object):
    def __init__(self, probes, rate=10.0, seed=1, noise=0.0, stall=(0.0, 0.0), step=0.1):
        self.rate = rate
        self.step_s = step
        self.rng = random.Random(seed)
        self.noise = noise              # background loss per packet
        self.stall_p, self.stall_max = stall
        self.probes = [(p["id"], p["src_host"], p["dst_host"], tuple(p["path"])) for p in probes]
        self.seq = dict((p["id"], 0) for p in probes)
        self.credit = dict((p["id"], 0.0) for p in probes)
        self.hosts = sorted(set(h for _pid, s, d, _path in self.probes for h in (s, d)))
        self.faults = {}                # link -> loss probability
        self.boost = {}                 # probe id -> (rate, until)
        self.stalled = {}               # host -> stalled until
        self.held = dict((h, []) for h in self.hosts)
        self.batch_no = dict((h, 0) for h in self.hosts)
        self.sent = 0

    def apply(self, boosts, t):
        """The collector's boost requests {probe id: (rate, seconds)}, as the agents apply them."""
        for pid, (rate, seconds) in boosts.items():
            self.boost[pid] = (rate, t + seconds)

    def step(self, t):
        """One 100 ms step: every probe sends at its rate; returns the batches of the agents not stalled."""
        rx, rtt, tx = {}, {}, {}
        rng, faults, noise = self.rng.random, self.faults, self.noise
        if self.stall_p:
            for host in self.hosts:
                if self.stalled.get(host, 0.0) <= t and rng() < self.stall_p:
                    self.stalled[host] = t + self.step_s * int(1 + rng() * self.stall_max / self.step_s)
        for pid, src, dst, path in self.probes:
            if self.stalled.get(src, 0.0) > t:
                continue
            rate, until = self.boost.get(pid, (self.rate, 0.0))
            self.credit[pid] += (rate if until > t else self.rate) * self.step_s
            count = int(self.credit[pid] + 1e-9)
            self.credit[pid] -= count
            for _n in range(count):
                seq = self.seq[pid] + 1
                self.seq[pid] = seq
                self.sent += 1
                tx[src] = tx.get(src, {})
                tx[src][pid] = seq
                lost = noise and rng() < noise
                if faults and not lost:
                    for link in path:
                        p = faults.get(link)
                        if p is not None and rng() < p:
                            lost = True
                            break
                if not lost:
                    rx.setdefault(dst, []).append([pid, [[seq, seq]]])
                    rtt.setdefault(src, {})[pid] = [0.05]
        out = []
        for host in self.hosts:
            self.held[host].extend(rx.get(host, ()))
            if self.stalled.get(host, 0.0) > t:
                continue
            self.batch_no[host] += 1
            out.append({"v": 1, "host": host, "seq": self.batch_no[host], "t": t, "m": t,
                        "tx": sorted([pid, hi] for pid, hi in tx.get(host, {}).items()), "rx": self.held[host],
                        "rtt": sorted([pid, v] for pid, v in rtt.get(host, {}).items()), "dropped": 0})
            self.held[host] = []
        return out
