"""GOR: topology-affine rank order and the spine-traffic model."""
import random

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gor.order import (
    JobError, compare, hostfile, ring_edges, topology_order, traffic, tree_edges, _inorder_parents)

from ..fabric.intents import lab, rail512, small

GIB = 1 << 30


def rail512_groups(spg=16):
    fabric = rail512()
    fabric["servers"]["servers_per_group"] = spg
    fabric["leafs"]["name_pattern"] = "leaf-g{group}-r{rail}"
    return build_plan(fabric)


MULTI = build_plan(small(servers=16, rails=2, spg=4, uplinks=4, spines=2))


def test_lab_one_group_has_no_spine_traffic_in_any_order():
    plan = build_plan(lab())
    hosts = sorted(plan["hosts"], reverse=True)
    report = compare(plan, hosts, samples=20)
    assert report["groups"] == [1]
    for algo in ("ring", "tree"):
        assert report[algo]["ours_spine_bytes"] == 0
        assert report[algo]["random_spine_bytes"] == 0
        assert report[algo]["reduction_vs_random"] is None
    assert report["order"] == ["gpu01", "gpu02", "gpu03", "gpu04"]


def test_order_groups_hosts_and_is_independent_of_input_order():
    hosts = list(MULTI["hosts"])
    shuffled = hosts[:]
    random.Random(3).shuffle(shuffled)
    order = topology_order(MULTI, shuffled)
    assert order == topology_order(MULTI, hosts)
    groups = [MULTI["hosts"][h]["group"] for h in order]
    assert groups == sorted(groups)
    assert sorted(order) == sorted(hosts)


def test_ring_crosses_spine_once_per_group_boundary():
    hosts = list(MULTI["hosts"])
    # scheduler interleaves groups: every ring edge changes group
    interleaved = [hosts[g * 4 + i] for i in range(4) for g in range(4)]
    native = traffic(MULTI, interleaved, GIB)
    ours = traffic(MULTI, topology_order(MULTI, interleaved), GIB)
    assert native["ring"]["spine_crossing_rail_edges"] == 16 * 2
    assert ours["ring"]["spine_crossing_rail_edges"] == 4 * 2   # 4 group boundaries x 2 rails
    per_edge = 2.0 * 15 / 16 * GIB
    assert ours["ring"]["spine_bytes"] == pytest.approx(8 * per_edge)
    assert ours["ring"]["total_bytes"] == pytest.approx(16 * 2 * per_edge)


def test_job_in_one_group_of_a_multi_group_fabric_stays_off_the_spines():
    hosts = list(MULTI["hosts"])[4:8]
    report = compare(MULTI, list(reversed(hosts)), samples=10)
    assert report["ring"]["ours_spine_bytes"] == 0
    assert report["tree"]["ours_spine_bytes"] == 0


def test_rail512_split_into_groups_meets_ninety_percent():
    plan = rail512_groups(16)
    hosts = list(plan["hosts"])
    random.Random(1).shuffle(hosts)
    report = compare(plan, hosts, samples=100)
    assert report["groups"] == [1, 2, 3, 4]
    assert report["ring"]["reduction_vs_random"] >= 0.90
    assert report["ring"]["ours_spine_bytes"] == pytest.approx(4 * 8 * 2.0 * 63 / 64 * GIB)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=15), min_size=2, max_size=16, unique=True), st.randoms())
def test_ours_never_worse_than_any_order_for_rings(indices, rnd):
    names = sorted(MULTI["hosts"])
    hosts = [names[i] for i in indices]
    rnd.shuffle(hosts)
    groups = {MULTI["hosts"][h]["group"] for h in hosts}
    ours = traffic(MULTI, topology_order(MULTI, hosts))
    native = traffic(MULTI, hosts)
    assert ours["ring"]["spine_bytes"] <= native["ring"]["spine_bytes"]
    crossings = ours["ring"]["spine_crossing_rail_edges"] // 2
    if len(groups) == 1:
        assert crossings == 0
    elif len(hosts) == 2:
        assert crossings == 1
    else:
        assert crossings == len(groups)   # the minimum for a cycle through every group


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 8, 13, 64])
def test_double_binary_tree_is_two_spanning_trees(n):
    order = ["h%d" % i for i in range(n)]
    edges = tree_edges(order)
    assert len(edges) == 2 * (n - 1)
    for tree in (edges[:n - 1], edges[n - 1:]):
        adjacency = {h: set() for h in order}
        for a, b in tree:
            adjacency[a].add(b)
            adjacency[b].add(a)
        seen, todo = set(), [order[0]]
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(adjacency[node])
        assert seen == set(order)
    assert _inorder_parents(7) == [1, 3, 1, None, 5, 3, 5]


def test_ring_edges_shapes():
    assert ring_edges(["a"]) == []
    assert ring_edges(["a", "b"]) == [("a", "b")]
    assert ring_edges(["a", "b", "c"]) == [("a", "b"), ("b", "c"), ("c", "a")]


def test_hostfile_and_ranks():
    plan = build_plan(lab())
    out = hostfile(plan, ["gpu02", "gpu01"])
    assert out["hostfile"] == "gpu02 slots=4\ngpu01 slots=4\n"
    assert [r["host"] for r in out["ranks"]] == ["gpu02"] * 4 + ["gpu01"] * 4
    assert out["ranks"][5] == {"rank": 5, "host": "gpu01", "local_rank": 1, "group": 1}


def test_unknown_and_duplicate_hosts_are_refused():
    plan = build_plan(lab())
    with pytest.raises(JobError, match="nope"):
        topology_order(plan, ["gpu01", "nope"])
    with pytest.raises(JobError, match="duplicate"):
        topology_order(plan, ["gpu01", "gpu01"])
