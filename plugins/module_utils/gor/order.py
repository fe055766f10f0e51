# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topology-affine rank order (GOR, DIGEST 003) and a spine-traffic model for allreduce.

Pure functions over a plan (``fabric.plan.build_plan``): no Ansible, no network.

Model (documented in docs/rank-order.md):

* A job is a list of GPU hosts; rank order = host order (each host contributes its GPUs in
  rail order, GPU r talks over rail r). NCCL builds one ring per rail channel over the hosts in
  rank order, so every rail's ring has the same host-to-host edges.
* Ring allreduce of S bytes over N hosts: every ring edge carries 2 (N - 1) / N x S bytes.
* Double binary tree (NCCL's ``NCCL_ALGO=Tree``): two in-order binary trees over the ranks, the
  second one mirrored; each tree reduces and broadcasts half the data, so each tree edge carries
  S/2 up + S/2 down = S bytes.
* An edge crosses a spine on rail r when its two hosts' rail-r NICs sit under different leafs
  (different server groups). Under PPD it then takes host -> leaf -> bound uplink -> spine ->
  leaf -> host: its bytes cross exactly one spine.
"""
from __future__ import annotations

import random


class JobError(ValueError):
    """The job's host list does not match the plan (names the problem and the fix)."""


def _host_info(plan, hosts):
    info = {}
    missing = [h for h in hosts if h not in plan["hosts"]]
    if missing:
        raise JobError("hosts not in the plan: %s. Fix: use host names from plan['hosts'] (the fabric's servers)"
                       % ", ".join(sorted(missing)[:10]))
    if len(set(hosts)) != len(hosts):
        raise JobError("duplicate host names in the job. Fix: list every host once")
    for name in hosts:
        host = plan["hosts"][name]
        info[name] = {
            "group": host["group"],
            "slot": host["slot"],
            "leafs": {nic["rail"]: nic["leaf"] for nic in host["nics"]},
        }
    return info


def topology_order(plan, hosts):
    """Hosts ordered so ring/tree neighbours share leafs: by server group (pod), then slot.

    Groups are sorted by number so the result does not depend on the scheduler's order.
    Within a group hosts follow their leaf downlink position. A ring over this order crosses
    group boundaries exactly once per group spanned (zero when the job sits in one group),
    which is the minimum for any ring spanning those groups.
    """
    info = _host_info(plan, hosts)
    return sorted(hosts, key=lambda h: (info[h]["group"], info[h]["slot"], h))


def ring_edges(order):
    n = len(order)
    if n < 2:
        return []
    if n == 2:
        return [(order[0], order[1])]
    return [(order[i], order[(i + 1) % n]) for i in range(n)]


def _inorder_parents(n):
    """Parent index (0-based) of every position of an in-order binary tree over n ranks.

    Position p (1-based i = p + 1) hangs under the nearest existing ancestor in the implicit
    in-order tree over 1..2^k (the shape NCCL's ncclGetBtree builds: ranks close in order are
    close in the tree). The root (largest power of two <= n) has parent None.
    """
    parents = []
    for i in range(1, n + 1):
        node = i
        parent = None
        while True:
            low = node & -node
            if low > n:
                break
            node = node + low if not node & (low << 1) else node - low
            if 1 <= node <= n:
                parent = node - 1
                break
        parents.append(parent)
    return parents


def tree_edges(order):
    """Edges of the double binary tree over ``order``: tree 1 in-order, tree 2 mirrored."""
    n = len(order)
    edges = []
    parents = _inorder_parents(n)
    for pos, parent in enumerate(parents):
        if parent is not None:
            edges.append((order[pos], order[parent]))
    mirrored = list(reversed(order))
    for pos, parent in enumerate(parents):
        if parent is not None:
            edges.append((mirrored[pos], mirrored[parent]))
    return edges


def traffic(plan, order, message_bytes=1 << 30):
    """Spine traffic of one allreduce of ``message_bytes`` per rail, ring and tree, for ``order``."""
    info = _host_info(plan, order)
    n = len(order)
    rails = sorted({r for h in order for r in info[h]["leafs"]})
    result = {"hosts": n, "rails": len(rails), "message_bytes": message_bytes}
    ring_per_edge = 2.0 * (n - 1) / n * message_bytes if n > 1 else 0.0
    for algo, edges, per_edge in (("ring", ring_edges(order), ring_per_edge),
                                  ("tree", tree_edges(order), float(message_bytes))):
        crossing = 0
        total = 0
        for a, b in edges:
            for rail in rails:
                leaf_a = info[a]["leafs"].get(rail)
                leaf_b = info[b]["leafs"].get(rail)
                if leaf_a is None or leaf_b is None:
                    continue
                total += 1
                if leaf_a != leaf_b:
                    crossing += 1
        result[algo] = {
            "edges": len(edges),
            "rail_edges": total,
            "spine_crossing_rail_edges": crossing,
            "total_bytes": total * per_edge,
            "spine_bytes": crossing * per_edge,
        }
    return result


def reduction(ours, baseline):
    """Fraction of baseline spine bytes removed by ours (None when the baseline has none)."""
    if baseline <= 0:
        return None
    return 1.0 - float(ours) / float(baseline)


def compare(plan, hosts, message_bytes=1 << 30, samples=200, seed=7):
    """Spine bytes of the given (native) order, the mean of ``samples`` random orders, and ours."""
    ours = topology_order(plan, hosts)
    native = traffic(plan, list(hosts), message_bytes)
    mine = traffic(plan, ours, message_bytes)
    rng = random.Random(seed)
    sums = {"ring": 0.0, "tree": 0.0}
    shuffled = list(hosts)
    for dummy in range(samples):
        rng.shuffle(shuffled)
        one = traffic(plan, shuffled, message_bytes)
        for algo in sums:
            sums[algo] += one[algo]["spine_bytes"]
    groups = sorted({plan["hosts"][h]["group"] for h in hosts})
    report = {"hosts": len(hosts), "groups": groups, "order": ours, "message_bytes": message_bytes,
              "random_samples": samples, "seed": seed}
    for algo in ("ring", "tree"):
        random_mean = sums[algo] / samples if samples else 0.0
        report[algo] = {
            "native_spine_bytes": native[algo]["spine_bytes"],
            "random_spine_bytes": random_mean,
            "ours_spine_bytes": mine[algo]["spine_bytes"],
            "total_bytes": mine[algo]["total_bytes"],
            "reduction_vs_random": reduction(mine[algo]["spine_bytes"], random_mean),
            "reduction_vs_native": reduction(mine[algo]["spine_bytes"], native[algo]["spine_bytes"]),
        }
    return report


def hostfile(plan, order, slots=None):
    """MPI-style hostfile lines (``host slots=G``) and the rank list for ``order``."""
    lines = []
    ranks = []
    rank = 0
    for name in order:
        host = plan["hosts"][name]
        count = slots if slots else len(host["nics"])
        lines.append("%s slots=%d" % (name, count))
        for local in range(count):
            ranks.append({"rank": rank, "host": name, "local_rank": local, "group": host["group"]})
            rank += 1
    return {"hostfile": "\n".join(lines) + ("\n" if lines else ""), "ranks": ranks}
