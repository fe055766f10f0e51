"""Brownfield guard (issue 18 item 7): what the plan would take over whole on a switch someone else already routes.

Witnesses (tests/fixtures/switches/SOURCE.md): a real vEOS 4.29.2F leaf with its own ``router bgp 65001``, OSPF and
addressed uplinks, and a real NX-OS 9.3(2) leaf with ``router bgp 65522``, OSPF and an addressed uplink. The other
drivers (NVUE, klish SONiC / AsterNOS, FRR) are checked on their own rendered forms with a foreign BGP instance,
address and policy written in them. The lab plan on a clean switch, and on a switch this collection configured,
gives no takeover on every driver.
"""
import json
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.slices import switch_slice
from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver
from ansible_collections.aifabric.roce.plugins.modules import switch_config

from ..module_runner import run_module
from .helpers import ROOT, plan_on_platform

FIX = os.path.join(ROOT, "tests", "fixtures", "switches")
EOS_LEAF = ("eos", "veos-4.29.2f-leaf-bgp-65001-ospf-running-config.txt")
NXOS_LEAF = ("nxos", "nxos-9.3.2-leaf-bgp-ospf-running-config.txt")
_PLANS = {}

# the text-line drivers; community_sonic (CONFIG_DB tables) has its own tests in test_sonic_db.py
TEXT_DRIVERS = [p for p in sorted(DRIVERS) if p != "community_sonic"]


def capture(nos, name):
    with open(os.path.join(FIX, nos, name)) as fh:
        return fh.read()


def slice_of(platform, name):
    """The switch's slice of the lab plan with every switch on ``platform`` (what switch_config gets as intent)."""
    if platform not in _PLANS:
        _PLANS[platform] = plan_on_platform("lab", platform)
    return switch_slice(_PLANS[platform], name)


def sections_of(driver, intent):
    wanted = ["qos", "mtu", "underlay"] + (["pbr"] if intent["kind"] == "leaf" else [])
    return tuple(s for s in wanted if s in driver.sections)


def items_of(platform, name, running):
    driver, intent = get_driver(platform), slice_of(platform, name)
    return takeover.from_running(driver, running, intent, intent["qos"], sections_of(driver, intent))


# ----------------------------------------------------------------------------------- the real EOS leaf
def test_real_eos_leaf_first_push_would_replace_the_operators_routing():
    # what today's flow plans on this switch: the operator's BGP instance and uplink addresses go, seen only in --diff
    driver, intent = get_driver("eos"), slice_of("eos", "leaf0")
    running = capture(*EOS_LEAF)
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import image
    before = image(driver, running, intent, sections_of(driver, intent)).managed
    cmds = driver.commands(driver.diff(before, driver.render(intent, intent["qos"], sections_of(driver, intent))))
    assert "no router bgp 65001" in cmds
    assert "   no ip address 10.2.1.0/31" in cmds and "   no ip address 10.2.2.0/31" in cmds

    # the guard names exactly those objects, as a takeover
    items = items_of("eos", "leaf0", running)
    assert takeover.messages(items) == [
        "router bgp 65001 (plan: 4200001000) would be replaced, with everything under it "
        "(neighbors 10.0.1.0, 10.0.2.0, SPINES; vrf PROD)",
        "interface Ethernet1 ip address 10.2.1.0/31 (plan: none) would be removed",
        "interface Ethernet2 ip address 10.2.2.0/31 (plan: none) would be removed",
    ]
    assert [(t["kind"], t["item"], t["actual"], t["expected"]) for t in items] == [
        ("bgp", "router bgp", "router bgp 65001", "router bgp 4200001000"),
        ("address", "interface Ethernet1 > ip address", "ip address 10.2.1.0/31", None),
        ("address", "interface Ethernet2 > ip address", "ip address 10.2.2.0/31", None),
    ]


def test_real_eos_config_as_a_spine_replaces_addresses_with_the_planned_ones():
    # the lab spines route Ethernet1/Ethernet2 themselves: the operator's addresses are replaced, not removed
    assert [t["message"] for t in items_of("eos", "spine1", capture(*EOS_LEAF)) if t["kind"] == "address"] == [
        "interface Ethernet1 ip address 10.2.1.0/31 (plan: 10.254.0.0/31) would be replaced",
        "interface Ethernet2 ip address 10.2.2.0/31 (plan: 10.254.0.4/31) would be replaced",
    ]


def test_real_eos_config_with_a_foreign_pbr_policy_on_a_planned_port():
    running = capture(*EOS_LEAF).replace("interface Ethernet3\n", "interface Ethernet3\n   service-policy type pbr input OPS-PBR\n")
    policy = [t for t in items_of("eos", "leaf0", running) if t["kind"] == "policy"]
    assert [t["message"] for t in policy] == [
        "interface Ethernet3 service-policy type pbr input OPS-PBR (not ours; plan: none) would be removed"]


def test_real_eos_config_under_the_plans_own_asn_names_only_what_the_plan_never_renders():
    # the same ASN is the plan's own instance: its numbered neighbors are ordinary drift, but the plan never renders
    # a peer group, so the operator's SPINES group (and its members' sessions) is named; the addresses too
    intent = slice_of("eos", "leaf0")
    running = capture(*EOS_LEAF).replace("router bgp 65001", "router bgp %d" % intent["bgp"]["asn"])
    items = items_of("eos", "leaf0", running)
    assert [t["kind"] for t in items] == ["bgp", "address", "address"]
    assert items[0]["message"] == "BGP peer group SPINES (the plan has none) would be removed, with its members' sessions"


# ----------------------------------------------------------------------------------- the real NX-OS leaf
def test_real_nxos_leaf_takeover_list():
    assert takeover.messages(items_of("nxos", "leaf0", capture(*NXOS_LEAF))) == [
        "router bgp 65522 (plan: 4200001000) would be replaced, with everything under it (neighbor 100.64.2.1; vrf TENANT1)",
        "interface Ethernet1/1 ip address 169.254.2.2/30 (plan: none) would be removed",
        "interface loopback0 ip address 100.64.2.2/32 (plan: 10.255.0.1/32) would be replaced",
    ]


# ----------------------------------------------------------------------------------- the other drivers, rendered forms
def _uplink(intent):
    return intent["uplinks"][0]["port"]


def _downlink(intent):
    return intent["downlinks"][0]["port"]


def test_asternos_foreign_easy_roce_profile_on_a_planned_port():
    intent = slice_of("asternos", "leaf0")
    down = _downlink(intent)
    running = json.dumps({"roce-accept": {}, "roce-profiles": [
        {"name": "ops", "mode": "lossless", "cable-length": "CABLE_5m", "bind-interfaces": [down, "Ethernet99"]}]})
    assert takeover.messages(items_of("asternos", "leaf0", running)) == [
        "interface %s bound to Easy RoCE profile ops (not ours; plan: aif_roce) would be rebound" % down]


def test_klish_dell_sonic_foreign_bgp_address_and_forwarding_policy():
    for platform in ("dell_sonic",):
        intent = slice_of(platform, "leaf0")
        up, down = _uplink(intent), _downlink(intent)
        running = "\n".join([
            "hostname ops-leaf", "!", "router bgp 65001", " router-id 192.0.2.1", " neighbor 192.0.2.9", "  remote-as 65000",
            " !", "!", "interface %s" % up, " ip address 192.0.2.10/31", "!",
            "interface %s" % down, " service-policy type forwarding in OPS-FBS", "!", ""])
        assert takeover.messages(items_of(platform, "leaf0", running)) == [
            "router bgp 65001 (plan: %d) would be replaced, with everything under it (neighbor 192.0.2.9)" % intent["bgp"]["asn"],
            "interface %s ip address 192.0.2.10/31 (plan: %s/31) would be replaced" % (up, intent["uplinks"][0]["address"]),
            "interface %s service-policy type forwarding in OPS-FBS (not ours; plan: none) would be removed" % down,
        ], platform


def test_nvue_foreign_asn_address_and_pbr_map():
    intent = slice_of("nvue", "leaf0")
    up, down = _uplink(intent), _downlink(intent)
    running = "\n".join([
        "nv set system hostname ops-leaf", "nv set router bgp autonomous-system 65001",
        "nv set vrf default router bgp neighbor 192.0.2.9 remote-as external",
        "nv set interface %s ipv4 address 192.0.2.10/31" % up, "nv set interface %s router pbr map OPS-MAP" % down, ""])
    assert takeover.messages(items_of("nvue", "leaf0", running)) == [
        "router bgp autonomous-system 65001 (plan: %d) would be replaced, with the default VRF's BGP instance "
        "(neighbors 192.0.2.9)" % intent["bgp"]["asn"],
        "interface %s ipv4 address 192.0.2.10/31 (plan: %s/31) would be replaced" % (up, intent["uplinks"][0]["address"]),
        "interface %s router pbr map OPS-MAP (not ours; plan: none) would be removed" % down,
    ]


def test_frr_foreign_bgp_address_and_a_pbr_policy_ours_would_replace():
    intent = slice_of("frr", "leaf0")
    up = _uplink(intent)
    ingress = get_driver("frr").pbr_ingress(intent)[0]
    running = "\n".join([
        "frr version 8.4.4", "hostname ops-leaf", "!", "interface %s" % up, " ip address 192.0.2.10/31", "exit", "!",
        "interface %s" % ingress, " pbr-policy OPS-PBR", "exit", "!",
        "router bgp 65001", " neighbor 192.0.2.9 remote-as 65000", "exit", "!", ""])
    assert takeover.messages(items_of("frr", "leaf0", running)) == [
        "router bgp 65001 (plan: %d) would be replaced, with everything under it (neighbor 192.0.2.9)" % intent["bgp"]["asn"],
        "interface %s ip address 192.0.2.10/31 (plan: %s/31) would be replaced" % (up, intent["uplinks"][0]["address"]),
        "interface %s pbr-policy OPS-PBR (not ours; plan: pbr-policy AIF-PBR) would be replaced" % ingress,
    ]


# ----------------------------------------------------------------------------------- greenfield: no false takeover
def _baseline(platform, name, intent):
    """A clean switch as the lab seeds it (hostname, port descriptions), in the NOS's own form."""
    ports = [d["port"] for d in intent.get("downlinks") or []] + [u["port"] for u in intent.get("uplinks") or []]
    if platform == "nvue":
        return "\n".join(["nv set system hostname %s" % name] + ["nv set interface %s link state up" % p for p in ports]) + "\n"
    if platform == "frr":
        return "frr version 8.4.4\nhostname %s\n!\n" % name
    if platform == "asternos":   # GET /rest/v1/running/roce of a switch without Easy RoCE profiles
        return json.dumps({"roce-accept": {}, "roce-profiles": []})
    indent = " " * get_driver(platform).indent
    return "\n".join(["hostname %s" % name] + ["interface %s\n%sdescription aifabric %s" % (p, indent, p) for p in ports]) + "\n"


@pytest.mark.parametrize("platform", TEXT_DRIVERS)
@pytest.mark.parametrize("name", ["leaf0", "leaf3", "spine1"])
def test_greenfield_lab_plan_takes_over_nothing(platform, name):
    driver, intent = get_driver(platform), slice_of(platform, name)
    sections = sections_of(driver, intent)
    clean = _baseline(platform, name, intent)
    assert takeover.from_running(driver, clean, intent, intent["qos"], sections) == []
    # a switch this collection already configured: its own objects are never a takeover
    mine = clean + driver.render(intent, intent["qos"], sections)
    if platform == "asternos":   # the REST read-back holding our own profile
        mine = json.dumps({"roce-accept": {}, "roce-profiles": [
            dict(driver.want(intent, intent["qos"], sections)["aif_roce"], name="aif_roce")]})
    assert takeover.from_running(driver, mine, intent, intent["qos"], sections) == []


def test_decide_refuses_only_in_apply_mode_without_permission():
    items = items_of("eos", "leaf0", capture(*EOS_LEAF))
    assert takeover.decide([], False, False) == "none"
    assert takeover.decide(items, False, True) == "report"
    assert takeover.decide(items, False, False) == "refuse"
    assert takeover.decide(items, True, False) == "take"
    msg = takeover.refusal(items, "leaf0")
    assert "router bgp 65001 (plan: 4200001000) would be replaced" in msg and "Nothing was sent" in msg
    assert "set switch_takeover: true for leaf0 after review" in msg


# ----------------------------------------------------------------------------------- module level (no device)
class FakeEos(object):
    """A netmiko-like session that answers the config read with the real capture and records every config-mode entry."""

    def __init__(self, running):
        self.running, self.config_entries = running, 0

    def send_command(self, cmd, **kw):
        assert cmd == "show running-config", cmd
        return self.running

    def config_mode(self, *args):
        self.config_entries += 1

    def disconnect(self):
        pass


@pytest.fixture
def fake_switch(monkeypatch, tmp_path):
    conn = FakeEos(capture(*EOS_LEAF))
    applied = []
    monkeypatch.setattr(switch_config, "netmiko_factory", lambda params, driver: (lambda: conn))
    monkeypatch.setattr(switch_config.Applier, "apply", lambda self, *a, **kw: applied.append(a) or True)
    intent = slice_of("eos", "leaf0")
    args = {"platform": "eos", "intent": intent, "qos": intent["qos"], "sections": ["qos", "mtu", "underlay", "pbr"],
            "host": "192.0.2.1", "username": "admin", "password": "x", "lock_dir": str(tmp_path)}
    return conn, applied, args


def test_module_apply_refuses_a_takeover_before_anything_is_sent(fake_switch, capsys):
    conn, applied, args = fake_switch
    result = run_module(switch_config, args, capsys)
    assert result["rc"] == 1 and result["failed"]
    assert result["failed_step"] == "takeover" and result["rolled_back"] is None
    assert applied == [] and conn.config_entries == 0 and result["config_mode"] is False
    assert "router bgp 65001 (plan: 4200001000) would be replaced" in result["msg"]
    assert "interface Ethernet1 ip address 10.2.1.0/31 (plan: none) would be removed" in result["msg"]
    assert "set switch_takeover: true for leaf0 after review" in result["msg"]
    assert [t["kind"] for t in result["takeover"]] == ["bgp", "address", "address"]


def test_module_check_mode_reports_the_takeover_without_failing(fake_switch, capsys, monkeypatch):
    conn, applied, args = fake_switch
    # what the module warns, recorded at the call (ansible-core keeps warnings process-global, and other module
    # tests of this process change what reaches the result)
    warned = []
    monkeypatch.setattr(switch_config.AnsibleModule, "warn", lambda self, msg, *a, **kw: warned.append(msg))
    result = run_module(switch_config, dict(args, _ansible_check_mode=True, _ansible_diff=True), capsys)
    assert result["rc"] == 0 and not result.get("failed") and result["changed"]
    assert [t["kind"] for t in result["takeover"]] == ["bgp", "address", "address"]
    # --diff says it above the text, not only as removed lines
    assert result["diff"]["before_header"].startswith("leaf0 running config - TAKEOVER: router bgp 65001 (plan: 4200001000)")
    assert any("takeover on leaf0" in w for w in warned), warned
    assert applied == [] and conn.config_entries == 0


def test_module_takeover_true_proceeds_and_reports_what_it_took_over(fake_switch, capsys):
    conn, applied, args = fake_switch
    result = run_module(switch_config, dict(args, takeover=True), capsys)
    assert result["rc"] == 0 and not result.get("failed") and len(applied) == 1
    assert "no router bgp 65001" in applied[0][2]   # the commands handed to the transaction
    assert result["taken_over"] == result["takeover"] and len(result["taken_over"]) == 3


# ----------------------------------------------------------------------------------- the audit
def test_audit_shows_a_takeover_apart_from_ordinary_drift(fake_switch, capsys):
    from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import (
        build_report, entry_from_result, render_html, render_markdown)
    conn, applied, args = fake_switch
    result = run_module(switch_config, dict(args, _ansible_check_mode=True), capsys)
    entry = entry_from_result("leaf0", "switch", "switch", result)
    assert entry["status"] == "takeover" and len(entry["takeover"]) == 3 and entry["items"]
    clean = {"device": "leaf1", "kind": "switch", "check": "switch", "status": "ok", "items": []}
    report = build_report([entry, clean], "lab")
    assert report["verdict"] == "DRIFT / 1 TAKEOVER"
    assert report["summary"]["devices_takeover"] == ["leaf0"] and report["summary"]["devices_drift"] == []
    md = render_markdown(report)
    assert "## Takeovers" in md and "- leaf0: router bgp 65001 (plan: 4200001000) would be replaced" in md
    assert md.index("## Takeovers") < md.index("## Drift")
    assert "| leaf0 | switch | router bgp | router bgp 4200001000 | router bgp 65001 |" in md
    assert "router bgp 65001 (plan: 4200001000) would be replaced" in render_html(report)


# ----------------------------------------------------------------------------------- every hazard the reviews named
# brownfield-turn4.md: unsafe first applies the guard did not name before (one test per class, per NOS form)
def _kinds(items):
    return [(t["kind"], t["message"]) for t in items]


def test_nxos_system_qos_policy_is_a_takeover():
    running = "\n".join(["hostname tor1", "policy-map type network-qos jumbo", "  class type network-qos class-default",
                         "    mtu 9216", "system qos", "  service-policy type network-qos jumbo", ""])
    assert ("qos", "system qos service-policy type network-qos jumbo (not ours; plan: service-policy type network-qos "
                   "AIF-NQ) would be replaced") in _kinds(items_of("nxos", "leaf0", running))


def test_nvue_bgp_per_vrf_with_unnumbered_neighbors_and_ip_address_is_a_takeover():
    # the Cumulus 5.0-5.8 form: ASN per VRF, unnumbered uplinks in a peer group, `ip address` (not `ipv4 address`)
    running = "\n".join([
        "nv set interface lo ip address 10.10.10.1/32", "nv set interface swp9 type swp",
        "nv set vrf default router bgp autonomous-system 65101", "nv set vrf default router bgp enable on",
        "nv set vrf default router bgp neighbor swp9 peer-group underlay",
        "nv set vrf default router bgp neighbor swp9 type unnumbered",
        "nv set vrf default router bgp peer-group underlay remote-as external", ""])
    got = _kinds(items_of("nvue", "leaf0", running))
    assert ("bgp", "vrf default router bgp autonomous-system 65101 (plan: 4200001000) would be replaced, with the "
                   "default VRF's BGP instance (neighbors swp9)") in got
    assert ("address", "interface lo ip address 10.10.10.1/32 (plan: 10.255.0.1/32) would be replaced") in got
    # under the plan's own ASN, the unnumbered neighbor and the peer group are still someone else's
    same = _kinds(items_of("nvue", "leaf0", running.replace("65101", "4200001000")))
    assert ("bgp", "BGP neighbor swp9 (an interface/unnumbered neighbor the plan does not have) would be removed") in same
    assert ("bgp", "BGP peer group underlay (the plan has none) would be removed, with its members' sessions") in same


def test_frr_unnumbered_neighbor_under_the_plans_asn_is_a_takeover():
    intent = slice_of("frr", "leaf0")
    running = "router bgp %d\n neighbor swp5 interface remote-as external\nexit\n" % intent["bgp"]["asn"]
    assert ("bgp", "BGP neighbor swp5 (an interface/unnumbered neighbor the plan does not have) would be removed") \
        in _kinds(items_of("frr", "leaf0", running))


def test_eos_operator_dscp_map_entry_is_a_takeover():
    # (EOS hides entries equal to its default map, DSCP 46 -> TC 5: an operator's EF class on TC 6 is not one)
    running = "hostname tor1\nqos map dscp 46 to traffic-class 6\n"
    got = [t for t in items_of("eos", "leaf0", running) if t["kind"] == "qos"]
    assert [t["message"] for t in got] == [
        "qos map dscp 46 to traffic-class 6 (plan: qos map dscp 46 to traffic-class 0) would be replaced"]


def test_nvue_operator_dscp_mapping_is_a_takeover():
    running = "nv set qos mapping default-global dscp 46 switch-priority 5\n"
    assert ("qos", "qos mapping default-global dscp 46 switch-priority 5 (plan: qos mapping default-global dscp 46 "
                   "switch-priority 0) would be replaced") in _kinds(items_of("nvue", "leaf0", running))


@pytest.mark.parametrize("platform,running,actual", [
    ("eos", "interface Ethernet1\n   switchport access vlan 10\n", "switchport access vlan 10"),
    ("nxos", "interface Ethernet1/1\n  switchport\n  switchport access vlan 10\n", "switchport access vlan 10"),
    ("dell_sonic", "interface Eth1/1\n switchport access Vlan 10\n", "switchport access Vlan 10"),
    ("nvue", "nv set interface swp1 bridge domain br_default access 10\n", "bridge domain br_default access 10"),
])
def test_an_operator_host_port_moved_to_our_vlan_is_a_takeover(platform, running, actual):
    got = [t for t in items_of(platform, "leaf0", running) if t["kind"] == "vlan"]
    assert [t["actual"] for t in got] == [actual], platform
    assert got[0]["message"].endswith("would be replaced: the port moves to the plan's VLAN")


@pytest.mark.parametrize("platform,running", [
    ("eos", "vlan 100\ninterface Vlan100\n   description servers\n   ip address 192.168.1.1/24\n"),
    ("nxos", "vlan 100\n  name SERVERS\ninterface Vlan100\n  description servers\n  ip address 192.168.1.1/24\n"),
    ("dell_sonic", "interface Vlan100\n description servers\n ip address 192.168.1.1/24\n"),
    ("nvue", "nv set interface vlan100 ip address 192.168.1.1/24\nnv set interface vlan100 description servers\n"),
])
def test_our_host_vlan_colliding_with_an_operator_svi_is_refused_by_name(platform, running):
    got = [t for t in items_of(platform, "leaf0", running) if t["kind"] == "collision"]
    assert len(got) >= 1 and "exists on the switch for another purpose" in got[0]["message"], platform
    assert "192.168.1.1/24" in " ".join(t["message"] for t in got), platform


@pytest.mark.parametrize("platform,running", [
    ("eos", "interface Ethernet9\n   no switchport\n   ip address 172.16.0.1/31\n   ip ospf network point-to-point\n"),
    ("nxos", "interface Ethernet1/9\n  no switchport\n  ip address 172.16.0.1/31\n  ip router ospf 1 area 0\n"),
    ("nvue", "nv set interface swp9 ip address 172.16.0.1/31\n"),
])
def test_mtu_on_a_port_someone_else_routes_is_a_takeover(platform, running):
    # the role run with sections qos, mtu, pbr (no underlay): the operator keeps routing the uplink, our MTU moves it
    driver, intent = get_driver(platform), slice_of(platform, "leaf0")
    got = [t for t in takeover.from_running(driver, running, intent, intent["qos"], ("qos", "mtu", "pbr"))
           if t["kind"] == "mtu"]
    assert len(got) == 1 and "172.16.0.1/31" in got[0]["message"] and "its peers keep theirs" in got[0]["message"]


def test_classification_change_on_an_eos_storage_tor_is_named_before_anything_is_sent():
    """An EOS storage ToR carrying RDMA on CoS 3 (PFC no-drop on priority 3, the switchport's default trust, 802.1p CoS):
    the first apply's `qos trust dscp` reclassifies its traffic - a `classification` takeover naming the port and the
    priority (issue 36 item 7); on the same switch without PFC in use, trust dscp is only the plan's setting."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover as guard
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
    from .helpers import plan_on_platform
    plan = plan_on_platform("lab", "eos")
    leaf, drv = plan["leafs"]["leaf0"], get_driver("eos")
    port = drv.port(leaf["downlinks"][0]["port"])
    storage = ("interface %s\n   mtu 9214\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n!\n"
               "end\n" % port)
    items = guard.from_running(drv, storage, leaf, plan["qos"], ("qos", "mtu"))
    cls = [t for t in items if t["kind"] == "classification"]
    assert [t["item"] for t in cls] == ["interface %s > qos trust" % port], items
    assert "PFC no-drop on priority 3" in cls[0]["message"] and "802.1p" in cls[0]["message"]
    assert guard.decide(items, False, False) == "refuse"
    plain = "interface %s\n   mtu 9214\n!\nend\n" % port
    assert [t for t in guard.from_running(drv, plain, leaf, plan["qos"], ("qos", "mtu")) if t["kind"] == "classification"] == []
    # an operator's second lossless priority dropped by the plan
    two = storage.replace("priority 3 no-drop\n", "priority 3 no-drop\n   priority-flow-control priority 4 no-drop\n")
    dropped = [t for t in guard.from_running(drv, two, leaf, plan["qos"], ("qos", "mtu")) if t["kind"] == "classification"]
    assert any("priority-flow-control priority 4 no-drop (in use) would be removed" in t["message"] for t in dropped)
