# GOR's scheduler side against a real Slurm (issue 39): munged, slurmctld and a slurmd per plan host, started by the test
# in a temporary directory on this checkout's ports (tests/lab/slurm_cluster.py; Debian slurm-wlm 22.05 and munge from
# tools/setup-system.sh). Checks the plan's topology.conf as slurmctld loads it, drain/resume through
# playbooks/gor_drain.yml and the slurm_node module, and that a node someone else drained is never resumed; and the
# event path, all real: Prometheus (GOM's alert rules) -> Alertmanager -> ansible-rulebook (extensions/eda/rulebooks/gor.yml)
# -> gor_drain.yml -> slurmctld (tests/lab/event_path.py). About 75 s.
.PHONY: test-scheduler

TEST_TARGETS += test-scheduler

test-scheduler: setup
	$(PY) -m pytest -q -s tests/integration/scheduler

# The issue's figures on an otherwise idle machine (AIFABRIC_GOR_STRICT=1: the CI tests' bounds become the Done-when
# ones): a host-link fault drained in Slurm <= 10 s (the playbook, and the whole event path), a congested leaf uplink
# steered <= 30 s from its first loss on the twin (root). About 4 min.
.PHONY: bench-gor
bench-gor: setup
	AIFABRIC_GOR_STRICT=1 $(PY) -m pytest -q -s tests/integration/scheduler
	AIFABRIC_GOR_STRICT=1 $(PY) -m pytest -q -s -p no:logging tests/integration/twin/test_twin.py -k gor_steers

# GOR's twin campaign, every part real (root; ~5 min): GOM agents and collector -> Prometheus -> Alertmanager ->
# ansible-rulebook -> gor_steer.yml / gor_drain.yml on a twin of its own and a real Slurm (tools/bench_gor.py)
.PHONY: bench-gor-twin
bench-gor-twin: setup
	$(PY) tools/bench_gor.py
