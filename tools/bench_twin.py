# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Routed twin benchmark: bring-up, converge with the product's playbooks/site.yml (plan role + switch
play, frr driver over SSH, forks from ansible.cfg), BGP convergence, memory, and (lab) PPD failover,
for the lab and rail512 plans. Prints one JSON line per fabric; exits non-zero when a target is missed.
Needs root and FRR. Usage: bench_twin.py [lab] [rail512]

rail512's inventory says platform eos: as twin.py does, the twin plans it with the routers as
platform frr (same fabric, the frr driver) and Linux port names (``--port-name swp{port}s{lane}``).

Targets (2-core machine shared with other work), per fabric: twin up (namespaces, links, daemons,
sshd) ``up_s``, site.yml converge ``converge_s``, all planned sessions Established counted from the
start ``ready_s``, RSS of the FRR daemons and the twin's sshd ``rss_mib`` (about 2.5 times the figures
measured on 2026-11-23, docs/twin.md, to absorb a loaded machine); lab failover (tests/lab/twin/failover.py),
each scenario run FAILOVER_RUNS times: bound uplink down -> gap under 1 s with no more than 5 % loss;
bound spine loses the destination leaf -> traffic arrives again within 1 s of the failure (worst run).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN_DIR = os.path.join(ROOT, "tests", "lab", "twin")
TWIN = os.path.join(TWIN_DIR, "twin.py")
BIN = os.path.dirname(sys.executable)
OFFSET = int(os.environ.get("AIFABRIC_TEST_PORT_OFFSET", "0"))
PREFIX = "aifb%d-" % OFFSET   # the bench's own namespaces: never a test's (aift...) or make twin-up's (aif-)
sys.path.insert(0, TWIN_DIR)
import failover  # noqa: E402  (tests/lab/twin/failover.py)

FAILOVER_RUNS = 3
RECOVERY_TARGET_MS = 1000
FABRICS = {
    "lab": {"args": ["--inventory", os.path.join(ROOT, "inventories", "lab")],
            "targets": {"up_s": 15, "converge_s": 60, "ready_s": 75, "rss_mib": 400}},
    # rail512's port names (Ethernet1/1) are not Linux interface names: Cumulus-style names instead
    "rail512": {"args": ["--inventory", os.path.join(ROOT, "inventories", "rail512"), "--port-name", "swp{port}s{lane}"],
                "targets": {"up_s": 30, "converge_s": 120, "ready_s": 150, "rss_mib": 1024}},
}


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


def site_yml(state):
    """playbooks/site.yml on the twin's inventory (the production path); returns its recap."""
    env = dict(((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_")),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PYTHONPATH=os.path.join(ROOT, ".collections"),
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_NOCOLOR="1")
    out = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", os.path.join(state, "inventory.yml"),
                          os.path.join(ROOT, "playbooks", "site.yml")], capture_output=True, text=True, env=env, check=False)
    if out.returncode:
        raise RuntimeError("site.yml failed:\n%s%s" % (out.stdout[-3000:], out.stderr[-2000:]))
    return out.stdout


def bench(fabric):
    spec = FABRICS[fabric]
    state = tempfile.mkdtemp(prefix="twin-bench-")
    base = ["--state", state, "--ns-prefix", PREFIX, "--base-port", str(26000 + OFFSET)]
    started = time.monotonic()
    try:
        # --host-config: hosts configured by the twin, routers by site.yml (the figures of docs/twin.md)
        subprocess.run([sys.executable, TWIN, "up", "--host-config"] + base + spec["args"], check=True, capture_output=True,
                       text=True)
        up_s = time.monotonic() - started
        with open(os.path.join(state, "plan", "plan.json")) as handle:
            plan = json.load(handle)
        t1 = time.monotonic()
        site_yml(state)
        converge_s = time.monotonic() - t1
        while True:
            up, total = established(plan)
            if up == total == 2 * sum(len(lf["uplinks"]) for lf in plan["leafs"].values()) or time.monotonic() - started > 600:
                break
            time.sleep(1)
        ready = time.monotonic() - started
        sys.path.insert(0, TWIN_DIR)
        import twin as twin_lab   # pid-file based: exactly the twin's daemons and its sshd
        with open(os.path.join(state, "twin.json")) as handle:
            record = json.load(handle)
        out = {"fabric": fabric, "routers": len(plan["leafs"]) + len(plan["spines"]), "hosts": len(plan["hosts"]),
               "sessions_established": up, "sessions_planned": total, "up_s": round(up_s, 1),
               "converge_s": round(converge_s, 1), "ready_s": round(ready, 1),
               "rss_mib": round(twin_lab.memory_kib(record, "Rss") / 1024.0, 1),
               "pss_mib": round(twin_lab.memory_kib(record, "Pss") / 1024.0, 1),
               "processes": len(twin_lab.frr_pids(record)) + 1, "targets": spec["targets"]}
        missed = [k for k, limit in spec["targets"].items() if out[k] > limit]
        if up != total:
            missed.append("sessions")
        if fabric == "lab":
            out["failover"], failover_ok = failover_figures(plan)
            if not failover_ok:
                missed.append("failover")
        out["missed"] = missed
        print(json.dumps(out), flush=True)
        return not missed
    finally:
        subprocess.run([sys.executable, TWIN, "down"] + base, capture_output=True, check=False)


def main():
    fabrics = sys.argv[1:] or ["lab", "rail512"]
    results = [bench(f) for f in fabrics]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
