# GPU host network (issue 3): the virtual lab's GPU hosts and the host_network Molecule scenario.
# lab-up / lab-down are prerequisite-only targets so other areas can add their own parts
# (e.g. `lab-up: lab-up-switches` in mk/switches.mk).
.PHONY: lab-up lab-down lab-status lab-up-hosts lab-down-hosts test-host-network bench-host-network

TEST_TARGETS += test-host-network
# a podman lab of its own (below): side by side with test-e2e's, before the twin
TEST_LAB_FIRST += test-host-network

lab-up: lab-up-hosts
lab-down: lab-down-hosts

lab-up-hosts: setup
	$(PY) tests/lab/hosts/lab.py up

lab-down-hosts: setup
	$(PY) tests/lab/hosts/lab.py down

lab-status: setup
	$(PY) tests/lab/hosts/lab.py status

# Molecule adds its own inventory, so the lab inventory's lab_id (computed from inventory_dir) would name
# another lab: hand the id over. The scenario destroys and recreates its lab, so it gets a lab of its own, not the
# checkout's (`make lab-up`, test-e2e): `labid.py lab-id --lab host-network`, derived from the checkout's id (or from
# AIFABRIC_LAB_ID when the caller sets one), so `make test` runs it beside test-e2e.
test-host-network: setup
	cd $(CURDIR) && AIFABRIC_LAB_ID=$$($(PY) tests/lab/labid.py lab-id --lab host-network) \
		$(BIN)/molecule test -s host_network

bench-host-network: setup lab-up-hosts
	$(PY) tools/bench_host_network.py
