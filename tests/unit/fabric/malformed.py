"""A corpus of malformed fabrics: each must be refused with a FabricError naming its key path.

Every case starts from an inventory fabric (lab: 4 servers x 4 rails, leaf2 on nvue) and applies
edits given as data, so tools/measure_malformed.py can run the same corpus against any checkout.
The first block reproduces the cases of the reliability review (docs: ../shared/reviews/reliability.md,
sections 1 and 2); the rest probe each allowlist and bound.

Edit operations: ("set", "a.b.0.c", value), ("del", "a.b"), ("root", value) (replace the whole fabric).
Paths index lists with integers.
"""
import copy

# (case id, edits, expected key path)
CASES = [
    # --- the review's reproductions -----------------------------------------------------------
    ("names and count both given", [("set", "servers.names", ["gpu-a", "gpu-b"])], "fabric.servers.count"),
    ("overlapping port ranges merged", [("set", "switch_models.lab-leaf.downlinks.ports", "1-8,5-6")],
     "fabric.switch_models.lab-leaf.downlinks.ports"),
    ("every port the same name", [("set", "switch_models.lab-leaf.port_name", "Ethernet")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("host port and uplink share a name", [("set", "switch_models.lab-leaf.port_name", "Ethernet{index}")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("any device_type", [("set", "leafs.device_type", "definitely_not_netmiko")], "fabric.leafs.device_type"),
    ("trust of the wrong type", [("set", "qos.overrides", {"trust": 5})], "fabric.qos.overrides.trust"),
    ("trust with shell injection", [("set", "qos.overrides", {"trust": "dscp; touch /tmp/PWNED #"})],
     "fabric.qos.overrides.trust"),
    ("trust with a newline and a CLI line", [("set", "qos.overrides", {"trust": "dscp\n   description INJECTED"})],
     "fabric.qos.overrides.trust"),
    ("unbounded gid_index", [("set", "nccl", {"gid_index": 100000})], "fabric.nccl.gid_index"),
    ("nic gpu beyond gpus", [("set", "servers.nics.0.gpu", 4)], "fabric.servers.nics[0].gpu"),
    ("server name with ;", [("del", "servers.count"), ("set", "servers.names", ["gpu01;reboot", "gpu02"])],
     "fabric.servers.names[0]"),
    ("server name with $()", [("del", "servers.count"), ("set", "servers.names", ["gpu01", "gpu$(reboot)"])],
     "fabric.servers.names[1]"),
    ("server name with backticks", [("del", "servers.count"), ("set", "servers.names", ["`reboot`"])],
     "fabric.servers.names[0]"),
    ("server name with a newline", [("del", "servers.count"), ("set", "servers.names", ["gpu01\nrm -rf /"])],
     "fabric.servers.names[0]"),
    ("server name escaping the artifact dir", [("del", "servers.count"),
                                               ("set", "servers.names", ["x/../../../escaped-by-server-name"])],
     "fabric.servers.names[0]"),
    ("server name with right-to-left override", [("del", "servers.count"), ("set", "servers.names", ["gpu\u202e10"])],
     "fabric.servers.names[0]"),
    ("server name with zero-width space", [("del", "servers.count"), ("set", "servers.names", ["gpu\u200b01"])],
     "fabric.servers.names[0]"),
    ("server name with a space", [("del", "servers.count"), ("set", "servers.names", ["gpu 01"])],
     "fabric.servers.names[0]"),
    ("fabric name with a path", [("set", "name", "../../etc/lab")], "fabric.name"),
    ("netdev over IFNAMSIZ", [("set", "servers.nics.0.netdev", "rail0-is-far-too-long")], "fabric.servers.nics[0].netdev"),
    ("netdev with shell", [("set", "servers.nics.1.netdev", "rail1;reboot")], "fabric.servers.nics[1].netdev"),
    ("rdma with a space", [("set", "servers.nics.0.rdma", "mlx5 0")], "fabric.servers.nics[0].rdma"),
    ("port name with $() (NVUE bash)", [("set", "switch_models.lab-leaf.port_name", "swp{port}$(reboot)")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("port name with a newline (EOS CLI)", [("set", "switch_models.lab-leaf.port_name",
                                             "Ethernet{port}\n   description INJECTED-{port}")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("leaf name with shell", [("set", "leafs.name_pattern", "leaf{rail};reboot")], "fabric.leafs.name_pattern"),
    ("pattern with an index lookup", [("set", "servers.name_pattern", "gpu{index[0]}")], "fabric.servers.name_pattern"),
    ("pattern with an attribute lookup", [("set", "switch_models.lab-leaf.port_name", "Ethernet{port.vlan}")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("list where a mapping is expected", [("set", "servers", [{"count": 4}])], "fabric.servers"),
    ("huge port range", [("set", "switch_models.lab-spine.downlinks.ports", "1-2000000000")],
     "fabric.switch_models.lab-spine.downlinks.ports"),
    ("huge count", [("set", "servers.count", 10 ** 9)], "fabric.servers.count"),
    # --- names: every allowlist ----------------------------------------------------------------
    ("server name with a leading dash", [("del", "servers.count"), ("set", "servers.names", ["-gpu01"])],
     "fabric.servers.names[0]"),
    ("server name of 300 characters", [("del", "servers.count"), ("set", "servers.names", ["g" * 300])],
     "fabric.servers.names[0]"),
    ("server name with NUL", [("del", "servers.count"), ("set", "servers.names", ["gpu\x0001"])],
     "fabric.servers.names[0]"),
    ("server name that is '..'", [("del", "servers.count"), ("set", "servers.names", [".."])],
     "fabric.servers.names[0]"),
    ("server name not a string", [("del", "servers.count"), ("set", "servers.names", [1, 2])], "fabric.servers.names"),
    ("server name pattern with a path", [("set", "servers.name_pattern", "x/../../{index}")],
     "fabric.servers.name_pattern"),
    ("server name pattern with a space", [("set", "servers.name_pattern", "gpu {index}")], "fabric.servers.name_pattern"),
    ("server name pattern with a huge width", [("set", "servers.name_pattern", "gpu{index:>999999999}")],
     "fabric.servers.name_pattern"),
    ("server name pattern with a conversion", [("set", "servers.name_pattern", "gpu{index!r}")],
     "fabric.servers.name_pattern"),
    ("server name pattern with an unclosed brace", [("set", "servers.name_pattern", "gpu{index")],
     "fabric.servers.name_pattern"),
    ("fabric name with a newline", [("set", "name", "lab\nINJECTED")], "fabric.name"),
    ("fabric name too long", [("set", "name", "l" * 64)], "fabric.name"),
    ("netdev with a slash", [("set", "servers.nics.0.netdev", "../../etc")], "fabric.servers.nics[0].netdev"),
    ("netdev with $()", [("set", "servers.nics.2.netdev", "$(reboot)")], "fabric.servers.nics[2].netdev"),
    ("netdev with a non-ASCII digit", [("set", "servers.nics.3.netdev", "rail\u0663")], "fabric.servers.nics[3].netdev"),
    ("netdev with a colon", [("set", "servers.nics.0.netdev", "rail0:1")], "fabric.servers.nics[0].netdev"),
    ("rdma with a slash", [("set", "servers.nics.0.rdma", "mlx5_0/../x")], "fabric.servers.nics[0].rdma"),
    ("rdma with a tab", [("set", "servers.nics.1.rdma", "mlx5\t1")], "fabric.servers.nics[1].rdma"),
    ("mgmt interface with backticks", [("set", "servers.mgmt_interface", "`id`")], "fabric.servers.mgmt_interface"),
    ("socket ifname with shell", [("set", "nccl", {"socket_ifname": "eth0; reboot"})], "fabric.nccl.socket_ifname"),
    ("port name with a space", [("set", "switch_models.lab-leaf.port_name", "Ethernet {port}")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("port name with a leading dash", [("set", "switch_models.lab-spine.port_name", "-{port}")],
     "fabric.switch_models.lab-spine.port_name"),
    ("port name with a quote", [("set", "switch_models.lab-leaf.port_name", "Ethernet{port}'")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("port name with a comment sign", [("set", "switch_models.lab-leaf.port_name", "Ethernet{port}#")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("port name with a slash on an nvue leaf", [("set", "switch_models.lab-leaf.port_name", "Ethernet{port}/1")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("port name over IFNAMSIZ on an nvue leaf", [("set", "switch_models.lab-leaf.port_name", "Ethernet-long-{port}")],
     "fabric.switch_models.lab-leaf.port_name"),
    ("port name of 80 characters", [("set", "switch_models.lab-spine.port_name", "E" * 80 + "{port}")],
     "fabric.switch_models.lab-spine.port_name"),
    ("leaf name pattern with a path", [("set", "leafs.name_pattern", "../leaf{rail}")], "fabric.leafs.name_pattern"),
    ("leaf name pattern with an attribute", [("set", "leafs.name_pattern", "leaf{rail.real}")],
     "fabric.leafs.name_pattern"),
    ("spine name pattern with a path", [("set", "spines.name_pattern", "../spine{index}")], "fabric.spines.name_pattern"),
    ("spine name pattern with a newline", [("set", "spines.name_pattern", "spine{index}\nreload")],
     "fabric.spines.name_pattern"),
    ("switch model name with a slash", [("set", "switch_models", {"lab/leaf": {"downlinks": {"ports": "1-8", "speed_gbps": 100}}})],
     "fabric.switch_models.lab/leaf"),
    ("platform override for no leaf", [("set", "leafs.platform_overrides", {"leaf9": "eos"})],
     "fabric.leafs.platform_overrides.leaf9"),
    ("platform override value a list", [("set", "leafs.platform_overrides", {"leaf1": ["eos"]})],
     "fabric.leafs.platform_overrides.leaf1"),
    ("platform with shell", [("set", "leafs.platform", "eos; reboot")], "fabric.leafs.platform"),
    ("device_type telnet", [("set", "spines.device_type", "arista_eos_telnet")], "fabric.spines.device_type"),
    ("device_type of another platform", [("set", "leafs.device_type", "cisco_nxos")], "fabric.leafs.device_type"),
    ("device_type plain linux", [("set", "spines.device_type", "linux")], "fabric.spines.device_type"),
    ("server name ending in a newline", [("del", "servers.count"), ("set", "servers.names", ["gpu01\n"])],
     "fabric.servers.names[0]"),
    ("port name ending in a newline", [("set", "switch_models.lab-spine.port_name", "Ethernet{port}\n")],
     "fabric.switch_models.lab-spine.port_name"),
    ("netdev ending in a newline", [("set", "servers.nics.0.netdev", "rail0\n")], "fabric.servers.nics[0].netdev"),
    ("leaf name pattern ending in a newline", [("set", "leafs.name_pattern", "leaf{rail}\n")], "fabric.leafs.name_pattern"),
    # --- QoS strings and lists ------------------------------------------------------------------
    ("trust pcp (no switch renders it)", [("set", "qos.overrides", {"trust": "pcp"})], "fabric.qos.overrides.trust"),
    ("trust empty", [("set", "qos.overrides", {"trust": ""})], "fabric.qos.overrides.trust"),
    ("lossless priorities of booleans", [("set", "qos.overrides", {"lossless_priorities": [True]})],
     "fabric.qos.overrides.lossless_priorities"),
    ("qos overrides a list", [("set", "qos.overrides", ["trust", "dscp"])], "fabric.qos.overrides"),
    # --- bounds before generation ---------------------------------------------------------------
    ("port number above 4096", [("set", "switch_models.lab-spine.downlinks.ports", "1-5000")],
     "fabric.switch_models.lab-spine.downlinks.ports"),
    ("port number of 5000 digits", [("set", "switch_models.lab-spine.downlinks.ports", "9" * 5000)],
     "fabric.switch_models.lab-spine.downlinks.ports"),
    ("port listed twice in a YAML list", [("set", "switch_models.lab-leaf.uplinks.ports", [9, 10, 10])],
     "fabric.switch_models.lab-leaf.uplinks.ports"),
    ("count above the schema bound", [("set", "servers.count", 100000)], "fabric.servers.count"),
    ("count x rails above the plan bound", [
        ("set", "servers.count", 40000), ("set", "rails", 8),
        ("set", "servers.nics", [{"netdev": "rail%d" % i, "rdma": "mlx5_%d" % i, "speed_gbps": 100} for i in range(8)])],
     "fabric.servers.count"),
    ("70000 listed names", [("del", "servers.count"), ("set", "servers.names", ["g%d" % i for i in range(70000)])],
     "fabric.servers.names"),
    ("huge spine count", [("set", "spines.count", 10 ** 9)], "fabric.spines.count"),
    ("huge planes", [("set", "spines.planes", 1000)], "fabric.spines.planes"),
    ("huge rails", [("set", "rails", 1000)], "fabric.rails"),
    ("100 rail NICs", [("set", "servers.nics", [{"netdev": "r%d" % i, "rdma": "m%d" % i} for i in range(100)])],
     "fabric.servers.nics"),
    ("huge NIC speed", [("set", "servers.nics.0.speed_gbps", 10 ** 12)], "fabric.servers.nics[0].speed_gbps"),
    ("huge breakout", [("set", "switch_models.lab-leaf.downlinks.breakout", 100)],
     "fabric.switch_models.lab-leaf.downlinks.breakout"),
    ("huge first_index", [("set", "servers.first_index", 10 ** 12)], "fabric.servers.first_index"),
    ("huge servers_per_group", [("set", "servers.servers_per_group", 10 ** 9)], "fabric.servers.servers_per_group"),
    ("negative gid_index", [("set", "nccl", {"gid_index": -1})], "fabric.nccl.gid_index"),
    ("nic gpu far beyond", [("set", "servers.nics.2.gpu", 1000)], "fabric.servers.nics[2].gpu"),
    ("ratio with a huge number", [("set", "oversubscription", "9" * 5000 + ":1")], "fabric.oversubscription"),
    # --- structure --------------------------------------------------------------------------------
    ("fabric a string", [("root", "lab")], "fabric"),
    ("switch models a list", [("set", "switch_models", ["lab-leaf"])], "fabric.switch_models"),
    ("a nic a list", [("set", "servers.nics.0", ["rail0", "mlx5_0"])], "fabric.servers.nics[0]"),
    ("addressing a string", [("set", "addressing", "10.0.0.0/8")], "fabric.addressing"),
]


def _walk(node, keys):
    for key in keys:
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def apply_edits(fabric, edits):
    """A new fabric: ``fabric`` with ``edits`` applied (the input is not modified)."""
    fabric = copy.deepcopy(fabric)
    for edit in edits:
        if edit[0] == "root":
            return copy.deepcopy(edit[1])
        keys = edit[1].split(".")
        parent = _walk(fabric, keys[:-1])
        last = int(keys[-1]) if isinstance(parent, list) else keys[-1]
        if edit[0] == "set":
            parent[last] = copy.deepcopy(edit[2])
        else:
            del parent[last]
    return fabric
