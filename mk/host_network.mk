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

# Molecule adds its own inventory, so the lab inventory's lab_id (computed from inventory_dir) would name
# another lab: hand the checkout's id over instead (tests/lab/labid.py; AIFABRIC_LAB_ID set by the caller wins).
test-host-network: setup
	cd $(CURDIR) && AIFABRIC_LAB_ID=$$($(PY) -c 'import sys; sys.path.insert(0, "tests/lab"); import labid; print(labid.lab_id())') \
		$(BIN)/molecule test -s host_network

bench-host-network: setup lab-up-hosts
	$(PY) tools/bench_host_network.py
