"""What a switch rollout costs the traffic, measured on the routed twin (issue 18 item 5): `make bench-rollout`.

The lab fabric's twin (FRR 8.4 leafs and spines in network namespaces, tests/lab/twin/twin.py) is converged with
playbooks/site.yml. Then probes run between every pair of hosts on every rail (same-rail traffic, which stays on
its rail's leaf) and from each host to the next host on the next rail (cross-rail traffic, through the spines),
while site.yml rolls a change out to every switch: the underlay's BGP timers (keepalive/hold), a change the drain
treats as one that can disturb forwarding. The rollout runs twice, once with the maintenance drain off
(switch_drain=never), once on (auto: spines drained) and once on everywhere (always: leafs too), each changing
the timers (3/9 -> 4/12 -> 3/9 -> 4/12).

Every lost probe is attributed, by its send time, to the switch whose change window (the role task of its batch,
from the ansible.posix.json callback) holds it, or to none. Per rail: probes lost while the rail's own leaf
changed, and while any other switch changed (target: 0); cross-rail losses per switch. Exits 1 when a rail lost
a probe while its leaf was not being changed, or when the rail's own leaf cost more than OWN_LEAF_GAP_MS.
Needs root and FRR. Usage: bench_rollout.py [--interval 0.02] [--keep]
"""

import argparse
import calendar
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN_DIR = os.path.join(ROOT, "tests", "lab", "twin")
TWIN = os.path.join(TWIN_DIR, "twin.py")
PROBE = os.path.join(TWIN_DIR, "probe.py")
BIN = os.path.dirname(sys.executable)
OFFSET = int(os.environ.get("AIFABRIC_BENCH_PORT_OFFSET", "800"))
PREFIX = "aifr%d-" % OFFSET
TASK = "Reconcile RoCE QoS, port MTU and port binding with the plan"
OWN_LEAF_GAP_MS = 1000      # longest same-rail gap while the rail's own leaf changes
GRACE_S = 2.0               # a loss this long after a window's end still belongs to it (BGP settles)


def flows(plan):
    """[(kind, rail, src host, src address, dst address)]: every host pair on every rail, and each host to
    the next host on the next rail."""
    hosts = sorted(plan["hosts"])
    nic = dict(((h, n["rail"]), n["address"]) for h in hosts for n in plan["hosts"][h]["nics"])
    rails = sorted(set(r for _h, r in nic))
    out = []
    for rail in rails:
        for a, b in itertools.combinations(hosts, 2):
            out.append(("same-rail", rail, a, nic[(a, rail)], nic[(b, rail)]))
    for i, a in enumerate(hosts):
        rail, b = rails[i % len(rails)], hosts[(i + 1) % len(hosts)]
        nxt = rails[(i + 1) % len(rails)]
        out.append(("cross-rail", rail, a, nic[(a, rail)], nic[(b, nxt)]))
    return out


def verdict(figures):
    """The targets a rollout's figures miss (empty: met)."""
    missed = []
    for rail, rec in figures["per_rail"].items():
        if rec["other_lost"]:
            missed.append("rail %s lost %d probe(s) while its leaf was not changing: %s" % (rail, rec["other_lost"], rec["other"]))
        if rec["longest_gap_ms"] > OWN_LEAF_GAP_MS:
            missed.append("rail %s: longest gap %.0f ms over %d ms" % (rail, rec["longest_gap_ms"], OWN_LEAF_GAP_MS))
    return missed


def site_yml(state, *args):
    env = dict(((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_")),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PYTHONPATH=os.path.join(ROOT, ".collections"),
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    proc = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", os.path.join(state, "inventory.yml"),
                           os.path.join(ROOT, "playbooks", "site.yml")] + list(args),
                          capture_output=True, text=True, env=env, check=False)
    if proc.returncode:
        raise RuntimeError("site.yml failed:\n%s%s" % (proc.stdout[-4000:], proc.stderr[-2000:]))
    return json.loads(proc.stdout[proc.stdout.index("{"):])


def _epoch(stamp):
    # "2026-11-24T20:41:03.123456Z"
    whole, _dot, frac = stamp.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + float("0." + (frac or "0"))


def windows(result):
    """{switch: (start, end, task result)} of the switch role task, one per serial batch."""
    out = {}
    for play in result["plays"]:
        for task in play["tasks"]:
            if not task["task"]["name"].endswith(TASK):
                continue
            span = (_epoch(task["task"]["duration"]["start"]), _epoch(task["task"]["duration"]["end"]))
            for host, res in task["hosts"].items():
                out[host] = span + (res,)
    return out


def owner(when, spans):
    for name, (start, end, _res) in spans.items():
        if start - 0.5 <= when <= end + GRACE_S:
            return name
    return None


def rollout(state, plan, fabric, timers, drain, interval, prefix=None):
    """Roll the timers change out with probes running; returns the per-rail figures."""
    change = dict(fabric, underlay=dict(fabric.get("underlay") or {}, keepalive_seconds=timers[0], hold_seconds=timers[1]))
    extra = os.path.join(state, "change.json")
    with open(extra, "w") as handle:
        json.dump({"fabric": change, "switch_drain": drain, "switch_drain_wait": 3}, handle)
    stop = os.path.join(state, "stop-probes")
    if os.path.exists(stop):
        os.unlink(stop)
    procs = []
    # the instrument must not be what loses: a probe starved of CPU past its reply timeout counts a loss the
    # fabric never had, so as root (CI, the twin) the probes run at a higher priority than the machine's other work
    urgent = ["nice", "-n", "-10"] if os.geteuid() == 0 else []
    for kind, rail, host, src, dst in flows(plan):
        cmd = urgent + ["ip", "netns", "exec", (prefix or PREFIX) + host, "python3", PROBE, "watch", "--src", src,
                        "--dst", dst, "--seconds", "900", "--interval", str(interval), "--until", stop, "--losses",
                        "--reply-timeout", "1.0"]
        procs.append(((kind, rail, host, src, dst), subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)))
    time.sleep(3)   # probes steady (ARP resolved) before the change
    started = time.time()
    try:
        result = site_yml(state, "--tags", "plan,switches", "-e", "@" + extra)
    finally:
        time.sleep(GRACE_S + 1)
        open(stop, "w").close()
    took = time.time() - started
    spans = windows(result)
    leaf_of_rail = dict((lf["rail"], name) for name, lf in plan["leafs"].items())
    per_rail, cross, sent, warmup = {}, {}, 0, 0
    for (kind, rail, host, src, dst), proc in procs:
        figures = json.loads(proc.communicate(timeout=60)[0])
        sent += figures["sent"]
        for when in figures["lost_at"]:
            if when < started:   # before site.yml started: the probes' own start (neighbour resolution), not the rollout
                warmup += 1
                continue
            who = owner(when, spans)
            if kind == "same-rail":
                rec = per_rail.setdefault(rail, {"own_leaf_lost": 0, "other_lost": 0, "longest_gap_ms": 0.0,
                                                 "other": {}})
                if who == leaf_of_rail[rail]:
                    rec["own_leaf_lost"] += 1
                else:
                    rec["other_lost"] += 1
                    rec["other"][who or "no change"] = rec["other"].get(who or "no change", 0) + 1
            else:
                cross[who or "no change"] = cross.get(who or "no change", 0) + 1
        if kind == "same-rail":
            rec = per_rail.setdefault(rail, {"own_leaf_lost": 0, "other_lost": 0, "longest_gap_ms": 0.0, "other": {}})
            rec["longest_gap_ms"] = max(rec["longest_gap_ms"], figures["longest_gap_ms"])
    drained = dict((name, res.get("drained")) for name, (_s, _e, res) in spans.items() if res.get("drained"))
    changed = sorted(name for name, (_s, _e, res) in spans.items() if res.get("changed"))
    return {"drain": drain, "timers": list(timers), "rollout_s": round(took, 1), "switches_changed": changed,
            "probes_sent": sent, "warmup_lost": warmup, "per_rail": dict((str(k), v) for k, v in sorted(per_rail.items())),
            "cross_rail_lost_by_switch": cross, "drained": drained}


def established(plan, prefix=None):
    prefix = prefix or PREFIX
    up = total = 0
    for group in ("leafs", "spines"):
        for name in plan[group]:
            out = subprocess.run(["ip", "netns", "exec", prefix + name, "vtysh", "-N", prefix + name, "-c",
                                  "show bgp ipv4 unicast summary json"], capture_output=True, text=True, check=False)
            peers = json.loads(out.stdout or "{}").get("peers", {})
            total += len(peers)
            up += sum(1 for p in peers.values() if p["state"] == "Established")
    return up, total


def wait_established(plan, limit=120, prefix=None):
    end = time.time() + limit
    while time.time() < end:
        up, total = established(plan, prefix)
        if total and up == total:
            return True
        time.sleep(1)
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--interval", type=float, default=0.02)
    ap.add_argument("--keep", action="store_true", help="leave the twin up afterwards")
    args = ap.parse_args()
    state = tempfile.mkdtemp(prefix="twin-rollout-")
    base = ["--state", state, "--ns-prefix", PREFIX, "--base-port", str(27000 + OFFSET)]
    up = [sys.executable, TWIN, "up"] + base + ["--inventory", os.path.join(ROOT, "inventories", "lab")]
    subprocess.run(up, check=True, capture_output=True, text=True)
    ok = True
    try:
        with open(os.path.join(state, "plan", "plan.json")) as handle:
            plan = json.load(handle)
        import yaml
        with open(os.path.join(state, "inventory.yml")) as handle:
            fabric = yaml.safe_load(handle)["all"]["vars"]["fabric"]
        site_yml(state)   # hosts (where the twin's inventory has them) and switches
        if not wait_established(plan):
            raise RuntimeError("BGP did not converge on the twin")
        runs = []
        # drain off, on (spines), on everywhere (leafs too): the timers change each time
        for drain, timers in (("never", (4, 12)), ("auto", (3, 9)), ("always", (4, 12))):
            figures = rollout(state, plan, fabric, timers, drain, args.interval)
            wait_established(plan)
            figures["missed"] = missed = verdict(figures)
            ok = ok and not missed
            print(json.dumps(figures, sort_keys=True), flush=True)
            runs.append(figures)
    finally:
        if not args.keep:
            subprocess.run([sys.executable, TWIN, "down"] + base, capture_output=True, check=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
