"""Replays GOM agents' batches for a probe plan, with faults injected on directed links (tests and benchmarks).

Each probe sends one packet per 1/rate s; a packet is lost when a link of its path is faulty (with that link's
loss probability, seeded). Every step yields one batch per host, shaped as the agent's (plugins/module_utils/gom/
agent.py ``make_batch``): ``tx`` of its own probes, ``rx`` of the probes it received, ``rtt`` of the echoes.
This is a stand-in for the network, not for the localiser: the localiser under test is the real one, and the twin
campaign (tools/gom_twin.py) runs the real agents over the real kernels.
"""
import random


class Replay(object):
    def __init__(self, probes, rate=10.0, seed=1, noise=0.0):
        self.rate = rate
        self.rng = random.Random(seed)
        self.noise = noise              # background loss per packet (a loaded machine)
        self.probes = [(p["id"], p["src_host"], p["dst_host"], tuple(p["path"])) for p in probes]
        self.seq = dict((p["id"], 0) for p in probes)
        self.hosts = sorted(set(h for _pid, s, d, _path in self.probes for h in (s, d)))
        self.faults = {}                # link -> loss probability

    def step(self, t):
        """One probe interval: every probe sends once; returns the hosts' batches."""
        tx, rx, rtt = {}, {}, {}
        rng, faults, noise = self.rng.random, self.faults, self.noise
        for pid, src, dst, path in self.probes:
            seq = self.seq[pid] + 1
            self.seq[pid] = seq
            tx.setdefault(src, []).append([pid, seq])
            lost = noise and rng() < noise
            if faults and not lost:
                for link in path:
                    p = faults.get(link)
                    if p is not None and rng() < p:
                        lost = True
                        break
            if not lost:
                rx.setdefault(dst, []).append([pid, [[seq, seq]]])
                rtt.setdefault(src, []).append([pid, [0.05]])
        return [{"v": 1, "host": host, "t": t, "tx": tx.get(host, []), "rx": rx.get(host, []),
                 "rtt": rtt.get(host, []), "dropped": 0} for host in self.hosts]
