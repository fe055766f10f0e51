"""GOR figures: spine bytes of one 1 GiB allreduce per rail, native / random / topology order.

Run: PYTHONPATH=.collections .venv/bin/python tools/bench_rank_order.py
Native = the scheduler's order, modelled as groups interleaved host by host (spread placement);
random = the mean of 200 seeded shuffles. Figures are the model's, not measurements.
Target: the topology order never puts more bytes on the spines than native or random order;
exits 1 when a row misses it.
"""
import copy
import os
import random
import sys

import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gor.order import compare

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIB = 1 << 30


def inventory(name):
    with open(os.path.join(ROOT, "inventories", name, "group_vars", "all", "fabric.yml")) as handle:
        return yaml.safe_load(handle)["fabric"]


def split(fabric, spg):
    fabric = copy.deepcopy(fabric)
    fabric["servers"]["servers_per_group"] = spg
    fabric["leafs"]["name_pattern"] = "leaf-g{group}-r{rail}"
    return fabric


def interleave(plan, hosts):
    by_group = {}
    for name in hosts:
        by_group.setdefault(plan["hosts"][name]["group"], []).append(name)
    lists = [by_group[g] for g in sorted(by_group)]
    out = []
    for i in range(max(len(x) for x in lists)):
        out.extend(x[i] for x in lists if i < len(x))
    return out


def pct(value):
    return "n/a (0 B either way)" if value is None else "%.1f%%" % (100.0 * value)


def row(label, plan, hosts):
    """Print the row; return the number of algorithms where our order is worse than native or random."""
    native = interleave(plan, hosts)
    report = compare(plan, native, message_bytes=GIB, samples=200, seed=7)
    worse = 0
    for algo in ("ring", "tree"):
        r = report[algo]
        print("| %s | %d | %d | %s | %.1f | %.1f | %.1f | %s | %s |" % (
            label, report["hosts"], len(report["groups"]), algo,
            r["native_spine_bytes"] / GIB, r["random_spine_bytes"] / GIB, r["ours_spine_bytes"] / GIB,
            pct(r["reduction_vs_native"]), pct(r["reduction_vs_random"])))
        if r["ours_spine_bytes"] > min(r["native_spine_bytes"], r["random_spine_bytes"]):
            print("MISSED: %s %s: ours is worse than native or random" % (label, algo))
            worse += 1
    return worse


def main():
    print("| fabric / job | hosts | groups spanned | algo | native GiB | random GiB | ours GiB | less vs native | less vs random |")
    print("|---|---|---|---|---|---|---|---|---|")
    missed = 0
    lab = build_plan(inventory("lab"))
    missed += row("lab (1 group), all hosts", lab, list(lab["hosts"]))
    r512 = build_plan(inventory("rail512"))
    missed += row("rail512 (1 group), all hosts", r512, list(r512["hosts"]))
    for spg in (32, 16):
        plan = build_plan(split(inventory("rail512"), spg))
        hosts = list(plan["hosts"])
        missed += row("rail512 split %dx%d, all 64 hosts" % (64 // spg, spg), plan, hosts)
        picked = hosts[:]
        random.Random(5).shuffle(picked)
        picked = picked[:spg]
        missed += row("rail512 split %dx%d, %d hosts scattered" % (64 // spg, spg, spg), plan, picked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
