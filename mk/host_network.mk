# GPU host network (issue 3): the virtual lab's GPU hosts and the host_network Molecule scenario.
# lab-up / lab-down are prerequisite-only targets so other areas can add their own parts
# (e.g. `lab-up: lab-up-switches` in mk/switches.mk).
.PHONY: lab-up lab-down lab-status lab-up-hosts lab-down-hosts test-host-network bench-host-network

TEST_TARGETS += test-host-network
TEST_LAB_TARGETS += test-host-network

lab-up: lab-up-hosts
lab-down: lab-down-hosts

lab-up-hosts: setup
	$(PY) tests/lab/hosts/lab.py up

lab-down-hosts: setup
	$(PY) tests/lab/hosts/lab.py down

lab-status: setup
	$(PY) tests/lab/hosts/lab.py status

test-host-network: setup
	cd $(CURDIR) && $(BIN)/molecule test -s host_network

bench-host-network: setup lab-up-hosts
	$(PY) tools/bench_host_network.py
