# Issue 7 (beyond bring-up): GOR rank order, GOM probe plan, Kubernetes rail networks, RoCE telemetry.
# Unit and role tests live under tests/unit/{gor,gom,k8s,telemetry} and run with `make test-unit`;
# test-beyond runs them alone plus the two benchmarks (figures printed); bench_probes fails when
# GOM planning of 16K GPUs misses its target (< 1 s CPU); bench-beyond also plans 131K (< 10 s).
.PHONY: test-beyond bench-beyond

TEST_TARGETS += test-beyond

test-beyond: setup
	$(PY) -m pytest -q tests/unit/gor tests/unit/gom tests/unit/k8s tests/unit/telemetry
	$(PY) tools/bench_rank_order.py
	$(PY) tools/bench_probes.py --no-random

bench-beyond: setup
	$(PY) tools/bench_rank_order.py
	$(PY) tools/bench_probes.py --big
