"""Run the test targets of `make test` in lanes, in parallel, with per-target figures (issue 28 item 3).

    ci_run.py --lane "test-e2e|test-host-network test-twin" --lane test-switches -- test-unit ...

Each --lane is a list of steps that run one after another in the given order; a step is one target, or several
joined with `|` that run side by side (the step ends when all of them have). Lanes run side by side. Every target
named after `--` and in no lane goes to one shared lane (the CPU-bound checks: unit, sanity, lint...), in the given
order. `--jobs 1` runs everything one after another (the old `make test`, for before/after figures).

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
them (unit, sanity, lint, the podman lab) cannot starve a probe into a false loss on a 2-core machine. Targets on the
critical path (--critical: the podman lab's stages, which the twin waits for) run at `nice -n <--critical-nice>`
(4 by default): ahead of the CPU-bound lanes, which have time to spare, behind the timed targets.

Each target runs in a session of its own (sched(7), "The autogroup feature"). With autogroups on
(kernel.sched_autogroup_enabled, Debian's default) the kernel shares the CPU between sessions first: every simulator,
FRR daemon and podman container that starts a session of its own weighs as much as a whole session, so `nice` inside
the one session all targets shared ordered them only among themselves, and the critical path got a small share of one
session (test-e2e: 198 s alone, 790 s in CI). Now the timed and critical targets' sessions weigh as much as any other
(autogroup nice 0) and every other target's session less (`--group-nice`, 6 by default: /proc/<pid>/autogroup; not 10,
which would starve the CPU-bound lanes behind a dozen simulators). Killed (SIGTERM, SIGINT),
the run stops every target's session before it exits, so no target outlives it.

`--target S` (0: none) warns, naming the longest lane, when the run took longer than S seconds: the team's aim (20 min),
which a slower machine may miss without anything being wrong. `--budget S` (0: none) fails the run past S seconds, so
CI cannot silently grow towards its hard limit; every target still runs and is reported. When AIF_CI_STARTED (epoch seconds) is
set, as .ci/run sets it before `make test`, the time counts from then: the fresh clone's set-up (venv, pip) included.
"""
import argparse
import os
import signal
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
    def __init__(self, logs, make, timed=(), nice=10, critical=(), critical_nice=4, group_nice=6):
        self.logs = logs
        self.make = make
        self.timed = set(timed)
        self.nice = nice
        self.critical = set(critical) - self.timed
        self.critical_nice = critical_nice
        self.group_nice = group_nice
        self.results = {}
        self.running = {}   # target -> Popen, each the leader of its own session
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
        nice = self.niceness(target)
        if nice:
            command = ["nice", "-n", str(nice)] + command
        with open(log, "w", encoding="utf-8") as out:
            proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            with self.lock:
                self.running[target] = proc
            group_nice(proc.pid, 0 if target in self.timed or target in self.critical else self.group_nice)
            # wait4: this target's own CPU plus that of every descendant it waited for
            _pid, status, usage = os.wait4(proc.pid, 0)
            with self.lock:
                self.running.pop(target, None)
        wall = time.monotonic() - began
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        cpu = usage.ru_utime + usage.ru_stime
        with self.lock:
            self.results[target] = {"rc": code, "wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime,
                                    "cpu": cpu, "log": log}
        self.say("%s %s in %.0fs (CPU %.0fs)" % ("ok  " if code == 0 else "FAIL", target, wall, cpu))

    def stop(self, signum, _frame):
        """Killed: stop every running target's session (each its own process group), then exit."""
        with self.lock:
            procs = list(self.running.items())
        for target, proc in procs:
            self.say("stopping %s (signal %d)" % (target, signum))
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except OSError:
                pass
        sys.exit(128 + signum)   # in the main thread; the lane threads are daemons

    def niceness(self, target):
        if target in self.timed:
            return 0
        return self.critical_nice if target in self.critical else self.nice

    def run_lane(self, steps):
        """Each step in order; the targets of one step side by side."""
        for step in steps:
            if len(step) == 1:
                self.run_target(step[0])
                continue
            threads = [threading.Thread(target=self.run_target, args=(target,), daemon=True) for target in step]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()


def group_nice(pid, nice):
    """Give the autogroup of ``pid``'s session the niceness ``nice`` (sched(7)); a kernel without autogroups
    (no /proc/<pid>/autogroup) shares by process, where the process's own nice already does it."""
    try:
        with open("/proc/%d/autogroup" % pid, "w", encoding="ascii") as handle:
            handle.write(str(nice))
    except OSError:
        pass


def ci_started():
    """When .ci/run began (AIF_CI_STARTED, epoch seconds), or None."""
    try:
        return float(os.environ.get("AIF_CI_STARTED", ""))
    except ValueError:
        return None


def lane_text(lanes):
    """[a|b c] [d e]: each lane in brackets, its steps in order, a step's side-by-side targets joined with |."""
    return " ".join("[%s]" % " ".join("|".join(step) for step in lane) for lane in lanes)


def lane_wall(runner, lane):
    """Wall seconds of one lane: the sum over its steps of the step's longest target."""
    return sum(max(runner.results[t]["wall"] for t in step) for step in lane)


def tail(path, lines):
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.readlines()
    return "".join(text[-lines:])


def budget_text(args):
    """The time limits of the run, as the first line says them."""
    said = ["%s %g s" % (name, value) for name, value in (("target", args.target), ("budget", args.budget)) if value]
    return ("; " + ", ".join(said)) if said else ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lane", action="append", default=[],
                        help="steps run one after another (space-separated); a step's targets joined with | run side by side")
    parser.add_argument("--jobs", type=int, default=0, help="1: everything one after another (default: lanes in parallel)")
    parser.add_argument("--logs", default=os.path.join(ROOT, "build", "ci"))
    parser.add_argument("--timed", action="append", default=[],
                        help="targets that measure real time (space-separated): run at normal priority")
    parser.add_argument("--nice", type=int, default=10, help="niceness of every other target (0: none)")
    parser.add_argument("--critical", action="append", default=[],
                        help="targets on the critical path (space-separated): run at --critical-nice")
    parser.add_argument("--critical-nice", type=int, default=4, help="niceness of the --critical targets")
    parser.add_argument("--group-nice", type=int, default=6,
                        help="autogroup niceness of the sessions of the targets neither timed nor critical (those: 0)")
    parser.add_argument("--budget", type=float, default=0, help="fail when the run's wall time exceeds this many seconds (0: no budget)")
    parser.add_argument("--target", type=float, default=0, help="warn when the run's wall time exceeds this many seconds (0: none)")
    parser.add_argument("targets", nargs="*", help="every target of the run, in order")
    args = parser.parse_args(argv)

    order = list(args.targets)
    named = [t for lane in args.lane for step in lane.split() for t in step.split("|") if t]
    # a lane: [step, ...], a step: [target, ...] (side by side); targets not in this run drop out
    lanes = [[s for s in ([t for t in step.split("|") if t in order] for step in lane.split()) if s] for lane in args.lane]
    laned = {t for lane in lanes for step in lane for t in step}
    unknown = sorted(set(named) - set(order))
    lanes = [lane for lane in lanes if lane]
    rest = [[t] for t in order if t not in laned]
    if rest:
        lanes.append(rest)
    if args.jobs == 1:
        lanes = [[[t] for t in order]]

    os.makedirs(args.logs, exist_ok=True)
    if os.environ.get("AIFABRIC_TEST_PORT_OFFSET"):
        offset_note = "test port offset %d (AIFABRIC_TEST_PORT_OFFSET)" % labid.port_offset()   # refuses a malformed one
    else:
        # held (the lock stays open) until this process ends: another checkout's run takes another slot
        offset, _held = labid.claim_port_offset()
        os.environ["AIFABRIC_TEST_PORT_OFFSET"] = str(offset)
        offset_note = "test port offset %d (this checkout's, claimed on the machine)" % offset
    timed = [t for group in args.timed for t in group.split()]
    critical = [t for group in args.critical for t in group.split() if t not in timed]
    runner = Runner(args.logs, [os.environ.get("MAKE", "make"), "--no-print-directory"], timed, args.nice, critical,
                    args.critical_nice, args.group_nice)
    skipped = ("; not in this run: " + " ".join(unknown)) if unknown else ""
    runner.say("load %s on %d CPUs; lanes: %s%s; at normal priority: %s; at nice %d: %s; the rest at nice %d (their "
               "sessions' autogroups at nice %d)%s; %s"
               % (loadavg(), os.cpu_count() or 0, lane_text(lanes), skipped, " ".join(timed) or "none", args.critical_nice,
                  " ".join(critical) or "none", args.nice, args.group_nice, budget_text(args), offset_note))
    signal.signal(signal.SIGTERM, runner.stop)
    signal.signal(signal.SIGINT, runner.stop)
    busy0, total0 = machine_cpu()
    threads = [threading.Thread(target=runner.run_lane, args=(lane,), daemon=True) for lane in lanes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    busy1, total1 = machine_cpu()
    wall = time.monotonic() - runner.start
    started = ci_started()
    took = time.time() - started if started else wall

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
    walls = [(lane_wall(runner, lane), lane) for lane in lanes]
    print("lanes (wall s): %s" % "; ".join("%s %.0f" % (lane_text([lane]), w) for w, lane in walls))
    if started:
        print("since .ci/run began (AIF_CI_STARTED): %.0f s, of which set-up before the lanes %.0f s" % (took, took - wall))
    over = None
    limit = args.budget if args.budget and took > args.budget else (args.target if args.target and took > args.target else 0)
    if limit:
        longest_wall, longest = max(walls, key=lambda item: item[0])
        targets = ", ".join("%s %.0f s" % (t, runner.results[t]["wall"]) for step in longest for t in step)
        over = ("CI took %.0f s%s, over its %s of %g s (%s): the longest lane is %s (%.0f s: %s). Make that "
                "lane shorter or move a long figure to a benchmark; a machine busy with other work (not ours %.0f CPU-s "
                "above) slows every target" % (took, " (set-up included)" if started else "",
                                               "budget" if limit == args.budget else "target", limit,
                                               "CI_BUDGET" if limit == args.budget else "CI_TARGET",
                                               lane_text([longest]), longest_wall, targets, max(machine - ours, 0.0)))
    for target in failed:
        print("\n===== %s failed (rc %d); last %d lines of %s =====" % (target, res[target]["rc"], TAIL_LINES, res[target]["log"]))
        sys.stdout.write(tail(res[target]["log"], TAIL_LINES))
    if over:
        print("\n%s: %s" % ("OVER BUDGET" if limit == args.budget else "OVER TARGET (a warning, not a failure)", over))
    if failed:
        print("\nFAILED: %s" % " ".join(failed))
        return 1
    if over and limit == args.budget:
        return 1
    print("all %d targets passed" % len(order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
