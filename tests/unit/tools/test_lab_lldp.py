"""The podman lab's LLDP plumbing (tests/lab/hosts/lab_lldp.py) announces what validate.yml expects.

The lab's leaf namespace runs one lldpd per rail leaf; what each announces on a host's bridge port must be
what the product's LLDP check (validate/probes.py expected_lldp) expects from the same plan, or the demo's
validation would fail, or worse pass, for the wrong reason. Live exchange is checked by `lab.py up` itself
(it waits until every host hears its planned leaf port) and by tools/demo.py (make test-e2e).
"""
import importlib.util
import json
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.validate.probes import expected_lldp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def lab():
    spec = importlib.util.spec_from_file_location("aifabric_lab_hosts", os.path.join(ROOT, "tests", "lab", "hosts", "lab.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def plan(lab):
    with open(lab.FABRIC_FILE, encoding="utf-8") as handle:
        return build_plan(yaml.safe_load(handle)["fabric"])


def test_each_leaf_port_announces_what_the_probe_expects(lab, plan):
    hosts = lab.lab_topology()[0]
    leafs = lab.lldp.leaf_ports(hosts, lab.leaf_port)
    announced = dict(((leaf, port), port_id) for leaf, spec in leafs.items() for port, port_id, _descr in spec["ports"])
    checked = 0
    for host in hosts:
        for netdev, (leaf, port_id) in expected_lldp(plan, host["name"]).items():
            rail = next(nic["rail"] for nic in host["nics"] if nic["netdev"] == netdev)
            assert announced[(leaf, lab.leaf_port(host, rail))] == port_id
            checked += 1
    assert checked == len(announced) == 16          # 4 hosts x 4 rails, no leaf port announced twice
    # one lldpd per rail leaf, on that rail's bridge ports only; the plan's NOS names, not Linux's
    assert {leaf: spec["rail"] for leaf, spec in leafs.items()} == {"leaf0": 0, "leaf1": 1, "leaf2": 2, "leaf3": 3}
    assert [p for p, _i, _d in leafs["leaf3"]["ports"]] == ["afl01r3", "afl02r3", "afl03r3", "afl04r3"]
    assert [i for _p, i, _d in leafs["leaf2"]["ports"]] == ["swp1", "swp2", "swp3", "swp4"]


def test_leaf_config_is_lldpcli_commands(lab):
    spec = {"rail": 1, "ports": [("afl02r1", "Ethernet2", "gpu02 rail1")]}
    assert lab.lldp.leaf_config("leaf1", spec).splitlines() == [
        "configure system hostname leaf1",
        "configure lldp tx-interval %d" % lab.lldp.TX_INTERVAL,
        "configure ports afl02r1 lldp portidsubtype local Ethernet2",
        'configure ports afl02r1 lldp portdescription "gpu02 rail1"']


def test_a_leaf_on_two_rails_is_refused(lab):
    hosts = [{"name": "gpu01", "index": 1, "nics": [{"rail": 0, "netdev": "rail0", "leaf": "leaf0", "leaf_port": "Ethernet1"},
                                                    {"rail": 1, "netdev": "rail1", "leaf": "leaf0", "leaf_port": "Ethernet2"}]}]
    with pytest.raises(SystemExit, match="leaf0 serves rails 0 and 1"):
        lab.lldp.leaf_ports(hosts, lab.leaf_port)


# `lldpcli -f json show interfaces` of lldpd 1.0.16 (Debian 12), trimmed: one interface comes as a dict, several as a list
SHOW_INTERFACES = {"lldp": {"interface": [
    {"afl01r3": {"status": "RX and TX", "chassis": {"leaf3": {"id": {"type": "mac", "value": "fe:b0:39:e5:aa:4d"}}},
                 "port": {"id": {"type": "local", "value": "Ethernet1/1"}, "descr": "gpu01 rail3"}, "ttl": {"ttl": "8"}}},
    {"afl02r3": {"status": "RX and TX", "chassis": {"leaf3": {"id": {"type": "mac", "value": "fe:b0:39:e5:aa:4d"}}},
                 "port": {"id": {"type": "local", "value": "Ethernet1/2"}, "descr": "gpu02 rail3"}, "ttl": {"ttl": "8"}}}]}}


def test_parse_interfaces(lab):
    assert lab.lldp.parse_interfaces(json.dumps(SHOW_INTERFACES)) == {
        "afl01r3": ("Ethernet1/1", "gpu01 rail3"), "afl02r3": ("Ethernet1/2", "gpu02 rail3")}
    single = {"lldp": {"interface": SHOW_INTERFACES["lldp"]["interface"][0]}}
    assert lab.lldp.parse_interfaces(json.dumps(single)) == {"afl01r3": ("Ethernet1/1", "gpu01 rail3")}
    assert lab.lldp.parse_interfaces("") == {} and lab.lldp.parse_interfaces("not json") == {}
