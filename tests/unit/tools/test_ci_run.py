"""tools/ci_run.py (issue 28 item 3), with a stand-in for make: lanes in parallel, a lane's targets in order,
every target reported, a failure's log shown and the exit status 1."""
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import labid  # noqa: E402  pylint: disable=wrong-import-position
FAKE_MAKE = r'''#!/bin/sh
# stand-in for make: the target is the last argument; it records start and end and sleeps
t="$(eval echo \${$#})"
echo "start $t $(date +%s.%N)" >> "$CI_TRACE"
echo "nice $t $(nice)" >> "$CI_TRACE"
echo "session $t $(ps -o sid= -p $$)" >> "$CI_TRACE"
if [ -r /proc/self/autogroup ]; then echo "group $t $(awk '{print $3}' /proc/self/autogroup)" >> "$CI_TRACE"; fi
echo "offset $t ${AIFABRIC_TEST_PORT_OFFSET:--1}" >> "$CI_TRACE"
echo "output of $t"
case "$t" in
  slow-*) sleep 1 ;;
  hang-*) echo "pid $t $$" >> "$CI_TRACE"; sleep 30 ;;
  fail-*) sleep 0.2; echo "the reason $t failed"; exit 3 ;;
esac
echo "end $t $(date +%s.%N)" >> "$CI_TRACE"
'''


def run(tmp_path, *args, **env_changes):
    make = tmp_path / "make"
    make.write_text(FAKE_MAKE)
    make.chmod(0o755)
    trace = tmp_path / "trace"
    if trace.exists():
        trace.unlink()
    env = dict(os.environ, MAKE=str(make), CI_TRACE=str(trace))
    env.pop("AIF_CI_STARTED", None)   # set by .ci/run around the whole suite: these runs count from their own start
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "ci_run.py"), "--logs", str(tmp_path / "logs")] + list(args),
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    events = {}
    for line in (trace.read_text().splitlines() if trace.exists() else []):
        what, target, when = line.split()
        events[(what, target)] = float(when)
    return proc, events


def test_lanes_run_side_by_side_and_each_lane_in_order(tmp_path):
    proc, ev = run(tmp_path, "--lane", "slow-lab1 slow-lab2", "--", "slow-unit", "slow-lab1", "quick-lint", "slow-lab2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ev[("start", "slow-lab2")] >= ev[("end", "slow-lab1")]          # one lane: one after another
    assert ev[("start", "slow-unit")] < ev[("end", "slow-lab1")]           # two lanes: side by side
    assert ev[("start", "quick-lint")] >= ev[("end", "slow-unit")]         # the shared lane keeps the given order
    for target in ("slow-unit", "slow-lab1", "quick-lint", "slow-lab2"):
        assert "\n%s " % target in proc.stdout
        assert (tmp_path / "logs" / (target + ".log")).read_text().startswith("output of %s" % target)
    assert "all 4 targets passed" in proc.stdout


def test_a_failure_goes_on_then_shows_its_log_and_exits_1(tmp_path):
    proc, ev = run(tmp_path, "--", "fail-unit", "quick-lint")
    assert proc.returncode == 1
    assert ("start", "quick-lint") in ev                                   # the others still run
    assert "fail-unit failed (rc 3)" in proc.stdout and "the reason fail-unit failed" in proc.stdout
    assert proc.stdout.rstrip().endswith("FAILED: fail-unit")


def test_jobs_1_runs_everything_one_after_another(tmp_path):
    proc, ev = run(tmp_path, "--jobs", "1", "--lane", "slow-a", "--", "slow-a", "slow-b")
    assert proc.returncode == 0, proc.stdout
    assert ev[("start", "slow-b")] >= ev[("end", "slow-a")]


def test_timed_targets_keep_normal_priority_and_the_rest_run_niced(tmp_path):
    proc, ev = run(tmp_path, "--timed", "quick-twin", "--lane", "quick-twin", "--", "quick-unit", "quick-twin")
    assert proc.returncode == 0, proc.stdout
    base = os.nice(0)
    assert ev[("nice", "quick-twin")] == base and ev[("nice", "quick-unit")] == min(base + 10, 19)
    proc, ev = run(tmp_path, "--nice", "0", "--", "quick-unit")
    assert ev[("nice", "quick-unit")] == base


def test_each_target_runs_in_a_session_of_its_own_with_its_niceness_as_the_group_s(tmp_path):
    """Autogroups share the CPU between sessions first: a target's nice only counts within its own session, so each
    target gets a session of its own, the timed and critical ones' autogroups at nice 0, the rest at --group-nice."""
    proc, ev = run(tmp_path, "--timed", "quick-twin", "--critical", "quick-e2e", "--critical-nice", "3",
                   "--", "quick-unit", "quick-e2e", "quick-twin")
    assert proc.returncode == 0, proc.stdout
    sessions = {ev[("session", t)] for t in ("quick-unit", "quick-e2e", "quick-twin")}
    assert len(sessions) == 3 and os.getsid(0) not in sessions
    if os.path.exists("/proc/self/autogroup"):
        assert [ev[("group", t)] for t in ("quick-twin", "quick-e2e", "quick-unit")] == [0, 0, 6]
        _proc, ev = run(tmp_path, "--group-nice", "7", "--", "quick-unit")
        assert ev[("group", "quick-unit")] == 7


def test_a_killed_run_stops_every_target(tmp_path):
    make = tmp_path / "make"
    make.write_text(FAKE_MAKE)
    make.chmod(0o755)
    trace = tmp_path / "trace"
    env = dict(os.environ, MAKE=str(make), CI_TRACE=str(trace))
    runner = subprocess.Popen([sys.executable, os.path.join(ROOT, "tools", "ci_run.py"), "--logs", str(tmp_path / "logs"),
                               "--", "hang-a", "hang-b"], env=env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not trace.exists() or "pid hang-a" not in trace.read_text()):
        time.sleep(0.1)
    pid = int(re.search(r"^pid hang-a (\d+)$", trace.read_text(), re.M).group(1))
    runner.terminate()
    out, _err = runner.communicate(timeout=20)
    assert runner.returncode == 128 + 15 and "stopping hang-a (signal 15)" in out
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists("/proc/%d" % pid):
        time.sleep(0.1)
    assert not os.path.exists("/proc/%d" % pid), "the target outlived the run"


def test_every_target_gets_one_test_port_offset_and_a_given_one_wins(tmp_path):
    """Unset, the run claims a test port offset for the checkout (labid.claim_port_offset) and every target gets it;
    set, it is handed on as given; a malformed one stops the run with the fix before any target starts."""
    proc, ev = run(tmp_path, "--lane", "quick-twin", "--", "quick-unit", "quick-twin", AIFABRIC_TEST_PORT_OFFSET=None)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    offsets = {ev[("offset", "quick-unit")], ev[("offset", "quick-twin")]}
    assert len(offsets) == 1 and int(offsets.pop()) in {labid.offset_of_slot(s) for s in range(labid.OFFSET_SLOTS)}
    assert "(this checkout's, claimed on the machine)" in proc.stdout
    proc, ev = run(tmp_path, "--", "quick-unit", AIFABRIC_TEST_PORT_OFFSET="3000")
    assert ev[("offset", "quick-unit")] == 3000 and "test port offset 3000 (AIFABRIC_TEST_PORT_OFFSET)" in proc.stdout
    proc, ev = run(tmp_path, "--", "quick-unit", AIFABRIC_TEST_PORT_OFFSET="3OO")
    assert proc.returncode == 1 and "AIFABRIC_TEST_PORT_OFFSET='3OO': give a whole number" in proc.stderr and not ev


def test_a_step_runs_its_targets_side_by_side_and_the_next_step_waits_for_all(tmp_path):
    """--lane "a|b c": a and b side by side, c after both (the podman stages, each with a lab of its own, then the twin)."""
    # at nice 0: a niced session of its own gets less CPU on a loaded machine and the walls would stretch
    proc, ev = run(tmp_path, "--nice", "0", "--group-nice", "0", "--lane", "slow-e2e|quick-hostnet slow-twin", "--",
                   "slow-e2e", "quick-hostnet", "slow-twin")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ev[("start", "quick-hostnet")] < ev[("end", "slow-e2e")]        # one step: side by side
    assert ev[("start", "slow-twin")] >= max(ev[("end", "slow-e2e")], ev[("end", "quick-hostnet")])
    assert "lanes: [slow-e2e|quick-hostnet slow-twin]" in proc.stdout
    assert "lanes (wall s): [slow-e2e|quick-hostnet slow-twin] 2" in proc.stdout   # the step's longest, then the twin


def test_critical_targets_run_between_the_timed_ones_and_the_rest(tmp_path):
    proc, ev = run(tmp_path, "--timed", "quick-twin", "--critical", "quick-e2e quick-twin", "--critical-nice", "3",
                   "--", "quick-unit", "quick-e2e", "quick-twin")
    assert proc.returncode == 0, proc.stdout
    base = os.nice(0)
    assert ev[("nice", "quick-twin")] == base                              # timed wins over critical
    assert ev[("nice", "quick-e2e")] == min(base + 3, 19) and ev[("nice", "quick-unit")] == min(base + 10, 19)
    assert "at nice 3: quick-e2e;" in proc.stdout


def test_a_run_over_its_budget_fails_naming_its_longest_lane(tmp_path):
    """Every target passes, yet the run took longer than --budget: exit 1, naming the lane to shorten."""
    proc, ev = run(tmp_path, "--budget", "0.5", "--lane", "slow-a slow-b", "--", "quick-unit", "slow-a", "slow-b")
    assert proc.returncode == 1 and ("end", "slow-b") in ev
    said = proc.stdout.split("OVER BUDGET: ", 1)[1]
    assert re.match(r"CI took \d+ s, over its budget of 0.5 s \(CI_BUDGET\): the longest lane is \[slow-a slow-b\] "
                    r"\(\d+ s: slow-a \d+ s, slow-b \d+ s\)\. Make that lane shorter", said), said
    assert "FAILED" not in proc.stdout and "all 3 targets passed" not in proc.stdout
    proc, ev = run(tmp_path, "--budget", "30", "--", "quick-unit", "slow-a")
    assert proc.returncode == 0 and "OVER BUDGET" not in proc.stdout and "budget 30 s" in proc.stdout


def test_a_run_over_its_target_only_warns(tmp_path):
    """--target is the aim (20 min): past it the run says so, naming its longest lane, and still passes."""
    proc, ev = run(tmp_path, "--target", "0.5", "--budget", "60", "--lane", "slow-a slow-b", "--", "quick-unit", "slow-a", "slow-b")
    assert proc.returncode == 0, proc.stdout
    said = proc.stdout.split("OVER TARGET (a warning, not a failure): ", 1)[1]
    assert re.match(r"CI took \d+ s, over its target of 0.5 s \(CI_TARGET\): the longest lane is \[slow-a slow-b\]", said), said
    assert "all 3 targets passed" in proc.stdout and "OVER BUDGET" not in proc.stdout
    assert "target 0.5 s, budget 60 s" in proc.stdout


def test_the_budget_counts_from_ci_run_s_start_set_up_included(tmp_path):
    """.ci/run sets AIF_CI_STARTED before `make test`: the set-up before the lanes (venv, pip) counts too."""
    began = "%.3f" % (time.time() - 100)
    proc, ev = run(tmp_path, "--budget", "60", "--", "quick-unit", AIF_CI_STARTED=began)
    assert proc.returncode == 1 and ("end", "quick-unit") in ev
    assert re.search(r"since \.ci/run began \(AIF_CI_STARTED\): 10\d s, of which set-up before the lanes 10\d s", proc.stdout), proc.stdout
    assert re.search(r"OVER BUDGET: CI took 10\d s \(set-up included\), over its budget of 60 s", proc.stdout), proc.stdout
    proc, ev = run(tmp_path, "--budget", "60", "--", "quick-unit", AIF_CI_STARTED="%.3f" % time.time())
    assert proc.returncode == 0 and "OVER BUDGET" not in proc.stdout
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as handle:
        script = handle.read()
    assert script.index("export AIF_CI_STARTED") < script.index("make test")
