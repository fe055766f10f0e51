"""GOM's hash model per platform (issue 27 item 3): stated per spine platform; source ports chosen from the device's
answers when an oracle is given (the twin's kernels in tests/lab/twin/gom.py); what the offline stand-in cannot
promise listed as at risk; links no port reaches named with the reason."""
import hashlib

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom.probes import (
    ORACLE_TRIES, SPORT_BASE, LinkModel, hash_model, plan_probes)

from ..fabric.intents import lab, small


def other_hash(src, dst, sports, dport, members):
    """A stand-in for a device: a hash the planner cannot compute (sha256 of the 5-tuple), like the kernel's siphash."""
    return [hashlib.sha256(("%s>%s:%d:%d" % (src["address"], dst["address"], s, dport)).encode()).digest()[0] % members
            for s in sports]


def device(plan):
    model = LinkModel(plan)
    calls = []

    def oracle(src, dst, sports, dport):
        calls.append(len(sports))
        return other_hash(src, dst, sports, dport, len(model.parallel[(src["spine"], dst["leaf"])]))
    return oracle, calls


def links_under(plan, report, pick):
    """The links each probe really takes when the spines pick by ``pick`` (the device), from the plan's wiring."""
    model = LinkModel(plan)
    nics = dict((n["id"], n) for n in model.nics)
    out = set()
    for probe in report["probes"]:
        src = nics["%s:%s" % (probe["src_host"], probe["src_netdev"])]
        dst = nics["%s:%s" % (probe["dst_host"], probe["dst_netdev"])]
        if model.is_local(src, dst):
            out.update(model.path_links(src, dst, None))
            continue
        members = len(model.parallel[(src["spine"], dst["leaf"])])
        sport = probe["udp_sport"] or SPORT_BASE
        out.update(model.path_links(src, dst, pick(src, dst, [sport], probe["udp_dport"], members)[0]))
    return out, set(model.links) - set(report["unreachable_under_ppd"])


def test_hash_model_is_stated_per_spine_platform():
    report = plan_probes(build_plan(lab()))
    assert sorted(report["hash_models"]) == ["eos"]
    assert "not published" in report["hash_models"]["eos"] and "cannot be computed offline" in report["hash_models"]["eos"]
    assert "fib_multipath_hash_policy=1" in hash_model("frr") and "siphash" in hash_model("frr")
    assert report["hash"].startswith("crc32") and "stand-in" in report["hash"]


def test_offline_plan_lists_what_only_the_stand_in_reaches():
    plan = build_plan(lab())
    report = plan_probes(plan)
    assert report["coverage"] == 1.0
    # the lab's spines have 2 parallel links to each leaf: every spine->leaf link is reached only if the hash agrees
    spine_down = [link for link in LinkModel(plan).links if link.split(":")[0].startswith("spine")]
    assert sorted(report["at_risk"]) == sorted(spine_down) and len(spine_down) == 16
    assert report["coverage_assured"] == (64 - 16) / 64.0 and "stand-in" in report["at_risk_why"]
    # and it is a real risk: under a hash the planner does not know, the stand-in's probes miss links
    reached, reachable = links_under(plan, report, other_hash)
    assert reachable - reached


def test_asking_the_device_reaches_every_link_under_its_own_hash():
    plan = build_plan(small(servers=8, rails=2, spg=4, uplinks=4, spines=2))
    oracle, calls = device(plan)
    report = plan_probes(plan, oracle=oracle)
    assert report["hash"] == "asked the device" and report["at_risk"] == [] and report["at_risk_why"] is None
    assert report["coverage"] == report["coverage_assured"] == 1.0 and report["uncovered"] == []
    reached, reachable = links_under(plan, report, other_hash)
    assert reached == reachable
    assert calls and set(calls) == {ORACLE_TRIES}
    # and the offline plan of the same fabric does not reach them all under this hash
    reached, reachable = links_under(plan, plan_probes(plan), other_hash)
    assert reachable - reached


def test_a_link_the_device_never_takes_is_named_with_the_reason():
    plan = build_plan(lab())

    def stuck(src, dst, sports, dport):     # a spine whose hash always picks its first link (polarised)
        return [0] * len(sports)
    report = plan_probes(plan, oracle=stuck)
    model = LinkModel(plan)
    second = sorted(links[1] for links in model.parallel_down.values())
    assert report["uncovered"] == second and report["coverage"] == (64 - 8) / 64.0
    for link in second:
        why = report["uncovered_why"][link]
        assert "every UDP source port asked (%d-%d)" % (SPORT_BASE, SPORT_BASE + ORACLE_TRIES - 1) in why
        assert link.split(":")[0] in why
    off = [p for p in report["probes"] if "off_plan" in p]
    assert off and all(p["path"][2] not in second for p in off)


def test_a_device_answer_outside_the_plan_counts_only_the_known_links():
    plan = build_plan(lab())
    report = plan_probes(plan, oracle=lambda src, dst, sports, dport: [None] * len(sports))
    remote = [p for p in report["probes"] if len(p["path"]) == 2 and p.get("off_plan")]
    assert remote and all("outside the plan" in p["off_plan"] for p in remote)
    assert report["coverage"] < 1.0 and set(report["uncovered"]) == set(report["uncovered_why"])


def test_every_driver_declares_its_ecmp_hash():
    """The hash model is a driver declaration (nos/base.py ``ecmp_hash``), no table keyed by platform name: a vendor
    ASIC's by default, FRR's the Linux kernel's."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS
    for name in DRIVERS:
        assert "cannot be computed offline" in hash_model(name), name
    assert [n for n in sorted(DRIVERS) if "siphash" in hash_model(n)] == ["frr"]
    assert hash_model("nxos").startswith("nxos: the switch ASIC's ECMP hash")
