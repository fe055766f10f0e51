"""NOS drivers: render / parse / diff for every platform, on the lab plan (pure, no network)."""
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import PLATFORM_DEVICE_TYPES
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import DriverError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def plan():
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as fh:
        return build_plan(yaml.safe_load(fh)["fabric"])


def devices(plan):
    out = sorted(plan["leafs"].items()) + sorted(plan["spines"].items())
    # every driver on every leaf intent too (the lab gives each leaf one NOS)
    for platform in sorted(DRIVERS):
        out.append(("leaf1-as-" + platform, dict(plan["leafs"]["leaf1"], platform=platform)))
    return out


def test_registry_matches_planner_platforms():
    assert sorted(DRIVERS) == sorted(PLATFORM_DEVICE_TYPES)
    for platform, device_type in PLATFORM_DEVICE_TYPES.items():
        assert get_driver(platform).device_type == device_type


def test_unknown_platform_is_a_clear_error():
    with pytest.raises(KeyError, match="no NOS driver for platform 'junos'"):
        get_driver("junos")


def test_render_parse_roundtrip_and_noop_diff(plan):
    for name, intent in devices(plan):
        drv = get_driver(intent["platform"])
        text = drv.render(intent, plan["qos"])
        assert text.strip(), name
        assert drv.parse(text, intent) == text, name
        assert drv.commands(drv.diff(text, text)) == [], name
        assert drv.commands(drv.diff("", text)), name
        assert drv.render(intent, plan["qos"]) == text  # deterministic


def test_render_carries_intent_values(plan):
    qos = plan["qos"]
    for name, intent in devices(plan):
        drv = get_driver(intent["platform"])
        text = drv.render(intent, qos)
        if intent["platform"] == "asternos":
            # Easy RoCE: the profile's cable length and bound ports; thresholds and MTU are not ours to set there
            assert "cable-length CABLE_%dm" % qos["cable_length_m"] in text and "9216" not in text, name
            for port in [d["port"] for d in intent["downlinks"]]:
                assert "bind-interfaces %s\n" % drv.port(port) in text, name
            continue
        if intent["platform"] == "frr":
            # FRR has no QoS and no port MTU (the Linux/ASIC layer's): it carries the underlay and PBR
            assert ("router bgp %d" % intent["bgp"]["asn"]) in text and "9216" not in text, name
            for b in intent.get("bindings") or []:
                assert b["next_hop"] in text, name
            continue
        # EOS: the switch MTU clamped to Arista's IP MTU ceiling 9214 (AVD default); others take 9216 as is
        assert ("mtu 9214" if intent["platform"] == "eos" else "9216") in text, name
        assert "9216" not in text or intent["platform"] != "eos", name
        assert str(qos["ecn_min_kbytes"]) in text or str(qos["ecn_min_kbytes"] * 1024) in text
        for b in intent.get("bindings") or []:
            assert b["next_hop"] in text, name
        for port in [d["port"] for d in intent["downlinks"]]:
            assert drv.port(port) in text, name


def test_sections_select_what_is_rendered(plan):
    leaf = plan["leafs"]["leaf1"]
    for platform in DRIVERS:
        drv = get_driver(platform)
        if platform == "asternos":   # no Asterfusion-documented MTU or PPD interface: refused, naming the opt-in
            for section in ("mtu", "pbr", "underlay"):
                with pytest.raises(DriverError, match="asternos_config: config_db"):
                    drv.render(leaf, plan["qos"], sections=(section,))
            continue
        mtu_only = drv.render(leaf, plan["qos"], sections=("mtu",))
        if platform == "frr":
            assert mtu_only == "" and "10.254.0.8" in drv.render(leaf, plan["qos"], sections=("pbr",))
            continue
        assert "9214" in mtu_only if platform == "eos" else "9216" in mtu_only
        assert "10.254.0.8" not in mtu_only
        pbr_only = drv.render(leaf, plan["qos"], sections=("pbr",))
        assert "10.254.0.8" in pbr_only and "mtu" not in pbr_only


UNMANAGED = {
    "eos": "hostname x\ninterface Ethernet1\n   description gpu01\n   no switchport\ninterface Ethernet40\n   mtu 1500\n",
    "nxos": "hostname x\nfeature lldp\ninterface Ethernet1/1\n  description gpu01\ninterface Ethernet1/40\n  mtu 1500\n",
    "dell_sonic": "hostname x\ninterface Ethernet1\n description gpu01\ninterface Ethernet40\n mtu 1500\n",
    "asternos": '{"roce-accept": {"interfaces": ["Ethernet1"]}, "roce-profiles": [{"name": "other", "mode": "lossless", '
                '"bind-interfaces": ["Ethernet1"], "cable-length": "CABLE_5m"}]}',
    "nvue": "nv set system hostname x\nnv set interface swp1 link state up\nnv set interface swp40 link mtu 1500\n",
}


def test_parse_ignores_unmanaged_config(plan):
    leaf = plan["leafs"]["leaf1"]
    for platform, extra in UNMANAGED.items():
        drv = get_driver(platform)
        assert drv.parse(extra, leaf) == "", platform


def test_drift_is_remediated_and_stale_objects_removed(plan):
    leaf = plan["leafs"]["leaf1"]
    for platform in ("eos", "nxos", "dell_sonic"):
        drv = get_driver(platform)
        want = drv.render(leaf, plan["qos"])
        port = drv.port("Ethernet1")
        mtu = "mtu 9214" if platform == "eos" else "mtu 9216"
        drifted = want.replace(mtu, "mtu 1500")
        stale = "ip access-list AIF-BIND-Stale\n" + " " * drv.indent + "10 permit ip any any\n"
        cur = drv.parse(drifted + stale, leaf)
        assert "AIF-BIND-Stale" in cur
        cmds = drv.commands(drv.diff(cur, want))
        assert "no ip access-list AIF-BIND-Stale" in cmds, platform
        assert any(c.strip() == mtu for c in cmds), (platform, cmds)
        assert "interface %s" % port in cmds, (platform, cmds)


def test_nvue_diff_sets_changed_values_and_unsets_stale(plan):
    leaf = plan["leafs"]["leaf2"]
    drv = get_driver("nvue")
    want = drv.render(leaf, plan["qos"])
    cur = want.replace("interface swp1 link mtu 9216", "interface swp1 link mtu 1500")
    cur += "nv set router pbr map AIF-BIND-swp7 rule 10 match source-ip 10.0.0.1/32\n"
    cmds = drv.commands(drv.diff(drv.parse(cur, leaf), want))
    assert "nv set interface swp1 link mtu 9216" in cmds
    assert "nv unset interface swp1 link mtu" not in cmds
    assert "nv unset router pbr map AIF-BIND-swp7 rule 10 match source-ip" in cmds


def test_drivers_render_the_plan_port_names_unchanged(plan):
    """The plan holds the device's own names (fabric/platforms.py); drivers must not rename them."""
    for name, expected in (("leaf1", "interface Ethernet1\n"), ("leaf2", "nv set interface swp1 link mtu"),
                           ("leaf3", "interface Ethernet1/1\n"), ("leaf0", "bind-interfaces Ethernet0\n")):
        leaf = plan["leafs"][name]
        assert expected in get_driver(leaf["platform"]).render(leaf, plan["qos"]), name
    for platform in ("eos", "nxos", "nvue", "dell_sonic", "asternos"):
        assert get_driver(platform).port("swp3s1") == "swp3s1"


def test_pfc_counter_tables_parse_to_full_port_names():
    eos_json = '{"interfaceCounters": {"Ethernet1": {"rxFrames": 5, "txFrames": 7}, "Ethernet12": {"rxFrames": 0, "txFrames": 3}}}'
    eos = get_driver("eos").parse_pfc_counters(eos_json)
    assert eos == {"Ethernet1": {"rx_pfc": 5, "tx_pfc": 7}, "Ethernet12": {"rx_pfc": 0, "tx_pfc": 3}}
    assert get_driver("eos").pfc_counters_command == "show priority-flow-control counters | json"
    nx = get_driver("nxos").parse_pfc_counters(
        "slot  1\n=======\n\nPort               Mode Oper(VL bmap)  RxPPP      TxPPP\n"
        "Ethernet1/1        On   On  (8)        101        201\nEth1/2             Auto Off            0          0\n")
    assert nx == {"Ethernet1/1": {"rx_pfc": 101, "tx_pfc": 201}, "Ethernet1/2": {"rx_pfc": 0, "tx_pfc": 0}}
    assert get_driver("nvue").pfc_counters_command is None


def test_drift_pairs_changed_values_and_reports_missing_and_unexpected():
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import drift
    before = "interface Ethernet2\n   mtu 1500\n   qos trust cos\ninterface Ethernet3\n   foo bar\n"
    after = "interface Ethernet2\n   mtu 9216\n   qos trust cos\ninterface Ethernet3\n   priority-flow-control on\n"
    assert drift(before, after, get_driver("eos")) == [
        {"item": "interface Ethernet2 > mtu", "expected": "mtu 9216", "actual": "mtu 1500"},
        {"item": "interface Ethernet3 > foo", "expected": None, "actual": "foo bar"},
        {"item": "interface Ethernet3 > priority-flow-control", "expected": "priority-flow-control on", "actual": None},
    ]
    assert drift(after, after, get_driver("eos")) == []
    assert drift("nv set interface swp2 link mtu 1500\n", "nv set interface swp2 link mtu 9216\n", get_driver("nvue")) == [
        {"item": "interface swp2 link mtu", "expected": "interface swp2 link mtu 9216", "actual": "interface swp2 link mtu 1500"}]


@pytest.mark.parametrize("inventory", ["lab", "rail512"])
def test_every_rendered_line_has_a_source_entry(inventory):
    """Lab and rail512 through every driver: each line matches an entry of nos/sources.py (a source, or an explicit
    `unverified`); only the lines sources.py marks unverified (NX-OS PBR enable/bind, Dell loopback/access-VLAN/multipath-relax forms, all of AsterNOS)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.sources import audit
    with open(os.path.join(ROOT, "inventories", inventory, "group_vars", "all", "fabric.yml")) as handle:
        fabric = yaml.safe_load(handle)["fabric"]
    fabric["leafs"].pop("platform_overrides", None)
    for platform in sorted(PLATFORM_DEVICE_TYPES):
        fabric["leafs"]["platform"] = fabric["spines"]["platform"] = platform
        planned = build_plan(fabric)
        unverified = set()
        for name, intent in list(planned["leafs"].items())[:2] + list(planned["spines"].items())[:1]:
            drv = get_driver(platform)
            # every section the driver renders (FRR's render defaults to underlay + pbr)
            kwargs = {} if platform == "frr" else {"sections": drv.sections}
            text = drv.render_explicit(intent, planned["qos"], **kwargs)
            missing, shaky = audit(get_driver(platform), text)
            assert not missing, (inventory, platform, name, missing[:5])
            # CONFIG_DB lines are `TABLE|key field value`: the table is the unit
            unverified.update(line.split()[0].split("|")[0] if platform == "community_sonic" else line.split()[0]
                              for line in shaky)
        # nvue: `action vrf default` (local destinations), which CL supports in virtual environments only
        expected = {"nxos": {"feature", "ip"}, "frr": {"timers"}, "nvue": {"nv"}, "eos": {"bgp"},  # eos: bgp bestpath multipath-relax
                    # Dell: loopback name, access-VLAN line and multipath-relax form have no example read
                    "dell_sonic": {"interface", "switchport", "bestpath"},
                    # the PPD redirect SONiC's YANG refuses; BGP_BBR's allowas-in effect depends on the switch's type
                    "community_sonic": {"ACL_RULE", "BGP_BBR"}}.get(platform, set())
        if platform == "asternos":
            continue   # counted item by item in test_asternos_has_at_most_two_unverified_items
        assert unverified == expected, (platform, unverified)


def test_a_line_without_a_source_is_caught():
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.sources import audit
    assert audit(get_driver("eos"), "interface Ethernet1\n   mtu 9214\n   load-interval 5\n") == (["load-interval 5"], [])
    assert audit(get_driver("nxos"), "feature pbr\n") == ([], ["feature pbr"])
