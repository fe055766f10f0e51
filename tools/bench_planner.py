"""Planner benchmark: wall time and peak memory of planning large fabrics.

Each size runs in a fresh interpreter so peak RSS is its own. Prints a table and exits 1 when a
target is missed: 32K GPUs planned in < 2 s with peak RSS < 500 MB, 131K/32K time ratio < 6
(4x the GPUs: roughly linear).
Usage: python tools/bench_planner.py [--repeat N]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
servers, spines_per_plane, spine_ports, repeat = (int(a) for a in sys.argv[2:6])
intent = {
    "name": "bench", "max_rails": 8,
    "servers": {"count": servers, "name_pattern": "gpu{index:05d}", "servers_per_group": 64,
                "nics": [{"netdev": "ens%dnp0" % r, "rdma": "mlx5_%d" % r, "speed_gbps": 400} for r in range(8)]},
    "switch_models": {
        "leaf-128x400": {"downlinks": {"ports": "1-64", "speed_gbps": 400}, "uplinks": {"ports": "65-128", "speed_gbps": 400}},
        "spine": {"port_name": "Ethernet{port}/{lane}",
                  "downlinks": {"ports": "1-%d" % (spine_ports // 2), "breakout": 2, "speed_gbps": 400}}},
    "leafs": {"model": "leaf-128x400", "platform": "dell_sonic"},
    "spines": {"model": "spine", "count": 8 * spines_per_plane, "planes": 8, "platform": "dell_sonic"},
    "addressing": {"supernet": "10.0.0.0/9", "rail_prefixlen": 13, "fabric_link_pool": "100.64.0.0/11",
                   "leaf_loopback_pool": "100.127.0.0/18", "spine_loopback_pool": "100.127.64.0/22"},
}
best = None
plan = None
for _ in range(repeat):
    plan = None  # keep one plan alive at a time: peak RSS is one plan's
    start = time.perf_counter()
    plan = build_plan(intent)
    elapsed = time.perf_counter() - start
    best = elapsed if best is None else min(best, elapsed)
start = time.perf_counter()
text = json.dumps(plan)
dump = time.perf_counter() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
nics = sum(len(h["nics"]) for h in plan["hosts"].values())
print(json.dumps({"gpus": plan["sizing"]["gpus"], "nics": nics, "leafs": plan["sizing"]["leafs"],
                  "spines": plan["sizing"]["spines"], "cables": plan["sizing"]["host_links"] + plan["sizing"]["fabric_links"], "plan_s": round(best, 3),
                  "json_s": round(dump, 3), "json_mb": round(len(text) / 1e6, 1), "peak_rss_mb": round(peak_mb, 1)}))
"""

TARGET_32K_S, TARGET_32K_MB, TARGET_GROWTH = 2.0, 500, 6.0
SIZES = [
    # servers, spines per plane (8 planes, one per rail), spine logical ports
    (4096, 32, 128),    # 32,768 GPUs
    (16384, 64, 256),   # 131,072 GPUs
]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="best-of-N planning runs per size")
    args = parser.parse_args()
    results = []
    for servers, spines, ports in SIZES:
        out = subprocess.run([sys.executable, "-c", CHILD, os.path.join(ROOT, ".collections"), str(servers), str(spines),
                              str(ports), str(args.repeat)], check=True, capture_output=True, text=True).stdout
        results.append(json.loads(out))
    print("%8s %8s %6s %6s %8s %8s %8s %8s %10s" % ("GPUs", "NICs", "leafs", "spines", "cables", "plan_s", "json_s",
                                                    "json_MB", "peak_MB"))
    for r in results:
        print("%8d %8d %6d %6d %8d %8.3f %8.3f %8.1f %10.1f" % (r["gpus"], r["nics"], r["leafs"], r["spines"], r["cables"],
                                                                r["plan_s"], r["json_s"], r["json_mb"], r["peak_rss_mb"]))
    small, large = results
    print("131K/32K ratio: time %.2fx, peak memory %.2fx (GPU count 4.00x)" % (
        large["plan_s"] / small["plan_s"], large["peak_rss_mb"] / small["peak_rss_mb"]))
    missed = [text for ok, text in (
        (small["plan_s"] < TARGET_32K_S, "32K plan %.2f s (target < %s s)" % (small["plan_s"], TARGET_32K_S)),
        (small["peak_rss_mb"] < TARGET_32K_MB, "32K peak %.0f MB (target < %s MB)" % (small["peak_rss_mb"], TARGET_32K_MB)),
        (large["plan_s"] / small["plan_s"] < TARGET_GROWTH, "growth %.2fx (target < %sx)" % (
            large["plan_s"] / small["plan_s"], TARGET_GROWTH))) if not ok]
    for text in missed:
        print("MISSED: %s" % text)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
