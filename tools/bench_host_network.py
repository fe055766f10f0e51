"""Benchmark the host_network role on the virtual lab (`make bench-host-network`).

Measures, on the lab's GPU hosts (run `make lab-up` first; the role is converged once here):
  * wall time of `ansible gpu_hosts -m ping` (the floor: one module round trip per host);
  * wall time of a no-op run of the role (extensions/molecule/host_network/converge.yml on a
    converged lab, plan computed on localhost included);
  * module invocations per host for the whole role, counted from `-vvv` connection logs
    (every AnsiballZ module executed on that host).
Targets (issue 3): no-op role / ping <= 3x, module invocations per host <= 5. Prints JSON; exit 1
when a target is missed.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = os.path.join(ROOT, ".venv", "bin")
PLAYBOOK = os.path.join(ROOT, "extensions", "molecule", "host_network", "converge.yml")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))


def env():
    out = dict(os.environ)
    out.setdefault("ANSIBLE_CONFIG", os.path.join(ROOT, "ansible.cfg"))
    out["PYTHONPATH"] = os.path.join(ROOT, ".collections")
    out["PATH"] = BIN + os.pathsep + out.get("PATH", "")
    return out


def timed(cmd):
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), proc.stdout[-3000:]))
    return elapsed, proc.stdout


def main():
    subprocess.run([os.path.join(BIN, "python"), os.path.join(ROOT, "tests", "lab", "hosts", "lab.py"), "status"], check=True)
    timed([os.path.join(BIN, "ansible-playbook"), PLAYBOOK])  # converge once; later runs are no-ops
    pings, roles = [], []
    for dummy in range(RUNS):
        pings.append(timed([os.path.join(BIN, "ansible"), "gpu_hosts", "-m", "ansible.builtin.ping"])[0])
        elapsed, out = timed([os.path.join(BIN, "ansible-playbook"), PLAYBOOK])
        if not re.search(r"changed=0", out) or re.search(r"changed=[1-9]", out):
            sys.exit("the role was not a no-op:\n" + out[-2000:])
        roles.append(elapsed)
    log = timed([os.path.join(BIN, "ansible-playbook"), PLAYBOOK, "-vvv"])[1]
    hosts = sorted(set(re.findall(r"^ok: \[(gpu\d+)\]", log, re.M)))
    invocations = {}
    for line in log.splitlines():
        # One module invocation = one AnsiballZ payload sent to the host (the podman connection
        # does not pipeline; with pipelining the payload goes through EXEC/RUN stdin instead).
        match = re.match(r"<aifabric-(\w+)> (?:PUT .*/AnsiballZ_(\w+)\.py$|(?:EXEC|RUN) .*python.*-c.*ANSIBALLZ)", line)
        if match:
            invocations.setdefault(match.group(1), []).append(match.group(2) or "pipelined")
    ping, role = statistics.median(pings), statistics.median(roles)
    report = {
        "hosts": hosts,
        "runs": RUNS,
        "ping_s": round(ping, 2),
        "role_noop_s": round(role, 2),
        "ratio": round(role / ping, 2),
        "module_invocations_per_host": {h: len(m) for h, m in sorted(invocations.items())},
        "modules": sorted(set(m for mods in invocations.values() for m in mods)),
        "targets": {"ratio_max": 3.0, "invocations_max": 5},
    }
    print(json.dumps(report, indent=2))
    ok = report["ratio"] <= 3.0 and invocations and max(len(m) for m in invocations.values()) <= 5
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
