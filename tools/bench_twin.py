# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Routed twin benchmark: bring-up, configuration by the frr driver, BGP convergence, memory, and
(lab) PPD failover, for the lab and rail512 plans. Prints one JSON line per fabric; exits
non-zero when a target is missed. Needs root and FRR. Usage: bench_twin.py [lab] [rail512]

Targets (2-core machine shared with other work): lab ready (up + configure + all sessions
Established) in 60 s, rail512 in 180 s; lab failover (tests/lab/twin/failover.py), each scenario
run FAILOVER_RUNS times: bound uplink down -> gap under 1 s with no more than 5 % loss; bound
spine loses the destination leaf -> traffic arrives again within 1 s of the failure (worst run).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN = os.path.join(ROOT, "tests", "lab", "twin", "twin.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "twin"))
import failover  # noqa: E402  (tests/lab/twin/failover.py)

FAILOVER_RUNS = 3
RECOVERY_TARGET_MS = 1000
FABRICS = {
    "lab": {"args": ["--inventory", os.path.join(ROOT, "inventories", "lab")], "target_s": 60},
    # rail512's port names (Ethernet1/1) are not Linux interface names: Cumulus-style names instead
    "rail512": {"args": ["--inventory", os.path.join(ROOT, "inventories", "rail512"), "--port-name", "swp{port}s{lane}"],
                "target_s": 180},
}
OFFSET = int(os.environ.get("AIFABRIC_TEST_PORT_OFFSET", "0"))
PREFIX = "aifb%d-" % OFFSET    # one bench twin per port offset: parallel runs do not meet


def sh(ns, *args):
    return subprocess.run(["ip", "netns", "exec", PREFIX + ns] + list(args), capture_output=True, text=True, check=True).stdout


def established(plan):
    total = up = 0
    for group in ("leafs", "spines"):
        for name in plan[group]:
            peers = json.loads(sh(name, "vtysh", "-N", PREFIX + name, "-c", "show bgp ipv4 unicast summary json")).get("peers", {})
            total += len(peers)
            up += sum(1 for p in peers.values() if p["state"] == "Established")
    return up, total


def failover_figures(plan):
    """Both failure scenarios, FAILOVER_RUNS times each, and whether the targets hold."""
    out, ok = {}, True
    for scenario in ("uplink_down", "spine_loses_leaf"):
        runs = []
        for _run in range(FAILOVER_RUNS):
            runs.append(getattr(failover, scenario)(plan, PREFIX))
            time.sleep(3)      # BGP back to steady state before the next run
        keep = ("sent", "lost", "longest_gap_ms", "recovery_ms")
        out[scenario] = [dict((k, r[k]) for k in keep) for r in runs]
        if scenario == "uplink_down":
            ok = ok and all(r["longest_gap_ms"] < 1000 and r["lost"] <= r["sent"] * 0.05 for r in runs)
        else:
            ok = ok and all(r["recovery_ms"] is not None and r["recovery_ms"] < RECOVERY_TARGET_MS for r in runs)
    return out, ok


def bench(fabric):
    spec = FABRICS[fabric]
    state = tempfile.mkdtemp(prefix="twin-bench-")
    base = ["--state", state, "--ns-prefix", PREFIX, "--base-port", str(26000 + OFFSET)]
    started = time.monotonic()
    try:
        subprocess.run([sys.executable, TWIN, "up", "--configure"] + base + spec["args"], check=True, capture_output=True, text=True)
        with open(os.path.join(state, "plan", "plan.json")) as handle:
            plan = json.load(handle)
        with open(os.path.join(state, "twin.json")) as handle:
            record = json.load(handle)
        while True:
            up, total = established(plan)
            if up == total == 2 * sum(len(lf["uplinks"]) for lf in plan["leafs"].values()) or time.monotonic() - started > 600:
                break
            time.sleep(1)
        ready = time.monotonic() - started
        out = {"fabric": fabric, "routers": len(plan["leafs"]) + len(plan["spines"]), "hosts": len(plan["hosts"]),
               "sessions_established": up, "sessions_planned": total, "up_s": record["up_seconds"],
               "configure_s": record["configure_seconds"], "ready_s": round(ready, 1),
               "frr_and_sshd_pss_mib": round(record["memory_kib"] / 1024.0, 1),
               "frr_and_sshd_rss_mib": round(record["memory_rss_kib"] / 1024.0, 1), "target_s": spec["target_s"]}
        ok = up == total and ready <= spec["target_s"]
        if fabric == "lab":
            out["failover"], failover_ok = failover_figures(plan)
            ok = ok and failover_ok
        out["ok"] = ok
        print(json.dumps(out))
        return ok
    finally:
        subprocess.run([sys.executable, TWIN, "down"] + base, capture_output=True, check=False)


def main():
    fabrics = sys.argv[1:] or ["lab", "rail512"]
    results = [bench(f) for f in fabrics]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
