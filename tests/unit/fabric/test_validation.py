"""Every cross-key rule: bad intent -> FabricError naming the key path and a fix, nothing planned."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

from .intents import lab, small


def _problems(intent):
    with pytest.raises(FabricError) as err:
        build_plan(intent)
    text = str(err.value)
    assert "Traceback" not in text
    assert all(p.fix for p in err.value.problems)
    return err.value


def _set(path, value):
    def mutate(intent):
        node = intent
        keys = path.split(".")
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[keys[-1]] = value
    return mutate


CASES = [
    # overlapping pools
    ("fabric link pool inside a rail pool", _set("addressing.fabric_link_pool", "10.1.0.0/24"),
     "fabric.addressing.fabric_link_pool", "overlaps"),
    ("loopback pools overlap", _set("addressing.spine_loopback_pool", "172.17.0.128/25"),
     "fabric.addressing.spine_loopback_pool", "overlaps"),
    ("explicit rail pools overlap", lambda f: (f["addressing"].pop("supernet"), f["addressing"].update(
        rail_pools=["10.0.0.0/16", "10.0.128.0/17"])), "fabric.addressing.rail_pools[1]", "overlaps"),
    # pools too small
    ("rail pool too small", lambda f: (f["addressing"].pop("supernet"), f["addressing"].update(
        rail_pools=["10.0.0.0/30", "10.1.0.0/16"])), "fabric.addressing.rail_pools[0]", "needs 8"),
    ("fewer rail pools than rails", lambda f: (f["addressing"].pop("supernet"), f["addressing"].update(
        rail_pools=["10.0.0.0/16"])), "fabric.addressing.rail_pools", "1 pools for 2 rails"),
    ("supernet too small for the rails", _set("addressing.supernet", "10.0.0.0/16"),
     "fabric.addressing.rail_prefixlen", "cannot hold"),
    ("fabric link pool too small", _set("addressing.fabric_link_pool", "172.16.0.0/29"),
     "fabric.addressing.fabric_link_pool", "/31 links need"),
    ("loopback pool too small", _set("addressing.leaf_loopback_pool", "172.17.0.0/31"),
     "fabric.addressing.leaf_loopback_pool", "leafs need"),
    # names
    ("duplicate listed names", lambda f: f["servers"].update(names=["a", "b", "a"], count=None),
     "fabric.servers.names", "duplicate server names: a"),
    ("pattern without index", _set("servers.name_pattern", "gpu"), "fabric.servers.name_pattern", "duplicate server names"),
    ("pattern with a bad field", _set("servers.name_pattern", "gpu{idx}"), "fabric.servers.name_pattern", "cannot format"),
    ("leaf names collide with servers", lambda f: (f["servers"].update(name_pattern="x{index}"),
                                                   f["leafs"].update(name_pattern="x{rail}")),
     "fabric.leafs.name_pattern", "server x1 and the leaf of group 1 rail 1 are both named 'x1'"),
    ("no servers", lambda f: f["servers"].pop("count"), "fabric.servers", "neither names nor count"),
    ("duplicate netdev", _set("servers.nics.1.netdev", "eth1"), "fabric.servers.nics[1].netdev", "also used"),
    ("duplicate rdma", _set("servers.nics.1.rdma", "mlx5_0"), "fabric.servers.nics[1].rdma", "also used"),
    ("rail NIC is the mgmt interface", _set("servers.mgmt_interface", "eth2"), "fabric.servers.nics[1].netdev", "management"),
    # ports and ratios
    ("more servers per group than leaf downlinks", _set("servers.servers_per_group", 9),
     "fabric.servers.servers_per_group", "has 8 downlinks"),
    ("NIC faster than the leaf port", _set("servers.nics.0.speed_gbps", 400), "fabric.servers.nics", "exceeds leaf downlink"),
    ("uplinks cannot carry 1:1", lambda f: f["switch_models"]["leaf"]["uplinks"].update(ports="9-10"),
     "fabric.oversubscription", "needs 4 uplinks"),
    ("uplinks cannot spread over the spines", lambda f: (f.update(oversubscription="2:1"),
                                                         f["switch_models"]["leaf"]["uplinks"].update(ports="9-10"),
                                                         f["spines"].update(count=3)),
     "fabric.spines.count", "spread evenly"),
    ("spine ports run out", lambda f: f["switch_models"]["spine"]["downlinks"].update(ports="1-3"),
     "fabric.spines.model", "leaf-facing ports"),
    ("ports in both roles", lambda f: f["switch_models"]["leaf"]["uplinks"].update(ports="8-15"),
     "fabric.switch_models.leaf.uplinks.ports", "both downlinks and uplinks"),
    ("unknown leaf model", _set("leafs.model", "leaf-x"), "fabric.leafs.model", "unknown switch model"),
    ("spine model without downlinks", lambda f: f["switch_models"]["spine"].pop("downlinks"),
     "fabric.switch_models.spine.downlinks", "no downlinks"),
    ("planes do not divide spines", lambda f: f["spines"].update(count=3, planes=2), "fabric.spines.count", "planes"),
    ("planes do not divide max_rails", lambda f: f["spines"].update(count=3, planes=3), "fabric.spines.planes", "max_rails"),
    ("breakout names collide", lambda f: (f["switch_models"]["leaf"]["downlinks"].update(breakout=2),
                                          f["switch_models"]["leaf"].update(port_name="Ethernet{port}")),
     "fabric.switch_models.leaf.port_name", "same name"),
    ("breakout does not divide lanes", lambda f: (f["switch_models"]["leaf"]["downlinks"].update(breakout=3),
                                                  f["switch_models"]["leaf"].update(lanes=8)),
     "fabric.switch_models.leaf.downlinks.breakout", "cannot be split 3 ways"),
    # rails
    ("rail count mismatch", _set("rails", 3), "fabric.rails", "lists 2 NICs"),
    ("more rails than max_rails", _set("max_rails", 1), "fabric.max_rails", "exceed max_rails"),
    # platforms
    ("unknown leaf NOS", _set("leafs.platform", "junos"), "fabric.leafs.platform", "unknown NOS"),
    ("unknown spine NOS", _set("spines.platform", "ios"), "fabric.spines.platform", "unknown NOS"),
    ("override for a missing leaf", _set("leafs.platform_overrides", {"leaf-g9-r0": "eos"}),
     "fabric.leafs.platform_overrides.leaf-g9-r0", "no leaf is named"),
    # routing tables and rules
    ("table range hits main/local", _set("routing", {"table_base": 250}), "fabric.routing.table_base", "254 (main)"),
    ("table 0", _set("routing", {"table_base": 1, "rule_priority_base": 1000}), None, None),
    ("rule priorities reach main", _set("routing", {"rule_priority_base": 32760}), "fabric.routing.rule_priority_base", "32766"),
    # QoS
    ("unknown QoS profile", _set("qos", {"profile": "gold"}), "fabric.qos.profile", "unknown QoS profile"),
    ("unknown QoS override", _set("qos", {"overrides": {"ecn_min": 1}}), "fabric.qos.overrides.ecn_min", "not a key"),
    ("CNP on the RoCE DSCP", _set("qos", {"overrides": {"cnp_dscp": 26}}), "fabric.qos.overrides.cnp_dscp", "share DSCP"),
    ("RoCE priority not lossless", _set("qos", {"overrides": {"roce_priority": 4}}),
     "fabric.qos.overrides.lossless_priorities", "not lossless"),
    ("host MTU above switch MTU", _set("qos", {"overrides": {"switch_mtu": 1500}}), "fabric.qos.overrides.host_mtu", "exceeds switch MTU"),
    ("RoCE MTU not an IB MTU", _set("qos", {"overrides": {"roce_mtu": 3000}}), "fabric.qos.overrides.roce_mtu", "IB MTU"),
    ("ECN min above max", _set("qos", {"overrides": {"ecn_min_kbytes": 2000}}), "fabric.qos.overrides.ecn_min_kbytes", "not below"),
    ("DSCP out of range", _set("qos", {"overrides": {"roce_dscp": 64}}), "fabric.qos.overrides.roce_dscp", "outside 0..63"),
]


@pytest.mark.parametrize("name, mutate, path, words", CASES, ids=[c[0] for c in CASES])
def test_bad_intent_is_refused_with_its_key_path(name, mutate, path, words):
    intent = small()
    mutate(intent)
    if path is None:  # a legal edge: table 1..8 avoids every reserved id
        assert build_plan(intent)["hosts"]["h001"]["nics"][0]["table"] == 1
        return
    err = _problems(intent)
    assert path in err.paths(), err.render()
    assert any(words in str(p) for p in err.problems if p.path == path), err.render()


def test_the_lab_and_rail512_inventories_are_valid():
    assert build_plan(lab())["sizing"]["leafs"] == 4


def test_problems_are_collected_not_first_only():
    intent = small()
    intent["rails"] = 5
    intent["leafs"]["platform"] = "junos"
    err = _problems(intent)
    assert {"fabric.rails", "fabric.leafs.platform"} <= set(err.paths())
