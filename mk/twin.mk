# The routed twin (issue 11): leafs and spines as network namespaces running FRR 8.4, wired as the
# plan's cabling, GPU hosts as light namespaces; configured by role aifabric.roce.switch (frr driver).
#   make twin-up [TWIN_PLAN=path/plan.json] [TWIN_INVENTORY=inventories/lab]   make twin-down
# Needs root and the Debian frr package (tools/setup-system.sh installs it). docs/twin.md.
.PHONY: twin-up twin-down twin-converge test-twin test-twin-pytest

TEST_TARGETS += test-twin
# its traffic probes measure real time and lose packets when the machine is saturated (the podman lab's containers
# get cpu cgroups of their own under podman's cgroupfs manager, which nice does not reach): it runs last in the lab's lane, after the podman stages,
# when the CPU-bound lanes are done; normal priority. Run first instead, beside switches, unit and sanity, its rollout
# test lost probes too (2026-11-29): docs/benchmarks.md, "Why the twin still runs after the podman stages".
TEST_LAB_TARGETS += test-twin
TEST_TIMED_TARGETS += test-twin

TWIN_STATE ?= $(CURDIR)/$(BUILD)/twin
TWIN_INVENTORY ?= $(CURDIR)/inventories/lab
TWIN_PLAN ?=
TWIN_SOURCE := $(if $(TWIN_PLAN),--plan $(TWIN_PLAN),--inventory $(TWIN_INVENTORY))
# From an inventory, playbooks/site.yml converges switches and GPU hosts (reached over SSH); from a bare
# plan.json there is no fabric intent for site.yml: the twin configures the hosts, converge.yml the routers.
TWIN_HOSTS := $(if $(TWIN_PLAN),--host-config,)
TWIN_CONVERGE := $(if $(TWIN_PLAN),tests/integration/twin/converge.yml,playbooks/site.yml)

# This checkout's twin: namespaces aif<lab id>-<device>, SSH ports from this checkout's own first port
# (tests/lab/labid.py twin_up_names; TWIN_BASE_PORT=<port> gives another), so two checkouts' twins live side by side.
# Reports of the runs on it: $(TWIN_STATE)/reports/ (validate/, audit/, preflight/).
TWIN_BASE_PORT ?=
twin-up: setup
	$(PY) tests/lab/twin/twin.py up --state $(TWIN_STATE) $(TWIN_SOURCE) $(TWIN_HOSTS) $(if $(TWIN_BASE_PORT),--base-port $(TWIN_BASE_PORT))
	$(BIN)/ansible-playbook -i $(TWIN_STATE)/inventory.yml $(TWIN_CONVERGE)

# the production path: role aifabric.roce.switch -> switch_config -> frr driver over SSH
twin-converge: setup
	$(BIN)/ansible-playbook -i $(TWIN_STATE)/inventory.yml tests/integration/twin/converge.yml

twin-down: setup
	$(PY) tests/lab/twin/twin.py down --state $(TWIN_STATE)

# Molecule scenario extensions/molecule/twin: twin up, site.yml, idempotence, traffic checks and the
# engine tests of tests/integration/twin on that same twin, twin down (namespace prefix and ports from
# AIFABRIC_TEST_PORT_OFFSET). The pytest suite alone: test-twin-pytest (builds its own twin).
test-twin: setup
	cd $(CURDIR) && $(BIN)/molecule test -s twin

test-twin-pytest: setup
	$(PY) -m pytest -q -p no:logging tests/integration/twin

# What a site.yml rollout over every switch of the lab twin costs the traffic (issue 18): probes on every rail,
# drain off then on; exits 1 when a rail loses a probe while its own leaf is not being changed
.PHONY: bench-rollout
bench-rollout: setup
	$(PY) tools/bench_rollout.py

# The twin at scale (issue 20): lab, 1K- and 4K-GPU twins (all leafs and spines as FRR routers, one server group of
# hosts) converged and re-run with site.yml; per phase and per device figures; exits 1 past the targets (~45 min)
.PHONY: bench-twin-scale
bench-twin-scale: setup
	PYTHONPATH=$(CURDIR)/.collections $(PY) tools/bench_twin_scale.py
