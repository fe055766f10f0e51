# Switch side (issue 5): simulated switch lab + switch tests.
TEST_TARGETS += test-switches
.PHONY: lab-up-switches lab-down-switches test-switches test-switches-unit bench-switch bench-races
lab-up: lab-up-switches
lab-down: lab-down-switches

lab-up-switches: setup
	$(PY) tests/lab/switches/lab.py up --fresh

lab-down-switches: setup
	$(PY) tests/lab/switches/lab.py down

test-switches-unit: setup
	$(PY) -m pytest -q tests/unit/nos

# integration against private simulators (own ports/state dir, started by the fixture); the unit
# tests (tests/unit/nos) run once, in `make test-unit` (alone: `make test-switches-unit`)
test-switches: setup
	$(PY) -m pytest -q -p no:logging tests/integration/switches

# no-op switch_config vs bare netmiko connect+show (ratio), and a 64-switch fleet with forks 16
bench-switch: setup
	$(PY) tools/bench_switch.py

# 50 two-controller races per NOS on the switch simulators (issue 18): exits 1 on a lost update or false claim
bench-races: setup
	$(PY) tools/bench_races.py
