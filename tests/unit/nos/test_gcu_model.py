"""The lab's model of SONiC's GCU and buffermgrd (tests/lab/switches/gcu_model.py) held to SONiC's own tests and code:

* the patch sorter: every case of upstream's patch_sorter_test_success.json the model covers gives exactly upstream's
  steps (the port-critical admin-down cases among them); the count is printed, the cases not covered are named;
* the field-operation validators: the outcome of every upstream test of validate_field_operation and of the
  rdma / buffer-profile validators that is not parametrized, read from upstream's test file (its patch elements,
  configs, mocked ASIC, build version and validator conf), is the model's outcome; and upstream's own code
  (field_operation_validators.py with sonic_py_common/swsscommon stubbed) agrees with the model on the patches this
  collection sends to the public switches;
* buffermgrd's traditional model and GCU's final check without the backend tables, on the public Arista 7260CX3.

Upstream's files live in ../shared/oracles/sonic-utilities-gcu; without them the upstream-held tests skip, saying so."""
import ast
import copy
import json
import os
import sys

import pytest

from .helpers import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
import gcu_model  # noqa: E402
import public_configdb  # noqa: E402

UPSTREAM = os.path.join(gcu_model.ORACLE, "tests", "generic_config_updater")
needs_oracle = pytest.mark.skipif(not gcu_model.oracle_available(),
                                  reason="../shared/oracles/sonic-utilities-gcu is not here (a user's checkout)")

# the upstream sorter cases the model does not reproduce, and why (YANG-driven ordering is not modelled)
NOT_COVERED = {
    "ADD_2_ITEMS_WITH_DEPENDENCY_FROM_DIFFERENT_TABLES__SUCCESS": "leafref dependency order",
    "ADD_2_ITEMS_WITH_DEPENDENCY_FROM_SAME_TABLE__SUCCESS": "leafref dependency order",
    "ADD_TABLE__SUCCESS": "a table add split by the low-level move generator",
    "ADDING_CREATE_ONLY_FIELD__SUCCESS": "create-only fields",
    "DPB_1_TO_4__SUCCESS": "dynamic port breakout dependencies",
    "DPB_4_TO_1__SUCCESS": "dynamic port breakout dependencies",
    "INTER_DEPENDENCY_WITHIN_SAME_TABLE__SUCCESS": "leafref dependency order",
    "MODIFY_ITEMS_WITH_DEPENDENCIES_USING_MUST__SUCCESS": "YANG must expressions",
    "REMOVE_2_ITEMS_WITH_DEPENDENCY_FROM_DIFFERENT_TABLES__SUCCESS": "leafref dependency order",
    "REMOVE_2_ITEMS_WITH_DEPENDENCY_FROM_SAME_TABLE__SUCCESS": "leafref dependency order",
    "REMOVING_CREATE_ONLY_FIELD__SUCCESS": "create-only fields",
    "REPLACING_CREATE_ONLY_FIELD__SUCCESS": "create-only fields",
    "ADDING_LOOPBACK0_VRF_NAME__DELETES_LOOPBACK0_AND_IPS_DOES_NOT_AFFECT_OTHER_TABLES": "create-only fields",
    "ADD_RACK": "leafref dependency order across many tables",
    "REMOVE_RACK": "leafref dependency order across many tables",
    "CREATE_ONLY_PATH_TEST_MIRROR_SESSION__SUCCESS": "create-only fields",
}


@needs_oracle
def test_the_sorter_reproduces_upstreams_steps_of_every_case_it_covers():
    with open(os.path.join(UPSTREAM, "files", "patch_sorter_test_success.json")) as handle:
        cases = json.load(handle)
    covered = [name for name in cases if name not in NOT_COVERED]
    for name in covered:
        case = cases[name]
        assert gcu_model.sort(case["current_config"], case["patch"]) == case["expected_changes"], name
    for name in NOT_COVERED:
        case = cases[name]
        assert gcu_model.sort(case["current_config"], case["patch"]) != case["expected_changes"], \
            "%s is reproduced now: move it to the covered cases" % name
    assert "PORT_CRITICAL_CHANGE_AND_PORT_IS_ADMIN_UP" in covered and "PORT_CRITICAL_CONFIG_AND_ADDING_ADMIN_UP_PORT" in covered
    print("gcu_model reproduces %d of upstream's %d patch_sorter_test_success.json cases" % (len(covered), len(cases)))
    assert len(covered) == 12


# --- upstream's validator tests, read from its test file ---------------------------------------------------------------
def _literal(node):
    return ast.literal_eval(node)


def _decorations(func):
    """The mocks a test sets with @patch: the ASIC name, the build version, a validator conf given to open()."""
    out = {}
    for dec in func.decorator_list:
        if not (isinstance(dec, ast.Call) and dec.args and isinstance(dec.args[0], ast.Constant)):
            continue
        target = dec.args[0].value
        inner = dec.args[1] if len(dec.args) > 1 else None
        kw = dict((k.arg, k.value) for k in inner.keywords) if isinstance(inner, ast.Call) else {}
        if target.endswith("get_asic_name") and "return_value" in kw:
            out["asic"] = _literal(kw["return_value"])
        elif target.endswith("get_sonic_version_info") and "return_value" in kw:
            out["build"] = _literal(kw["return_value"]).get("build_version")
        elif target == "builtins.open" and "read_data" in kw:
            out["conf"] = json.loads(_literal(kw["read_data"]))
        elif target in ("os.path.exists",):
            continue
        else:
            out.setdefault("other", []).append(target)
    return out


def _assigned(func, name):
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return _literal(node.value)
    return None


def _expected_is(func):
    for node in ast.walk(func):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and isinstance(node.test.ops[0], ast.Is):
            return _literal(node.test.comparators[0])
    return None


def upstream_validator_cases():
    """(name, kind, inputs, expected) of every non-parametrized upstream test this model can run: ``field_operation``
    (old, target -> refused?), ``rdma`` / ``buffer_profile`` (one patch element -> allowed?)."""
    with open(os.path.join(UPSTREAM, "field_operation_validator_test.py")) as handle:
        tree = ast.parse(handle.read())
    cases = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef) or len(func.args.args) != 1:
            continue   # parametrized ones take arguments
        if any(isinstance(n, ast.With) for n in ast.walk(func)):
            continue   # mocks set inside the body: not read here
        deco = _decorations(func)
        if deco.get("other"):
            continue
        if func.name.startswith("test_validate_field_operation_"):
            old, target = _assigned(func, "old_config"), _assigned(func, "target_config")
            raises = any(isinstance(n, ast.Attribute) and n.attr == "raises" for n in ast.walk(func))
            cases.append((func.name, "field_operation", dict(deco, old=old, target=target), raises))
        elif func.name.startswith(("test_rdma_config_update_validator", "test_buffer_profile_config_update_validator")):
            element = _assigned(func, "patch_element")
            kind = "rdma" if func.name.startswith("test_rdma") else "buffer_profile"
            cases.append((func.name, kind, dict(deco, element=element), _expected_is(func)))
    return cases


def _model_outcome(kind, given):
    conf = gcu_model.conf_tables(given["conf"]) if "conf" in given else gcu_model.DEFAULT_TABLES
    asic, build = given.get("asic", "unknown"), given.get("build")
    if kind == "field_operation":
        return gcu_model.subset_field_refusal(given["old"], given["target"], asic, build, tables=conf) is not None
    table = given["element"]["path"].split("/")[1]
    validator = "rdma_config_update_validator" if kind == "rdma" else "buffer_profile_config_update_validator"
    scenarios = conf.get(table, ([], []))[1]
    if "conf" in given and not scenarios:
        scenarios = list(given["conf"]["tables"][table]["validator_data"]["rdma_config_update_validator"].values())
    return gcu_model.element_allowed(validator, given["element"], asic, build, scenarios)


@needs_oracle
def test_the_model_refuses_what_upstreams_validator_tests_refuse():
    cases = upstream_validator_cases()
    kinds = {}
    for name, kind, given, expected in cases:
        assert expected is not None, name
        assert _model_outcome(kind, given) == expected, name
        kinds[kind] = kinds.get(kind, 0) + 1
    print("gcu_model gives upstream's outcome in %d validator tests (%s)" % (len(cases), kinds))
    assert kinds.get("field_operation", 0) >= 15 and kinds.get("rdma", 0) >= 5
    names = [c[0] for c in cases]
    for must in ("test_validate_field_operation_illegal__pfcwd", "test_validate_field_operation_illegal__rm_loopback0",
                 "test_validate_field_operation_legal__rm_loopback1", "test_rdma_config_update_validator_unknown_asic",
                 "test_rdma_config_update_validator_spc_asic_valid_version_add_pfcwd"):
        assert must in names, must


def _product_patches():
    """(switch name, old, target) for what a first apply would change on the public switches' PFC_WD (with and without
    a PFC_WD table) and a few edges (removing PFC_WD GLOBAL, Loopback0)."""
    out = []
    for name in public_configdb.SWITCHES:
        old = public_configdb.load(name)
        ports = public_configdb.active_ports(old)[:4]
        wd = dict((p, {"action": "drop", "detection_time": "200", "restoration_time": "400"}) for p in ports)
        target = copy.deepcopy(old)
        target["PFC_WD"] = dict(wd, GLOBAL={"POLL_INTERVAL": "100"})
        out.append((name, old, target))   # add /PFC_WD: refused on every ASIC
        held = copy.deepcopy(old)
        held["PFC_WD"] = dict((p, {"action": "drop", "detection_time": "200", "restoration_time": "200"}) for p in ports)
        held["PFC_WD"]["GLOBAL"] = {"POLL_INTERVAL": "200"}
        out.append((name, held, target))   # per-field replaces: allowed for a listed HWSKU
        unlisted = copy.deepcopy(held)
        unlisted["DEVICE_METADATA"]["localhost"]["hwsku"] = "Celestica-E1031-T48S4"
        target2 = copy.deepcopy(target)
        target2["DEVICE_METADATA"] = unlisted["DEVICE_METADATA"]
        out.append((name + " unlisted", unlisted, target2))   # an HWSKU the conf does not list: refused
        gone = copy.deepcopy(held)
        del gone["PFC_WD"]["GLOBAL"]
        out.append((name + " no GLOBAL", held, gone))
    return out


@needs_oracle
def test_upstreams_own_validators_agree_with_the_model_on_the_product_patches():
    answers = []
    for name, old, target in _product_patches():
        hwsku = old["DEVICE_METADATA"]["localhost"]["hwsku"]
        oracle = gcu_model.oracle_field_refusal(old, target, gcu_model.asic_type(old), hwsku, "20240510.1")
        model = gcu_model.subset_field_refusal(old, target, gcu_model.HWSKU_ASIC.get(hwsku, "unknown"), "20240510.1")
        assert oracle == model, (name, oracle, model)
        answers.append(oracle is not None)
    # per switch: add /PFC_WD refused, replaces allowed, unlisted HWSKU refused, removing GLOBAL refused
    assert answers == [True, False, True, True] * 2


# --- buffermgrd (traditional model) and the final check ------------------------------------------------------------
def test_buffermgrd_writes_the_lossless_pg_and_profile_from_pfc_enable():
    state = public_configdb.state("arista-7260cx3-traditional")
    config = state["running"]
    config["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = "40m"
    config["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3"
    written = gcu_model.buffermgrd(config, state["pg_profile_lookup"])
    assert "BUFFER_PG|Ethernet0|3" in written and "BUFFER_PROFILE|pg_lossless_100000_40m_profile" in written
    assert config["BUFFER_PG"]["Ethernet0|3"] == {"profile": "pg_lossless_100000_40m_profile"}
    # the row pg_profile_lookup.ini gives 100000 x 40m (size 1248, xon 1248, xoff 59696, threshold 0, xon_offset 2496)
    assert config["BUFFER_PROFILE"]["pg_lossless_100000_40m_profile"] == {
        "pool": "ingress_lossless_pool", "xon": "1248", "xoff": "59696", "size": "1248", "dynamic_th": "0", "xon_offset": "2496"}
    assert config["BUFFER_PG"]["Ethernet0|0"] == {"profile": "ingress_lossy_profile"}   # the lossy PG is not its
    # the other ports (pfc_enable 3,4, 300m) get 3-4 with their own profile; a second pass writes nothing
    assert config["BUFFER_PG"]["Ethernet4|3-4"] == {"profile": "pg_lossless_100000_300m_profile"}
    assert gcu_model.buffermgrd(config, state["pg_profile_lookup"]) == []
    dynamic = public_configdb.load("mellanox-sn4600c-dynamic")
    assert gcu_model.buffermgrd(dynamic, state["pg_profile_lookup"]) == []   # the dynamic model's buffermgrd is another


def test_the_final_check_leaves_the_backend_tables_out():
    a = public_configdb.load("arista-7260cx3-traditional")
    b = copy.deepcopy(a)
    b["BUFFER_PG"]["Ethernet0|3"] = {"profile": "pg_lossless_100000_300m_profile"}
    b["BUFFER_PROFILE"]["x"] = {"size": "1"}
    assert gcu_model.same(a, b)
    b["QUEUE"]["Ethernet0|3"] = {"scheduler": "scheduler.0"}
    assert not gcu_model.same(a, b)
