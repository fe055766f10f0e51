"""The planner: addresses, tables, cabling, PPD, IRM, determinism and stability."""
import ipaddress
import json
import random

from hypothesis import given, settings, strategies as st

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.binding import uplink_for
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan, host_intent, leaf_intent
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.views import cabling

from .intents import lab, rail512, small


def test_lab_host_nics_follow_scheme_a():
    plan = build_plan(lab())
    nics = plan["hosts"]["gpu02"]["nics"]
    assert [n["netdev"] for n in nics] == ["rail0", "rail1", "rail2", "rail3"]
    assert [(n["address"], n["prefixlen"], n["gateway"]) for n in nics] == [
        ("10.100.0.2", 29, "10.100.0.6"), ("10.101.0.2", 29, "10.101.0.6"),
        ("10.102.0.2", 29, "10.102.0.6"), ("10.103.0.2", 29, "10.103.0.6")]
    assert [(n["table"], n["rule_priority"]) for n in nics] == [(100, 1000), (101, 1001), (102, 1002), (103, 1003)]
    # each leaf's own NOS names its second port (docs/platforms.md): AsterNOS 0-based, EOS, NVUE, NX-OS
    assert [(n["leaf"], n["leaf_port"]) for n in nics] == [
        ("leaf0", "Ethernet1"), ("leaf1", "Ethernet2"), ("leaf2", "swp2"), ("leaf3", "Ethernet1/2")]
    assert plan["leafs"]["leaf2"]["gateway"] == {"address": "10.102.0.6", "prefixlen": 29, "subnet": "10.102.0.0/29"}


def test_every_address_is_unique_and_inside_its_subnet():
    plan = build_plan(small(servers=40, rails=4, spg=8, leaf_down=8))
    seen = set()
    for host in plan["hosts"].values():
        for nic in host["nics"]:
            subnet = ipaddress.ip_network(nic["subnet"])
            assert ipaddress.ip_address(nic["address"]) in subnet
            assert ipaddress.ip_address(nic["gateway"]) in subnet
            assert nic["address"] not in (str(subnet.network_address), str(subnet.broadcast_address), nic["gateway"])
            assert subnet.subnet_of(ipaddress.ip_network(nic["rail_pool"]))
            assert nic["address"] not in seen
            seen.add(nic["address"])
    assert len(seen) == 40 * 4


def test_scheme_b_gives_each_nic_a_31_with_the_leaf_port_as_peer():
    plan = build_plan(small(servers=6, spg=4, scheme="p2p"))
    nic = plan["hosts"]["h005"]["nics"][1]  # slot 4 -> group 2, first port
    assert (nic["address"], nic["prefixlen"], nic["gateway"], nic["subnet"]) == ("10.1.0.9", 31, "10.1.0.8", "10.1.0.8/31")
    leaf = plan["leafs"][nic["leaf"]]
    assert leaf["gateway"] is None
    assert leaf["downlinks"][0]["address"] == "10.1.0.8/31"
    assert leaf["local_destinations"] == ["10.1.0.8/29"]


def test_gateway_first_moves_hosts_up_by_one():
    intent = small()
    intent["addressing"]["gateway"] = "first"
    nic = build_plan(intent)["hosts"]["h001"]["nics"][0]
    assert (nic["address"], nic["gateway"]) == ("10.0.0.2", "10.0.0.1")


def test_cabling_uses_every_port_once_with_unique_labels():
    plan = build_plan(small(servers=24, rails=4, spg=8, spines=4))
    cables = cabling(plan)
    ends = [(c["a_device"], c["a_port"]) for c in cables] + [(c["b_device"], c["b_port"]) for c in cables]
    assert len(ends) == len(set(ends))
    labels = [c["label"] for c in cables]
    assert len(labels) == len(set(labels))
    assert len(cables) == 24 * 4 + len(plan["leafs"]) * plan["sizing"]["uplinks_per_leaf"]


def test_fabric_links_are_distinct_31s_and_spines_are_balanced():
    plan = build_plan(small(servers=16, rails=2, spg=8, spines=4))
    pairs = set()
    for leaf in plan["leafs"].values():
        spines = [u["spine"] for u in leaf["uplinks"]]
        assert sorted(set(spines)) == sorted(plan["spines"]) and len(set(spines.count(s) for s in set(spines))) == 1
        for uplink in leaf["uplinks"]:
            net = ipaddress.ip_network("%s/31" % uplink["peer"])
            assert ipaddress.ip_address(uplink["address"]) in net and uplink["address"] != uplink["peer"]
            pairs.add(str(net))
    assert len(pairs) == sum(len(leaf["uplinks"]) for leaf in plan["leafs"].values())
    for name, spine in plan["spines"].items():
        for link in spine["downlinks"]:
            leaf_side = [u for u in plan["leafs"][link["leaf"]]["uplinks"] if u["port"] == link["leaf_port"]][0]
            assert (leaf_side["spine"], leaf_side["spine_port"], leaf_side["peer"]) == (name, link["port"], link["address"])


def test_binding_1_to_1_is_identity():
    leaf = build_plan(lab())["leafs"]["leaf0"]
    assert [(b["ingress"], b["uplink"]) for b in leaf["bindings"]] == [
        ("Ethernet0", "Ethernet8"), ("Ethernet1", "Ethernet9"), ("Ethernet2", "Ethernet10"), ("Ethernet3", "Ethernet11")]
    first = leaf["bindings"][0]
    assert first["next_hop"] == leaf["uplinks"][0]["peer"] and first["spine"] == "spine1"
    assert first["source"] == "10.100.0.1/32" and leaf["local_destinations"] == ["10.100.0.0/29"]
    assert "exclude_destinations" not in first  # stored once per leaf, not per binding


def test_binding_n_to_1_maps_downlink_i_to_uplink_ceil_i_over_n():
    # 8 servers x 100G at 4:1 over 100G uplinks -> 2 uplinks, one per spine.
    plan = build_plan(small(servers=8, rails=1, spg=8, ratio="4:1", spines=2))
    leaf = list(plan["leafs"].values())[0]
    assert len(leaf["uplinks"]) == 2
    assert [b["uplink_index"] + 1 for b in leaf["bindings"]] == [(i + 3) // 4 for i in range(1, 9)]


def test_uneven_binding_spreads_floor_or_ceil():
    for down in range(1, 60):
        for up in range(1, down + 1):
            loads = [0] * up
            for position in range(down):
                loads[uplink_for(position, down, up)] += 1
            assert set(loads) <= {down // up, -(-down // up)}
            positions = [uplink_for(p, down, up) for p in range(down)]
            assert positions == sorted(positions)  # contiguous blocks, in port order


def test_route_map_per_nic_table_and_source_rule():
    host = build_plan(lab())["hosts"]["gpu03"]
    assert host["rules"][1] == {"priority": 1001, "from": "10.101.0.3/32", "table": 101}
    table_101 = [r for r in host["routes"] if r["table"] == 101]
    assert table_101 == [{"table": 101, "dst": "10.101.0.0/29", "dev": "rail1", "src": "10.101.0.3", "scope": "link"},
                         {"table": 101, "dst": "default", "dev": "rail1", "via": "10.101.0.6"}]
    main = [r for r in host["routes"] if r["table"] == "main"]
    assert main[1] == {"table": "main", "dst": "10.101.0.0/16", "dev": "rail1", "via": "10.101.0.6"}
    assert not [r for r in host["routes"] if r["dst"] == "default" and r["table"] == "main"]
    assert host["sysctls"]["net.ipv4.conf.rail1.rp_filter"] == "2"
    assert host["sysctls"]["net.ipv4.conf.rail3.arp_ignore"] == "1"
    assert "net.ipv4.conf.eth0.rp_filter" not in host["sysctls"]


def test_nccl_hints_follow_rail_order_and_qos():
    plan = build_plan(lab())
    # NCCL_SOCKET_IFNAME: exact match '=' (NCCL reads a bare name as a prefix: eth0 would also match eth0.100);
    # NCCL_IB_GID_INDEX left out: NCCL >= 2.21 finds the RoCEv2 GID of the address itself (default -1)
    assert plan["hosts"]["gpu01"]["nccl"] == {"NCCL_IB_HCA": "=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "NCCL_SOCKET_IFNAME": "=eth0",
                                              "NCCL_IB_TC": "106"}


def test_nccl_gid_index_only_when_the_intent_sets_it_and_socket_ifname_as_written():
    intent = lab()
    intent["nccl"] = {"gid_index": 5, "socket_ifname": "^docker,lo"}
    nccl = build_plan(intent)["hosts"]["gpu01"]["nccl"]
    assert nccl["NCCL_IB_GID_INDEX"] == "5" and nccl["NCCL_SOCKET_IFNAME"] == "^docker,lo"
    intent["nccl"] = {"gid_index": 0}
    assert build_plan(intent)["hosts"]["gpu01"]["nccl"]["NCCL_IB_GID_INDEX"] == "0"


def test_platform_overrides_and_device_types():
    plan = build_plan(lab())
    assert [(n, plan["leafs"][n]["platform"], plan["leafs"][n]["device_type"]) for n in sorted(plan["leafs"])] == [
        ("leaf0", "asternos", "asterfusion_asternos"), ("leaf1", "eos", "arista_eos"),
        ("leaf2", "nvue", "cumulus_linux"), ("leaf3", "nxos", "cisco_nxos")]


def test_intent_views():
    plan = build_plan(lab())
    assert host_intent(plan, "gpu01")["qos"]["roce_tos"] == 106
    assert leaf_intent(plan, "leaf3")["name"] == "leaf3"


def _canonical(plan):
    return json.dumps(plan, sort_keys=True)


def test_same_input_gives_byte_identical_plan_even_with_reordered_keys():
    intent = lab()
    shuffled = json.loads(json.dumps(intent))
    keys = list(shuffled.items())
    random.Random(7).shuffle(keys)
    shuffled = dict(keys)
    assert json.dumps(build_plan(intent)) == json.dumps(build_plan(lab()))
    assert _canonical(build_plan(intent)) == _canonical(build_plan(shuffled))


def _assignments(plan):
    """Every assignment a technician or device depends on, keyed stably."""
    out = {}
    for name, host in plan["hosts"].items():
        for nic in host["nics"]:
            out["nic", name, nic["rail"]] = json.dumps(nic, sort_keys=True)
        for rule in host["rules"]:
            out["rule", name, rule["priority"]] = json.dumps(rule, sort_keys=True)
    for name, leaf in plan["leafs"].items():
        for key in ("loopback", "gateway", "platform"):
            out["leaf", name, key] = json.dumps(leaf[key], sort_keys=True)
        for uplink in leaf["uplinks"]:
            out["uplink", name, uplink["port"]] = json.dumps(uplink, sort_keys=True)
        for binding in leaf["bindings"]:
            out["binding", name, binding["ingress"]] = json.dumps(binding, sort_keys=True)
    for name, spine in plan["spines"].items():
        out["spine", name] = spine["loopback"]
    for cable in cabling(plan):
        out["cable", cable["label"]] = json.dumps(cable, sort_keys=True)
    return out


def _assert_grows_without_renumbering(before, after):
    old, new = _assignments(before), _assignments(after)
    moved = [key for key in old if old[key] != new.get(key)]
    assert not moved, moved[:5]
    assert len(new) > len(old)


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(1, 30), extra=st.integers(1, 10), rails=st.integers(1, 4), spg=st.sampled_from([2, 4, 8]),
       scheme=st.sampled_from(["subnet_per_leaf", "p2p"]), ratio=st.sampled_from(["1:1", "2:1", "4:1"]))
def test_adding_servers_never_renumbers(servers, extra, rails, spg, scheme, ratio):
    kwargs = dict(rails=rails, spg=spg, scheme=scheme, ratio=ratio, spines=2)
    _assert_grows_without_renumbering(build_plan(small(servers=servers, **kwargs)),
                                      build_plan(small(servers=servers + extra, **kwargs)))


@settings(max_examples=25, deadline=None)
@given(servers=st.integers(1, 20), rails=st.integers(1, 7), scheme=st.sampled_from(["subnet_per_leaf", "p2p"]))
def test_adding_a_rail_never_renumbers(servers, rails, scheme):
    kwargs = dict(servers=servers, spg=4, scheme=scheme, spines=2)
    _assert_grows_without_renumbering(build_plan(small(rails=rails, **kwargs)), build_plan(small(rails=rails + 1, **kwargs)))


def test_adding_a_pod_never_renumbers():
    # One pod = one server group (a full set of rail leafs).
    before = build_plan(small(servers=8, rails=4, spg=8))
    after = build_plan(small(servers=16, rails=4, spg=8))
    assert after["sizing"]["groups"] == before["sizing"]["groups"] + 1
    _assert_grows_without_renumbering(before, after)


def test_rail512_reproduces_digest_001():
    plan = build_plan(rail512())
    sizing = plan["sizing"]
    assert (sizing["gpus"], sizing["leafs"], sizing["spines"], sizing["oversubscription_effective"]) == (512, 8, 2, 1.0)
    assert sizing["uplinks_per_leaf"] == 32 and sizing["servers_per_group"] == 64
    leaf = plan["leafs"]["leaf-r5"]
    # EOS names a 2x200G split of an 8-lane cage after each half's first lane: /1 and /5 (Arista L1 profiles)
    assert [d["port"] for d in leaf["downlinks"][:3]] == ["Ethernet1/1", "Ethernet1/5", "Ethernet2/1"]
    assert leaf["uplinks"][0]["port"] == "Ethernet33/1"
    assert [d["port"] for d in plan["spines"]["spine1"]["downlinks"][:2]] == ["Ethernet1/1", "Ethernet1/5"]
    spine_ports = [link["port"] for spine in plan["spines"].values() for link in spine["downlinks"]]
    assert len(spine_ports) == 256 and len(set((s, l["port"]) for s, sp in plan["spines"].items() for l in sp["downlinks"])) == 256


def test_plan_names_the_owned_table_and_priority_ranges():
    routing = build_plan(lab())["routing"]
    assert routing == {"tables": list(range(100, 108)), "rule_priorities": list(range(1000, 1008))}


def test_more_uplinks_than_ports_still_uses_every_spine():
    # 4 ports x 100G at 1:1 need 4 uplinks, rounded up to 6 for 3 spines: bindings must reach all 3.
    plan = build_plan(small(servers=4, rails=1, spg=4, spines=3))
    leaf = list(plan["leafs"].values())[0]
    assert len(leaf["uplinks"]) == 6
    assert [b["uplink_index"] for b in leaf["bindings"]] == [0, 1, 2, 3]
    assert sorted(set(b["spine"] for b in leaf["bindings"])) == sorted(plan["spines"])
