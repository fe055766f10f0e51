"""The routed underlay in the plan: ASN plan (RFC 7938), sessions from the fabric links, host-facing L3."""
import ipaddress

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

from . import intents


def _sessions(plan):
    """Every (router, neighbor address, remote_as) the plan configures."""
    out = set()
    for group in ("leafs", "spines"):
        for name, record in plan[group].items():
            for n in record["bgp"]["neighbors"]:
                out.add((name, n["address"], n["remote_as"], n["peer"]))
    return out


def test_lab_asn_plan_one_per_leaf_one_per_spine_plane():
    plan = build_plan(intents.lab())
    leaf_asns = [leaf["bgp"]["asn"] for leaf in plan["leafs"].values()]
    assert len(set(leaf_asns)) == len(leaf_asns) == 4
    assert leaf_asns == [4200001000 + leaf["slot"] for leaf in plan["leafs"].values()]
    assert set(s["bgp"]["asn"] for s in plan["spines"].values()) == {4200000000}
    for name, record in list(plan["leafs"].items()) + list(plan["spines"].items()):
        assert record["bgp"]["router_id"] == record["loopback"], name


def test_every_fabric_link_is_one_session_seen_from_both_ends():
    plan = build_plan(intents.lab())
    addresses = {}
    for group in ("leafs", "spines"):
        for name, record in plan[group].items():
            addresses[name] = record["bgp"]["asn"]
    sessions = _sessions(plan)
    links = [(leaf, u) for leaf, rec in plan["leafs"].items() for u in rec["uplinks"]]
    assert len(sessions) == 2 * len(links) == 32
    for leaf, uplink in links:
        assert (leaf, uplink["peer"], addresses[uplink["spine"]], uplink["spine"]) in sessions
        assert (uplink["spine"], uplink["address"], addresses[leaf], leaf) in sessions
        # the two ends of a session are the two addresses of one /31
        assert ipaddress.ip_interface("%s/31" % uplink["address"]).network == \
            ipaddress.ip_interface("%s/31" % uplink["peer"]).network


def test_planes_get_their_own_spine_asn():
    intent = intents.small(rails=2, spines=4, max_rails=2)
    intent["spines"]["planes"] = 2
    plan = build_plan(intent)
    by_plane = {}
    for spine in plan["spines"].values():
        by_plane.setdefault(spine["plane"], set()).add(spine["bgp"]["asn"])
    assert by_plane == {1: {4200000000}, 2: {4200000001}}
    for leaf in plan["leafs"].values():
        assert set(n["remote_as"] for n in leaf["bgp"]["neighbors"]) == {4200000000 + leaf["plane"] - 1}


def test_leaf_announces_loopback_and_host_subnet_spine_its_loopback():
    plan = build_plan(intents.lab())
    leaf = plan["leafs"]["leaf0"]
    assert leaf["bgp"]["networks"] == sorted(["10.255.0.1/32", leaf["gateway"]["subnet"]])
    assert plan["spines"]["spine1"]["bgp"]["networks"] == ["%s/32" % plan["spines"]["spine1"]["loopback"]]
    assert leaf["bgp"]["maximum_paths"] == 64 and leaf["bgp"]["multipath_relax"] is True


def test_spines_accept_their_plane_asn_once_from_leafs_by_default():
    """allowas-in 1 on spines: a spine that lost a leaf reaches it through another leaf and a sibling
    spine (same ASN); leafs keep the strict loop check (docs/underlay.md)."""
    plan = build_plan(intents.lab())
    assert set(s["bgp"]["allowas_in"] for s in plan["spines"].values()) == {1}
    assert set(lf["bgp"]["allowas_in"] for lf in plan["leafs"].values()) == {0}
    intent = intents.lab()
    intent["underlay"] = {"spine_allowas_in": 0}
    assert set(s["bgp"]["allowas_in"] for s in build_plan(intent)["spines"].values()) == {0}


def test_host_interfaces_scheme_a_is_one_svi_with_the_gateway():
    plan = build_plan(intents.lab())
    leaf = plan["leafs"]["leaf2"]
    assert leaf["host_interfaces"] == [{"kind": "svi", "vlan": 100,
                                        "address": "%s/%d" % (leaf["gateway"]["address"], leaf["gateway"]["prefixlen"]),
                                        "members": [d["port"] for d in leaf["downlinks"]]}]


def test_host_interfaces_scheme_b_is_a_routed_31_per_port():
    plan = build_plan(intents.small(scheme="p2p"))
    leaf = next(iter(plan["leafs"].values()))
    assert [i["kind"] for i in leaf["host_interfaces"]] == ["routed"] * len(leaf["downlinks"])
    for iface, down in zip(leaf["host_interfaces"], leaf["downlinks"]):
        assert iface["port"] == down["port"]
        # the host NIC is the other end of the leaf port's /31
        net = ipaddress.ip_interface(iface["address"]).network
        assert ipaddress.ip_address(down["host_address"]) in net
        assert iface["address"] in leaf["bgp"]["networks"] or str(net) in leaf["bgp"]["networks"]


def test_adding_a_group_keeps_existing_asns():
    small = build_plan(intents.small(servers=4, spg=4))
    grown = build_plan(intents.small(servers=8, spg=4))
    for name, leaf in small["leafs"].items():
        assert grown["leafs"][name]["bgp"]["asn"] == leaf["bgp"]["asn"]
    assert len(grown["leafs"]) > len(small["leafs"])


def test_asn_overrides():
    intent = intents.lab()
    intent["underlay"] = {"spine_asn_base": 65000, "leaf_asn_base": 65100, "maximum_paths": 8,
                          "multipath_relax": False, "keepalive_seconds": 1, "hold_seconds": 3}
    plan = build_plan(intent)
    assert plan["spines"]["spine1"]["bgp"]["asn"] == 65000
    assert plan["leafs"]["leaf3"]["bgp"]["asn"] == 65103
    assert plan["leafs"]["leaf3"]["bgp"]["maximum_paths"] == 8
    assert plan["leafs"]["leaf3"]["bgp"]["multipath_relax"] is False


@pytest.mark.parametrize("underlay, path, words", [
    ({"spine_asn_base": 65100, "leaf_asn_base": 65100}, "fabric.underlay.spine_asn_base", "not below"),
    ({"spine_asn_base": 64000, "leaf_asn_base": 65100}, "fabric.underlay.spine_asn_base", "not all private"),
    ({"spine_asn_base": 65000, "leaf_asn_base": 65532}, "fabric.underlay.leaf_asn_base", "reserved"),
    ({"spine_asn_base": 65000, "leaf_asn_base": 4294967292}, "fabric.underlay.leaf_asn_base", "past the last"),
    ({"keepalive_seconds": 5, "hold_seconds": 9}, "fabric.underlay.hold_seconds", "three keepalives"),
    ({"multipath_relax": "yes"}, "fabric.underlay.multipath_relax", "true or false"),
    ({"max_paths": 4}, "fabric.underlay.max_paths", "unknown key"),
    ({"spine_allowas_in": 11}, "fabric.underlay.spine_allowas_in", "10"),
])
def test_bad_underlay_names_key_path_and_fix(underlay, path, words):
    intent = intents.lab()
    intent["underlay"] = underlay
    with pytest.raises(FabricError) as err:
        build_plan(intent)
    assert path in err.value.paths()
    text = str(err.value)
    assert words in text and "Fix:" in text
