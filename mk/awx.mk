# AWX / Tower: execution environment build context and the ansible-runner test.
.PHONY: ee-context test-awx

ee-context: setup
	rm -rf $(BUILD)/ee && mkdir -p $(BUILD)/ee
	bash tools/build_collection.sh $(BUILD)/ee
	cp $(BUILD)/ee/aifabric-roce-*.tar.gz $(BUILD)/ee/aifabric-roce.tar.gz
	cd awx && $(BIN)/ansible-builder create -f execution-environment.yml -c ../$(BUILD)/ee/context
	@echo "EE build context: $(BUILD)/ee/context (podman build -f Containerfile there, with a reachable registry)"

test-awx: ee-context
	$(PY) -m pytest -q tests/integration/awx
TEST_TARGETS += test-awx
