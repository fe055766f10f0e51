"""GOM figures: probe count, lower bounds, coverage and planning time for lab, rail512 and 4K GPUs.

Run: PYTHONPATH=.collections .venv/bin/python tools/bench_probes.py [--no-random]
The 4K-GPU fabric is rail512's switch models scaled out: 512 servers x 8 rails (200G), 8 groups
of 64 servers, 64 leafs (32 x 400G uplinks each), 16 spines (128 x 400G), 1:1.
"random" = probes with random (source NIC, destination NIC, UDP source port) drawn until every
reachable directed link is covered (seeded; the figure DIGEST 003 compares against).
"""
import copy
import os
import random
import sys
import time

import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom.probes import (
    SPORT_BASE, LinkModel, plan_probes, reachable_links)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def inventory(name):
    with open(os.path.join(ROOT, "inventories", name, "group_vars", "all", "fabric.yml")) as handle:
        return yaml.safe_load(handle)["fabric"]


def gpu4k():
    fabric = copy.deepcopy(inventory("rail512"))
    fabric["name"] = "gpu4k"
    fabric["servers"]["count"] = 512
    fabric["servers"]["servers_per_group"] = 64
    fabric["leafs"]["name_pattern"] = "leaf-g{group}-r{rail}"
    fabric["spines"]["count"] = 16
    fabric["spines"]["name_pattern"] = "spine{index:02d}"
    fabric["addressing"]["fabric_link_pool"] = "10.248.0.0/20"
    return fabric


def random_probes(plan, seed=11, cap=2000000):
    model = LinkModel(plan)
    todo = set(reachable_links(model))
    rng = random.Random(seed)
    nics = model.nics
    count = 0
    while todo and count < cap:
        src = nics[rng.randrange(len(nics))]
        dst = nics[rng.randrange(len(nics))]
        path = model.path(src, dst, rng.randrange(SPORT_BASE, 65536))
        if path is None:
            continue
        count += 1
        todo.difference_update(path)
    per_host = {}
    for nic in nics:
        per_host[nic["host"]] = per_host.get(nic["host"], 0) + 1
    mesh = sum(k * (len(nics) - k) for k in per_host.values())
    return count, mesh


def main(argv):
    do_random = "--no-random" not in argv
    print("| fabric | GPUs | NICs | directed links (reachable) | probes | bound (links/4) | ratio | tight bound | ratio "
          "| coverage | plan time s | random probes to 100% | full mesh |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, fabric in (("lab", inventory("lab")), ("rail512", inventory("rail512")), ("4K GPUs", gpu4k())):
        plan = build_plan(fabric)
        start = time.time()
        report = plan_probes(plan)
        elapsed = time.time() - start
        rnd, mesh = random_probes(plan) if do_random else ("-", "-")
        print("| %s | %d | %d | %d (%d) | %d | %d | %.3f | %d | %.3f | %.1f%% | %.2f | %s | %s |" % (
            name, plan["sizing"]["gpus"], report["nics"], report["links_all"], report["links"], report["count"],
            report["bound"], report["ratio"], report["tight_bound"], report["ratio_tight"],
            100.0 * report["coverage"], elapsed, rnd, mesh))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
