# aifabric.roce — developer entry points. README gives the two a newcomer needs:
#   make demo   (main job on the built-in lab)     make test   (everything CI runs)
SHELL := /bin/bash
VENV ?= .venv
BIN := $(CURDIR)/$(VENV)/bin
PY := $(BIN)/python
COLL_LINK := .collections/ansible_collections/aifabric/roce
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PATH := $(BIN):$(PATH)
export PYTHONPATH := $(CURDIR)/.collections
BUILD ?= build

# Area makefiles (mk/*.mk) append their test targets to TEST_TARGETS and demo steps to DEMO_TARGETS.
TEST_TARGETS := test-unit test-sanity test-lint
DEMO_TARGETS := plan

.PHONY: setup demo test test-unit test-sanity test-lint plan sizing bench bench-plan docs changelog clean
setup: $(VENV)/.installed $(COLL_LINK)

$(VENV)/.installed: requirements.txt requirements-dev.txt tools/setup-system.sh
	bash tools/setup-system.sh
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-dev.txt
	touch $@

$(COLL_LINK):
	mkdir -p $(dir $@) && ln -sfn ../../.. $@

-include mk/*.mk

demo: setup $(DEMO_TARGETS)
	@echo "demo finished: artifacts in $(BUILD)/"

test: setup
	@set -e; for t in $(TEST_TARGETS); do echo "=== make $$t"; $(MAKE) --no-print-directory $$t; done

test-unit: setup
	$(PY) -m pytest -q tests/unit

test-sanity: setup
	bash tools/sanity.sh

test-lint: setup
	$(BIN)/ansible-lint --profile production --offline

plan: setup
	$(BIN)/ansible-playbook playbooks/plan.yml -e build_dir=$(CURDIR)/$(BUILD)/lab

# how many switches, optics and GPUs for a design (docs/sizing.md): make sizing SIZING='-e sizing_gpus=1024'
sizing: setup
	$(BIN)/ansible-playbook playbooks/sizing.yml $(SIZING)

bench: setup
	$(PY) tools/bench_planner.py

# The paths users run (issue 14): plan role vs library, plan.yml at 32K, per-device cost, a 80-switch
# no-op site.yml on simulators, modelled site.yml wall at 4K/32K GPUs. Exits 1 on a missed target.
bench-plan: setup
	$(PY) tools/bench_plan_path.py

docs: setup
	$(PY) tools/gen_docs.py

changelog: setup
	$(BIN)/antsibull-changelog lint

clean:
	rm -rf $(BUILD) tests/output
