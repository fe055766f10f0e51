# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GOM live on the routed twin (run as root): the real agents in the GPU host namespaces, the real collector, faults
injected with the kernel's own tools, events read back.

    gom_live.py --plan plan.json --prefix aif- --state DIR [--campaign small|full] [--rate 10]

1. Plans the 1-identifiable probes asking the spines' kernels for each source port (gom.py KernelOracle), to UDP 4792.
2. Starts the collector (plugins/module_utils/gom/collector.py, a Unix socket under DIR, the events file, lock marker
   directories DIR/markers/<switch>) and one agent per GPU host (``ip netns exec <host ns> python3 agent.py``).
3. Per fault, one at a time: ``ip link set <dev> down`` on the link's switch end (a leaf-spine cable is named
   from the routers' port state, ``--link-state SWITCH="ip -n NS -j link show"``, as ``link_down``); loss with an nftables netdev egress
   chain on that device (``numgen random mod 100 < P drop`` on UDP only, so BGP keeps its sessions); congestion with
   ``tc qdisc ... tbf`` on the device while a UDP load crosses it. Measures the time from injection to the first
   event naming the link (detection: the collector's ``detected``; localisation: ``localised``), the link(s) named,
   and any other event (a false alarm). Between faults the fault is removed and the collector's ``recovered``
   awaited.
4. A fault during a planned drain: a drain record (nos/devicelock.py's own naming) in the switch's marker directory
   while the fault is on: the event must be ``maintenance``.
Prints one JSON document (per fault rows, summary); exit 1 when a Done-when figure of issue 38 is missed.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, HERE)
from ansible_collections.aifabric.roce.plugins.module_utils.gom import identify, probes as gom  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.nos.devicelock import new_tag  # noqa: E402
import gom as gom_check  # noqa: E402  (tests/lab/twin/gom.py: the kernel oracle)
import paths  # noqa: E402

GOM = os.path.join(ROOT, "plugins", "module_utils", "gom")
DPORT = gom.GOM_UDP_PORT
NFT_TABLE = "aifgomfault"


def sh(*args, check=True, stdin=None):
    out = subprocess.run(args, capture_output=True, text=True, input=stdin, check=False)
    if check and out.returncode:
        raise RuntimeError("%s: %s" % (" ".join(args), out.stderr.strip()))
    return out


class Live(object):
    def __init__(self, plan, prefix, state, rate=10.0):
        self.plan, self.prefix, self.state, self.rate = plan, prefix, state, rate
        self.twin = paths.Twin(plan, prefix)
        self.procs = []
        self.events_path = os.path.join(state, "events.jsonl")
        self.markers = os.path.join(state, "markers")
        self.http = ""      # HOST:PORT of the collector's /metrics (tools/bench_gor.py: Prometheus scrapes it); "" none
        self.seen = 0

    def ns(self, name):
        return self.prefix + name

    def plan_probes(self):
        model = gom.LinkModel(self.plan)
        oracle = gom_check.KernelOracle(self.twin, model)
        started = time.monotonic()
        for attempt in range(15):
            try:
                self.report = identify.plan_identifiable(self.plan, dport=DPORT, oracle=oracle)
                break
            except RuntimeError:
                # sessions are up but a spine has not installed every route yet ("Network is unreachable")
                if attempt == 14:
                    raise
                time.sleep(2)
        self.plan_seconds = time.monotonic() - started
        os.makedirs(self.state, exist_ok=True)
        with open(os.path.join(self.state, "probes.json"), "w") as handle:
            json.dump({"probes": self.report["probes"], "uncovered": self.report["uncovered"]}, handle)
        with open(os.path.join(self.state, "plan.json"), "w") as handle:
            json.dump(self.plan, handle)
        return self.report

    def start(self):
        os.makedirs(self.state, exist_ok=True)
        if os.path.exists(self.events_path):
            os.unlink(self.events_path)
        sock = os.path.join(self.state, "ingest.sock")
        cmd = [sys.executable, os.path.join(GOM, "collector.py"), "--plan", os.path.join(self.state, "plan.json"),
               "--probes", os.path.join(self.state, "probes.json"), "--listen", "unix:" + sock, "--http", self.http,
               "--events", self.events_path, "--rate", str(self.rate)]
        for switch in sorted(set(self.plan["leafs"]) | set(self.plan["spines"])):
            os.makedirs(os.path.join(self.markers, switch), exist_ok=True)
            cmd += ["--markers", "%s=%s" % (switch, os.path.join(self.markers, switch))]
            # the routers' own port state, as iproute2 prints it (a Linux-based NOS: the same command over ssh)
            cmd += ["--link-state", "%s=ip -n %s -j link show" % (switch, self.ns(switch))]
        cmd += ["--link-state-interval", "0.5"]
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, ".collections"))
        # the instrument must not be what loses (as tools/bench_rollout.py's probes): above the machine's other work
        urgent = ["nice", "-n", "-10"] if os.geteuid() == 0 else []
        self.collector = subprocess.Popen(urgent + cmd, env=env, stdout=subprocess.DEVNULL,
                                          stderr=open(os.path.join(self.state, "collector.log"), "w"))
        self.procs.append(self.collector)
        for _n in range(50):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        by_host = gom.by_host(self.report)
        for host, record in sorted(self.plan["hosts"].items()):
            config = {"host": host, "collector": "unix:" + sock, "rate": self.rate, "dport": DPORT,
                      "addresses": [nic["address"] for nic in record["nics"]], "probes": by_host.get(host, [])}
            path = os.path.join(self.state, "agent-%s.json" % host)
            with open(path, "w") as handle:
                json.dump(config, handle)
            self.procs.append(subprocess.Popen(
                urgent + ["ip", "netns", "exec", self.ns(host), sys.executable, os.path.join(GOM, "agent.py"), "--config", path],
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.state, "agent-%s.log" % host), "w")))

    def record(self, row):
        """Appends a campaign row to <state>/rows.jsonl as it is measured (a cut-short run keeps what it measured)."""
        with open(os.path.join(self.state, "rows.jsonl"), "a") as handle:
            handle.write(json.dumps(row, sort_keys=True) + "\n")

    def stop(self):
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs = []

    def new_events(self):
        if not os.path.exists(self.events_path):
            return []
        with open(self.events_path) as handle:
            lines = handle.read().splitlines()
        out = [json.loads(line) for line in lines[self.seen:]]
        self.seen = len(lines)
        return out

    # ---- faults ------------------------------------------------------------------------------------------------
    def end(self, link):
        """(namespace, device) of the link's sending end."""
        dev, port = link.split(">")[0].split(":", 1)
        return self.ns(dev), port

    def switch_end(self, link):
        """(namespace, device) of the link's switch end nearest the hosts (a cable is taken down there: on a host,
        ``ip link set down`` would also flush the host's routes through it, which no cable cut does)."""
        ends = [x.split(":", 1) for x in link.split(">")]
        for dev, port in ends:
            if dev in self.plan["leafs"]:
                return self.ns(dev), port
        return self.ns(ends[0][0]), ends[0][1]

    def inject(self, kind, link, value=None):
        ns, dev = self.end(link)
        if kind == "down":
            ns, dev = self.switch_end(link)
            sh("ip", "-n", ns, "link", "set", dev, "down")
        elif kind == "loss":
            rate = "" if int(value) >= 100 else "numgen random mod 100 < %d " % int(value)
            rule = ("table netdev %s {\n chain egress {\n  type filter hook egress device \"%s\" priority 0;\n"
                    "  meta l4proto udp %sdrop\n }\n}\n" % (NFT_TABLE, dev, rate))
            sh("ip", "netns", "exec", ns, "nft", "-f", "-", stdin=rule)
        elif kind == "congestion":
            sh("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", value,
               "burst", "4kb", "latency", "20ms")
        else:
            raise ValueError(kind)

    def clear(self, kind, link):
        ns, dev = self.end(link)
        if kind == "down":
            ns, dev = self.switch_end(link)
            sh("ip", "-n", ns, "link", "set", dev, "up")
        elif kind == "loss":
            sh("ip", "netns", "exec", ns, "nft", "delete", "table", "netdev", NFT_TABLE, check=False)
        elif kind == "congestion":
            sh("ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root", check=False)

    def drain_record(self, switch, on):
        """A drain record as switch_config writes it (``<tag>-d`` beside the run's marker), or removed."""
        directory = os.path.join(self.markers, switch)
        if on:
            tag = new_tag()
            for name in (tag, tag + "-d"):
                with open(os.path.join(directory, "aifabric-lock." + name), "w") as handle:
                    handle.write("controller=gomtwin machine=test user=root\n")
        else:
            for name in os.listdir(directory):
                os.unlink(os.path.join(directory, name))

    def load(self, link, seconds):
        """A UDP load across the link: from a host NIC whose probes cross it, to the destination of such a probe."""
        sig = [p for p in self.report["probes"] if link in p["path"]]
        probe = sig[0]
        return subprocess.Popen(
            ["ip", "netns", "exec", self.ns(probe["src_host"]), sys.executable, os.path.join(HERE, "probe.py"), "udp",
             "--src", probe["src_address"], "--dst", probe["dst_address"], "--sports", "40000-40049",
             "--count", str(int(seconds * 400)), "--dport", "9"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_quiet(live, seconds, limit=40.0):
    """Waits until no event came for ``seconds`` (open faults recovered); returns the events seen."""
    seen, last = [], time.monotonic()
    end = time.monotonic() + limit
    while time.monotonic() < end:
        new = live.new_events()
        if new:
            seen.extend(new)
            last = time.monotonic()
        elif time.monotonic() - last >= seconds:
            break
        time.sleep(0.2)
    return seen


def expected_links(kind, link):
    """The directed links a fault takes out: a cable down fails both directions; loss and congestion one."""
    if kind != "down":
        return {link}
    a, b = link.split(">")
    return {link, "%s>%s" % (b, a)}


def one_fault(live, kind, link, value=None, timeout=40.0, drain=None):
    expected = expected_links(kind, link)
    if drain:
        live.drain_record(drain, True)
        time.sleep(1.5)     # the collector re-reads the markers every second
    injected = time.time()
    live.inject(kind, link, value)
    events = []
    named = set()
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in live.new_events():
                events.append(event)
                if event["kind"] in ("link_fault", "link_down", "maintenance", "switch_fault", "unlocalised"):
                    named |= set(event["links"] or [])
            if named >= expected or (drain and any(e["kind"] == "maintenance" for e in events)):
                time.sleep(0.5)
                events.extend(live.new_events())
                break
            time.sleep(0.1)
    finally:
        live.clear(kind, link)
        if drain:
            time.sleep(0.5)
    after = wait_quiet(live, 2.5)
    if drain:
        live.drain_record(drain, False)
        time.sleep(2.0)     # the switch stays under maintenance until its probes are clean for 1 s (docs/gom.md)
    events.extend(after)
    faults = [e for e in events if e["kind"] != "recovered"]
    mine = [e for e in faults if set(e["links"] or []) & expected]
    others = [e for e in faults if not set(e["links"] or []) & expected]
    row = {"kind": kind, "value": value, "link": link, "expected": sorted(expected), "drain": drain,
           "named": sorted(set(x for e in mine for x in e["links"] or [])),
           "events": [e["kind"] for e in faults], "false_alarms": len(others),
           "false": [(e["kind"], e["links"]) for e in others]}
    if mine:
        row["detect_s"] = round(min(e["detected"] for e in mine) - injected, 2)
        row["localise_s"] = round(max(e["localised"] for e in mine if e["localised"]) - injected, 2) if any(
            e["localised"] for e in mine) else None
        # a maintenance event names every failing link of the switch under maintenance (not localised: nothing pages)
        row["exact"] = all(e["kind"] in (("maintenance",) if drain else ("link_fault", "link_down")) for e in mine) and \
            (drain or set(x for e in mine for x in e["links"] or []) <= expected) and set(row["named"]) >= expected
    else:
        row.update(detect_s=None, localise_s=None, exact=False)
    return row


def link_classes(report):
    """Every directed link of the plan by class (host_up, host_down, leaf_up, spine_down)."""
    out = {}
    hosts = set(p["src_host"] for p in report["probes"]) | set(p["dst_host"] for p in report["probes"])
    for link in sorted(set(x for p in report["probes"] for x in p["path"])):
        a, b = link.split(">")
        if a.split(":")[0] in hosts:
            kind = "host_up"
        elif b.split(":")[0] in hosts:
            kind = "host_down"
        elif a.split(":")[0].startswith("leaf"):
            kind = "leaf_up"
        else:
            kind = "spine_down"
        out.setdefault(kind, []).append(link)
    return out


def quiet(live, seconds, burners):
    """No fault for ``seconds`` while ``burners`` busy processes (one per core and more: a loaded machine) compete
    with the agents and the collector: every event is a false alarm."""
    spin = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _n in range(burners)]
    started = time.time()
    try:
        time.sleep(seconds)
    finally:
        for proc in spin:
            proc.terminate()
        for proc in spin:
            proc.wait()
    events = [e for e in live.new_events() if e["kind"] != "recovered"]
    return {"kind": "quiet", "value": burners, "link": None, "seconds": round(time.time() - started, 1), "drain": None,
            "expected": [], "named": [], "events": [e["kind"] for e in events], "false_alarms": len(events),
            "false": [(e["kind"], e["links"]) for e in events], "exact": not events, "detect_s": None, "localise_s": None,
            "load": os.getloadavg()[0]}


def campaign(live, which, seed=5):
    rng = random.Random(seed)
    if which.startswith("quiet"):
        # quiet[:SECONDS[:BURNERS]]: no fault, the machine loaded
        parts = (which.split(":") + ["", ""])[1:3]
        row = quiet(live, float(parts[0] or 120), int(parts[1] or 2 * (os.cpu_count() or 2)))
        live.record(row)
        return [row]
    classes = link_classes(live.report)
    rows = []
    downs = []
    if which in ("cables", "loss2"):
        # every cable down (host and leaf-spine: both directions each), or 2 % loss on 4 links per class
        plan, drains = [], []
        if which == "cables":
            downs = [("down", link, None) for cls in ("host_up", "leaf_up") for link in classes[cls]]
        else:
            plan = [("loss", link, 2) for cls in sorted(classes) for link in rng.sample(classes[cls], 4)]
    elif which == "drains":
        plan = []
        drains = [("loss", rng.choice(classes[c]), 100) for c in sorted(classes)]
    elif which == "small":
        # CI: one link per class, 100 % loss and link down on a host link, 20 % on a fabric link, one drain, one
        # leaf-spine cable down
        picks = [(rng.choice(classes[c]), c) for c in sorted(classes)]
        plan = [("loss", link, 100) for link, _c in picks]
        plan += [("down", [link for link, c in picks if c == "host_up"][0], None),
                 ("loss", [link for link, c in picks if c == "leaf_up"][0], 20)]
        drains = [("loss", [link for link, c in picks if c == "spine_down"][0], 100)]
        # a leaf-spine cable, last (see below): named from the routers' port state as link_down
        downs = [("down", [link for link, c in picks if c == "leaf_up"][0], None)]
    else:
        # "full", "class:A[,B]" (every kind on those classes), "loss:A[,B]" (100 % and 20 % loss only, then the drains)
        kind_of_run, _sep, names = which.partition(":")
        only = set(names.split(",")) if names else None
        plan, downs = [], []
        for cls in sorted(classes):
            if only and cls not in only:
                continue
            for link in classes[cls]:
                plan.append(("loss", link, 100))
                plan.append(("loss", link, 20))
                if cls in ("host_up", "leaf_up") and kind_of_run != "loss":     # a cable: both directions, once
                    downs.append(("down", link, None))
            if kind_of_run == "loss":
                continue
            for link in rng.sample(classes[cls], min(4, len(classes[cls]))):
                plan.append(("loss", link, 2))
            plan.append(("congestion", rng.choice(classes[cls]), "1mbit"))
        drains = [("loss", rng.choice(classes[c]), 100) for c in sorted(classes) if not only or kind_of_run == "loss"]
    for kind, link, value in plan:
        if kind == "congestion":
            load = live.load(link, 20)
            try:
                rows.append(one_fault(live, kind, link, value, timeout=20))
                live.record(rows[-1])
            finally:
                load.terminate()
                load.wait()
            continue
        rows.append(one_fault(live, kind, link, value, timeout=60 if value == 2 else (12 if kind == "down" else 30)))
        live.record(rows[-1])
    for kind, link, value in drains:
        switch = [x.split(":")[0] for x in link.split(">") if not x.split(":")[0] in live.plan["hosts"]][0]
        rows.append(one_fault(live, kind, link, value, timeout=15, drain=switch))
        live.record(rows[-1])
    # cables last (after the drains): a fabric cable taken down and up makes BGP re-install the spines' routes, and the
    # kernel's ECMP may then map the planned source ports to other parallel links: the plan asked before is stale
    for kind, link, value in downs:
        rows.append(one_fault(live, kind, link, value, timeout=12))
        live.record(rows[-1])
    return rows


def summary(rows):
    def figures(selected, key):
        values = [r[key] for r in selected if r.get(key) is not None]
        return {"n": len(selected), "exact": sum(1 for r in selected if r["exact"]),
                "median_s": round(statistics.median(values), 2) if values else None,
                "worst_s": round(max(values), 2) if values else None}
    out = {}
    for name, select in (("down", lambda r: r["kind"] == "down" and not r["drain"]),
                         ("loss100", lambda r: r["kind"] == "loss" and r["value"] == 100 and not r["drain"]),
                         ("loss20", lambda r: r["kind"] == "loss" and r["value"] == 20),
                         ("loss2", lambda r: r["kind"] == "loss" and r["value"] == 2),
                         ("congestion", lambda r: r["kind"] == "congestion"),
                         ("drain", lambda r: bool(r["drain"]))):
        chosen = [r for r in rows if select(r)]
        if chosen:
            out[name] = dict(figures(chosen, "localise_s"), detect_median_s=figures(chosen, "detect_s")["median_s"])
    out["false_alarms"] = sum(r["false_alarms"] for r in rows)
    for row in rows:
        if row["kind"] == "quiet":
            out["quiet"] = {"seconds": row["seconds"], "burners": row["value"], "load": round(row["load"], 1),
                            "false_alarms": row["false_alarms"]}
    return out


def misses(result):
    """Done-when of issue 38 on this run: [what missed]."""
    out = []
    s = result["summary"]
    for name, median, worst in (("down", 1.0, 2.0), ("loss100", 1.0, 2.0), ("loss20", 1.0, 2.0), ("loss2", 30.0, 30.0)):
        fig = s.get(name)
        if not fig:
            continue
        if fig["exact"] != fig["n"]:
            out.append("%s: %d of %d faults named exactly" % (name, fig["exact"], fig["n"]))
        if fig["median_s"] is None or fig["median_s"] > median or fig["worst_s"] > worst:
            out.append("%s: median %s s, worst %s s (target <= %g / %g s)" % (name, fig["median_s"], fig["worst_s"],
                                                                              median, worst))
    if s.get("drain") and s["drain"]["exact"] != s["drain"]["n"]:
        out.append("drain: %d of %d faults during a drain reported as maintenance" % (s["drain"]["exact"], s["drain"]["n"]))
    if s["false_alarms"]:
        out.append("%d false alarms" % s["false_alarms"])
    return out


def run(plan, prefix, state, which="small", rate=10.0, settle=4.0):
    live = Live(plan, prefix, state, rate)
    os.makedirs(state, exist_ok=True)
    live.plan_probes()
    live.start()
    try:
        time.sleep(settle)
        baseline = [e for e in live.new_events() if e["kind"] != "recovered"]
        rows = campaign(live, which)
    finally:
        live.stop()
    result = {"probes": live.report["count"], "plan_seconds": round(live.plan_seconds, 2),
              "identifiable": live.report["identifiable"], "baseline_events": baseline, "rows": rows,
              # every directed link of the plan this run probed with, and those its probes cross
              "links_all": sorted(gom.LinkModel(plan).links),
              "links_crossed": sorted(set(link for p in live.report["probes"] for link in p["path"])),
              "uncovered": live.report["uncovered"], "uncovered_why": live.report["uncovered_why"]}
    result["summary"] = summary(rows)
    result["summary"]["false_alarms"] += len(baseline)
    result["missed"] = misses(result)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--plan", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--campaign", default="small", help="small, full, class:<link class> (full, one class), "
                        "loss:<classes>, drains, cables, loss2, or quiet[:seconds[:burners]] (no fault, the machine loaded)")
    parser.add_argument("--rate", type=float, default=10.0)
    args = parser.parse_args(argv)
    with open(args.plan) as handle:
        plan = json.load(handle)
    result = run(plan, args.prefix, args.state, args.campaign, args.rate)
    print(json.dumps(result, indent=1, sort_keys=True))
    return 1 if result["missed"] else 0


if __name__ == "__main__":
    sys.exit(main())
