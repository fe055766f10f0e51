"""PPD forwarding state on vendor NOSes (nos/ppd_state.py): the parsers read real captures (EOS: Arista's ANTA
fixture of ``show policy-map type pbr``; NX-OS: genieparser's ``show route-map`` capture; NVUE: NVIDIA's command
reference for ``nv show router pbr map <m> rule -o json``), the verdict is passed only where the switch's policy
sends a host port's source to the planned next hop, and the lab simulators print the same formats."""
import copy
import ipaddress
import json
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import ppd_state, sonic_db, validation
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver

from .helpers import ROOT, push, simulator_module, simulator_session

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
    ok, moved, elsewhere = ppd_state.judge(get_driver("eos"), INTENT, [
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
    ok, moved, missing = ppd_state.judge(get_driver("nxos"), INTENT, [
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
    (got,) = ppd_state.judge(get_driver("nvue"), INTENT, [p], [text])
    assert got["status"] == "fail" and "not installed" in got["message"] and "swp7" in got["message"]
    assert "Invalid NH-group" in got["actual"]
    # the same rule installed: passed (group1 is the planned next hop's group)
    installed = json.loads(text)
    installed["1"]["installed"] = "on"
    (got,) = ppd_state.judge(get_driver("nvue"), INTENT, [p], [json.dumps(installed)])
    assert got["status"] == "ok", got


def test_a_refused_or_unreadable_show_is_not_run_never_passed():
    p = [pin("redirect", "10", "Ethernet1", "192.0.2.1")]
    for text in ("% Invalid input (at token 2: 'policy-map')", "", "not json"):
        (got,) = ppd_state.judge(get_driver("eos"), INTENT, p, [text])
        assert got["status"] == "skipped" and got["message"].startswith("not run"), (text, got)
    (got,) = ppd_state.judge(get_driver("nvue"), INTENT, [dict(p[0], group="g")], ["Error: Invalid command: nv show router pbr"])
    assert got["status"] == "skipped"


def test_vendor_platforms_run_ppd_and_leave_the_rest_unverified():
    assert all("ppd_paths" in get_driver(p).checks for p in DRIVERS if get_driver(p).ppd_read)
    skipped = validation.unsupported(get_driver("eos"), ["bgp_sessions", "ppd_paths", "failover"])
    assert [f["probe"] for f in skipped] == ["failover"]
    assert [f["probe"] for f in validation.unsupported(get_driver("dell_sonic"), ["ppd_paths"])] == ["ppd_paths"]


# --- the lab simulators print the captures' formats ----------------------------------------------------------------
def configured(plan, leaf_name):
    """A simulator session of the leaf's NOS holding the product's config for it (pushed through the CLI)."""
    leaf = plan["leafs"][leaf_name]
    drv = get_driver(leaf["platform"])
    sess = simulator_session(leaf["platform"])
    push(sess, drv.commands(drv.diff("", drv.render(leaf, plan["qos"]))))
    return leaf, drv, sess


def read(platform, leaf, drv, sess):
    pins = drv.ppd_pins(leaf)
    driver = get_driver(platform)
    return ppd_state.judge(driver, leaf, pins, [sess.handle(c) for c in driver.ppd_read.commands(pins)])


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


# --- community SONiC: acl-loader's tables (show acl table / show acl rule) -----------------------------------------
def test_sonic_captures_parsed_and_a_rule_without_the_host_source_or_status_is_failed():
    rules = sonic_db.parse_acl_rules(capture("sonic", "sonic-utilities-show-acl-rule-redirect.txt"))
    tables = sonic_db.parse_acl_tables(capture("sonic", "sonic-utilities-show-acl-table.txt"))
    assert tables == {"ENI": {"type": "ENI_REDIRECT", "bindings": ["Ethernet104", "PortChannel108"], "stage": "ingress",
                              "status": "Active"}}
    assert rules[("ENI", "Vnet100_F4939FEFC47E_OUT")] == {
        "priority": "9997", "action": "REDIRECT: 10.0.0.75", "status": "Active",
        "matches": {"DST_IP": "10.2.0.1/32", "INNER_SRC_MAC": "f4:93:9f:ef:c4:7e", "TUNNEL_VNI": "4321"}}
    assert rules[("ENI", "Vnet100_F4939FEFC47E_IN")]["status"] == "N/A"
    assert sonic_db.redirect_hops("REDIRECT: 10.0.0.75") == ["10.0.0.75"]
    assert sonic_db.redirect_hops("REDIRECT:10.0.0.1@Ethernet0,10.0.0.3") == ["10.0.0.1", "10.0.0.3"]
    assert sonic_db.redirect_hops("FORWARD") == []
    texts = [capture("sonic", "sonic-utilities-show-acl-table.txt"), capture("sonic", "sonic-utilities-show-acl-rule-redirect.txt")]
    intent = {"uplinks": [{"port": "Ethernet49", "peer": "10.0.0.75"}]}
    out, off_port = ppd_state.judge(get_driver("community_sonic"), intent, [
        pin("ENI", "Vnet100_F4939FEFC47E_OUT", "Ethernet104", "10.0.0.75"),
        pin("ENI", "Vnet100_F4939FEFC47E_OUT", "Ethernet8", "10.0.0.75")], texts)
    # the capture's rule matches a destination, not the host source: it does not pin the host port
    assert out["status"] == "fail" and "does not match the host source 10.0.0.7/32" in out["message"], out
    assert off_port["status"] == "fail" and "not bound to Ethernet8" in off_port["message"], off_port


def test_sonic_simulator_prints_acl_loaders_tables():
    """The simulator's `show acl table` / `show acl rule` over the capture's own rows: the table byte for byte, the
    rule as the parser reads the capture (its status from the redirect's next hop: here connected)."""
    simulator_module()
    import ppd_show
    config = {"ACL_TABLE": {"ENI": {"type": "ENI_REDIRECT", "ports": ["PortChannel108", "Ethernet104"], "stage": "INGRESS",
                                    "policy_desc": "Contains Mock Rules for ENI Based Forwarding"}},
              "ACL_RULE": {"ENI|Vnet100_F4939FEFC47E_OUT": {"PRIORITY": "9997", "REDIRECT_ACTION": "10.0.0.75",
                                                            "DST_IP": "10.2.0.1/32", "INNER_SRC_MAC": "f4:93:9f:ef:c4:7e",
                                                            "TUNNEL_VNI": "4321"}},
              "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.74/31": {}}}
    assert ppd_show.sonic_acl_table(config, "ENI") == capture("sonic", "sonic-utilities-show-acl-table.txt")
    want = sonic_db.parse_acl_rules(capture("sonic", "sonic-utilities-show-acl-rule-redirect.txt"))
    got = sonic_db.parse_acl_rules(ppd_show.sonic_acl_rule(config, "ENI"))
    assert got == {("ENI", "Vnet100_F4939FEFC47E_OUT"): want[("ENI", "Vnet100_F4939FEFC47E_OUT")]}
    del config["INTERFACE"]   # the next hop no longer resolvable: orchagent creates no rule, no status
    assert sonic_db.parse_acl_rules(ppd_show.sonic_acl_rule(config))[("ENI", "Vnet100_F4939FEFC47E_OUT")]["status"] == "N/A"


@pytest.fixture()
def csonic(plan, tmp_path):
    """A community SONiC leaf in leaf0's place holding the plan's underlay and PBR tables in its CONFIG_DB, as an
    engineer would have loaded them (the driver refuses to push PBR through GCU: sonic-acl.yang)."""
    simulator = simulator_module()
    lab = pytest.importorskip("lab")   # tests/lab/switches/lab.py, on the path simulator_module set
    intent = lab.devices(extra=True)["csonic0"]["intent"]
    lab.reset("csonic0", "community_sonic", intent, str(tmp_path))
    drv = get_driver("community_sonic")
    sess = simulator_session("community_sonic", simulator.Device("csonic0", "community_sonic", str(tmp_path / "csonic0")))
    for table, rows in drv.tables(intent, plan["qos"], ("underlay", "pbr")).items():
        sess.dev.running.setdefault(table, {}).update(rows)
    sess.dev.persist()
    return intent, drv, sess


def test_sonic_simulator_pins_verified_and_an_engineers_changes_named(csonic):
    intent, drv, sess = csonic
    findings = read("community_sonic", intent, drv, sess)
    assert len(findings) == len(intent["bindings"]) >= 2
    assert [f["status"] for f in findings] == ["ok"] * len(findings), findings
    assert "REDIRECT:" in findings[0]["actual"] and "Active" in findings[0]["actual"]
    first, second = intent["bindings"][:2]
    rules = sess.dev.running["ACL_RULE"]
    # an engineer moves the second host's redirect to the first's next hop, and takes the first's port off the table
    other = next(b["next_hop"] for b in intent["bindings"] if b["next_hop"] != second["next_hop"])
    rules["AIF-PBR|" + drv.ppd_pins(intent)[1]["match"]]["PACKET_ACTION"] = "REDIRECT:%s" % other
    sess.dev.running["ACL_TABLE"]["AIF-PBR"]["ports"].remove(drv.port(first["ingress"]))
    by_port = dict((f["probe"], f) for f in read("community_sonic", intent, drv, sess))
    p1, p2 = ["pinned %s -> AIF-PBR %s" % (b["source"].split("/")[0], p["match"])
              for b, p in zip((first, second), drv.ppd_pins(intent)[:2])]
    assert by_port[p1]["status"] == "fail" and "not bound to" in by_port[p1]["message"], by_port[p1]
    assert by_port[p2]["status"] == "fail" and other in by_port[p2]["actual"], by_port[p2]
    assert sum(f["status"] == "ok" for f in by_port.values()) == len(intent["bindings"]) - 2


def test_sonic_rule_whose_next_hop_is_gone_is_not_active(csonic):
    intent, drv, sess = csonic
    hop = intent["bindings"][0]["next_hop"]
    gone = [k for k in sess.dev.running["INTERFACE"]
            if "|" in k and ipaddress.ip_address(hop) in ipaddress.ip_interface(k.split("|")[1]).network]
    assert gone, "the plan's first next hop is on a routed uplink"
    for key in gone:
        del sess.dev.running["INTERFACE"][key]
    failed = [f for f in read("community_sonic", intent, drv, sess) if f["status"] != "ok"]
    assert failed and all("not active on the switch (status N/A" in f["message"] for f in failed), failed
    assert len(failed) == sum(b["next_hop"] == hop for b in intent["bindings"])
