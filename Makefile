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
# ... and, for tools/ci_run.py, the lab's stages (TEST_LAB_FIRST side by side, each with a podman lab of its own; then
# TEST_LAB_TARGETS one after another) and other lanes (TEST_LANES): see `test-parallel`.
TEST_LAB_FIRST :=
TEST_LAB_TARGETS :=
# ansible-test sanity is the longest CPU-bound check: a lane of its own, beside unit and lint
TEST_LANES := test-sanity
# targets whose tests measure real time: tools/ci_run.py runs every other target under nice
TEST_TIMED_TARGETS :=
DEMO_TARGETS := plan

.PHONY: setup demo test test-serial test-unit test-sanity test-lint plan sizing bench bench-plan docs changelog clean
setup: $(VENV)/.installed $(COLL_LINK)

# --no-compile: Python compiles what is imported, once, on first use; pip compiling every file of the ansible bundle
# took 45 of the install's 74 CPU-s (CI's fresh clone, before its lanes start)
$(VENV)/.installed: requirements.txt requirements-dev.txt tools/setup-system.sh
	bash tools/setup-system.sh
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --no-compile --disable-pip-version-check -r requirements-dev.txt
	touch $@

$(COLL_LINK):
	mkdir -p $(dir $@) && ln -sfn ../../.. $@

-include mk/*.mk

demo: setup $(DEMO_TARGETS)
	@echo "demo finished: artifacts in $(BUILD)/"

# `make test` (what CI runs) = `make test-parallel` below; `make test-serial` runs the same targets one after another.
test: test-parallel

test-serial: setup
	@set -e; for t in $(TEST_TARGETS); do echo "=== make $$t"; $(MAKE) --no-print-directory $$t; done

# Every target of TEST_TARGETS through tools/ci_run.py (issue 28 item 3): the lab's lane (TEST_LAB_FIRST, the stages that
# bring a podman lab up and down, side by side, each on a lab of its own; then TEST_LAB_TARGETS one after another, when
# no podman lab runs), each lane of TEST_LANES (targets joined with +) on its own, everything else in one shared
# lane, the lanes side by side. The podman stages run ahead of the CPU-bound lanes (--critical: the twin waits for
# them). Per-target logs and a wall/CPU/idle table in $(BUILD)/ci/.
# CI_JOBS=1 runs all of them one after another, in TEST_TARGETS order (before/after figures).
# CI_TARGET: past this many seconds the run warns, naming its longest lane (our aim: 20 min from a fresh clone with its
# set-up); CI_BUDGET: past this many it fails (0: none; neither with CI_JOBS=1), well inside CI's hard 90 min. Both
# count from .ci/run's start (AIF_CI_STARTED), else from the lanes' start.
CI_JOBS ?= 0
CI_TARGET ?= 1200
CI_BUDGET ?= 3600
.PHONY: test-parallel
empty :=
space := $(empty) $(empty)
test-parallel: setup
	$(PY) tools/ci_run.py --jobs $(CI_JOBS) --budget $(if $(filter 1,$(CI_JOBS)),0,$(CI_BUDGET)) --target $(if $(filter 1,$(CI_JOBS)),0,$(CI_TARGET)) --logs $(CURDIR)/$(BUILD)/ci --timed "$(TEST_TIMED_TARGETS)" \
	  --critical "$(TEST_LAB_FIRST)" --lane "$(subst $(space),|,$(strip $(TEST_LAB_FIRST))) $(TEST_LAB_TARGETS)" \
	  $(foreach lane,$(TEST_LANES),--lane "$(subst +, ,$(lane))") -- $(TEST_TARGETS)

test-unit: setup
	$(PY) -m pytest -q tests/unit

test-sanity: setup
	bash tools/sanity.sh

# A clean HOME and this checkout's collections only: a copy of aifabric.roce that Molecule's prerun left in
# ~/.ansible/collections (another checkout's, or an older one) must not answer for this one.
test-lint: setup
	mkdir -p $(BUILD)/lint-home
	HOME=$(CURDIR)/$(BUILD)/lint-home ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/.collections $(BIN)/ansible-lint --profile production --offline

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
