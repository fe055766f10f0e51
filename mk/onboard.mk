# From the lab to a real fabric (issue 15): the collection as users install it, the drift report
# in a real browser, and the inventory of a new fabric.
#   make collection            build/collection/aifabric-roce-<version>.tar.gz (tracked files only)
#   make new-fabric NAME=x     inventories/x from inventories/example (real gear: SSH + become, vault/AWX credentials)
.PHONY: collection new-fabric test-collection test-report

TEST_TARGETS += test-report test-collection

collection: setup
	bash tools/build_collection.sh $(BUILD)/collection

new-fabric: setup
	@test -n "$(NAME)" || { echo "usage: make new-fabric NAME=<fabric name>"; exit 2; }
	$(BIN)/ansible-playbook playbooks/new_fabric.yml -e new_fabric_dest=$(CURDIR)/inventories/$(NAME)

# headless Chromium renders the HTML report to a PNG; the picture is checked (about 10 s)
test-report: setup
	$(PY) -m pytest -q tests/integration/report

# build + install the tarball into a clean path, run plan / site --check / audit from outside the checkout (about 60 s)
test-collection: setup
	$(PY) -m pytest -q tests/integration/collection
