# GOM live (issue 38, docs/gom.md): the agent, the collector and the localiser. Their unit tests run in make test-unit;
# the twin scenario (the real agents and collector, faults injected) runs in make test-twin (tests/integration/twin).
#   make bench-gom        collector ingest of the 4K plan's probe load (<= 1 core) and a 32K replay: CPU per second
#                         of probes, localisation latency (~3 min)
#   make bench-gom-shard  the sharded collector at 32K (12 decoders, 16 judges, a merger): CPU of each part per second
#                         of probes (each <= 1 core) and the localisation latency (~20 min on the shared machine)
#   make bench-gom-twin   the full fault campaign on a lab twin of its own (root; ~40 min): every link at 100 % and
#                         20 % loss, 2 % loss, cable down, congestion, faults under a drain record
#   make bench-gom-quiet  no fault for 5 minutes on a lab twin while 4 busy processes load the machine: every event
#                         is a false alarm (exits non-zero on one; ~7 min)
.PHONY: bench-gom bench-gom-shard bench-gom-twin bench-gom-quiet

bench-gom: setup
	$(PY) tools/bench_gom.py scale --sizes 4096,32768

bench-gom-shard: setup
	$(PY) tools/bench_gom.py scale --sizes 32768 --groups 4 --decoders 12 --seconds 7

bench-gom-twin: setup
	$(PY) tools/bench_gom.py twin

bench-gom-quiet: setup
	$(PY) tools/bench_gom.py twin --campaign quiet:300:4
