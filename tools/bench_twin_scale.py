# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The twin at scale, measured (issue 20 item 4): grow the lab, a 1K-GPU and a 4K-GPU twin (every leaf and spine
of the plan as an FRR router, GPU hosts as many as the run can converge: at least one full server group of 64),
converge them with the product's ``playbooks/site.yml`` (plan role, switch play over SSH with the frr driver, the
host plays over SSH, validate.yml), then run ``site.yml`` again (the no-op run operators repeat), and print per
fabric and per phase (plan, switches, hosts, validate): wall time, controller CPU (the ansible-playbook process
tree), device CPU (what the twin's routers and hosts spent: FRR daemons, and every management session with the
modules it ran) and memory; per device the CPU of the switch phase per switch and of the host phase per host.

Usage (root, FRR): bench_twin_scale.py [lab] [1k] [4k] [--hosts N] [--keep] [--out results.json]
                   bench_twin_scale.py --from-json results.json   (the judgement and the model again, no twin)
Exits 1 when a target is missed (issue 28):
- no-op CPU (controller + device) per GPU host <= 1.0 s and per switch <= 0.5 s at the lab and 1K;
- 4K no-op site.yml under 90 s wall on this machine (the whole twin shares its 2 cores with the controller);
- per-device no-op CPU (switch phase per switch, host phase per host) at 1K and 4K within 1.3x of the lab's;
- each run converges (no failed or unreachable device), its validation report says PASSED (every probe run and
  passed: pings, routes, LLDP, BGP, PPD), and the no-op run changes nothing;
- the modelled 32K-GPU no-op audit (site.yml --check; tools/twin_scale_model.py: per-device costs of these runs, one controller of --cores
  cores and --forks forks) under 5 min, on one controller or sliced by AWX over at most 8 execution nodes of --cores
  cores each (the run prints how many it takes).
The 1K and 4K twins run all their routers but one server group of their hosts (the sample); the model, checked
against the largest run (its CPU predicted from the smaller runs' per-device costs), gives the full 4K plan (512
hosts) and 32K GPUs.
Each run records the load average before and after it: the machine is shared, so CPU seconds are the figure.

The 1K and 4K fabrics are rail512 scaled out (tools/bench_probes.gpu_fabric: groups of 64 servers x 8 rails,
16 spines, 32 uplinks per leaf); the routers run platform frr with Linux port names ``swp{port}s{lane}``.
A host the twin does not run keeps its leaf ports as dummy interfaces (twin.py --hosts).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWIN_DIR = os.path.join(ROOT, "tests", "lab", "twin")
TWIN = os.path.join(TWIN_DIR, "twin.py")
BIN = os.path.dirname(sys.executable)
OFFSET = int(os.environ.get("AIFABRIC_TEST_PORT_OFFSET", "0"))
PREFIX = "aifs%d-" % OFFSET     # the bench's own namespaces (tests use aift..., make twin-up aif-, bench_twin aifb...)
TICK = os.sysconf("SC_CLK_TCK")
sys.path.insert(0, TWIN_DIR)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import twin as twin_lab  # noqa: E402  (tests/lab/twin/twin.py: pid files, memory)
import twin_scale_model as model  # noqa: E402  (tools/twin_scale_model.py)

SERVERS = {"1k": 128, "4k": 512}       # servers of 8 GPUs
NOOP_WALL_TARGET_S = {"4k": 90}
FLAT_TARGET = 1.3
PER_DEVICE_TARGET_S = {"hosts": 1.0, "switches": 0.5}      # no-op CPU per device, controller + device
PER_DEVICE_TARGET_AT = ("lab", "1k")
MODEL_32K_TARGET_S = 300
MAX_SLICES = 8           # AWX execution nodes the 32K audit may be sliced over (each of --cores cores)
SERVERS_32K = 4096
PHASES = ("plan", "switches", "hosts", "validate")


def phase_of(play):
    """site.yml's play names -> phase (the plays of validate.yml are 'Post-bring-up validation' imports)."""
    text = play.lower()
    if "plan the fabric" in text:
        return "plan"
    if text.startswith("switch ") or text.startswith("read every switch"):
        return "switches"
    if text.startswith("gpu host") or text.startswith("preview summary"):
        return "hosts"
    return "validate"


def proc_cpu(pid, children=True):
    """CPU seconds of a process (and of its reaped children)."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if children else 0)
    return ticks / float(TICK)


def device_cpu(record):
    """The twin's side: FRR daemons of every router, and the management sshd with every session it ran (the
    bash of each session and what ran in it: vtysh, the modules on the hosts)."""
    total = sum(proc_cpu(pid, children=False) for pid in twin_lab.frr_pids(record))
    if record.get("sshd_pid"):
        total += proc_cpu(record["sshd_pid"])
    return total


def env():
    return dict(((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_")),
                ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PYTHONPATH=os.path.join(ROOT, ".collections"),
                PATH=BIN + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                PYTHONUNBUFFERED="1")   # each PLAY line as it is printed: the phase clock reads them


def site_yml(state, record, log):
    """One site.yml run on the twin's inventory, timed per play; returns phase figures and the recap."""
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", os.path.join(state, "inventory.yml"),
           os.path.join(ROOT, "playbooks", "site.yml")]
    phases = dict((p, {"wall_s": 0.0, "controller_cpu_s": 0.0, "controller_main_cpu_s": 0.0, "device_cpu_s": 0.0})
                  for p in PHASES)
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env(), bufsize=1)
    current, mark = None, None

    def close(now):
        if current is not None:
            figures = phases[current]
            figures["wall_s"] += now[0] - mark[0]
            figures["controller_cpu_s"] += now[1] - mark[1]
            figures["device_cpu_s"] += now[2] - mark[2]
            figures["controller_main_cpu_s"] += now[3] - mark[3]

    recap, validation = {}, None
    with open(log, "a") as out:
        for line in proc.stdout:
            out.write(line)
            play = re.match(r"^PLAY \[(.*)\] \*+", line)
            if play and not line.startswith("PLAY RECAP"):
                # the playbook's main process alone (strategy, templating of the queue, callbacks): the part no
                # fork runs beside it, which bounds the modelled controller however many cores it has
                now = (time.monotonic(), proc_cpu(proc.pid), device_cpu(record), proc_cpu(proc.pid, children=False))
                close(now)
                current, mark = phase_of(play.group(1)), now
            verdict = re.search(r'"msg": "(validation [^:"]+: [^;"]*)', line)
            if verdict:
                validation = verdict.group(1)
            host = re.match(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", line)
            if host:
                recap[host.group(1)] = dict(changed=int(host.group(3)), unreachable=int(host.group(4)),
                                            failed=int(host.group(5)))
    main_cpu = proc_cpu(proc.pid, children=False)   # before the wait reaps it (the process exits after its output)
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    # after the wait the playbook's CPU is in our children's account: the last phase ends with the run
    close((time.monotonic(), usage.ru_utime + usage.ru_stime, device_cpu(record), main_cpu))
    for figures in phases.values():
        for key in figures:
            figures[key] = round(figures[key], 1)
    return {"rc": proc.returncode, "wall_s": round(time.monotonic() - started, 1), "phases": phases,
            "controller_cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "controller_peak_rss_mib": round(usage.ru_maxrss / 1024.0, 1),
            # devices only: validate.yml rewrites its report on the controller every run (fresh round trips)
            "changed": sum(r["changed"] for h, r in recap.items() if h != "localhost"),
            "failed": sorted(h for h, r in recap.items() if r["failed"] or r["unreachable"]), "recap_hosts": len(recap),
            "validation": validation}


def intent_file(fabric, work):
    """The fabric intent the twin plans: the lab inventory's, or rail512 scaled out to 1K/4K GPUs."""
    if fabric == "lab":
        return None
    from bench_probes import gpu_fabric   # rail512 scaled out (shared with the probe and plan benchmarks)
    intent = gpu_fabric(SERVERS[fabric], "twin%s" % fabric)
    for index, nic in enumerate(intent["servers"]["nics"]):
        nic["netdev"] = "rail%d" % index     # the NIC names of the synthetic H100 + CX7 tree the hosts read (as the lab's)
    path = os.path.join(work, "%s-fabric.json" % fabric)
    with open(path, "w") as handle:
        json.dump({"fabric": intent}, handle)
    return path


def switch_batch_sizes(plan):
    """The sizes of site.yml's switch rollout batches for every switch of the plan (canary 1, no cap)."""
    sys.path.insert(0, os.path.join(ROOT, ".collections"))
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric import rollout
    names = list(plan["leafs"]) + list(plan["spines"])
    return rollout.rollout(rollout.switch_batches(plan), names)["serial"]


def plan_of(servers):
    sys.path.insert(0, os.path.join(ROOT, ".collections"))
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
    from bench_probes import gpu_fabric
    return build_plan(gpu_fabric(servers, "model%d" % servers))


def modelled(results, cores, forks):
    """The sample check and the full-size figures (tools/twin_scale_model.py)."""
    runs = [r for r in results if "noop" in r and not r["noop"]["rc"]]
    if not runs:
        return None
    out = {"cores": cores, "forks": forks}
    # the check: the largest fabric run (the sample: all its routers, a server group of its hosts) predicted from
    # the per-device costs of the smaller ones
    sample = max(runs, key=lambda r: r["gpus"])
    others = [r for r in runs if r is not sample]
    if others:
        out["check"] = {"sample": sample["fabric"], "from": [r["fabric"] for r in others],
                        "phases": model.check(model.device_costs(others), sample)}
    costs = model.device_costs(runs)
    out["costs"] = dict((k, v) for k, v in costs.items())
    for name, servers in (("4k_full", SERVERS["4k"]), ("32k", SERVERS_32K)):
        plan = plan_of(servers)
        batches = switch_batch_sizes(plan)
        wall, cpu = model.predict_wall(costs, plan["sizing"]["gpus"], len(plan["hosts"]), batches, cores, forks)
        out[name] = {"gpus": plan["sizing"]["gpus"], "hosts": len(plan["hosts"]),
                     "switches": len(plan["leafs"]) + len(plan["spines"]), "switch_batches": len(batches), "wall_s": wall,
                     "controller_cpu_s": round(sum(c["controller_cpu_s"] for c in cpu.values()), 1),
                     "device_cpu_s": round(sum(c["device_cpu_s"] for c in cpu.values()), 1)}
        # the audit (site.yml --check: one batch), on one controller and with AWX job slicing
        out[name]["audit_wall_s"] = dict(
            ("slices_%d" % n, model.predict_wall(costs, plan["sizing"]["gpus"], len(plan["hosts"]), batches, cores, forks,
                                                 check_mode=True, slices=n)[0]["total"]) for n in (1, 2, 4, 8))
    return out


def bench(fabric, host_limit, keep):
    work = tempfile.mkdtemp(prefix="twin-scale-")
    state = os.path.join(work, "state")
    log = os.path.join(work, "site.log")
    base = ["--state", state, "--ns-prefix", PREFIX, "--base-port", str(27000 + OFFSET)]
    source = intent_file(fabric, work)
    args = (["--inventory", os.path.join(ROOT, "inventories", "lab")] if source is None
            else ["--intent", source, "--port-name", "swp{port}s{lane}", "--hosts", str(host_limit)])
    out = {"fabric": fabric}
    try:
        t0 = time.monotonic()
        subprocess.run([sys.executable, TWIN, "up"] + base + args, check=True, capture_output=True, text=True)
        out["up_s"] = round(time.monotonic() - t0, 1)
        with open(os.path.join(state, "twin.json")) as handle:
            record = json.load(handle)
        with open(os.path.join(state, "plan", "plan.json")) as handle:
            plan = json.load(handle)
        out.update(gpus=plan["sizing"]["gpus"], leafs=len(plan["leafs"]), spines=len(plan["spines"]),
                   routers=len(record["routers"]), hosts_planned=len(plan["hosts"]),
                   hosts_run=len(record.get("host_endpoints", {})),
                   sessions_planned=2 * sum(len(leaf["uplinks"]) for leaf in plan["leafs"].values()))
        out["switch_batches"] = switch_batch_sizes(plan)
        out["load_before"] = [round(x, 1) for x in os.getloadavg()]
        out["converge"] = site_yml(state, record, log)
        out["converge"]["failed_checks"] = failed_checks(os.path.join(state, "reports", "validate", "drift-report.json"))
        out["load_noop_before"] = [round(x, 1) for x in os.getloadavg()]
        out["noop"] = site_yml(state, record, log)
        out["load_after"] = [round(x, 1) for x in os.getloadavg()]
        out["twin_rss_mib"] = round(twin_lab.memory_kib(record, "Rss") / 1024.0, 1)
        out["twin_pss_mib"] = round(twin_lab.memory_kib(record, "Pss") / 1024.0, 1)
        noop = out["noop"]["phases"]
        per = {}
        for phase, count in (("switches", out["routers"]), ("hosts", out["hosts_run"])):
            cpu = noop[phase]["controller_cpu_s"] + noop[phase]["device_cpu_s"]
            per[phase] = {"cpu_s": round(cpu / count, 2), "controller_cpu_s": round(noop[phase]["controller_cpu_s"] / count, 2),
                          "wall_s": round(noop[phase]["wall_s"] / count, 2)}
        out["noop_per_device"] = per
        out["log"] = log if keep else None
        return out
    except subprocess.CalledProcessError as exc:
        out["error"] = (exc.stderr or "")[-2000:]
        return out
    finally:
        subprocess.run([sys.executable, TWIN, "down"] + base, capture_output=True, check=False)
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def failed_checks(report_path, limit=10):
    """The failed items of a validation report (device, item, expected, actual), before the next run overwrites it:
    a converge's lone lost echo is named in the results, not only counted."""
    try:
        with open(report_path) as handle:
            report = json.load(handle)
    except (OSError, ValueError):
        return []
    out = []
    for entry in report.get("entries") or []:
        for result in entry.get("results") or []:
            if result.get("result") == "failed":
                out.append({"device": entry.get("device"), "subject": result.get("subject"),
                            "expected": result.get("expected"), "actual": result.get("actual")})
    return out[:limit]


def audit_nodes_needed(modelled_figures):
    """The fewest AWX execution nodes (job slices, each node of the modelled cores) that bring the modelled 32K
    no-op audit under the target (issue 28 allows slicing when the note says how many nodes); None past MAX_SLICES."""
    walls = modelled_figures["32k"]["audit_wall_s"]
    for slices in sorted(int(k.split("_")[1]) for k in walls):
        if slices <= MAX_SLICES and walls["slices_%d" % slices] <= MODEL_32K_TARGET_S:
            return slices
    return None


def judge(results, modelled_figures=None):
    """The targets of the module docstring -> list of misses."""
    missed = []
    if modelled_figures and audit_nodes_needed(modelled_figures) is None:
        missed.append("modelled 32K no-op audit %.0f s on one controller of %d cores / %d forks, %.0f s with %d AWX "
                      "slices (target <= %d s)" % (
                          modelled_figures["32k"]["audit_wall_s"]["slices_1"], modelled_figures["cores"],
                          modelled_figures["forks"], modelled_figures["32k"]["audit_wall_s"]["slices_%d" % MAX_SLICES],
                          MAX_SLICES, MODEL_32K_TARGET_S))
    by_name = dict((r["fabric"], r) for r in results)
    lab = by_name.get("lab")
    for result in results:
        name = result["fabric"]
        if "error" in result:
            missed.append("%s: twin did not come up: %s" % (name, result["error"].strip().splitlines()[-1:]))
            continue
        for run in ("converge", "noop"):
            if result[run]["rc"] or result[run]["failed"]:
                missed.append("%s %s: site.yml rc %d, failed %s" % (name, run, result[run]["rc"], result[run]["failed"][:5]))
        for run in ("converge", "noop"):
            said = result[run].get("validation") or "no validation verdict printed"
            if not said.startswith("validation PASSED"):
                failed = "; ".join("%(device)s %(subject)s: %(actual)s (expected %(expected)s)" % f
                                   for f in result[run].get("failed_checks") or [])
                missed.append("%s %s: %s%s" % (name, run, said, " - " + failed if failed else ""))
        if result["noop"]["changed"]:
            missed.append("%s: the no-op site.yml changed %d" % (name, result["noop"]["changed"]))
        limit = NOOP_WALL_TARGET_S.get(name)
        if limit and result["noop"]["wall_s"] > limit:
            missed.append("%s: no-op site.yml %.0f s (target < %d s)" % (name, result["noop"]["wall_s"], limit))
        if name in PER_DEVICE_TARGET_AT:
            for phase, limit in sorted(PER_DEVICE_TARGET_S.items()):
                if result["noop_per_device"][phase]["cpu_s"] > limit:
                    missed.append("%s: no-op CPU per %s %.2f s (target <= %.1f s)" % (
                        name, {"hosts": "GPU host", "switches": "switch"}[phase], result["noop_per_device"][phase]["cpu_s"], limit))
        if lab and name != "lab" and "noop_per_device" in lab:
            for phase in ("switches", "hosts"):
                ratio = result["noop_per_device"][phase]["cpu_s"] / max(lab["noop_per_device"][phase]["cpu_s"], 0.01)
                result.setdefault("flat_vs_lab", {})[phase] = round(ratio, 2)
                if ratio > FLAT_TARGET:
                    missed.append("%s: no-op CPU per %s %.2fx the lab's (target <= %.1fx)" % (name, phase[:-1], ratio, FLAT_TARGET))
    return missed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    # checked below: argparse checks an empty nargs="*" against choices as one value (Python 3.11)
    parser.add_argument("fabrics", nargs="*", help="lab, 1k, 4k (default all three)")
    parser.add_argument("--hosts", type=int, default=64, help="GPU hosts run at 1K/4K (default one server group, 64)")
    parser.add_argument("--keep", action="store_true", help="keep the site.yml logs (the path is printed)")
    parser.add_argument("--out", help="write the results (one JSON list) here")
    parser.add_argument("--from-json", help="judge and model results written by --out, without a twin")
    parser.add_argument("--cores", type=int, default=16, help="the modelled controller's cores (default 16)")
    parser.add_argument("--forks", type=int, default=16, help="the modelled controller's forks (default 16)")
    args = parser.parse_args()
    args.fabrics = args.fabrics or ["lab", "1k", "4k"]
    for fabric in args.fabrics:
        if fabric not in SERVERS and fabric != "lab":
            parser.error("fabric %r: choose lab, 1k or 4k" % fabric)
    if args.from_json:
        with open(args.from_json) as handle:
            results = json.load(handle)
    else:
        if os.geteuid() != 0:
            parser.error("the twin needs root (network namespaces)")
        results = []
        for fabric in args.fabrics:
            results.append(bench(fabric, args.hosts, args.keep))
            print(json.dumps(results[-1]), flush=True)
            if args.out:
                with open(args.out, "w") as handle:
                    json.dump(results, handle, indent=1)
    figures = modelled(results, args.cores, args.forks)
    missed = judge(results, figures)
    for result in results:
        if "noop" in result:
            print("%-4s %5d GPUs %3d routers %3d/%4d hosts | converge %6.1f s | no-op %6.1f s (plan %.1f, switches %.1f, "
                  "hosts %.1f, validate %.1f) | no-op CPU per switch %.2f s, per host %.2f s | twin RSS %.0f MiB | "
                  "load %s -> %s%s" % (
                      result["fabric"], result["gpus"], result["routers"], result["hosts_run"], result["hosts_planned"],
                      result["converge"]["wall_s"], result["noop"]["wall_s"],
                      *[result["noop"]["phases"][p]["wall_s"] for p in PHASES],
                      result["noop_per_device"]["switches"]["cpu_s"], result["noop_per_device"]["hosts"]["cpu_s"],
                      result["twin_rss_mib"], result.get("load_noop_before"), result.get("load_after"),
                      " | flat vs lab %s" % result["flat_vs_lab"] if result.get("flat_vs_lab") else ""))
    if figures:
        print("model: %s" % json.dumps(figures, sort_keys=True))
        nodes = audit_nodes_needed(figures)
        where = ("not within %d AWX execution nodes" % MAX_SLICES if nodes is None
                 else "%d AWX execution node(s) of %d cores (job slices)" % (nodes, figures["cores"]))
        print("modelled 32K no-op audit under %d s: %s" % (MODEL_32K_TARGET_S, where))
        for name in ("4k_full", "32k"):
            f = figures[name]
            print("modelled no-op %s: %d GPUs, %d hosts, %d switches (%d batches) on %d cores / %d forks: site.yml %.0f s "
                  "wall (plan %.0f, switches %.0f, hosts %.0f, validate %.0f); audit (--check) %s s by AWX slices; "
                  "controller %.0f CPU s, devices %.0f CPU s" % (
                      name, f["gpus"], f["hosts"], f["switches"], f["switch_batches"], figures["cores"], figures["forks"],
                      f["wall_s"]["total"], *[f["wall_s"][p] for p in PHASES], json.dumps(f["audit_wall_s"]),
                      f["controller_cpu_s"], f["device_cpu_s"]))
        if "check" in figures:
            print("model check, the %s sample's no-op CPU predicted from %s: %s" % (
                figures["check"]["sample"], "+".join(figures["check"]["from"]), json.dumps(figures["check"]["phases"]["total"])))
    for text in missed:
        print("MISSED: %s" % text)
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
