"""Every directed link probed on the devices' own ECMP answers (issue 38, Done-when 1), or named ``uncovered``.

The twin's spines hash on the L4 5-tuple (``fib_multipath_hash_policy=1``), but a spine may hash on addresses alone:
Linux's default policy 0 (L3: "Source and destination IP addresses", kernel docs ip-sysctl
fib_multipath_hash_policy), and the polarisation test_twin shows with it. Then every source port of one
(source, destination) pair takes one link, and a spine->leaf link is crossed only through another pair.
"""
import json
import zlib

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom import collector
from ansible_collections.aifabric.roce.plugins.module_utils.gom.identify import plan_identifiable
from ansible_collections.aifabric.roce.plugins.module_utils.gom.localise import STATE, Localiser, Topology
from ansible_collections.aifabric.roce.plugins.module_utils.gom.probes import PAIR_TRIES, LinkModel, plan_probes

from ..fabric.intents import lab


def l3_device(model, dead=None):
    """A spine that hashes on (source, destination address) only; ``dead`` (spine, leaf, member): a parallel link
    the spine's ECMP group lacks (FRR 8.4 after a flap, docs/twin.md), so it takes member 0 there instead."""
    calls = []

    def oracle(src, dst, sports, dport):
        calls.append((src["id"], dst["id"]))
        members = len(model.parallel[(src["spine"], dst["leaf"])])
        pick = zlib.crc32(("%s|%s" % (src["address"], dst["address"])).encode("ascii")) % members
        if dead and (src["spine"], dst["leaf"]) == dead[:2] and pick == dead[2]:
            pick = 0
        return [pick] * len(sports)
    return oracle, calls


def crossed(report):
    return set(link for probe in report["probes"] for link in probe["path"])


def test_a_spine_hashing_on_addresses_alone_still_has_every_link_probed():
    # before: the repair asked one (source, destination) pair per uncrossed spine->leaf link; on the lab
    # spine2's second link to leaf3 then had no probe (63 of 64 links), reported identifiable 0.98
    plan = build_plan(lab())
    model = LinkModel(plan)
    oracle, calls = l3_device(model)
    for report in (plan_probes(plan, oracle=oracle), plan_identifiable(plan, oracle=oracle)):
        assert crossed(report) == set(model.links) and len(model.links) == 64
        assert report["uncovered"] == [] and report["coverage"] == 1.0 and report["uncovered_why"] == {}
    assert report["identifiable"] == 1.0 and report["ambiguous"] == []
    # every probe's path is the one the device gives its own source port
    nics = dict((n["id"], n) for n in model.nics)
    for probe in report["probes"]:
        src, dst = nics["%s:%s" % (probe["src_host"], probe["src_netdev"])], nics["%s:%s" % (probe["dst_host"], probe["dst_netdev"])]
        if len(probe["path"]) == 4:
            assert probe["path"][2] == model.parallel_down[(src["spine"], dst["leaf"])][oracle(src, dst, [probe["udp_sport"]], 0)[0]]


def test_a_link_the_device_never_takes_is_reported_uncovered_with_the_pairs_asked():
    plan = build_plan(lab())
    model = LinkModel(plan)
    dead_link = model.parallel_down[("spine1", "leaf0")][1]
    oracle, calls = l3_device(model, dead=("spine1", "leaf0", 1))
    report = plan_identifiable(plan, oracle=oracle)
    assert crossed(report) == set(model.links) - {dead_link}
    assert report["uncovered"] == [dead_link] and report["coverage"] == 63.0 / 64
    # every source bound to spine1 off leaf0 (6) with every other host's NIC on leaf0 (3) was asked for it
    spine_of = dict((n["id"], n["spine"]) for n in model.nics)
    pairs = set((s, d) for s, d in calls if d.endswith(":rail0") and not s.endswith(":rail0") and spine_of[s] == "spine1")
    assert len(pairs) == 6 * 3 <= PAIR_TRIES
    assert report["uncovered_why"] == {dead_link: (
        "no probe reaches it: for 18 (source bound to spine1, destination) pairs and every UDP source port asked "
        "(49152-49215), the device itself forwards on another link")}
    # not claimed identifiable: its failure fails no probe
    assert report["identifiable"] == 63.0 / 64 and [dead_link] in report["ambiguous"]


def test_the_collector_lists_an_uncovered_link_as_not_measured(tmp_path):
    plan = build_plan(lab())
    model = LinkModel(plan)
    oracle, _calls = l3_device(model, dead=("spine1", "leaf0", 1))
    report = plan_identifiable(plan, oracle=oracle)
    dead_link = report["uncovered"][0]
    plan_path, probes_path = tmp_path / "plan.json", tmp_path / "probes.json"
    plan_path.write_text(json.dumps(plan))
    probes_path.write_text(json.dumps({"probes": report["probes"], "uncovered": report["uncovered"]}))
    loc, _plan = collector.build(str(plan_path), str(probes_path))
    assert loc.topo.uncovered == [dead_link] and loc.state(dead_link) == "unmeasured"
    assert loc.topo.info[dead_link]["link_class"] == "spine_down" and loc.topo.info[dead_link]["gpus"]

    class Service(object):
        localiser, lock, event_counts, repathed = loc, __import__("threading").Lock(), {}, []
    families = dict((f.name, f) for f in collector.Metrics(Service()).collect())
    assert [(s.labels, s.value) for s in families["gom_link_uncovered"].samples] == [({"link": dead_link}, 1)]
    states = dict((s.labels["link"], s.value) for s in families["gom_link_state"].samples)
    assert states[dead_link] == STATE["unmeasured"]
    # a plan without the key (older probes.json): nothing listed
    probes_path.write_text(json.dumps({"probes": report["probes"]}))
    assert Topology(plan, report["probes"]).uncovered == [] and collector.read_uncovered(str(probes_path)) == []
    assert isinstance(Localiser(Topology(plan, report["probes"], [dead_link])).topo.uncovered, list)
