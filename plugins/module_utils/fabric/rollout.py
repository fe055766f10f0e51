# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Safe parallel switch batches: which switches may be changed at the same time.

A batch never holds two leafs of one rail (that rail would lose two groups at once) nor two leafs
of one group (those servers would lose two rails at once), and never two spines of one plane.
Leafs go first (a mistake there touches one rail of one group), spines after.

Leafs are taken along "diagonals" of the (group, rail) grid: batch k holds every leaf with
(rail - group) mod M == k, M = max(groups, rails). Each group and each rail appears at most once
per diagonal, so a fabric of G groups x R rails needs M batches instead of G x R.
Pure: no I/O, no Ansible.
"""

from __future__ import annotations


def leaf_batches(plan):
    leafs = plan["leafs"]
    if not leafs:
        return []
    groups = max(leaf["group"] for leaf in leafs.values())
    rails = max(leaf["rail"] for leaf in leafs.values()) + 1
    width = max(groups, rails)
    diagonals = [[] for _diagonal in range(width)]
    for name, leaf in leafs.items():
        diagonals[(leaf["rail"] - (leaf["group"] - 1)) % width].append((leaf["slot"], name))
    return [[name for _slot, name in sorted(diagonal)] for diagonal in diagonals if diagonal]


def spine_batches(plan):
    """Batch i holds the i-th spine of every plane."""
    by_index = {}
    for name, spine in plan["spines"].items():
        by_index.setdefault(spine["index"], []).append((spine["plane"], name))
    return [[name for _plane, name in sorted(by_index[index])] for index in sorted(by_index)]


def switch_batches(plan):
    """Every switch of the plan in safe batches: leaf diagonals, then spine batches."""
    return leaf_batches(plan) + spine_batches(plan)


def _split(batch, size):
    if size <= 0:
        return [batch]
    return [batch[i:i + size] for i in range(0, len(batch), size)]


def rollout(batches, in_scope, canary=1, batch_max=0):
    """Order and ``serial`` sizes for the switches in scope (inventory group, --limit).

    Each safe batch keeps only the switches in scope (a subset of a safe batch is safe); the first
    ``canary`` switches form a batch of their own; ``batch_max`` > 0 caps every batch.
    Switches in scope but not in the plan go last, one at a time. Returns
    {'order': [names], 'serial': [sizes], 'batches': [[names]]}.
    """
    wanted = set(in_scope)
    kept = [[name for name in batch if name in wanted] for batch in batches]
    kept = [batch for batch in kept if batch]
    planned = set(name for batch in kept for name in batch)
    if canary > 0 and kept and len(kept[0]) > canary:
        kept = [kept[0][:canary], kept[0][canary:]] + kept[1:]
    out = []
    for batch in kept:
        out.extend(_split(batch, batch_max))
    out.extend([name] for name in in_scope if name not in planned)
    return {"order": [name for batch in out for name in batch], "serial": [len(batch) for batch in out],
            "batches": out}
