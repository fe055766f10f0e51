"""Fabric intents used by the planner tests (plain dicts, built fresh per call)."""
import copy
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def load_inventory_fabric(name):
    with open(os.path.join(ROOT, "inventories", name, "group_vars", "all", "fabric.yml")) as handle:
        return yaml.safe_load(handle)["fabric"]


def lab():
    return load_inventory_fabric("lab")


def rail512():
    return load_inventory_fabric("rail512")


def small(servers=4, rails=2, spg=4, uplinks=4, spines=2, ratio="1:1", scheme="subnet_per_leaf",
          nic_speed=100, max_rails=8, leaf_down=8, leaf_up=8, spine_ports=256):
    """A compact fabric whose knobs the tests turn."""
    return copy.deepcopy({
        "name": "t",
        "servers": {"count": servers, "name_pattern": "h{index:03d}", "servers_per_group": spg,
                    "nics": [{"netdev": "eth%d" % (r + 1), "rdma": "mlx5_%d" % r, "speed_gbps": nic_speed}
                             for r in range(rails)]},
        "max_rails": max_rails,
        "oversubscription": ratio,
        "switch_models": {
            "leaf": {"downlinks": {"ports": "1-%d" % leaf_down, "speed_gbps": 100},
                     "uplinks": {"ports": "%d-%d" % (leaf_down + 1, leaf_down + leaf_up), "speed_gbps": 100}},
            "spine": {"downlinks": {"ports": "1-%d" % spine_ports, "speed_gbps": 100}},
        },
        "leafs": {"model": "leaf", "platform": "eos"},
        "spines": {"model": "spine", "count": spines, "platform": "eos"},
        "addressing": {"scheme": scheme, "supernet": "10.0.0.0/8", "rail_prefixlen": 16,
                       "fabric_link_pool": "172.16.0.0/16", "leaf_loopback_pool": "172.17.0.0/24",
                       "spine_loopback_pool": "172.17.1.0/24"},
    })
