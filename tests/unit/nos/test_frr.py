"""The frr driver against FRR 8.4.4's own output (tests/fixtures/switches/frr, captured from the twin).
Its transaction on the shared apply flow: tests/unit/nos/test_frr_transaction.py."""
import json
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.frr import FrrDriver

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "switches", "frr")


def _load(name):
    with open(os.path.join(HERE, name)) as handle:
        return handle.read()


INTENTS = json.loads(_load("intents.json"))


@pytest.mark.parametrize("router", ["leaf0", "spine1"])
def test_render_equals_what_frr_printed_after_applying_it(router):
    driver = FrrDriver()
    running = _load("%s-running-config.txt" % router)
    assert driver.parse(running, INTENTS[router]) == driver.render(INTENTS[router], INTENTS["qos"])
    assert driver.commands(driver.diff(driver.parse(running, INTENTS[router]), driver.render(INTENTS[router], INTENTS["qos"]))) == []


def test_spine_allowas_in_renders_as_frr_printed_it():
    """FRR 8.4.4 prints `neighbor X allowas-in N` after the networks, one per leaf session (real capture)."""
    driver = FrrDriver()
    intent = INTENTS["spine1_allowas_in"]
    running = _load("spine1-allowas-in-running-config.txt")
    assert driver.parse(running, intent) == driver.render(intent, INTENTS["qos"])
    text = driver.render(intent, INTENTS["qos"])
    assert text.count(" allowas-in 1\n") == len(intent["bgp"]["neighbors"]) == 8
    # without it the spine's config is the older capture's: nothing else moved
    plain = dict(intent, bgp=dict(intent["bgp"], allowas_in=0))
    assert "allowas-in" not in driver.render(plain, INTENTS["qos"])
    assert driver.commands(driver.diff(driver.render(plain, INTENTS["qos"]), text)) == (
        ["router bgp 4200000000", "address-family ipv4 unicast"]
        + ["neighbor %s allowas-in 1" % n["address"] for n in intent["bgp"]["neighbors"]]
        + ["exit-address-family", "exit"])


def test_leaf_render_carries_underlay_and_ingress_pbr():
    text = FrrDriver().render(INTENTS["leaf0"], INTENTS["qos"])
    assert "router bgp 4200001000\n" in text
    assert " neighbor 10.254.0.0 remote-as 4200000000\n" in text
    assert "  maximum-paths 64\n" in text and " bgp bestpath as-path multipath-relax\n" in text
    # scheme A: the policy sits on the SVI (L3 ingress), never on the L2 member ports
    assert "interface vlan100\n ip address 10.100.0.6/29\n pbr-policy AIF-PBR\nexit\n" in text
    assert "interface Ethernet1\n" not in text
    # the local destination rule precedes every pin and keeps the main table
    assert ("pbr-map AIF-PBR seq 1\n match dst-ip 10.100.0.0/29\n set vrf unchanged\nexit\n"
            "pbr-map AIF-PBR seq 100\n match src-ip 10.100.0.1/32\n set nexthop-group AIF-NH-10-254-0-0\nexit\n") in text
    assert text.count("set vrf unchanged") == 1 and text.count("set nexthop-group") == 4


def test_unmanaged_config_is_ignored_and_stale_objects_are_removed():
    driver = FrrDriver()
    running = _load("leaf0-running-config.txt") + (
        "interface eth0\n ip address 192.0.2.10/24\nexit\n"            # management: never ours
        "router bgp 65001 vrf mgmt\n bgp router-id 192.0.2.10\nexit\n"    # another VRF's instance: not ours
        "pbr-map OTHER seq 5\n match src-ip 192.0.2.0/24\n set vrf unchanged\nexit\n"
        "pbr-map AIF-PBR seq 700\n match src-ip 10.100.0.7/32\n set nexthop-group AIF-NH-10-254-0-0\nexit\n")
    current = driver.parse(running, INTENTS["leaf0"])
    assert "eth0" not in current and "OTHER" not in current and "vrf mgmt" not in current
    assert driver.commands(driver.diff(current, driver.render(INTENTS["leaf0"], INTENTS["qos"]))) == ["no pbr-map AIF-PBR seq 700"]


def test_diff_removes_a_neighbor_inside_router_bgp_and_readds_it():
    driver = FrrDriver()
    want = driver.render(INTENTS["leaf0"], INTENTS["qos"])
    current = want.replace(" neighbor 10.254.0.2 remote-as 4200000000\n", "").replace("  network 10.255.0.1/32\n", "")
    assert driver.commands(driver.diff(current, want)) == [
        "router bgp 4200001000", "neighbor 10.254.0.2 remote-as 4200000000", "address-family ipv4 unicast",
        "network 10.255.0.1/32", "exit-address-family", "exit"]
    assert driver.commands(driver.diff(want, current)) == [
        "router bgp 4200001000", "no neighbor 10.254.0.2 remote-as 4200000000", "address-family ipv4 unicast",
        "no network 10.255.0.1/32", "exit-address-family", "exit"]
    # the ops under the text: the block, its lines, the address-family and its lines, the closers no setting of theirs
    assert [(op.kind, op.path) for op in driver.diff(want, current)] == [
        ("set", ("router bgp 4200001000",)), ("unset", ("router bgp 4200001000", "neighbor 10.254.0.2 remote-as 4200000000")),
        ("set", ("router bgp 4200001000", "address-family ipv4 unicast")),
        ("unset", ("router bgp 4200001000", "address-family ipv4 unicast", "network 10.255.0.1/32"))]


def test_diff_negates_a_no_line_and_drops_a_whole_old_asn():
    driver = FrrDriver()
    want = driver.render(INTENTS["spine1"], INTENTS["qos"])
    old = want.replace("router bgp 4200000000", "router bgp 65000").replace(" no bgp ebgp-requires-policy\n", "")
    cmds = driver.commands(driver.diff(old, want))
    assert cmds[0] == "no router bgp 65000"
    assert "no bgp ebgp-requires-policy" in cmds and cmds.index("router bgp 4200000000") > 0


def test_qos_and_mtu_render_nothing():
    assert FrrDriver().render(INTENTS["leaf0"], INTENTS["qos"], sections=("qos", "mtu")) == ""
