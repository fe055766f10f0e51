"""PPD forwarding state on vendor NOSes (nos/ppd_state.py): the parsers read real captures (EOS: Arista's ANTA
fixture of ``show policy-map type pbr``; NX-OS: genieparser's ``show route-map`` capture; NVUE: NVIDIA's command
reference for ``nv show router pbr map <m> rule -o json``), the verdict is passed only where the switch's policy
sends a host port's source to the planned next hop, and the lab simulators print the same formats."""
import copy
import json
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import ppd_state, validation
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

from .helpers import ROOT, push, simulator_session

CAPTURES = os.path.join(ROOT, "tests", "fixtures", "switches")


def capture(*path):
    with open(os.path.join(CAPTURES, *path)) as handle:
        return handle.read()


def pin(policy, match, ingress, next_hop, port="Ethernet7", **extra):
    binding = {"ingress": port, "source": "10.0.0.7/32", "uplink": "Ethernet49", "spine": "spine1", "next_hop": next_hop}
    return dict({"binding": binding, "ingress": ingress, "policy": policy, "match": match}, **extra)


INTENT = {"uplinks": [{"port": "Ethernet49", "peer": "192.0.2.1"}, {"port": "Ethernet50", "peer": "192.168.1.1"}]}


# --- the real captures --------------------------------------------------------------------------------------------
def test_eos_capture_parsed_and_judged():
    text = capture("eos", "anta-show-policy-map-type-pbr-json.json")
    assert ppd_state.parse_eos(text) == {("redirect", "10"): {"next_hops": ["192.0.2.1"], "interfaces": ["Ethernet1"]}}
    ok, moved, elsewhere = ppd_state.judge("eos", INTENT, [
        pin("redirect", "10", "Ethernet1", "192.0.2.1"),
        pin("redirect", "10", "Ethernet1", "192.168.1.1", port="Ethernet8"),
        pin("redirect", "10", "Vlan100", "192.0.2.1", port="Ethernet9")], [text])
    assert ok["status"] == "ok" and ok["actual"].startswith("via 192.0.2.1 dev Ethernet49 ")
    assert moved["status"] == "fail" and "host port Ethernet8" in moved["message"] and "192.0.2.1" in moved["message"]
    assert elsewhere["status"] == "fail" and "not on Vlan100" in elsewhere["message"]


def test_nxos_capture_parsed_and_judged():
    text = capture("nxos", "genie-nxos-show-route-map.txt")
    state = ppd_state.parse_nxos(text)
    # one PBR sequence in the capture (an ACL match and a next hop); prefix-list matches are not PBR
    assert state == {("pbr-sample", "pbr-sample"): {"next_hops": ["192.168.1.1"], "action": "permit", "seq": 10}}
    ok, moved, missing = ppd_state.judge("nxos", INTENT, [
        pin("pbr-sample", "pbr-sample", "Vlan100", "192.168.1.1"),
        pin("pbr-sample", "pbr-sample", "Vlan100", "192.0.2.1", port="Ethernet1/2"),
        pin("pbr-sample", "other-acl", "Vlan100", "192.0.2.1", port="Ethernet1/3")], [text])
    assert ok["status"] == "ok" and ok["actual"].startswith("via 192.168.1.1 dev Ethernet50 ")
    assert moved["status"] == "fail" and "host port Ethernet1/2" in moved["message"]
    assert missing["status"] == "fail" and missing["actual"].startswith("not pinned") and "Ethernet1/3" in missing["message"]


def test_nvue_capture_not_installed_is_failed_with_the_switch_reason():
    text = capture("nvue", "cl-nv-show-router-pbr-map-rule-json.json")
    assert ppd_state.parse_nvue("map1", text) == {
        ("map1", "0.0.0.0/0"): {"groups": ["group1"], "installed": "off", "reason": "Invalid NH-group", "rule": "1"}}
    p = pin("map1", "0.0.0.0/0", "vlan100", "192.0.2.1", port="swp7", group="group1")
    (got,) = ppd_state.judge("nvue", INTENT, [p], [text])
    assert got["status"] == "fail" and "not installed" in got["message"] and "swp7" in got["message"]
    assert "Invalid NH-group" in got["actual"]
    # the same rule installed: passed (group1 is the planned next hop's group)
    installed = json.loads(text)
    installed["1"]["installed"] = "on"
    (got,) = ppd_state.judge("nvue", INTENT, [p], [json.dumps(installed)])
    assert got["status"] == "ok", got


def test_a_refused_or_unreadable_show_is_not_run_never_passed():
    p = [pin("redirect", "10", "Ethernet1", "192.0.2.1")]
    for text in ("% Invalid input (at token 2: 'policy-map')", "", "not json"):
        (got,) = ppd_state.judge("eos", INTENT, p, [text])
        assert got["status"] == "skipped" and got["message"].startswith("not run"), (text, got)
    (got,) = ppd_state.judge("nvue", INTENT, [dict(p[0], group="g")], ["Error: Invalid command: nv show router pbr"])
    assert got["status"] == "skipped"


def test_vendor_platforms_run_ppd_and_leave_the_rest_unverified():
    assert set(ppd_state.PLATFORMS) <= set(validation.SUPPORTED)
    skipped = validation.unsupported("eos", ["bgp_sessions", "ppd_paths", "failover"])
    assert [f["probe"] for f in skipped] == ["failover"]
    assert [f["probe"] for f in validation.unsupported("dell_sonic", ["ppd_paths"])] == ["ppd_paths"]


# --- the lab simulators print the captures' formats ----------------------------------------------------------------
def configured(plan, leaf_name):
    """A simulator session of the leaf's NOS holding the product's config for it (pushed through the CLI)."""
    leaf = plan["leafs"][leaf_name]
    drv = get_driver(leaf["platform"])
    sess = simulator_session(leaf["platform"])
    push(sess, drv.diff("", drv.render(leaf, plan["qos"])))
    return leaf, drv, sess


def read(platform, leaf, drv, sess):
    pins = drv.ppd_pins(leaf)
    return ppd_state.judge(platform, leaf, pins, [sess.handle(c) for c in ppd_state.commands(platform, pins)])


@pytest.mark.parametrize("leaf_name,moved", [
    ("leaf1", ["policy-map type pbr AIF-PBR-Vlan100", "class AIF-BIND-Ethernet2", "set nexthop {other}"]),
    ("leaf3", ["route-map AIF-PBR-Vlan100 permit 30", "set ip next-hop {other}"]),
    ("leaf2", ["nv set router pbr map AIF-PBR-vlan100 rule 1010 action nexthop-group AIF-NH-{other_dashed}"]),
])
def test_simulator_shows_the_pushed_pins_and_a_moved_pin_is_named(plan, leaf_name, moved):
    leaf, drv, sess = configured(plan, leaf_name)
    platform = leaf["platform"]
    findings = read(platform, leaf, drv, sess)
    assert len(findings) == len(leaf["bindings"]) == 4
    assert [f["status"] for f in findings] == ["ok"] * 4, findings
    # another engineer moves the second host's pin to the other spine
    second = leaf["bindings"][1]
    other = next(b["next_hop"] for b in leaf["bindings"] if b["next_hop"] != second["next_hop"])
    if platform == "nvue":
        push(sess, [c.format(other_dashed=other.replace(".", "-")) for c in moved]
             + ["nv set router nexthop group AIF-NH-%s via %s" % (other.replace(".", "-"), other)])
    else:
        push(sess, [c.format(other=other) for c in moved])
    findings = read(platform, leaf, drv, sess)
    failed = [f for f in findings if f["status"] != "ok"]
    assert len(failed) == 1 and failed[0]["probe"].startswith("pinned %s " % second["source"].split("/")[0]), findings
    assert "host port %s" % second["ingress"] in failed[0]["message"] and other in failed[0]["actual"]


def test_eos_policy_taken_off_the_svi_is_failed(plan):
    leaf, drv, sess = configured(plan, "leaf1")
    push(sess, ["interface Vlan100", "no service-policy type pbr input AIF-PBR-Vlan100"])
    findings = read("eos", leaf, drv, sess)
    assert [f["status"] for f in findings] == ["fail"] * 4 and all("not on Vlan100" in f["message"] for f in findings)


def test_pins_name_what_the_drivers_render(plan):
    for leaf_name in ("leaf1", "leaf2", "leaf3"):
        leaf = copy.deepcopy(plan["leafs"][leaf_name])
        drv = get_driver(leaf["platform"])
        rendered = drv.render(leaf, plan["qos"])
        for p in drv.ppd_pins(leaf):
            assert p["policy"] in rendered and p["match"] in rendered, (leaf_name, p)
