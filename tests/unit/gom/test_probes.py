"""GOM: probe plan covering every host-leaf and leaf-spine link in both directions."""
from hypothesis import given, settings, strategies as st

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom.probes import (
    LinkModel, by_host, ecmp_index, plan_probes, reachable_links, sport_for)

from ..fabric.intents import lab, rail512, small


def check_paths_against_plan(plan, report):
    """Re-derive every probe's path from the plan's own tables (bindings, spine downlinks)."""
    for probe in report["probes"]:
        src = [n for n in plan["hosts"][probe["src_host"]]["nics"] if n["netdev"] == probe["src_netdev"]][0]
        dst = [n for n in plan["hosts"][probe["dst_host"]]["nics"] if n["netdev"] == probe["dst_netdev"]][0]
        path = probe["path"]
        assert probe["src_host"] != probe["dst_host"]
        assert path[0] == "%s:%s>%s:%s" % (probe["src_host"], src["netdev"], src["leaf"], src["leaf_port"])
        assert path[-1] == "%s:%s>%s:%s" % (dst["leaf"], dst["leaf_port"], probe["dst_host"], dst["netdev"])
        if len(path) == 2:
            assert src["leaf"] == dst["leaf"]
            continue
        assert len(path) == 4 and src["leaf"] != dst["leaf"]
        binding = [b for b in plan["leafs"][src["leaf"]]["bindings"] if b["ingress"] == src["leaf_port"]][0]
        up_uplink = [u for u in plan["leafs"][src["leaf"]]["uplinks"] if u["port"] == binding["uplink"]][0]
        assert path[1] == "%s:%s>%s:%s" % (src["leaf"], binding["uplink"], binding["spine"], up_uplink["spine_port"])
        spine, spine_port = path[2].split(">")[0].split(":", 1)
        assert spine == binding["spine"]
        downlink = [d for d in plan["spines"][spine]["downlinks"] if d["port"] == spine_port][0]
        assert downlink["leaf"] == dst["leaf"]
        parallel = sorted((d for d in plan["spines"][spine]["downlinks"] if d["leaf"] == dst["leaf"]),
                          key=lambda d: d["port"])
        if len(parallel) > 1:
            assert probe["udp_sport"] is not None
        else:
            assert probe["udp_sport"] is None


def all_links(plan):
    links = set()
    for host, entry in plan["hosts"].items():
        for nic in entry["nics"]:
            links.add("%s:%s>%s:%s" % (host, nic["netdev"], nic["leaf"], nic["leaf_port"]))
            links.add("%s:%s>%s:%s" % (nic["leaf"], nic["leaf_port"], host, nic["netdev"]))
    for spine, entry in plan["spines"].items():
        for down in entry["downlinks"]:
            links.add("%s:%s>%s:%s" % (spine, down["port"], down["leaf"], down["leaf_port"]))
            links.add("%s:%s>%s:%s" % (down["leaf"], down["leaf_port"], spine, down["port"]))
    return links


def covered(report):
    return set(link for probe in report["probes"] for link in probe["path"])


def test_lab_full_coverage_at_the_bound():
    plan = build_plan(lab())
    report = plan_probes(plan)
    assert covered(report) == all_links(plan)
    assert report["links"] == 64 and report["coverage"] == 1.0
    assert report["count"] == report["bound"] == 16
    check_paths_against_plan(plan, report)


def test_rail512_full_coverage_at_the_tight_bound():
    plan = build_plan(rail512())
    report = plan_probes(plan)
    assert covered(report) == all_links(plan)
    assert report["links"] == 1536
    assert report["bound"] == 384            # 1536 directed links / 4 per path
    assert report["tight_bound"] == 512      # each of 512 NICs must start its own probe
    assert report["count"] == 512
    check_paths_against_plan(plan, report)


def test_multi_group_fabric_within_ten_percent_of_links_over_four():
    plan = build_plan(small(servers=32, rails=4, spg=8, uplinks=8, spines=2, leaf_down=8, leaf_up=8))
    report = plan_probes(plan)
    assert covered(report) == all_links(plan)
    assert report["count"] <= 1.1 * report["bound"]
    check_paths_against_plan(plan, report)


def test_p2p_scheme_full_coverage():
    plan = build_plan(small(servers=10, rails=3, spg=4, scheme="p2p"))
    report = plan_probes(plan)
    assert report["coverage"] == 1.0 and not report["uncovered"]
    check_paths_against_plan(plan, report)


def test_partial_group_reports_uplinks_no_binding_uses():
    plan = build_plan(small(servers=6, rails=2, spg=4))
    report = plan_probes(plan)
    assert report["coverage"] == 1.0
    assert len(report["unreachable_under_ppd"]) == 4
    assert all(link.startswith("leaf-g2-") for link in report["unreachable_under_ppd"])
    assert report["coverage_all"] < 1.0
    assert covered(report) | set(report["unreachable_under_ppd"]) == all_links(plan)


def test_uplinks_no_binding_uses_are_reported_unreachable():
    # 4 ports per leaf, 6 uplinks (rounded up for 3 spines): ports bind uplinks 1-4, so uplinks 5 and 6
    # (Ethernet13/14 upward) carry no host traffic under PPD; every spine is still used.
    plan = build_plan(small(servers=12, rails=3, spg=4, spines=3, uplinks=6, leaf_up=6))
    report = plan_probes(plan)
    unreachable = report["unreachable_under_ppd"]
    assert len(unreachable) == 2 * len(plan["leafs"])
    assert all(link.split(">")[0].endswith((":Ethernet13", ":Ethernet14")) for link in unreachable)
    assert report["coverage"] == 1.0


def test_ecmp_model_and_source_port_choice():
    assert ecmp_index("10.0.0.1", "10.0.1.1", 50000, 1) == 0
    seen = set()
    for wanted in range(4):
        sport = sport_for("10.0.0.1", "10.0.1.1", wanted, 4)
        assert 49152 <= sport <= 65535
        assert ecmp_index("10.0.0.1", "10.0.1.1", sport, 4) == wanted
        seen.add(sport)
    assert len(seen) == 4
    values = set(ecmp_index("10.0.0.1", "10.0.1.1", p, 4) for p in range(49152, 49252))
    assert values == set(range(4))


def test_by_host_lists_each_probe_once():
    plan = build_plan(lab())
    report = plan_probes(plan)
    agent = by_host(report)
    assert sorted(agent) == sorted(plan["hosts"])
    ids = sorted(p["id"] for probes in agent.values() for p in probes)
    assert ids == list(range(report["count"]))
    assert set(agent["gpu01"][0]) == {"id", "src_netdev", "src_rdma", "src_address", "dst_host", "dst_address",
                                      "udp_sport", "udp_dport"}


def test_deterministic():
    plan = build_plan(rail512())
    assert plan_probes(plan) == plan_probes(plan)


def covers_what_is_reachable(plan, report):
    """Every reachable directed link crossed by a probe; the others reported unreachable. Returns the reachable."""
    reachable = reachable_links(LinkModel(plan))
    assert covered(report) == reachable and report["coverage"] == 1.0
    assert set(report["unreachable_under_ppd"]) == all_links(plan) - reachable
    return reachable


def small_plan(servers, rails, spg, spines, ratio, scheme):
    return build_plan(small(servers=servers, rails=rails, spg=spg, uplinks=8, spines=spines, ratio=ratio,
                            scheme=scheme, leaf_down=8, leaf_up=8))


# the small generated fabrics the planner accepts (shared with test_identify)
small_plans = st.builds(small_plan, servers=st.integers(2, 20), rails=st.integers(1, 4), spg=st.sampled_from([2, 4, 8]),
                        spines=st.sampled_from([1, 2, 4]), ratio=st.sampled_from(["1:1", "2:1", "3:1"]),
                        scheme=st.sampled_from(["subnet_per_leaf", "p2p"]))


@settings(max_examples=30, deadline=None)
@given(plan=small_plans)
def test_every_reachable_link_is_covered_and_count_respects_the_bound(plan):
    report = plan_probes(plan)
    covers_what_is_reachable(plan, report)
    assert report["count"] >= report["tight_bound"] >= report["bound"]
    check_paths_against_plan(plan, report)


def test_gom_reads_the_leaf_local_destinations_not_per_binding_lists():
    # bindings no longer carry exclude_destinations; a stray per-binding list must not change GOM
    for intent in (lab(), small(servers=10, rails=3, spg=4, scheme="p2p")):
        plan = build_plan(intent)
        expected = plan_probes(plan)
        for leaf in plan["leafs"].values():
            assert all("exclude_destinations" not in binding for binding in leaf["bindings"])
            for binding in leaf["bindings"]:
                binding["exclude_destinations"] = ["0.0.0.0/0"]
        assert plan_probes(plan) == expected
