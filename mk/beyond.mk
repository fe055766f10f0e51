# Issue 7 (beyond bring-up): GOR rank order, GOM probe plan, Kubernetes rail networks, RoCE telemetry.
# Unit and role tests live under tests/unit/{gor,gom,k8s,telemetry} and run once, in `make test-unit`
# (`make test-beyond-unit` runs only them). test-beyond runs the two benchmarks, which exit 1 on a
# missed target: bench_rank_order when the topology order is worse than native or random,
# bench_probes when GOM planning of 16K GPUs misses < 1 s CPU; bench-beyond also plans 131K (< 10 s).
.PHONY: test-beyond test-beyond-unit bench-beyond

TEST_TARGETS += test-beyond

test-beyond: setup
	$(PY) tools/bench_rank_order.py
	$(PY) tools/bench_probes.py --no-random

test-beyond-unit: setup
	$(PY) -m pytest -q tests/unit/gor tests/unit/gom tests/unit/k8s tests/unit/telemetry

bench-beyond: setup
	$(PY) tools/bench_rank_order.py
	$(PY) tools/bench_probes.py --big
