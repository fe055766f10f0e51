# GPU host RDMA readiness (issue 4): unit tests of the host readers/checks and the role tests of
# host_preflight, host_rdma_qos and host_irq_affinity against generated fixture trees (no hardware).
.PHONY: test-host-rdma host-rdma-fixtures host-rdma-preflight

TEST_TARGETS += test-host-rdma

test-host-rdma: setup
	$(PY) -m pytest -q tests/unit/host
	bash tests/integration/host_rdma/run.sh

# Write the fixture trees (sysfs/procfs/tool output) to $(BUILD)/host_rdma/fixtures for inspection.
host-rdma-fixtures: setup
	rm -rf $(BUILD)/host_rdma/fixtures && $(PY) tests/fixtures/hosts/gen_fixtures.py $(BUILD)/host_rdma/fixtures
