"""Benchmarks of the paths users run (issue 14): planning through ansible-playbook, per-device
controller cost, a 64+-switch no-op site.yml on simulators, and a modelled site.yml no-op wall time.

Run: make bench-plan   (or: .venv/bin/python tools/bench_plan_path.py [--quick] [--skip-fleet] [--plan-role-only])

Figures are CPU seconds of the whole process tree (user+sys of the measured command and its
children) and the peak RSS of its largest process, measured by a small wrapper around each command,
so a busy machine inflates wall time but hardly these. Each figure is the median of --runs runs;
paired figures (Ansible vs library) are interleaved A B A B. The issue 20 ratio is taken from the best
(least disturbed) run of each side, its median printed beside it; before it, 1. waits (--settle) while
creating files costs far more than usual on this filesystem, and prints what it costs (see settle()).

Targets (exit 1 when one is missed):
  1. plan role through ansible-playbook (a minimal play with role aifabric.roce.plan, into an empty
     plan directory) <= 2x in CPU the library as issue 20 item 5 states it: build_plan plus ONE JSON
     write (plan.json, the same bytes as the role's), one Python process, same run, at 32K GPUs.
     Also printed, as before (issue 14): the role against build_plan + write_plan (plan.json and every
     slice), <= 2x CPU and <= 1.5x peak RSS at 32K and 131K GPUs (--quick: 4K and 32K); and the role
     run again on its own output (unchanged plan: nothing written), the common case in site.yml.
  2. playbooks/plan.yml with artifacts at 32K GPUs < 30 s CPU;
  3. per-host and per-switch controller cost (audit.yml on fake local targets, switches on a closed
     port) at 16K GPUs <= 1.2x the cost at 0.5K;
  4. modelled no-op site.yml (forks 16, 16-core controller) at 4,096 GPUs < 5 min, at 32K < 30 min.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))

from bench_probes import gpu_fabric  # noqa: E402  (rail512 scaled out; shared with the GOM benchmark)

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.rollout import rollout, switch_batches  # noqa: E402

# Prints the CPU seconds and peak RSS (KiB) of the command it runs (its whole process tree).
MEASURE = r"""
import json, resource, subprocess, sys, time
t = time.time()
log = open(sys.argv[1], "w")
proc = subprocess.run(sys.argv[2:], stdout=log, stderr=log)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": proc.returncode, "cpu": r.ru_utime + r.ru_stime, "user": r.ru_utime, "sys": r.ru_stime,
                  "rss_mb": r.ru_maxrss / 1024.0, "wall": time.time() - t}))
"""

# issue 20 item 5: build_plan plus one JSON write, the bytes of the role's plan.json (compact, sorted keys)
LIBRARY_JSON = r"""
import json, os, sys
sys.path.insert(0, sys.argv[3])
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
fabric = json.load(open(sys.argv[1]))["fabric"]
plan = build_plan(fabric)
os.makedirs(sys.argv[2])
with open(os.path.join(sys.argv[2], "plan.json"), "wb") as handle:
    handle.write(json.dumps(plan, sort_keys=True, separators=(",", ":")).encode("utf-8") + b"\n")
"""

# issue 14: build_plan plus write_plan (plan.json and one slice per device)
LIBRARY = r"""
import json, sys
sys.path.insert(0, sys.argv[3])
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import intent_digest, write_plan
fabric = json.load(open(sys.argv[1]))["fabric"]
write_plan(build_plan(fabric), sys.argv[2], input_digest=intent_digest(fabric))
"""

PLAN_ROLE = """---
- name: Plan only
  hosts: localhost
  gather_facts: false
  roles:
    - role: aifabric.roce.plan
"""

TARGET_SIZES = ("32K", "131K")
ISSUE_SIZE = "32K"  # issue 20 item 5
GPUS = {"0.5K": 64, "4K": 512, "16K": 2048, "32K": 4096, "131K": 16384}   # servers of 8 GPUs
FAILED = []


def fabric_for(label):
    return gpu_fabric(GPUS[label], "bench%s" % label.replace(".", "_").lower())


def env():
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PYTHONPATH=os.path.join(ROOT, ".collections"),
                PATH=BIN + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_NOCOLOR="1")


def measure(cmd, log):
    out = subprocess.run([sys.executable, "-c", MEASURE, log] + cmd, env=env(), cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def write_json(path, data):
    with open(path, "w") as handle:
        json.dump(data, handle)
    return path


def check(ok, text):
    print("  %s %s" % ("PASS" if ok else "MISS", text))
    if not ok:
        FAILED.append(text)


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def best(rows, key):
    return min(r[key] for r in rows)


# 1 -------------------------------------------------------------------------------------------
def probe_files(work, count):
    """CPU seconds to create ``count`` small files in an empty directory (a child process): the kernel's
    share of writing the slices on this filesystem, printed beside the figures (not a target)."""
    code = ("import os, sys\nd = sys.argv[1]\nos.makedirs(d)\n"
            "for i in range(int(sys.argv[2])):\n"
            "    fd = os.open(os.path.join(d, '%d.json' % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)\n"
            "    os.write(fd, b'{}' * 4096)\n    os.close(fd)\n")
    row = measure([sys.executable, "-c", code, os.path.join(work, "probe-%d" % len(os.listdir(work))), str(count)],
                  os.path.join(work, "probe.log"))
    base = measure([sys.executable, "-c", "pass"], os.path.join(work, "probe.log"))
    return row["cpu"] - base["cpu"], row["sys"] - base["sys"]


def settle(keep, count, seconds, limit=0.5):
    """Wait, up to ``seconds``, while creating ``count`` files costs more than ``limit`` CPU seconds.

    ext4 without a journal (this machine's root) skips every inode freed in the last 1-6 minutes, one by one,
    when it allocates one: after some process removed many files, creating the slices costs seconds of kernel
    time instead of ~0.2 s (journaled ext4, xfs, tmpfs). The probes' files stay until the end (removing them
    would be that very disturbance)."""
    deadline = time.time() + seconds
    while True:
        cpu, system = probe_files(keep, count)
        if cpu <= limit or time.time() >= deadline:
            return cpu, system
        print("  creating %d files costs %.2f CPU s right now (files removed recently on this filesystem); "
              "waiting up to %.0f s more" % (count, cpu, deadline - time.time()))
        time.sleep(min(30, max(1, deadline - time.time())))


def bench_plan_role(work, labels, runs, settle_seconds=360):
    print("== 1. plan role through ansible-playbook vs the library")
    print("  issue 20 item 5 baseline: build_plan + one JSON write (plan.json); issue 14: build_plan + write_plan "
          "(plan.json and every slice)")
    book = os.path.join(work, "plan-role.yml")
    with open(book, "w") as handle:
        handle.write(PLAN_ROLE)
    # Every run writes into a new directory and none is removed before the end of this section: removing
    # thousands of slices makes the next run's file creation dearer on some filesystems (ext4 without a
    # journal skips recently freed inodes one by one), which would charge one run for the previous one.
    keep = os.path.join(work, "plan-dirs")
    os.makedirs(keep)
    if settle_seconds > 0:
        plan = build_plan(fabric_for(ISSUE_SIZE))
        count = len(plan["hosts"]) + len(plan["leafs"]) + len(plan["spines"])
        del plan
        cpu, _system = settle(keep, count, settle_seconds)
        print("  before measuring: creating %d files (the %s slices' count) in an empty directory costs %.2f CPU s"
              % (count, ISSUE_SIZE, cpu))
    out = {}
    for label in labels:
        intent = write_json(os.path.join(work, "intent-%s.json" % label), {"fabric": fabric_for(label)})
        one, lib, ans, again = [], [], [], []
        for run in range(max(runs, 5) if label == ISSUE_SIZE else runs):  # the issue's gate: best of 5 at least
            tag = "%s-%d" % (label, run)
            one.append(measure([sys.executable, "-c", LIBRARY_JSON, intent, os.path.join(keep, "json-" + tag),
                                os.path.join(ROOT, ".collections")], os.path.join(work, "lib.log")))
            lib.append(measure([sys.executable, "-c", LIBRARY, intent, os.path.join(keep, "lib-" + tag),
                                os.path.join(ROOT, ".collections")], os.path.join(work, "lib.log")))
            dest = os.path.join(keep, "role-" + tag)
            cmd = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                   "-e", "ansible_python_interpreter=" + sys.executable, "-e", "@" + intent, "-e", "plan_dir=" + dest, book]
            for rows in (ans, again):  # an empty directory, then the same run again (unchanged plan)
                row = measure(cmd, os.path.join(work, "role-%s.log" % label))
                if row["rc"] != 0:
                    raise SystemExit("plan role failed, see %s" % os.path.join(work, "role-%s.log" % label))
                rows.append(row)
            if run == 0 and not same_file(os.path.join(dest, "plan.json"), os.path.join(keep, "json-" + tag, "plan.json")):
                raise SystemExit("the library's plan.json differs from the role's (%s): the baselines measure another thing" % dest)
        probe_cpu, probe_sys = probe_files(keep, len(os.listdir(os.path.join(keep, "role-%s-0" % label, "devices"))))
        # best (least disturbed) run of each: other processes on the machine only ever add CPU (cache, file system)
        issue_ratio = best(ans, "cpu") / best(one, "cpu")
        cpu_ratio = median(ans, "cpu") / median(lib, "cpu")
        rss_ratio = median(ans, "rss_mb") / median(lib, "rss_mb")
        print("  %-5s library build_plan + plan.json %.2f CPU s best, %.2f median / %.0f MB; build_plan + write_plan %.2f CPU s "
              "median / %.0f MB" % (label, best(one, "cpu"), median(one, "cpu"), median(one, "rss_mb"), median(lib, "cpu"),
                                    median(lib, "rss_mb")))
        runs_cpu = " ".join("%.2f" % r["cpu"] for r in ans)
        print("        plan role %.2f CPU s best, %.2f median (user %.2f, sys %.2f; runs %s) / %.0f MB, wall %.1f s; "
              "again, unchanged plan %.2f CPU s best" % (best(ans, "cpu"), median(ans, "cpu"), median(ans, "user"),
                                                         median(ans, "sys"), runs_cpu, median(ans, "rss_mb"), median(ans, "wall"),
                                                         best(again, "cpu")))
        print("        issue 20 ratio (role / build_plan + plan.json): CPU %.2fx best, %.2fx median; RSS %.2fx; unchanged plan %.2fx"
              % (issue_ratio, median(ans, "cpu") / median(one, "cpu"), median(ans, "rss_mb") / median(one, "rss_mb"),
                 best(again, "cpu") / best(one, "cpu")))
        print("        issue 14 ratio (role / build_plan + write_plan, medians): CPU %.2fx, RSS %.2fx" % (cpu_ratio, rss_ratio))
        print("        context: creating as many files (one per slice) in an empty directory, after the runs, costs %.2f CPU s "
              "(sys %.2f)" % (probe_cpu, probe_sys))
        if label == ISSUE_SIZE:
            check(issue_ratio <= 2.0, "plan role CPU <= 2x build_plan + one JSON write at %s (issue 20 item 5, best runs: %.2fx)"
                  % (label, issue_ratio))
        if label in TARGET_SIZES:  # smaller fabrics are dominated by ansible-playbook's fixed start-up (~1 s)
            check(cpu_ratio <= 2.0, "plan role CPU <= 2x library with slices at %s (%.2fx)" % (label, cpu_ratio))
            check(rss_ratio <= 1.5, "plan role peak RSS <= 1.5x library with slices at %s (%.2fx)" % (label, rss_ratio))
        out[label] = {"library_cpu": median(lib, "cpu"), "role_cpu": median(ans, "cpu"), "role_wall": median(ans, "wall")}
    shutil.rmtree(keep, ignore_errors=True)
    return out


def same_file(one, other):
    with open(one, "rb") as first, open(other, "rb") as second:
        return first.read() == second.read()


# 2 -------------------------------------------------------------------------------------------
def bench_plan_yml(work, label="32K"):
    print("== 2. playbooks/plan.yml with artifacts at %s GPUs" % label)
    intent = write_json(os.path.join(work, "intent-%s.json" % label), {"fabric": fabric_for(label)})
    dest = os.path.join(work, "planyml-%s" % label)
    row = measure([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                   "-e", "ansible_python_interpreter=" + sys.executable, "-e", "@" + intent, "-e", "build_dir=" + dest,
                   os.path.join(ROOT, "playbooks", "plan.yml")], os.path.join(work, "planyml.log"))
    if row["rc"] != 0:
        raise SystemExit("plan.yml failed, see %s" % os.path.join(work, "planyml.log"))
    files = sum(len(names) for _dir, _sub, names in os.walk(dest))
    print("  %s: %.1f CPU s, %.1f s wall, peak %.0f MB, %d files" % (label, row["cpu"], row["wall"], row["rss_mb"], files))
    check(row["cpu"] < 30, "plan.yml at %s < 30 s CPU (%.1f s)" % (label, row["cpu"]))
    shutil.rmtree(dest, ignore_errors=True)


# 3 -------------------------------------------------------------------------------------------
def audit_inventory(path, plan, hosts, switches, known_hosts, host_python=sys.executable):
    gpu = sorted(plan["hosts"], key=lambda n: plan["hosts"][n]["slot"])[:hosts]
    # leafs first, then spines: the smallest fabric (0.5K GPUs) has only 8 leafs
    sw = (sorted(plan["leafs"], key=lambda n: plan["leafs"][n]["slot"]) + sorted(plan["spines"]))[:switches]
    if len(gpu) < hosts or len(sw) < switches:
        raise SystemExit("the plan has fewer devices than the benchmark asks for")
    doc = {"all": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                   # host modules would run on the GPU hosts: their interpreter records their CPU apart
                   "children": {"gpu_hosts": {"hosts": dict((n, {}) for n in gpu),
                                              "vars": {"ansible_python_interpreter": host_python}},
                                "switches": {"hosts": dict((n, {}) for n in sw),
                                             # a closed port: connection refused at once, no SSH work
                                             "vars": {"ansible_host": "127.0.0.1", "ansible_port": 9, "ansible_user": "admin",
                                                      "ansible_password": "admin", "switch_known_hosts": known_hosts}},
                                "leafs": {"hosts": dict((n, {}) for n in sw if n in plan["leafs"])}}}}
    return write_json(path, doc)


def bench_per_device(work, labels, small, large, runs):
    print("== 3. per-device controller cost: audit.yml on %d vs %d fake local targets (difference / %d)"
          % (small, large, large - small))
    known = os.path.join(work, "known_hosts")
    open(known, "w").close()
    module_log = os.path.join(work, "host-modules.cpu")
    wrapper = os.path.join(work, "host-python")
    with open(wrapper, "w") as handle:
        handle.write('#!/bin/sh\nexec /usr/bin/time -a -o %s -f "%%U %%S" %s "$@"\n' % (module_log, sys.executable))
    os.chmod(wrapper, 0o755)
    out = {}
    for label in labels:
        fabric = fabric_for(label)
        plan = build_plan(fabric)
        intent = write_json(os.path.join(work, "intent-%s.json" % label), {"fabric": fabric})
        costs = {}
        for kind in ("host", "switch"):
            rows = {}
            for count in (small, large):
                inv = audit_inventory(os.path.join(work, "inv-%s-%s-%d.json" % (label, kind, count)), plan,
                                      count if kind == "host" else 0, count if kind == "switch" else 0, known, wrapper)
                cmd = [os.path.join(BIN, "ansible-playbook"), "-i", inv, "-f", "16", "-e", "@" + intent,
                       "-e", "plan_dir=" + os.path.join(work, "audit-plan-%s" % label),
                       "-e", "audit_report_dir=" + os.path.join(work, "audit-report"),
                       "-e", "host_preflight_report_dir=" + os.path.join(work, "audit-preflight"),
                       os.path.join(ROOT, "playbooks", "audit.yml")]
                rows[count] = []
                for _run in range(runs):
                    open(module_log, "w").close()
                    row = measure(cmd, os.path.join(work, "audit-%s-%s.log" % (label, kind)))
                    row["module_cpu"] = module_cpu_of(module_log)
                    rows[count].append(row)
            per = (median(rows[large], "cpu") - median(rows[small], "cpu")) / (large - small)
            on_device = (median(rows[large], "module_cpu") - median(rows[small], "module_cpu")) / (large - small)
            costs[kind] = per - on_device
            costs[kind + "_modules"] = on_device
        print("  %-5s per host %.3f CPU s on the controller + %.3f in host modules (which run on the GPU host); "
              "per switch %.3f CPU s" % (label, costs["host"], costs["host_modules"], costs["switch"]))
        out[label] = costs
    first, last = labels[0], labels[-1]
    for kind in ("host", "switch"):
        ratio = out[last][kind] / out[first][kind]
        check(ratio <= 1.2, "per-%s cost at %s <= 1.2x the cost at %s (%.2fx)" % (kind, last, first, ratio))
    return out


def module_cpu_of(path):
    """CPU seconds of the host modules the wrapper interpreter recorded (one "user sys" line each)."""
    total = 0.0
    with open(path) as handle:
        for line in handle:
            parts = line.split()
            if len(parts) == 2:
                total += float(parts[0]) + float(parts[1])
    return total


# 4 -------------------------------------------------------------------------------------------
def bench_fleet(work, label="4K", forks=16):
    """No-op site.yml --tags switches on one simulator per switch of the plan (64 leafs + 16 spines at 4K)."""
    from bench_switch import free_ports, start_sims, stop_sims

    fabric = fabric_for(label)
    for role in ("leafs", "spines"):
        fabric[role]["platform"] = "eos"    # the simulator the lab exercises most; one NOS keeps the figure clean
        fabric[role].pop("platform_overrides", None)
    plan = build_plan(fabric)
    names = sorted(plan["leafs"]) + sorted(plan["spines"])
    ports = free_ports(len(names), 33000)
    root = os.path.join(work, "fleet")
    os.makedirs(root)
    devs = dict((n, ("eos", plan["leafs"].get(n) or plan["spines"][n], ports[i])) for i, n in enumerate(names))
    procs = start_sims(root, devs)
    try:
        inv = write_json(os.path.join(work, "fleet.json"), {
            "switches": {"hosts": dict((n, {"ansible_port": devs[n][2]}) for n in names),
                         "vars": {"ansible_host": "127.0.0.1", "ansible_user": "admin", "ansible_password": "admin",
                                  "ansible_connection": "local", "switch_known_hosts": os.path.join(root, "known_hosts")}}})
        intent = write_json(os.path.join(work, "fleet-intent.json"), {"fabric": fabric})
        cmd = [os.path.join(BIN, "ansible-playbook"), "-i", inv, "-f", str(forks), "-e", "@" + intent,
               "-e", "plan_dir=" + os.path.join(work, "fleet-plan"), "--tags", "switches",
               os.path.join(ROOT, "playbooks", "site.yml")]
        first = measure(cmd, os.path.join(work, "fleet-converge.log"))
        if first["rc"] != 0:
            raise SystemExit("fleet converge failed, see %s" % os.path.join(work, "fleet-converge.log"))
        noop = measure(cmd, os.path.join(work, "fleet-noop.log"))
        canary = measure(cmd + ["--limit", names[0]], os.path.join(work, "fleet-one.log"))
    finally:
        stop_sims(procs)
    batches = rollout(switch_batches(plan), names)["serial"]
    rounds = sum(-(-size // forks) for size in batches)
    print("  %s: %d switches in %d batches (sizes %s), forks %d" % (label, len(names), len(batches), batches, forks))
    print("  converge %.1f s wall; no-op %.1f s wall, %.1f CPU s (%.2f CPU s per switch), %.1f s per round of a batch; "
          "one switch alone (whole playbook, plan included) %.1f s wall"
          % (first["wall"], noop["wall"], noop["cpu"], noop["cpu"] / len(names), noop["wall"] / rounds, canary["wall"]))
    return {"noop_wall": noop["wall"], "noop_cpu_per_switch": noop["cpu"] / len(names), "round_wall": noop["wall"] / rounds}


# 5 -------------------------------------------------------------------------------------------
def model(plan_costs, device_costs, fleet, forks=16, cores=16):
    """No-op site.yml wall on a 16-core controller with forks 16, from the measured costs.

    plan: the plan role's wall; switches: every safe batch takes ceil(size / forks) rounds, each as long
    as a round measured on the simulator fleet (no-op wall / rounds: SSH login, read, diff, on 2 cores); hosts: the host stages are CPU-bound on the
    controller (per-host cost measured through audit.yml: the same roles in check mode) spread over
    min(forks, cores) (host modules run on the GPU hosts themselves, so their CPU is taken out and
    counted only as latency), plus one host's whole chain per serial batch (4 batches of 25 % per host
    play, 3 host plays). Validation (probes per host) is costed like one more host role.
    """
    print("== 5. modelled no-op site.yml wall (forks %d, %d cores)" % (forks, cores))
    out = {}
    for label, minutes in (("4K", 5.0), ("32K", 30.0)):
        plan = build_plan(fabric_for(label))
        batches = rollout(switch_batches(plan), sorted(list(plan["leafs"]) + list(plan["spines"])))["serial"]
        round_wall = fleet["round_wall"]   # measured: the fleet's no-op wall over its rounds (this 2-core box)
        switches = sum(-(-size // forks) for size in batches) * round_wall
        per_host = max(device_costs[k]["host"] for k in device_costs)             # controller CPU
        on_host = max(device_costs[k]["host_modules"] for k in device_costs)      # module CPU on each GPU host
        hosts_cpu = len(plan["hosts"]) * per_host * 1.25          # +25 % for validate.yml's probes
        # CPU-bound on the controller, plus per serial batch (3 plays x 4 batches) one host's own chain
        hosts = hosts_cpu / min(forks, cores) + 3 * 4 * (per_host + on_host)
        plan_wall = plan_costs.get(label, {}).get("role_wall") or plan_costs[max(plan_costs)]["role_wall"]
        total = plan_wall + switches + hosts
        print("  %-4s %d hosts, %d switches in %d batches: plan %.0f s + switches %.0f s + hosts %.0f s = %.1f min"
              % (label, len(plan["hosts"]), len(plan["leafs"]) + len(plan["spines"]), len(batches), plan_wall, switches,
                 hosts, total / 60))
        check(total / 60 < minutes, "modelled no-op site.yml at %s < %d min (%.1f min)" % (label, minutes, total / 60))
        out[label] = total
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (4K and 32K for the plan role), one run each")
    parser.add_argument("--skip-fleet", action="store_true", help="no simulator fleet (the model then uses --one-switch)")
    parser.add_argument("--one-switch", type=float, default=3.6,
                        help="wall (s) of one round of a switch batch when the fleet is skipped (measured 3.6 s, 80-switch fleet)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--plan-role-only", action="store_true", help="only 1. (the plan role against the library)")
    parser.add_argument("--sizes", help="sizes for 1., comma-separated (default 4K,32K,131K; --quick 4K,32K)")
    parser.add_argument("--settle", type=float, default=360,
                        help="seconds 1. may wait for file creation on this filesystem to cost what it normally does "
                             "(see settle(); 0: measure at once)")
    args = parser.parse_args()
    runs = 1 if args.quick else args.runs
    work = tempfile.mkdtemp(prefix="aifabric-bench-plan-")
    try:
        sizes = args.sizes.split(",") if args.sizes else ["4K", "32K"] if args.quick else ["4K", "32K", "131K"]
        plan_costs = bench_plan_role(work, sizes, runs, args.settle)
        if args.plan_role_only:
            return finish(work)
        bench_plan_yml(work)
        device_costs = bench_per_device(work, ["0.5K", "4K", "16K"], 4, 20, runs)
        fleet = {"round_wall": args.one_switch} if args.skip_fleet else bench_fleet(work)
        model(plan_costs, device_costs, fleet)
    except BaseException:
        print("logs kept in %s" % work)
        raise
    return finish(work)


def finish(work):
    if FAILED:
        print("logs kept in %s" % work)
        print("MISSED: " + "; ".join(FAILED))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("all targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
