# End to end on the lab (issue 6): the demo flow with its expectations, and the same as a CI test.
.PHONY: demo-run test-e2e
DEMO_TARGETS += lab-up demo-run

demo-run: setup
	$(PY) tools/demo.py
	@echo "The lab stays up: explore with ansible (inventories/lab), stop it with 'make lab-down'."

# Bring-up, idempotence, zero-drift audit (also through ansible-runner, AWX layout), injected host
# and switch drift found exactly, repair. Tears the lab down afterwards, pass or fail.
test-e2e: setup
	$(MAKE) --no-print-directory lab-up
	$(PY) tools/demo.py --with-runner; rc=$$?; $(MAKE) --no-print-directory lab-down; exit $$rc
TEST_TARGETS += test-e2e
# the checkout's podman lab and switch simulators: side by side with test-host-network's lab, before the twin
TEST_LAB_FIRST += test-e2e
