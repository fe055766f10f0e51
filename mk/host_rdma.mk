# GPU host RDMA readiness (issue 4): the role tests of host_preflight, host_rdma_qos and
# host_irq_affinity against generated fixture trees (no hardware). The unit tests of the host
# readers/checks (tests/unit/host) run once, in `make test-unit` (alone: `make test-host-rdma-unit`).
.PHONY: test-host-rdma test-host-rdma-unit host-rdma-fixtures host-rdma-preflight

TEST_TARGETS += test-host-rdma

test-host-rdma: setup
	bash tests/integration/host_rdma/run.sh

test-host-rdma-unit: setup
	$(PY) -m pytest -q tests/unit/host

# Write the fixture trees (sysfs/procfs/tool output) to $(BUILD)/host_rdma/fixtures for inspection.
host-rdma-fixtures: setup
	rm -rf $(BUILD)/host_rdma/fixtures && $(PY) tests/fixtures/hosts/gen_fixtures.py $(BUILD)/host_rdma/fixtures
