"""GOM benchmarks (issue 38): the collector's ingest at scale, and the full fault campaign on the twin.

    PYTHONPATH=.collections python tools/bench_gom.py scale [--sizes 4096,32768] [--seconds 20]
    PYTHONPATH=.collections python tools/bench_gom.py scale --sizes 32768 --groups 4 --decoders 12   (sharded)
    python tools/bench_gom.py twin            (root: builds its own lab twin, ~30-60 min)
    python tools/bench_gom.py rollout         (root: a site.yml rollout of every switch, with drains, under GOM)

scale: the 1-identifiable plan of the 4K and 32K GPU fabrics (rail512 scaled out, tools/bench_probes.py), every
probe at 10/s replayed (tools/gom_sim.py): one JSON batch per host every 100 ms, encoded as the agent encodes it. The
collector's side is timed (JSON decoding, ingest, the 100 ms tick with localisation), in CPU seconds per second of
probe traffic: <= 1.0 means one core keeps up. A 100 % loss fault on one spine->leaf link at 5 s: the replayed time
to its event (the localisation latency: the collector's own delays, no network) and the CPU of that second.
Exit 1 when the 4K figure is above one core or the fault is not named exactly. With ``--groups G``: the sharded
collector (plugins/module_utils/gom/shard.py: decoders by agent, G ** 2 judges by probe, a merger that localises) on the same
replay, CPU per part per second of probes; exit 1 when any part is above one core or the fault is not named exactly.

twin: tests/lab/twin/gom_live.py's full campaign (every directed link at 100 % and 20 % loss, four links per class
at 2 % loss, cable down and congestion, one fault per class under a drain record) on a lab twin of its own
(namespace prefix and ports of the ``aifh`` test twin: not while that test runs in this checkout). Exit 1 when a
Done-when figure is missed.

rollout: a lab twin whose routers keep their lock markers in directories of their own (twin.py --lock-dirs), converged
by site.yml; GOM live on it (the collector reads those directories: the product's maintenance filter); then a change
of every switch (the underlay's BGP timers, as tools/bench_rollout.py) rolled out by site.yml with the maintenance
drain on spines (auto) and on every switch (always). During each rollout an injector (``Injector``) makes the
maintenance filter work: when a switch's lock marker appears it drops every UDP packet (nftables, as the campaign)
on one of that switch's fabric links for 3 s (or until the marker goes), and once, while some switch is under
change, it drops 100 % on a host link of a leaf that is not (a real fault elsewhere). Every event is listed; exit 1
unless every injected maintenance loss is reported as maintenance, the real fault as a link_fault naming its link,
and nothing else as a fault.
"""
import random
import threading
import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "twin"))

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.gom.identify import plan_identifiable  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.gom.localise import Localiser, Topology  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.gom.shard import InProcess  # noqa: E402
from bench_probes import gpu_fabric  # noqa: E402
from gom_sim import Replay  # noqa: E402


def replay(report, topo, seconds, fault_at):
    """(fault link, replay, steps): every probe at 10/s, steps of (time, the agents' batches) over ``seconds``, a 100 %
    loss on the first spine->leaf link from ``fault_at`` on."""
    sim = Replay(report["probes"], seed=3)
    link = sorted(link for link, info in topo.info.items() if info["link_class"] == "spine_down")[0]

    def steps():
        for step in range(1, int(seconds * 10) + 1):
            t = round(step * 0.1, 1)
            if abs(t - fault_at) < 1e-6:
                sim.faults = {link: 1.0}
            yield t, sim.step(t)
    return link, sim, steps()


def scale(gpus, seconds, fault_at=5.0):
    plan = build_plan(gpu_fabric(gpus // 8, "gpu%d" % gpus))
    report = plan_identifiable(plan, dport=4792)
    topo = Topology(plan, report["probes"])
    loc = Localiser(topo, clock=lambda: 0.0)
    link, sim, steps = replay(report, topo, seconds, fault_at)
    cpu_total = 0.0
    cpu_fault_second = 0.0
    found = None
    for t, batches in steps:
        lines = [json.dumps(b, separators=(",", ":")).encode() for b in batches]    # what the agents send
        start = time.process_time()
        for line in lines:
            loc.ingest(json.loads(line), t)
        events = loc.tick(t)
        used = time.process_time() - start
        cpu_total += used
        if fault_at <= t < fault_at + 1.0:
            cpu_fault_second += used
        for event in events:
            if found is None and event["kind"] != "recovered":
                found = (event, t)
    probes = len(report["probes"])
    event, at = found if found else (None, None)
    return {"gpus": gpus, "probes": probes, "packets_per_s": probes * 10, "hosts": len(sim.hosts),
            "cpu_per_s": round(cpu_total / seconds, 3), "cpu_fault_second": round(cpu_fault_second, 3),
            "fault": link, "named": event and event["links"], "kind": event and event["kind"],
            "localisation_s": round(at - fault_at, 2) if at else None, "exact": bool(event and event["link"] == link)}


def scale_sharded(gpus, seconds, groups, decoders, fault_at=5.0):
    """The same replay through the sharded collector (plugins/module_utils/gom/shard.py): CPU of each part per second
    of probes (decoders, judges, the merger; the hops' marshal blobs included), and the localisation latency."""
    plan = build_plan(gpu_fabric(gpus // 8, "gpu%d" % gpus))
    report = plan_identifiable(plan, dport=4792)
    sharded = InProcess(plan, report["probes"], groups=groups, decoders=decoders, clock=lambda: 0.0)
    link, _sim, steps = replay(report, sharded.merger.topo, seconds, fault_at)
    gc.collect()
    gc.freeze()     # the plan and the parts' state: long-lived, as in each part's own process (not rescanned)
    cpu = {}
    found = None
    for t, batches in steps:
        lines = [(b["host"], json.dumps(b, separators=(",", ":")).encode()) for b in batches]
        for event in sharded.step(lines, t, cpu):
            if found is None and event["kind"] != "recovered":
                found = (event, t)
    event, at = found if found else (None, None)
    parts = dict((key, round(value / seconds, 3)) for key, value in sorted(cpu.items()))
    return {"gpus": gpus, "probes": len(report["probes"]), "judges": len(sharded.judges), "decoders": decoders, "cpu_per_s": parts,
            "worst_part": max(parts.items(), key=lambda kv: kv[1]), "total_cpu_per_s": round(sum(parts.values()), 3),
            "fault": link, "named": event and event["links"], "localisation_s": round(at - fault_at, 2) if at else None,
            "exact": bool(event and event["link"] == link)}


def main_sharded(args):
    """Exit 1 when a part needs more than one core or the fault is not named exactly."""
    rows = [scale_sharded(int(g), args.seconds, args.groups, args.decoders) for g in args.sizes.split(",")]
    print("| GPUs | probes | decoders | judges | CPU s per s: each decoder | each judge | merger | all parts | fault named "
          "| localisation s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        dec = [v for k, v in r["cpu_per_s"].items() if k.startswith("decoder")]
        jud = [v for k, v in r["cpu_per_s"].items() if k.startswith("judge")]
        print("| %d | %d | %d | %d | %s | %s | %.3f | %.3f | %s | %s |" % (
            r["gpus"], r["probes"], r["decoders"], r["judges"], "%.2f-%.2f" % (min(dec), max(dec)),
            "%.2f-%.2f" % (min(jud), max(jud)), r["cpu_per_s"]["merger"], r["total_cpu_per_s"],
            "exact" if r["exact"] else r["named"], r["localisation_s"]))
    print(json.dumps(rows, sort_keys=True))
    missed = [r for r in rows if not r["exact"] or r["worst_part"][1] > 1.0]
    for r in missed:
        print("missed: %d GPUs: %s" % (r["gpus"], "fault named %s" % r["named"] if not r["exact"]
                                       else "%s needs %.2f cores" % r["worst_part"]))
    return 1 if missed else 0


def main_scale(args):
    if args.groups:
        return main_sharded(args)
    rows = [scale(int(g), args.seconds) for g in args.sizes.split(",")]
    print("| GPUs | probes | probe packets/s | agents | collector CPU s per s | CPU in the fault's second | fault named | localisation s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %d | %d | %d | %.3f | %.3f | %s | %s |" % (
            r["gpus"], r["probes"], r["packets_per_s"], r["hosts"], r["cpu_per_s"], r["cpu_fault_second"],
            "exact" if r["exact"] else r["named"], r["localisation_s"]))
    missed = [r for r in rows if not r["exact"] or (r["gpus"] <= 4096 and r["cpu_per_s"] > 1.0)]
    return 1 if missed else 0


def main_twin(args):
    import labid
    import gom_live
    prefix, base_port = labid.twin_names("aifh")
    state = tempfile.mkdtemp(prefix="aif-gom-bench-")
    twin = [sys.executable, os.path.join(ROOT, "tests", "lab", "twin", "twin.py")]
    common = ["--state", os.path.join(state, "twin"), "--ns-prefix", prefix, "--base-port", str(base_port)]
    subprocess.run(twin + ["up", "--host-config", "--configure"] + common, check=True, stdout=subprocess.DEVNULL)
    try:
        with open(os.path.join(state, "twin", "plan", "plan.json")) as handle:
            plan = json.load(handle)
        time.sleep(10)      # BGP sessions up
        result = gom_live.run(plan, prefix, os.path.join(state, "live"), args.campaign)
    finally:
        subprocess.run(twin + ["down"] + common, check=False, stdout=subprocess.DEVNULL)
    print(json.dumps(result, indent=1, sort_keys=True))
    print(json.dumps(result["summary"], sort_keys=True))
    print("missed: %s" % (result["missed"] or "nothing"))
    return 1 if result["missed"] else 0


class Injector(object):
    """Loss on the links of switches while this collection changes them (their lock marker is in their directory),
    and one real fault on a host link of a leaf that is not under change at the time."""

    def __init__(self, live, locks, seed=9):
        self.live, self.locks = live, locks
        self.rng = random.Random(seed)
        self.classes = gom_live_classes(live.report)
        self.stop = threading.Event()
        self.maint, self.real = [], None
        self.thread = None

    def marked(self):
        out = set()
        for switch in os.listdir(self.locks):
            try:
                if any(n.startswith("aifabric-lock.aif-") for n in os.listdir(os.path.join(self.locks, switch))):
                    out.add(switch)
            except OSError:
                continue
        return out

    def fabric_link_of(self, switch):
        links = [x for c in ("leaf_up", "spine_down") for x in self.classes[c] if x.split(":")[0] == switch]
        return self.rng.choice(links) if links else None

    def run(self):
        done = set()
        seen_at = {}
        while not self.stop.is_set():
            now = time.time()
            marked = self.marked()
            for switch in marked:
                seen_at[switch] = now
            for switch in sorted(marked - done):
                link = self.fabric_link_of(switch)
                if link is None:
                    continue
                done.add(switch)
                self.live.inject("loss", link, 100)
                start = time.time()
                while time.time() - start < 3.0 and switch in self.marked() and not self.stop.is_set():
                    time.sleep(0.1)
                self.live.clear("loss", link)
                self.maint.append({"switch": switch, "link": link, "on": start, "off": time.time()})
                break
            if self.real is None and marked:
                # a leaf changed already (its marker gone for 12 s, past any settling) or never, not under change
                free = [leaf for leaf in sorted(self.live.plan["leafs"]) if leaf not in marked and
                        now - seen_at.get(leaf, 0) > 12.0]
                if free:
                    leaf = free[0]
                    link = self.rng.choice([x for x in self.classes["host_up"] if x.split(">")[1].startswith(leaf + ":")])
                    self.live.inject("loss", link, 100)
                    start = time.time()
                    self.stop.wait(4.0)
                    self.live.clear("loss", link)
                    self.real = {"leaf": leaf, "link": link, "on": start, "off": time.time(), "under_change": sorted(marked)}
            self.stop.wait(0.1)

    def start(self):
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def finish(self):
        self.stop.set()
        self.thread.join(30)


def gom_live_classes(report):
    import gom_live
    return gom_live.link_classes(report)


def main_rollout(_args):
    import yaml
    import labid
    import gom_live
    import bench_rollout
    prefix, base_port = labid.twin_names("aifp")     # the p2p test twin's names: not while that test runs here
    state = tempfile.mkdtemp(prefix="aif-gom-rollout-")
    twin = [sys.executable, os.path.join(ROOT, "tests", "lab", "twin", "twin.py")]
    common = ["--state", state, "--ns-prefix", prefix, "--base-port", str(base_port)]
    subprocess.run(twin + ["up", "--lock-dirs", "--inventory", os.path.join(ROOT, "inventories", "lab")] + common,
                   check=True, stdout=subprocess.DEVNULL)
    rows = []
    try:
        with open(os.path.join(state, "plan", "plan.json")) as handle:
            plan = json.load(handle)
        with open(os.path.join(state, "inventory.yml")) as handle:
            fabric = yaml.safe_load(handle)["all"]["vars"]["fabric"]
        started = time.monotonic()
        bench_rollout.site_yml(state)
        converge_s = time.monotonic() - started
        if not bench_rollout.wait_established(plan, prefix=prefix):
            raise RuntimeError("BGP did not converge on the twin")
        live = gom_live.Live(plan, prefix, os.path.join(state, "live"))
        live.markers = os.path.join(state, "locks")      # the routers' own lock directories
        live.plan_probes()
        live.start()
        try:
            time.sleep(5)
            baseline = live.new_events()
            for drain, timers in (("auto", (4, 12)), ("always", (3, 9))):
                change = dict(fabric, underlay=dict(fabric.get("underlay") or {}, keepalive_seconds=timers[0],
                                                    hold_seconds=timers[1]))
                extra = os.path.join(state, "change-%s.json" % drain)
                with open(extra, "w") as handle:
                    json.dump({"fabric": change, "switch_drain": drain, "switch_drain_wait": 3}, handle)
                started = time.monotonic()
                injector = Injector(live, live.markers)
                injector.start()
                try:
                    result = bench_rollout.site_yml(state, "--tags", "plan,switches", "-e", "@" + extra)
                finally:
                    injector.finish()
                took = time.monotonic() - started
                time.sleep(15)      # the last switch's linger and any late loss
                events = live.new_events()
                drained = sorted(name for name, (_s, _e, res) in bench_rollout.windows(result).items() if res.get("drained"))
                faults = [e for e in events if e["kind"] not in ("maintenance", "recovered")]
                real = injector.real["link"] if injector.real else None
                rows.append({"drain": drain, "rollout_s": round(took, 1), "drained": drained,
                             "faults": faults, "injected_maintenance": injector.maint, "injected_real": injector.real,
                             "real_named": bool(real) and any(e["kind"] == "link_fault" and e["link"] == real for e in faults),
                             "false_faults": [e for e in faults if e["link"] != real or e["kind"] != "link_fault"],
                             "maintenance": sorted(set(e["switch"] for e in events if e["kind"] == "maintenance")),
                             "events": [(e["kind"], e["switch"] or e["link"]) for e in events]})
        finally:
            live.stop()
    finally:
        subprocess.run(twin + ["down"] + common, check=False, stdout=subprocess.DEVNULL)
    out = {"converge_s": round(converge_s, 1), "probes": live.report["count"], "baseline": baseline, "rollouts": rows}
    print(json.dumps(out, indent=1, sort_keys=True))
    bad = bool(baseline)
    for row in rows:
        lossy = sorted(m["switch"] for m in row["injected_maintenance"])
        print("drain %s: rollout %.0f s, drained %s; loss injected under change on %s, maintenance reported on %s; "
              "real fault %s named %s; other fault events %d" % (
                  row["drain"], row["rollout_s"], row["drained"], lossy, row["maintenance"],
                  row["injected_real"] and row["injected_real"]["link"], row["real_named"], len(row["false_faults"])))
        bad = bad or row["false_faults"] or not row["real_named"] or not lossy or not set(lossy) <= set(row["maintenance"])
    return 1 if bad else 0


def main(argv=None):
    import signal
    signal.signal(signal.SIGTERM, lambda *_args: sys.exit(143))    # so the twin is taken down on a kill
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("what", choices=["scale", "twin", "rollout"])
    parser.add_argument("--sizes", default="4096,32768")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--groups", type=int, default=0, help="scale: the sharded collector, hosts in this many groups "
                        "(groups ** 2 judges)")
    parser.add_argument("--decoders", type=int, default=8, help="scale --groups: decoders (agents dealt by host)")
    parser.add_argument("--campaign", default="full", help="twin: full, class:<link class> (host_up, host_down, "
                        "leaf_up, spine_down), loss:<classes>, drains, or quiet[:seconds[:burners]] (no fault for that "
                        "long under busy processes: every event a false alarm)")
    args = parser.parse_args(argv)
    return {"scale": main_scale, "twin": main_twin, "rollout": main_rollout}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
