"""GOM probe plan that localises (issue 38 step 1): every single directed-link failure fails a probe set of its own."""
import os
import sys

import pytest
from hypothesis import given, settings

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom.identify import (
    Partition, explanations, plan_identifiable, signatures, two_link)
from ansible_collections.aifabric.roce.plugins.module_utils.gom.probes import LinkModel, plan_probes, reachable_links

from ..fabric.intents import lab, rail512, small
from .test_hash_models import device, links_under, other_hash
from .test_probes import check_paths_against_plan, covered, covers_what_is_reachable, small_plans

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools"))
from bench_probes import gpu_fabric  # noqa: E402  (rail512 scaled out: the 1K and 4K plans of the benchmark)


def distinct_signatures(report, links):
    """Recomputed from the probes' paths alone: link -> probes crossing it, none empty, all different."""
    sig = {}
    for probe in report["probes"]:
        for link in probe["path"]:
            sig.setdefault(link, set()).add(probe["id"])
    seen = {}
    for link in links:
        key = frozenset(sig.get(link, ()))
        assert key, "%s is crossed by no probe" % link
        assert key not in seen, "%s and %s fail the same probes" % (seen.get(key), link)
        seen[key] = link


@pytest.mark.parametrize("name,intent", [
    ("lab", lab), ("rail512", rail512), ("1K", lambda: gpu_fabric(128, "gpu1k")), ("4K", lambda: gpu_fabric(512, "gpu4k"))])
def test_full_coverage_and_single_link_identifiability(name, intent):
    plan = build_plan(intent())
    report = plan_identifiable(plan)
    reachable = reachable_links(LinkModel(plan))
    assert covered(report) == reachable and report["coverage"] == 1.0
    assert report["identifiable"] == 1.0 and report["ambiguous"] == [] and report["ambiguous_why"] == []
    distinct_signatures(report, reachable)
    check_paths_against_plan(plan, report)
    # the covering plan alone cannot localise on these fabrics: the added probes do it
    assert report["cover_count"] == plan_probes(plan)["count"] < report["count"]
    if name != "lab":
        # two NICs share each uplink: a same-leaf probe splits two (host up, host down) pairs at once
        assert report["ratio_tight"] <= 1.6
    else:
        # one NIC per uplink: 16 same-leaf probes and >= 11 remote ones per spine are needed (docs/gom.md)
        assert 40 <= report["count"] <= 48 and report["ident_bound"] == 38


def test_the_covering_plan_alone_does_not_localise():
    plan = build_plan(lab())
    cover = plan_probes(plan)
    sig = signatures(cover["probes"])
    # on the lab every covering probe's 4 links fail together: no single failure can be named
    assert len(set(sig.values())) == 16 and len(sig) == 64


def test_partition_refines_by_probe_paths():
    part = Partition(["a", "b", "c", "d"])
    assert part.score(["a", "b"]) == 1 and part.splits(["a"], 0)
    part.add(["a", "b", "c", "d"])          # crosses all: nothing split
    assert len(part.classes()) == 1
    part.add(["a", "b"])
    assert sorted(sorted(c) for c in part.classes()) == [["a", "b"], ["c", "d"]]
    part.add(["b", "c"])
    assert sorted(sorted(c) for c in part.classes()) == [["a"], ["b"], ["c"], ["d"]]
    assert part.score(["a", "c"]) == 0


def test_two_link_failures_on_the_lab():
    plan = build_plan(lab())
    report = plan_identifiable(plan)
    links = sorted(reachable_links(LinkModel(plan)))
    figures = two_link(report["probes"], links)
    assert figures["pairs"] == 64 * 63 // 2
    # most pairs are named exactly; the rest are either masked (one link's probes all cross the other) or
    # explained by another pair as well
    assert 0.85 <= figures["exact"] < 1.0 and 0 < figures["masked"] < 0.1
    sig = signatures(report["probes"])
    on_probe = dict((p["id"], p["path"]) for p in report["probes"])
    # a single failure is explained by exactly its own link
    for link in links[:8]:
        assert explanations(sig[link], sig, on_probe, limit=1) == [(link,)]


def test_asked_device_hash_plan_is_identifiable_under_that_hash():
    plan = build_plan(small(servers=8, rails=2, spg=4, uplinks=4, spines=2))
    oracle, calls = device(plan)
    report = plan_identifiable(plan, oracle=oracle)
    assert report["hash"] == "asked the device" and calls
    reached, reachable = links_under(plan, report, other_hash)
    assert reached == reachable and report["identifiable"] == 1.0
    distinct_signatures(report, reachable)


def test_deterministic():
    plan = build_plan(lab())
    assert plan_identifiable(plan) == plan_identifiable(plan)


@settings(max_examples=25, deadline=None)
@given(plan=small_plans)
def test_identifiable_or_the_shared_groups_are_named(plan):
    report = plan_identifiable(plan)
    reachable = covers_what_is_reachable(plan, report)
    sig = signatures(report["probes"])
    groups = {}
    for link in reachable:
        groups.setdefault(sig[link], []).append(link)
    shared = sorted(sorted(g) for g in groups.values() if len(g) > 1)
    assert shared == report["ambiguous"]
    assert report["identifiable"] == float(len(reachable) - sum(len(g) for g in shared)) / len(reachable)
    # the bound holds for sets that are 1-identifiable (the planner's, where the fabric allows it): a witness
    # against it would be a smaller identifiable set
    assert report["ident_bound"] >= report["tight_bound"]
    if report["identifiable"] == 1.0:
        assert report["count"] >= report["ident_bound"]
    check_paths_against_plan(plan, report)


def test_no_smaller_identifiable_set_is_found_below_the_bound_on_the_lab():
    """The bound is a proof (docs/gom.md); this tries to break it: the planner's set, pruned probe by probe in
    random orders while every reachable link keeps a non-empty signature of its own, never gets below it."""
    import random
    plan = build_plan(lab())
    report = plan_identifiable(plan)
    reachable = sorted(reachable_links(LinkModel(plan)))

    def identifiable(probes):
        sig = signatures(probes)
        values = [sig.get(link) for link in reachable]
        return all(values) and len(set(values)) == len(values)

    assert identifiable(report["probes"])
    smallest = len(report["probes"])
    for seed in range(12):
        kept = list(report["probes"])
        order = list(range(len(kept)))
        random.Random(seed).shuffle(order)
        for index in order:
            trial = [p for p in kept if p["id"] != report["probes"][index]["id"]]
            if identifiable(trial):
                kept = trial
        smallest = min(smallest, len(kept))
    assert report["ident_bound"] <= smallest <= report["count"]
