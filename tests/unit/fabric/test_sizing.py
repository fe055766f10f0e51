"""Sizing reproduces DIGEST 001's figures."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.sizing import size_fat_tree, size_rail_optimized

from .intents import lab


def test_32k_gpus_on_a_three_tier_fat_tree_of_128_port_switches():
    sizing = size_fat_tree(gpus=32768, radix=128, tiers=3)
    assert sizing["switches_per_tier"] == [512, 512, 256]
    assert sizing["switches"] == 1280
    assert sizing["optics"] == 196608 == 1280 * 128 + 32768
    assert sizing["max_switch_hops"] == 5


def test_two_tier_fat_tree():
    sizing = size_fat_tree(gpus=8192, radix=128, tiers=2)
    assert sizing["switches_per_tier"] == [128, 64]


def test_fat_tree_rejects_odd_radix():
    with pytest.raises(ValueError):
        size_fat_tree(gpus=16, radix=7)


def test_512_gpus_rail_optimized_is_8_leafs_and_2_spines_at_1_to_1():
    sizing = size_rail_optimized(gpus=512, gpus_per_server=8, nic_gbps=200, leaf_ports=64, leaf_port_gbps=400,
                                 spine_ports=64, spine_port_gbps=800, oversubscription=1)
    assert (sizing["leafs"], sizing["spines"], sizing["groups"], sizing["servers_per_group"]) == (8, 2, 1, 64)
    assert sizing["uplinks_per_leaf"] == 32
    # 512 NIC optics + 256 (2x200G breakout) leaf-down + 256 leaf-up + 128 (2x400G) spine optics
    assert sizing["optics"] == 512 + 256 + 256 + 128


def test_28k_gpus_at_7_to_1_is_256_leafs_and_32_spines():
    sizing = size_rail_optimized(gpus=28672, gpus_per_server=8, nic_gbps=400, leaf_ports=128, leaf_port_gbps=400,
                                 spine_ports=64, spine_port_gbps=800, oversubscription=7)
    assert (sizing["servers_per_group"], sizing["groups"]) == (112, 32)
    assert (sizing["leafs"], sizing["spines"], sizing["switches"]) == (256, 32, 288)
    assert sizing["uplinks_per_leaf"] == 16
    assert sizing["groups"] * 896 == 28672


def test_hop_counts():
    sizing = build_plan(lab())["sizing"]
    assert sizing["hops"] == {"same_rail_same_group": 1, "same_rail_other_group": 3, "cross_rail_without_pxn": 3,
                              "cross_rail_with_pxn": 1}
    assert (sizing["host_links"], sizing["fabric_links"], sizing["optics"]) == (16, 16, 64)


def test_a_partly_filled_group_is_said_to_be_sized_full():
    """make sizing (issue 41 item 6): 4 servers of 8 x 400G on 16 x 400G leafs at 1:1 make a group of 8 servers;
    the 8 uplinks per leaf, 64 fabric links and their optics count the 4 missing servers, and the answer says so."""
    s = size_rail_optimized(32, 8, 400, 16, 400, 64, 400)
    assert (s["servers"], s["servers_per_group"], s["uplinks_per_leaf"], s["fabric_links"]) == (4, 8, 8, 64)
    assert s["warnings"] == [
        "server group 1 holds 4 of its 8 servers: its 8 leafs, their 8 uplinks each, the spines and the fabric-side "
        "optics are sized for the full group (growth to 8 servers without recabling the spine side): 32 of its 64 leaf "
        "downlinks have no server yet. To size for today's servers only: leafs with fewer ports (sizing_leaf_ports) or "
        "a higher oversubscription"]
    assert size_rail_optimized(64, 8, 400, 16, 400, 64, 400)["warnings"] == []   # two full groups
