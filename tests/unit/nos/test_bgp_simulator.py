"""The lab simulators' BGP summaries (tests/lab/switches/bgp_show.py), in process, without SSH: each prints its NOS's
format (the real captures the parsers are tested on) from the running configs of the whole lab, and the product
judges it (nos/bgp_state.py). With the underlay pushed on every switch through its simulated CLI, every planned
session is Established; a neighbor line removed in the peer's own CLI takes the session out of Established, and
putting it back brings it back."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

from .helpers import push, simulator_module, simulator_session

simulator = simulator_module()
lab = pytest.importorskip("lab")   # tests/lab/switches/lab.py, on the path simulator_module set

SWITCHES = ("leaf1", "leaf2", "leaf3", "spine1", "spine2")   # eos, nvue, nxos, eos, eos in the lab fabric


@pytest.fixture()
def fabric(tmp_path, plan):
    """The lab's EOS, NVUE and NX-OS switches as simulator devices sharing one state directory, underlay pushed."""
    out = {}
    for name in SWITCHES:
        intent = plan["leafs"].get(name) or plan["spines"][name]
        lab.reset(name, intent["platform"], intent, str(tmp_path))
        sess = simulator_session(intent["platform"], simulator.Device(name, intent["platform"], str(tmp_path / name)))
        drv = get_driver(intent["platform"])
        push(sess, drv.commands(drv.diff("", drv.render(intent, plan["qos"], ("underlay",)))))
        out[name] = (intent, sess)
    return out


@pytest.fixture()
def with_csonic(fabric, tmp_path, plan):
    """csonic0 (community SONiC, CONFIG_DB) in leaf0's place, its underlay tables in its running CONFIG_DB."""
    d = lab.devices(extra=True)["csonic0"]
    lab.reset("csonic0", d["platform"], d["intent"], str(tmp_path))
    dev = simulator.Device("csonic0", "community_sonic", str(tmp_path / "csonic0"))
    for table, rows in get_driver("community_sonic").tables(d["intent"], plan["qos"], ("underlay",)).items():
        dev.running.setdefault(table, {}).update(rows)
    dev.persist()
    fabric["csonic0"] = (d["intent"], simulator_session("community_sonic", dev))
    return fabric


def judged(fabric, name):
    intent, sess = fabric[name]
    text = sess.handle(get_driver(intent["platform"]).bgp_summary.command)
    return dict((f["probe"], f) for f in bgp_state.findings(get_driver(intent["platform"]), intent, text))


def test_every_planned_session_between_configured_switches_is_established(fabric):
    for name in SWITCHES:
        intent = fabric[name][0]
        got = judged(fabric, name)
        for n in intent["bgp"]["neighbors"]:
            # leaf0 (AsterNOS) carries no underlay in this lab: the spines' sessions towards it stay down
            want = "fail" if n["peer"] == "leaf0" else "ok"
            assert got["bgp %s" % n["address"]]["status"] == want, (name, n, got["bgp %s" % n["address"]])
            if want == "ok":
                assert got["bgp %s" % n["address"]]["actual"] == "%s, AS %d" % (
                    "established" if intent["platform"] == "nvue" else "Established", n["remote_as"])
    assert judged(fabric, "leaf1")["bgp_sessions"]["actual"] == "4 of 4 Established"
    assert judged(fabric, "spine1")["bgp_sessions"]["actual"] == "6 of 8 Established"   # not leaf0's two


@pytest.mark.parametrize("leaf", ["leaf1", "leaf2", "leaf3"])
def test_a_neighbor_removed_in_the_spines_cli_takes_the_leafs_session_down(fabric, leaf):
    intent = fabric[leaf][0]
    n = intent["bgp"]["neighbors"][0]   # towards spine1, over the leaf's first uplink
    spine_intent, spine = fabric[n["peer"]]
    # the spine's neighbor on the same /31: the leaf's own address there
    mine = next(s for s in spine_intent["bgp"]["neighbors"] if s["peer"] == leaf and _same_link(s["address"], n["address"]))
    push(spine, ["router bgp %d" % spine_intent["bgp"]["asn"], "no neighbor %s remote-as %d" % (mine["address"], mine["remote_as"])])
    got = judged(fabric, leaf)
    down = got["bgp %s" % n["address"]]
    assert down["status"] == "fail" and down["actual"].split(",")[0].lower() == "active", down
    assert got["bgp_sessions"]["status"] == "fail" and got["bgp_sessions"]["actual"] == "3 of 4 Established"
    # the spine's own summary no longer shows the session at all: the plan's neighbor is missing there
    assert judged(fabric, n["peer"])["bgp %s" % mine["address"]]["actual"] == "not configured"
    push(spine, ["router bgp %d" % spine_intent["bgp"]["asn"], "neighbor %s remote-as %d" % (mine["address"], mine["remote_as"])])
    assert judged(fabric, leaf)["bgp_sessions"]["status"] == "ok"


def _same_link(a, b):
    """Two ends of one /31."""
    return a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0] and int(a.rsplit(".", 1)[1]) // 2 == int(b.rsplit(".", 1)[1]) // 2


def test_a_wrong_remote_as_on_the_leaf_keeps_the_session_down(fabric):
    """NX-OS leaf3: its neighbor's remote-as typed wrong in its own CLI: the spine's AS does not match, not up."""
    intent, sess = fabric["leaf3"]
    n = intent["bgp"]["neighbors"][1]
    push(sess, ["router bgp %d" % intent["bgp"]["asn"], "neighbor %s" % n["address"], "remote-as 65123"])
    got = judged(fabric, "leaf3")
    assert got["bgp %s" % n["address"]]["actual"] == "Active, AS 65123"
    assert got["bgp_sessions"]["actual"] == "3 of 4 Established"


def test_without_router_bgp_nxos_refuses_the_command_and_the_check_fails(tmp_path, plan):
    intent = plan["leafs"]["leaf3"]
    lab.reset("leaf3", "nxos", intent, str(tmp_path))
    sess = simulator_session("nxos", simulator.Device("leaf3", "nxos", str(tmp_path / "leaf3")))
    (got,) = bgp_state.findings(get_driver("nxos"), intent, sess.handle(get_driver("nxos").bgp_summary.command))
    assert got["status"] == "fail" and "Invalid command" in got["actual"]


def test_community_sonic_in_leaf0s_place_brings_its_sessions_up_and_a_spine_cli_takes_one_down(with_csonic):
    fabric = with_csonic
    intent = fabric["csonic0"][0]
    got = judged(fabric, "csonic0")
    assert got["bgp_sessions"]["status"] == "ok" and got["bgp_sessions"]["actual"] == "4 of 4 Established", got
    assert judged(fabric, "spine1")["bgp_sessions"]["actual"] == "8 of 8 Established"
    n = intent["bgp"]["neighbors"][0]
    spine_intent, spine = fabric[n["peer"]]
    mine = next(s for s in spine_intent["bgp"]["neighbors"] if s["peer"] == "leaf0" and _same_link(s["address"], n["address"]))
    push(spine, ["router bgp %d" % spine_intent["bgp"]["asn"], "no neighbor %s remote-as %d" % (mine["address"], mine["remote_as"])])
    got = judged(fabric, "csonic0")
    assert got["bgp %s" % n["address"]]["actual"] == "Active, AS %d" % n["remote_as"]
    assert got["bgp_sessions"]["actual"] == "3 of 4 Established"
