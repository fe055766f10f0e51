"""Outside oracle for the NVUE driver: NVIDIA's published NVUE OpenAPI schema, as nvueschema's pydantic models.

The driver renders ``nv set`` lines; NVUE keeps the same config as one JSON tree (``nv config show -o json``).
We turn the lines into that tree and check it two ways, because the generated models do not forbid unknown
keys (pydantic's default ``extra='ignore'``), so ``model_validate`` alone would silently drop a misspelt key:
  1. every token of every line is walked through the schema (a key of the model, or the name of an entry
     in a map of user-named objects: interface, pbr map, rule id, dscp value, ...);
  2. the tree validates against the root model (value types, enums, ranges) and survives a dump unchanged.
"""
import importlib
import json
import os
import typing

import pydantic
import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import SECTIONS
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# Newest release nvueschema ships. The driver's `router pbr state enabled` only exists from 5.15 on
# (5.14 and earlier spell it `router pbr enable on`), so an older release cannot take the PBR section.
RELEASE = "5.18"
# The release of the QoS pages docs/switch-commands-sources.md cites: the mtu and qos sections must hold there too.
QOS_DOCS_RELEASE = "5.14"


def root_model(release):
    """The schema's root node ``/`` (interface, qos, router, ...) for one Cumulus Linux release."""
    return importlib.import_module("nvueschema.models.v" + release.replace(".", "_")).NvueConfig


class SchemaPathError(AssertionError):
    pass


def _unwrap(ann):
    """Drop the Optional[...] the generated models put around every field; a real union stays a union."""
    while typing.get_origin(ann) is typing.Union:
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(args) != 1:
            break
        ann = args[0]
    return ann


def _is_model(ann):
    return isinstance(ann, type) and issubclass(ann, pydantic.BaseModel)


def _is_scalar(ann):
    # not an object, not a map of named entries, not an opaque entry (Any): a leaf that takes one value
    return not (_is_model(ann) or typing.get_origin(ann) is dict or ann is typing.Any)


def _leaf_types(ann):
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _leaf_types(typing.get_args(ann)[0])
    if origin is typing.Union:
        return set().union(*(_leaf_types(a) for a in typing.get_args(ann)))
    return {ann}


def _child(ann, token, line):
    """Schema node under ``ann`` that ``token`` names; raise if the schema has no such key there."""
    if _is_model(ann):
        fields = {f.alias or name: f.annotation for name, f in ann.model_fields.items()}
        if token not in fields:
            raise SchemaPathError("%r: no key %r in %s, it has %s" % (line, token, ann.__name__, sorted(fields)))
        return _unwrap(fields[token])
    if typing.get_origin(ann) is dict:
        return _unwrap(typing.get_args(ann)[1])  # token is the user's name for an entry of the map
    raise SchemaPathError("%r: the schema defines nothing below the entry before %r" % (line, token))


def to_tree(model, lines):
    """``nv set`` lines -> the nested dict NVUE holds, walking each path through the schema on the way."""
    tree = {}
    for line in lines:
        assert line.startswith("nv set "), line
        tokens = line.split()[2:]
        node, ann = tree, model
        while tokens:
            token, tokens = tokens[0], tokens[1:]
            ann = _child(ann, token, line)
            if _is_scalar(ann):
                if len(tokens) != 1:
                    raise SchemaPathError("%r: leaf %r takes exactly one value" % (line, token))
                # NVUE's JSON carries integers as numbers; strict validation below holds us to that
                node[token] = int(tokens[0]) if tokens[0].isdigit() and int in _leaf_types(ann) else tokens[0]
                break
            # an object, a map entry or an opaque entry: a line that ends here just creates it ({}),
            # like `interface swp1 qos pfc-watchdog` or `qos pfc default-global switch-priority 3`
            node = node.setdefault(token, {})
    return tree


def validate(model, lines):
    """Walk, then validate: raises SchemaPathError (no such path) or pydantic.ValidationError (bad value)."""
    tree = to_tree(model, lines)
    # JSON in strict mode: "9216" for an integer leaf is an error, as it would be in NVUE's JSON
    parsed = model.model_validate_json(json.dumps(tree), strict=True)
    # the models ignore unknown keys; a dump equal to the input proves nothing was dropped or rewritten
    assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == tree
    return tree


@pytest.fixture(scope="module")
def plan():
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as fh:
        return build_plan(yaml.safe_load(fh)["fabric"])


def rendered(plan, sections=SECTIONS):
    """Every lab leaf rendered as NVUE (whatever NOS the lab gives it), so each leaf's PBR bindings are in."""
    drv = get_driver("nvue")
    return {name: drv.render(dict(intent, platform="nvue"), plan["qos"], sections=sections).splitlines()
            for name, intent in sorted(plan["leafs"].items())}


def test_lab_leaf_commands_validate_against_nvue_schema(plan):
    model = root_model(RELEASE)
    for name, lines in rendered(plan).items():
        assert any(" router pbr map " in line for line in lines), name  # PBR bindings are covered
        tree = validate(model, lines)
        assert set(tree) == {"interface", "qos", "router"}, name


def test_mtu_and_qos_sections_hold_on_the_release_the_qos_docs_cite(plan):
    model = root_model(QOS_DOCS_RELEASE)
    for lines in rendered(plan, sections=("mtu", "qos")).values():
        validate(model, lines)


@pytest.mark.parametrize("line, error", [
    ("nv set qos pfc default-global switch-priorty 3", SchemaPathError),  # misspelt key
    ("nv set router nexthop-group AIF-NH-1 via 10.0.0.1", SchemaPathError),  # pre-5.4 path
    ("nv set interface swp1 link mtu 9216 extra", SchemaPathError),  # a leaf takes one value
    ("nv set qos mapping default-global trust l9", pydantic.ValidationError),  # not in the enum
    ("nv set interface swp1 link mtu 9217", pydantic.ValidationError),  # above the schema's maximum
    ("nv set router pbr map M rule 10 match source-ip 10.0.0.300/32", pydantic.ValidationError),  # not an address
])
def test_wrong_commands_are_rejected(line, error):
    with pytest.raises(error):
        validate(root_model(RELEASE), [line])


def test_wrong_key_passes_plain_model_validation_but_not_the_path_walk():
    model = root_model(RELEASE)
    bad = {"qos": {"pfc": {"default-global": {"switch-priorty": {"3": {}}}}}}
    # nvueschema 0.1.0 leaves pydantic's extra='ignore': the typo is dropped without an error, which is why
    # the walk and the dump comparison exist (should a later pin forbid extras, this line starts raising)
    assert model.model_validate(bad).model_dump(exclude_none=True) == {"qos": {"pfc": {"default-global": {}}}}
    with pytest.raises(SchemaPathError, match="switch-priorty"):
        to_tree(model, ["nv set qos pfc default-global switch-priorty 3"])


def test_rail512_as_nvue_with_breakout_ports_validates():
    # the 512-GPU fabric planned on Cumulus: 2x200G breakouts are swpNs0/swpNs1, uplinks swpN (docs/platforms.md)
    with open(os.path.join(ROOT, "inventories", "rail512", "group_vars", "all", "fabric.yml")) as fh:
        fabric = yaml.safe_load(fh)["fabric"]
    fabric["leafs"]["platform"] = fabric["spines"]["platform"] = "nvue"
    big = build_plan(fabric)
    leaf = big["leafs"]["leaf-r0"]
    assert [d["port"] for d in leaf["downlinks"][:3]] == ["swp1s0", "swp1s1", "swp2s0"]
    lines = get_driver("nvue").render(leaf, big["qos"]).splitlines()
    assert "nv set interface vlan100 router pbr map AIF-PBR-vlan100" in lines
    assert "nv set interface swp33 link mtu 9216" in lines
    validate(root_model(RELEASE), lines)


ALL = ("qos", "mtu", "pbr", "underlay")


def test_underlay_validates_against_nvue_schema(plan):
    """Section underlay on every lab leaf and a spine (rendered as NVUE): loopback and /31 addresses, the host VLAN
    in br_default with its SVI, BGP globals, the default VRF's BGP and the ECMP hash fields."""
    model = root_model(RELEASE)
    drv = get_driver("nvue")
    devices = sorted(plan["leafs"].items()) + sorted(plan["spines"].items())[:1]
    for name, intent in devices:
        lines = drv.render(dict(intent, platform="nvue"), plan["qos"], sections=ALL).splitlines()
        tree = validate(model, lines)
        assert {"interface", "router", "vrf", "system"} <= set(tree), name
    assert "nv set interface vlan100 router pbr map AIF-PBR-vlan100" in drv.render(plan["leafs"]["leaf2"], plan["qos"], ALL)


@pytest.mark.parametrize("line, error", [
    ("nv set interface swp9 ip address 10.254.0.9/31", SchemaPathError),        # CL 5.14 and earlier: `ip`
    ("nv set router bgp enable on", SchemaPathError),                          # CL 5.14 and earlier: `enable on`
    ("nv set system forwarding ecmp-hash source-port on", pydantic.ValidationError),
    ("nv set vrf default router bgp neighbor 10.0.0.1 timers hold nine", pydantic.ValidationError),
])
def test_wrong_underlay_commands_are_rejected(line, error):
    with pytest.raises(error):
        validate(root_model(RELEASE), [line])
