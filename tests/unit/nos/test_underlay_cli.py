"""NX-OS and Enterprise SONiC klish (Dell, AsterNOS): the routed underlay and PBR on the L3 ingress --
render, parse back, diff, on the lab and rail512 plans and on real captured output."""
import copy
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from tests.unit.nos.helpers import plan_on_platform

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CAPTURES = os.path.join(ROOT, "tests", "fixtures", "switches")
ALL = ("qos", "mtu", "pbr", "underlay")


_plan = plan_on_platform


def _read(path):
    with open(os.path.join(CAPTURES, path)) as handle:
        return handle.read()


@pytest.fixture(scope="module")
def plans():
    return dict(((inv, platform, scheme), _plan(inv, platform, scheme))
                for inv in ("lab", "rail512") for platform in ("nxos", "dell_sonic") for scheme in (None, "p2p")
                if not (inv == "rail512" and scheme))


@pytest.mark.parametrize("platform", ["nxos", "dell_sonic"])
def test_underlay_roundtrip_lab_and_rail512(plans, platform):
    for (inv, plat, scheme), plan in plans.items():
        if plat != platform:
            continue
        drv = get_driver(platform)
        assert "underlay" in drv.sections
        for name, intent in list(plan["leafs"].items())[:2] + list(plan["spines"].items())[:1]:
            text = drv.render(intent, plan["qos"], ALL)
            assert drv.parse(text, intent, ALL) == text, (inv, scheme, name)
            assert drv.commands(drv.diff(text, text)) == []
            # every planned neighbor and network is there, with the plan's values
            bgp = intent["bgp"]
            assert "router bgp %d\n" % bgp["asn"] in text
            for n in bgp["neighbors"]:
                assert "neighbor %s\n" % n["address"] in text and "remote-as %d\n" % n["remote_as"] in text
            for net in bgp["networks"]:
                assert "network %s\n" % net in text
            assert "maximum-paths %d\n" % bgp["maximum_paths"] in text
            # spines accept their plane ASN once from leafs (fabric.underlay.spine_allowas_in), leafs never
            assert text.count("allowas-in %d\n" % bgp["allowas_in"]) == (len(bgp["neighbors"]) if intent.get("bgp", {}).get("allowas_in") else 0)
            assert ("allowas-in" in text) == (name in plan["spines"])


def test_nxos_lab_leaf_lines(plans):
    plan = plans[("lab", "nxos", None)]
    leaf = plan["leafs"]["leaf0"]
    text = get_driver("nxos").render(leaf, plan["qos"], ALL)
    for line in ("feature bgp", "feature interface-vlan", "ip load-sharing address source-destination port source-destination",
                 "vlan 100", "interface Vlan100\n  no shutdown\n  ip address 10.100.0.6/29\n  ip policy route-map AIF-PBR-Vlan100",
                 "interface loopback0\n  ip address %s/32" % leaf["loopback"],
                 "  router-id %s\n  bestpath as-path multipath-relax\n  timers bgp 3 9" % leaf["loopback"],
                 "  neighbor %s\n    remote-as %d\n    address-family ipv4 unicast" % (
                     leaf["bgp"]["neighbors"][0]["address"], leaf["bgp"]["neighbors"][0]["remote_as"])):
        assert line + "\n" in text, line
    up = leaf["uplinks"][0]
    assert "interface %s\n  no switchport\n  mtu 9216\n  ip address %s/31\n" % (up["port"], up["address"]) in text
    member = leaf["downlinks"][0]["port"]
    assert "interface %s\n  switchport\n  switchport access vlan 100\n  mtu 9216\n" % member in text
    # PBR binds to the SVI (L3 ingress), never to an L2 member port; locals first via a deny sequence; no drop-on-fail
    assert "ip policy route-map" not in text.split("interface %s\n" % member)[1].split("interface ")[0]
    assert "route-map AIF-PBR-Vlan100 deny 10\n  match ip address AIF-PBR-Vlan100-LOCAL\n" in text
    assert "10 permit ip any %s\n" % leaf["local_destinations"][0] in text
    assert "drop-on-fail" not in text and text.count("set ip next-hop ") == len(leaf["bindings"])


def test_klish_p2p_leaf_binds_each_routed_host_port(plans):
    plan = plans[("lab", "dell_sonic", "p2p")]
    leaf = plan["leafs"]["leaf0"]
    text = get_driver("dell_sonic").render(leaf, plan["qos"], ALL)
    for host in leaf["host_interfaces"]:
        assert host["kind"] == "routed"
        block = text.split("interface %s\n" % host["port"])[1].split("interface ")[0]
        assert " ip address %s\n" % host["address"] in block
        assert " service-policy type forwarding in AIF-BIND-%s\n" % host["port"].replace("/", "-") in block
    assert "interface Vlan" not in text and "switchport" not in text
    for field in ("src-ip", "dst-ip", "ip-proto", "l4-src-port", "l4-dst-port"):
        assert "ip load-share hash ipv4 ipv4-%s\n" % field in text
    assert "  address-family ipv4 unicast\n   activate\n" in text


def test_klish_svi_comes_before_its_members():
    """`interface VlanN` creates the VLAN on SONiC: the push must create it before `switchport access Vlan N`."""
    plan = _plan("lab", "dell_sonic")
    drv = get_driver("dell_sonic")
    cmds = drv.commands(drv.diff("", drv.render(plan["leafs"]["leaf0"], plan["qos"], ALL)))
    assert cmds.index("interface Vlan100") < cmds.index(" switchport access Vlan 100")


@pytest.mark.parametrize("platform", ["nxos", "dell_sonic"])
def test_diff_changed_neighbor_and_removed_pbr_line(plans, platform):
    plan = plans[("lab", platform, None)]
    drv = get_driver(platform)
    leaf = plan["leafs"]["leaf0"]
    want = drv.render(leaf, plan["qos"], ALL)
    moved = copy.deepcopy(leaf)
    moved["bgp"]["neighbors"][0]["remote_as"] = 4200000099
    current = drv.render(moved, plan["qos"], ALL)
    cmds = [c.strip() for c in drv.commands(drv.diff(current, want))]
    nbr = leaf["bgp"]["neighbors"][0]
    assert "router bgp %d" % leaf["bgp"]["asn"] in cmds and "neighbor %s" % nbr["address"] in cmds
    assert "remote-as %d" % nbr["remote_as"] in cmds
    # a pin removed on the device (the binding's next hop line) comes back, nothing else changes
    hop = "set ip next-hop %s" % leaf["bindings"][1]["next_hop"]
    lines = want.splitlines()
    cut = next(i for i, line in enumerate(lines) if line.strip() == hop)
    current = "\n".join(lines[:cut] + lines[cut + 1:]) + "\n"
    cmds = drv.commands(drv.diff(drv.parse(current, leaf, ALL), want))
    assert [c.strip() for c in cmds][-1] == hop and len(cmds) == {"nxos": 2, "dell_sonic": 3}[platform]


def test_nxos_parses_real_router_bgp_capture_and_replaces_the_instance():
    """cisco.nxos nxos_bgp_global's device output: the default instance is owned whole (its other lines are
    stale for the plan), `vrf` blocks inside it too; an ASN change replaces the instance."""
    drv = get_driver("nxos")
    running = _read("nxos/cisco-nxos-bgp-global-running-config-section-router-bgp.txt")
    plan = _plan("lab", "nxos")
    leaf = plan["leafs"]["leaf0"]
    current = drv.parse(running, leaf, ("underlay",))
    assert current.startswith("router bgp 65563\n  router-id 192.168.1.1\n  bestpath as-path multipath-relax\n")
    assert "    remote-as 65563\n" in current and "  vrf site-1\n" in current
    cmds = drv.commands(drv.diff(current, drv.render(leaf, plan["qos"], ("underlay",))))
    assert "no router bgp 65563" in cmds and "router bgp %d" % leaf["bgp"]["asn"] in cmds


def test_klish_parses_real_bgp_capture_default_instance_only():
    drv = get_driver("dell_sonic")
    running = _read("sonic/dell-bgp-af-running-configuration-bgp.txt")
    leaf = _plan("lab", "dell_sonic")["leafs"]["leaf0"]
    current = drv.parse(running, leaf, ("underlay",))
    # `router bgp 51 vrf VrfReg1` is not ours; the default instance is read with its address families
    assert "vrf VrfReg1" not in current
    assert current.startswith("router bgp 51\n router-id 111.2.2.41\n timers 60 180\n address-family ipv4 unicast\n")
    assert "  maximum-paths 1\n" in current


def test_klish_parses_real_ecmp_hash_capture():
    drv = get_driver("dell_sonic")
    running = _read("sonic/dell-ecmp-load-share-running-configuration.txt")
    plan = _plan("lab", "dell_sonic")
    spine = plan["spines"]["spine1"]
    current = drv.parse(running, spine, ("underlay",))
    # the five ipv4 field lines are ours and already as planned; seed/algorithm lines are not ours
    assert current.count("ip load-share hash ipv4 ") == 5 and "seed" not in current
    cmds = drv.commands(drv.diff(current, drv.render(spine, plan["qos"], ("underlay",))))
    assert not any("load-share" in c for c in cmds)


def test_dell_breakout_names_match_the_device_capture():
    """dellemc sonic_port_breakout's `show interface breakout`: a 4-way breakout of port 1 and an unbroken port 11."""
    import re
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import port_name
    broken = re.findall(r"Eth1/1/\d", _read("sonic/dell-show-interface-breakout.txt"))
    assert broken == [port_name("dell_sonic", 1, sub, 4, 4) for sub in (1, 2, 3, 4)]
    default = _read("sonic/dell-show-interface-breakout-default.txt")
    assert re.search(r"^1/11\s+Default\s+Completed\s+(\S+)$", default, re.M).group(1) == port_name("dell_sonic", 11, 1, 1, 4)


def test_klish_ets_weights_from_the_qos_profile():
    plan = _plan("lab", "dell_sonic")
    qos = plan["qos"]
    text = get_driver("dell_sonic").render(plan["leafs"]["leaf0"], qos, ("qos",))
    sched = text.split("qos scheduler-policy AIF-SCHED\n")[1].split("\n" + "interface")[0]
    assert " queue %d\n  type dwrr\n  weight %d\n" % (qos["ecn_queue"], qos["ets_roce_percent"]) in sched
    assert " queue 0\n  type dwrr\n  weight %d\n" % qos["ets_default_percent"] in sched
    assert text.count("\n scheduler-policy AIF-SCHED\n") == len(plan["leafs"]["leaf0"]["downlinks"]) + len(plan["leafs"]["leaf0"]["uplinks"])
