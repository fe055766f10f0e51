import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import schema
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError

from .intents import ROOT, small


def test_defaults_are_filled_without_touching_input():
    intent = small()
    out = schema.normalize(intent)
    assert out["routing"] == {"table_base": 100, "rule_priority_base": 1000}
    assert out["qos"] == {"profile": "roce_lossless", "overrides": {}}
    assert out["switch_models"]["leaf"]["downlinks"]["breakout"] == 1
    assert "routing" not in intent


def test_unknown_key_suggests_spelling():
    intent = small()
    intent["addressing"]["fabric_link_pol"] = "10.0.0.0/24"
    with pytest.raises(FabricError) as err:
        schema.normalize(intent)
    assert err.value.paths() == ["fabric.addressing.fabric_link_pol"]
    assert "did you mean 'fabric_link_pool'" in str(err.value)


@pytest.mark.parametrize("mutate, path, words", [
    (lambda f: f["servers"].pop("nics"), "fabric.servers.nics", "is required"),
    (lambda f: f["servers"].update(count="4"), "fabric.servers.count", "expected an integer"),
    (lambda f: f["servers"].update(count=True), "fabric.servers.count", "expected an integer"),
    (lambda f: f.update(oversubscription="2:3"), "fabric.oversubscription", "not an oversubscription ratio"),
    (lambda f: f["addressing"].update(fabric_link_pool="10.0.0.1/24"), "fabric.addressing.fabric_link_pool", "not an IPv4 network"),
    (lambda f: f["addressing"].update(scheme="vxlan"), "fabric.addressing.scheme", "not one of"),
    (lambda f: f["switch_models"]["leaf"]["downlinks"].update(ports="8-1"), "fabric.switch_models.leaf.downlinks.ports", "not a port list"),
    (lambda f: f["switch_models"]["leaf"]["downlinks"].update(breakout=9), "fabric.switch_models.leaf.downlinks.breakout", "above the maximum"),
    (lambda f: f["servers"]["nics"][1].pop("rdma"), "fabric.servers.nics[1].rdma", "is required"),
    (lambda f: f.update(switch_models={}), "fabric.switch_models", "non-empty mapping"),
    (lambda f: f.update(leafs="eos"), "fabric.leafs", "expected a mapping"),
])
def test_type_errors_name_the_key_path(mutate, path, words):
    intent = small()
    mutate(intent)
    with pytest.raises(FabricError) as err:
        schema.normalize(intent)
    assert path in err.value.paths()
    assert words in str(err.value)
    assert "Fix:" in str(err.value)


def test_all_problems_are_reported_at_once():
    intent = small()
    intent["servers"]["count"] = "many"
    intent["max_rails"] = 0
    with pytest.raises(FabricError) as err:
        schema.normalize(intent)
    assert sorted(err.value.paths()) == ["fabric.max_rails", "fabric.servers.count"]


@pytest.mark.parametrize("text, ports", [("1-4", [1, 2, 3, 4]), ("1-2,9,11-12", [1, 2, 9, 11, 12]), ([3, 1], [1, 3]), (5, [5])])
def test_port_lists(text, ports):
    assert schema.parse_port_list(text) == ports


@pytest.mark.parametrize("text", ["", "a-b", "0-3", [0], "4-2", None, True])
def test_bad_port_lists(text):
    assert schema.parse_port_list(text) is None


@pytest.mark.parametrize("text, n", [("1:1", 1), (" 7 : 1 ", 7), ("0:1", None), ("1:2", None), ("x", None)])
def test_ratios(text, n):
    assert schema.parse_ratio(text) == n


def test_schema_doc_is_generated_from_the_schema():
    """docs/fabric-schema.md must be what `make docs` produces (one definition, no second copy)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.docs import schema_doc
    with open(os.path.join(ROOT, "docs", "fabric-schema.md")) as handle:
        assert handle.read() == schema_doc(), "run `make docs`"
    for key in ("fabric.addressing.fabric_link_pool", "fabric.servers.nics[].rdma", "fabric.switch_models.NAME.port_name"):
        assert "`%s`" % key in schema_doc()
