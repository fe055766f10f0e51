# From the lab to a real fabric (issue 15): the collection as users install it, the drift report
# in a real browser, and the inventory of a new fabric.
#   make collection            build/collection/aifabric-roce-<version>.tar.gz (tracked files only)
#   make new-fabric NAME=x     inventories/x from inventories/example (real gear: SSH + become, vault/AWX credentials)
#   make report-sample         build/report-sample/drift-report.{html,md,json}: a generated 1,000-host audit
.PHONY: collection new-fabric test-collection test-report

TEST_TARGETS += test-report test-collection

collection: setup
	bash tools/build_collection.sh $(BUILD)/collection

# NAME is read by the shell from the environment (make exports command-line variables), never pasted
# into the recipe by make: quotes, ; and $( ) in it stay data. Checked before anything runs, so it can
# name neither a path (../x, /x) nor a command. make would expand a command-line NAME when it exports
# it (NAME='y$(shell cmd)' ran cmd before any check): it is re-set to its own unexpanded text first.
ifeq ($(origin NAME),command line)
override NAME := $(value NAME)
export NAME
endif
NEW_FABRIC_NAME_RE := ^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$$
new-fabric: setup
	@[[ "$${NAME-}" =~ $(NEW_FABRIC_NAME_RE) ]] || { printf 'make new-fabric: NAME=%q is not a fabric name: give a letter or digit, then letters, digits, _ or - (at most 63, no / . or spaces), e.g. make new-fabric NAME=fab1\n' "$${NAME-}" >&2; exit 2; }
	"$(BIN)/ansible-playbook" playbooks/new_fabric.yml -e "new_fabric_dest=$(CURDIR)/inventories/$$NAME" -e "new_fabric_name=$$NAME"

# the sample 1,000-host drift report (a generated fleet, the collection's own report code): build/report-sample/
.PHONY: report-sample
REPORT_SAMPLE_HOSTS ?= 1000
report-sample: setup
	$(PY) tools/report_sample.py --dest $(CURDIR)/$(BUILD)/report-sample --hosts $(REPORT_SAMPLE_HOSTS)

# headless Chromium renders the HTML report to a PNG; the picture is checked (about 10 s)
test-report: setup
	$(PY) -m pytest -q tests/integration/report

# build + install the tarball into a clean path, run plan / site --check / audit from outside the checkout (about 60 s)
test-collection: setup
	$(PY) -m pytest -q tests/integration/collection

# An operator's first week (issue 41): the preview of a freshly scaffolded inventory, make report-sample (about 30 s)
.PHONY: test-first-week
TEST_TARGETS += test-first-week
test-first-week: setup
	$(PY) -m pytest -q tests/integration/first_week
