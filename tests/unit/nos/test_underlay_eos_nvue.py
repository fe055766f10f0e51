"""Section underlay and the L3-ingress PBR on the EOS and NVUE drivers: render -> parse round trips on the lab and
rail512 plans (both addressing schemes), diffs of a changed BGP neighbor and a removed PBR rule, the line sources,
and the read path on real captured configs (tests/fixtures/switches/, SOURCE.md there)."""
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from tests.unit.nos.helpers import plan_on_platform
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sources import audit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIX = os.path.join(ROOT, "tests", "fixtures", "switches")
ALL = ("qos", "mtu", "pbr", "underlay")


PLANS = {}


def plan_for(inventory, platform, scheme=None):
    key = (inventory, platform, scheme)
    if key not in PLANS:
        PLANS[key] = plan_on_platform(inventory, platform, scheme)
    return PLANS[key]


def some_devices(plan):
    return list(plan["leafs"].items())[:2] + list(plan["spines"].items())[:1]


@pytest.mark.parametrize("platform", ["eos", "nvue"])
@pytest.mark.parametrize("inventory, scheme", [("lab", None), ("lab", "p2p"), ("rail512", None)])
def test_round_trip_every_section_alone_and_together(platform, inventory, scheme):
    plan = plan_for(inventory, platform, scheme)
    drv = get_driver(platform)
    for name, intent in some_devices(plan):
        full = drv.render(intent, plan["qos"], ALL)
        assert drv.parse(full, intent, ALL) == full, name
        assert drv.commands(drv.diff(full, full)) == [], name
        for sec in ALL:
            # each section reads back only its own lines out of the whole config
            assert drv.parse(full, intent, (sec,)) == drv.render(intent, plan["qos"], (sec,)), (name, sec)
        assert str(intent["bgp"]["asn"]) in full and intent["loopback"] in full, name


@pytest.mark.parametrize("platform, svi, binding", [("eos", "interface Vlan100", "service-policy type pbr input AIF-PBR-Vlan100"),
                                                    ("nvue", "nv set interface vlan100", "router pbr map AIF-PBR-vlan100")])
def test_scheme_a_binds_the_policy_to_the_svi_with_one_source_match_per_host(platform, svi, binding):
    plan = plan_for("lab", platform)
    leaf = plan["leafs"]["leaf1"]
    text = get_driver(platform).render(leaf, plan["qos"], ("pbr",))
    assert [line for line in text.splitlines() if binding in line] != []
    assert all(svi.split()[-1] in line for line in text.splitlines() if binding.split()[-1] in line and "interface" in line)
    for b in leaf["bindings"]:
        assert b["source"].split("/")[0] in text and b["next_hop"] in text
    # the L2 members carry no policy
    assert "interface Ethernet1\n   service-policy" not in text and "interface swp1 router pbr" not in text


@pytest.mark.parametrize("platform", ["eos", "nvue"])
def test_scheme_b_binds_the_policy_to_each_routed_host_port(platform):
    plan = plan_for("lab", platform, "p2p")
    leaf = plan["leafs"]["leaf1"]
    drv = get_driver(platform)
    text = drv.render(leaf, plan["qos"], ALL)
    assert "vlan" not in text.lower().replace("vrf", "")
    for b in leaf["bindings"]:
        port = b["ingress"]
        if platform == "eos":
            assert "interface %s\n   no switchport\n   ip address" % port in text
            assert "service-policy type pbr input AIF-PBR-%s" % port in text
        else:
            assert "nv set interface %s router pbr map AIF-PBR-%s\n" % (port, port) in text
            assert "nv set interface %s ipv4 address " % port in text


def test_eos_diff_of_a_changed_neighbor_and_a_removed_pbr_class():
    plan = plan_for("lab", "eos")
    leaf = plan["leafs"]["leaf1"]
    drv = get_driver("eos")
    want = drv.render(leaf, plan["qos"], ALL)
    cur = want.replace("neighbor 10.254.0.8 remote-as 4200000000", "neighbor 10.254.0.8 remote-as 4200000009")
    cur = cur.replace("   class AIF-BIND-Ethernet2\n      set nexthop 10.254.0.10\n", "")
    assert cur.count("\n") < want.count("\n")
    cmds = [c.strip() for c in drv.commands(drv.diff(drv.parse(cur, leaf, ALL), want))]
    assert "router bgp 4200001001" in cmds and "neighbor 10.254.0.8 remote-as 4200000000" in cmds, cmds
    assert "policy-map type pbr AIF-PBR-Vlan100" in cmds and "set nexthop 10.254.0.10" in cmds, cmds
    assert "no ip routing" not in cmds


def test_nvue_diff_of_a_removed_neighbor_a_changed_one_and_a_removed_pbr_rule():
    plan = plan_for("lab", "nvue")
    leaf = plan["leafs"]["leaf2"]
    drv = get_driver("nvue")
    want = drv.render(leaf, plan["qos"], ALL)
    stale = "".join("nv set vrf default router bgp neighbor 10.9.9.9 %s\n" % x for x in ("remote-as 65001", "type numbered"))
    cur = want.replace("neighbor 10.254.0.16 remote-as 4200000000", "neighbor 10.254.0.16 remote-as 4200000009") + stale
    cur = "".join(l + "\n" for l in cur.splitlines() if "rule 1010 " not in l)
    cmds = drv.commands(drv.diff(drv.parse(cur, leaf, ALL), want))
    assert "nv unset vrf default router bgp neighbor 10.9.9.9" in cmds
    assert not [c for c in cmds if c.startswith("nv unset vrf default router bgp neighbor 10.9.9.9 ")]
    assert "nv set vrf default router bgp neighbor 10.254.0.16 remote-as 4200000000" in cmds
    assert "nv set router pbr map AIF-PBR-vlan100 rule 1010 match source-ip 10.102.0.2/32" in cmds
    assert not [c for c in cmds if c.startswith("nv unset") and "10.254.0.16" in c]


@pytest.mark.parametrize("inventory", ["lab", "rail512"])
def test_every_underlay_line_has_a_source(inventory):
    for platform, unverified in (("eos", {"bgp bestpath as-path multipath-relax"}),
                                 ("nvue", {"nv set router pbr map AIF-PBR-vlan100 rule 10 action vrf default"})):
        plan = plan_for(inventory, platform)
        drv = get_driver(platform)
        for name, intent in some_devices(plan):
            text = drv.render_explicit(intent, plan["qos"], ALL)
            missing, shaky = audit(get_driver(platform), text)
            assert not missing, (platform, name, missing[:5])
            expected = unverified if platform == "eos" or intent.get("bindings") else set()
            assert set(shaky) == expected, (platform, name, shaky)


def test_nvue_ecmp_hash_includes_the_udp_ports():
    plan = plan_for("lab", "nvue")
    text = get_driver("nvue").render(plan["spines"]["spine1"], plan["qos"], ("underlay",))
    for field in ("source-port", "destination-port", "source-ip", "destination-ip", "ip-protocol"):
        assert "nv set system forwarding ecmp-hash %s enabled\n" % field in text


# ------------------------------------------------------------------------------------------ real captures
def eos_capture_intent():
    """A leaf intent shaped like the captured vEOS leaf (Leaf-2 of niknav83/Data_center_network_design lab08)."""
    return {"platform": "eos", "mtu": 9214, "loopback": "192.168.0.12",
            "uplinks": [{"port": "Ethernet1", "address": "192.168.1.22", "prefixlen": 30, "peer": "192.168.1.21"},
                        {"port": "Ethernet2", "address": "192.168.2.22", "prefixlen": 30, "peer": "192.168.2.21"}],
            "downlinks": [{"port": "Ethernet7"}],
            "host_interfaces": [{"kind": "svi", "vlan": 20, "address": "192.168.20.1/24", "members": ["Ethernet7"]}],
            "bgp": {"asn": 65000, "router_id": "192.168.0.12", "maximum_paths": 4, "multipath_relax": False,
                    "keepalive_seconds": 3, "hold_seconds": 9, "networks": [],
                    "neighbors": [{"address": "192.168.0.1", "remote_as": 65000}, {"address": "192.168.0.2", "remote_as": 65000}]}}


def test_eos_real_running_config_reads_back_the_underlay_lines():
    with open(os.path.join(FIX, "eos", "veos-4.21-leaf-running-config.txt")) as fh:
        text = fh.read()
    drv = get_driver("eos")
    intent = eos_capture_intent()
    got = drv.parse(text, intent, ("underlay",))
    lines = got.splitlines()
    # `vlan 10,20` is read as our VLAN 20; access-port defaults are not printed by EOS and not expected
    assert "vlan 20" in lines and "vlan 10" not in lines
    assert "interface Ethernet7\n   switchport access vlan 20\n" in got
    assert "interface Ethernet1\n   no switchport\n   ip address 192.168.1.22/30\n" in got
    assert "interface Loopback0\n   ip address 192.168.0.12/32\n" in got
    assert "ip routing" in lines and "ip routing vrf PROD" not in lines
    # the default `maximum-routes 12000` EOS 4.21 prints per neighbor is a hidden default, not drift
    assert "maximum-routes" not in got
    assert "   neighbor 192.168.0.1 remote-as 65000" in lines and "   router-id 192.168.0.12" in lines
    # unmanaged lines of managed interfaces stay out (OSPF, `ip address virtual` in a VRF)
    assert "ospf" not in got and "virtual" not in got
    want = drv.render(intent, {}, ("underlay",))
    cmds = [c.strip() for c in drv.commands(drv.diff(got, want))]
    # what differs is ours to fix (the SVI address, timers); nothing touches the matching lines
    assert "ip address 192.168.20.1/24" in cmds and "timers bgp 3 9" in cmds
    assert "no switchport" not in cmds and "switchport access vlan 20" not in cmds and "ip routing" not in cmds
    assert not [c for c in cmds if "maximum-routes" in c]


def test_nvue_real_commands_output_reads_the_default_vrf_bgp_and_globals():
    with open(os.path.join(FIX, "nvue", "cl-dci-borderleaf01-nv-config-show-commands.txt")) as fh:
        text = fh.read()
    drv = get_driver("nvue")
    intent = {"platform": "nvue", "loopback": "10.10.10.10", "uplinks": [{"port": "swp1"}, {"port": "swp2"}], "downlinks": [],
              "host_interfaces": []}
    got = drv.parse(text, intent, ("underlay",)).splitlines()
    assert "nv set router bgp autonomous-system 65110" in got and "nv set router bgp router-id 10.10.10.10" in got
    assert "nv set vrf default router bgp address-family ipv4-unicast network 10.10.10.10/32" in got
    # other VRFs' BGP and other routers' objects are not ours
    assert not [l for l in got if "vrf GREEN" in l or "vrf RED" in l or l.startswith("nv set router policy ")]
    # the default VRF's BGP is owned whole (like FRR's router bgp): its unnumbered neighbors are read too
    assert "nv set vrf default router bgp neighbor swp1 type unnumbered" in got


def test_eos_removes_a_virtual_interface_whole_instead_of_leaving_it_empty():
    """Undoing the PBR (or the underlay) must not leave an empty `interface Vlan100`: EOS keeps and prints it."""
    plan = plan_for("lab", "eos")
    leaf = plan["leafs"]["leaf1"]
    drv = get_driver("eos")
    cur = drv.render(leaf, plan["qos"], ("pbr",))
    cmds = drv.commands(drv.diff(cur, ""))
    assert "no interface Vlan100" in cmds and "interface Vlan100" not in cmds, cmds
    assert not [c for c in cmds if "service-policy" in c]
    # when the intent keeps the SVI with fewer lines, only those lines go
    full = drv.render(leaf, plan["qos"], ("pbr", "underlay"))
    cmds = [c.strip() for c in drv.commands(drv.diff(full, drv.render(leaf, plan["qos"], ("underlay",))))]
    assert "no interface Vlan100" not in cmds and "no service-policy type pbr input AIF-PBR-Vlan100" in cmds, cmds


NVUE_ALLOWAS = "nv set vrf default router bgp neighbor %s address-family ipv4-unicast aspath allow-my-asn occurrences %d"


@pytest.mark.parametrize("platform, line", [("eos", "neighbor %s allowas-in %d"), ("nvue", NVUE_ALLOWAS)])
def test_spines_accept_their_plane_asn_once_from_leafs_and_leafs_never(platform, line):
    """fabric.underlay.spine_allowas_in (docs/underlay.md "When a spine loses a leaf"): one line per leaf session on a
    spine, none on a leaf; a spine read back without it is drift."""
    plan = plan_for("lab", platform)
    drv = get_driver(platform)
    spine = plan["spines"]["spine1"]
    text = drv.render(spine, plan["qos"], ("underlay",))
    for n in spine["bgp"]["neighbors"]:
        assert line % (n["address"], spine["bgp"]["allowas_in"]) in text
    assert spine["bgp"]["allowas_in"] == 1
    leaf = plan["leafs"]["leaf1"]
    assert "allow" not in drv.render(leaf, plan["qos"], ("underlay",))
    stripped = "\n".join(l for l in text.splitlines() if "allow" not in l) + "\n"
    assert drv.commands(drv.diff(drv.parse(stripped, spine, ("underlay",)), text))
