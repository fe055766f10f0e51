"""Run the test targets of `make test` in lanes, in parallel, with per-target figures (issue 28 item 3).

    ci_run.py --lane "test-e2e test-host-network" --lane test-switches --lane test-twin -- test-unit ...

Each --lane is a list of targets that run one after another in the given order (the podman lab's
stages share one lab: they must not overlap); lanes run side by side. Every target named after `--`
and in no lane goes to one shared lane (the CPU-bound checks: unit, sanity, lint...), in the given order.
`--jobs 1` runs everything one after another (the old `make test`, for before/after figures).

Each target runs as `make --no-print-directory <target>` with its output in <logs>/<target>.log;
the console gets one line when a target starts and one when it ends. At the end: a table per
target (wall, CPU user+sys of the target and its reaped children, CPU/wall, idle = wall - CPU),
the machine's CPU use over the run (to tell a quiet machine from a shared one), the tail of every
failed target's log, and exit status 1 when any target failed.

Unless AIFABRIC_TEST_PORT_OFFSET is set, the run claims this checkout's test port offset on the machine
(tests/lab/labid.py claim_port_offset: the next free one when another run holds it) and hands it to every target, so
the private simulators and twins of two checkouts' `make test` never share a port or a namespace.

Targets whose tests measure real time (--timed: the twin's traffic probes, the switch simulators' timers) run at
normal priority; every other target runs under `nice -n <--nice>` (10 by default), so that the CPU-bound lanes beside
them (unit, sanity, lint, the podman lab) cannot starve a probe into a false loss on a 2-core machine.
"""
import argparse
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAIL_LINES = 150
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import labid  # noqa: E402  pylint: disable=wrong-import-position


def machine_cpu():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as handle:
        fields = [int(x) for x in handle.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def loadavg():
    with open("/proc/loadavg", encoding="ascii") as handle:
        return " ".join(handle.read().split()[:3])


class Runner:
    def __init__(self, logs, make, timed=(), nice=10):
        self.logs = logs
        self.make = make
        self.timed = set(timed)
        self.nice = nice
        self.results = {}
        self.lock = threading.Lock()
        self.start = time.monotonic()

    def say(self, text):
        with self.lock:
            print("[ci %6.1fs] %s" % (time.monotonic() - self.start, text), flush=True)

    def run_target(self, target):
        log = os.path.join(self.logs, target + ".log")
        self.say("start %s (log %s)" % (target, log))
        began = time.monotonic()
        command = self.make + [target]
        if self.nice and target not in self.timed:
            command = ["nice", "-n", str(self.nice)] + command
        with open(log, "w", encoding="utf-8") as out:
            proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
            # wait4: this target's own CPU plus that of every descendant it waited for
            _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - began
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        cpu = usage.ru_utime + usage.ru_stime
        with self.lock:
            self.results[target] = {"rc": code, "wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime,
                                    "cpu": cpu, "log": log}
        self.say("%s %s in %.0fs (CPU %.0fs)" % ("ok  " if code == 0 else "FAIL", target, wall, cpu))

    def run_lane(self, targets):
        for target in targets:
            self.run_target(target)


def tail(path, lines):
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.readlines()
    return "".join(text[-lines:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lane", action="append", default=[], help="targets run one after another (space-separated)")
    parser.add_argument("--jobs", type=int, default=0, help="1: everything one after another (default: lanes in parallel)")
    parser.add_argument("--logs", default=os.path.join(ROOT, "build", "ci"))
    parser.add_argument("--timed", action="append", default=[],
                        help="targets that measure real time (space-separated): run at normal priority")
    parser.add_argument("--nice", type=int, default=10, help="niceness of every other target (0: none)")
    parser.add_argument("targets", nargs="*", help="every target of the run, in order")
    args = parser.parse_args(argv)

    order = list(args.targets)
    lanes = [[t for t in lane.split() if t in order] for lane in args.lane]
    laned = {t for lane in lanes for t in lane}
    unknown = sorted({t for lane in args.lane for t in lane.split()} - set(order))
    lanes = [lane for lane in lanes if lane]
    rest = [t for t in order if t not in laned]
    if rest:
        lanes.append(rest)
    if args.jobs == 1:
        lanes = [order]

    os.makedirs(args.logs, exist_ok=True)
    if os.environ.get("AIFABRIC_TEST_PORT_OFFSET"):
        offset_note = "test port offset %d (AIFABRIC_TEST_PORT_OFFSET)" % labid.port_offset()   # refuses a malformed one
    else:
        # held (the lock stays open) until this process ends: another checkout's run takes another slot
        offset, _held = labid.claim_port_offset()
        os.environ["AIFABRIC_TEST_PORT_OFFSET"] = str(offset)
        offset_note = "test port offset %d (this checkout's, claimed on the machine)" % offset
    timed = [t for group in args.timed for t in group.split()]
    runner = Runner(args.logs, [os.environ.get("MAKE", "make"), "--no-print-directory"], timed, args.nice)
    skipped = ("; not in this run: " + " ".join(unknown)) if unknown else ""
    lanes_text = " | ".join(" ".join(lane) for lane in lanes)
    runner.say("load %s on %d CPUs; lanes: %s%s; at normal priority: %s, the rest at nice %d; %s"
               % (loadavg(), os.cpu_count() or 0, lanes_text, skipped, " ".join(timed) or "none", args.nice, offset_note))
    busy0, total0 = machine_cpu()
    threads = [threading.Thread(target=runner.run_lane, args=(lane,), daemon=True) for lane in lanes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    busy1, total1 = machine_cpu()
    wall = time.monotonic() - runner.start

    res = runner.results
    failed = [t for t in order if res.get(t, {}).get("rc", 1) != 0]
    print("\n%-20s %4s %8s %8s %8s %6s %8s" % ("target", "rc", "wall s", "user s", "sys s", "cpu %", "idle s"))
    for target in order:
        r = res[target]
        share = 100.0 * r["cpu"] / max(r["wall"], 0.001)
        idle = max(r["wall"] - r["cpu"], 0.0)
        print("%-20s %4d %8.1f %8.1f %8.1f %6.0f %8.1f" % (target, r["rc"], r["wall"], r["user"], r["sys"], share, idle))
    ours = sum(r["cpu"] for r in res.values())
    ticks = os.sysconf("SC_CLK_TCK")
    machine = (busy1 - busy0) / ticks
    available = (total1 - total0) / ticks
    busy = 100.0 * (busy1 - busy0) / max(total1 - total0, 1)
    print("total wall %.1fs; CPU of the targets %.1fs; machine busy %.1f CPU-s of %.1f (%.0f%%), of which not ours "
          "%.1f CPU-s; load now %s" % (wall, ours, machine, available, busy, max(machine - ours, 0.0), loadavg()))
    for target in failed:
        print("\n===== %s failed (rc %d); last %d lines of %s =====" % (target, res[target]["rc"], TAIL_LINES, res[target]["log"]))
        sys.stdout.write(tail(res[target]["log"], TAIL_LINES))
    if failed:
        print("\nFAILED: %s" % " ".join(failed))
        return 1
    print("all %d targets passed" % len(order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
