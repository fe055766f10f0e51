"""SONiC's own YANG models are the oracle of the community_sonic driver: every CONFIG_DB it renders (lab and
rail512, every leaf and spine on community_sonic) is converted to the models' shape and validated with
Debian's yanglint against ../shared/oracles/sonic-yang-models. SONiC's own good and bad CONFIG_DB samples
(tests/tests_config) of the tables the driver writes are the controls of that conversion: each bad one must be
refused, each good one accepted. One yanglint session checks everything (~2 s)."""
import copy
import json
import os
import re
import sys

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sonic_db import TABLES

from .helpers import ROOT, plan_on_platform

sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
import configdb_yang as Y  # noqa: E402

# SONiC's sample files for the tables the driver writes
SAMPLES = ("qosmaps.json", "qos.json", "pfc.json", "buffer_pg.json", "cable_length.json", "acl.json", "interface.json",
           "loopback.json", "vlan.json", "bgp.json", "bgp_bbr.json", "port.json", "device_metadata.json")


@pytest.fixture(scope="module")
def oracle():
    why = Y.available()
    if why:
        pytest.skip(why)
    return Y


def with_switch_base(tables):
    """The rendered (managed) tables plus what the switch itself holds and the models require: a PORT row with
    lanes and speed for every port the tables name (the platform's port_config.ini; lanes are made up here)."""
    config = copy.deepcopy(tables)
    ports = set()
    for rows in tables.values():
        for key, fields in rows.items():
            ports.update(p for p in key.split("|") if re.match(r"Ethernet\d+$", p))
            ports.update(p for p in fields.get("ports", []) if isinstance(fields.get("ports"), list))
    ports.update(tables.get("CABLE_LENGTH", {}).get("AZURE", {}))
    for port in ports:
        row = config.setdefault("PORT", {}).setdefault(port, {})
        row.update(lanes=",".join(str(int(port[8:]) * 4 + i) for i in range(4)), speed="400000")
    return config


def redirects(config):
    return [k for k, v in config.get("ACL_RULE", {}).items() if v["PACKET_ACTION"].startswith("REDIRECT:")]


def without_redirects(config):
    out = copy.deepcopy(config)
    for key in redirects(out):
        del out["ACL_RULE"][key]
    return out


@pytest.fixture(scope="module")
def rendered():
    drv = get_driver("community_sonic")
    out = {}
    for inventory in ("lab", "rail512"):
        plan = plan_on_platform(inventory, "community_sonic")
        for kind in ("leafs", "spines"):
            for name, intent in sorted(plan[kind].items()):
                out["%s/%s" % (inventory, name)] = with_switch_base(drv.tables(intent, plan["qos"], drv.sections))
    return out


def test_every_rendered_config_db_passes_sonic_yang(oracle, rendered):
    names = sorted(rendered)
    assert any("lab/leaf" in n for n in names) and any("rail512/spine" in n for n in names)
    # every table the driver declares is rendered somewhere, so the models see all of them
    seen = set(t for config in rendered.values() for t in config)
    assert set(t.name for t in TABLES) <= seen
    results = oracle.validate_many([without_redirects(rendered[n]) for n in names])
    failed = ["%s: %s" % (n, msg) for n, (ok, msg) in zip(names, results) if not ok]
    assert not failed, failed[:3]


def test_asternos_config_db_opt_in_passes_sonic_yang(oracle):
    """AsterNOS under `asternos_config: config_db`: its SONiC-native sections (MTU, PPD, underlay) go through the
    community_sonic renderer with AsterNOS's port names; the same models accept them (lab and rail512, every leaf and
    spine; the PPD redirect left out as above)."""
    drv, names, configs = get_driver("asternos"), [], []
    for inventory in ("lab", "rail512"):
        plan = plan_on_platform(inventory, "asternos", asternos_config="config_db")
        for kind in ("leafs", "spines"):
            for name, intent in sorted(plan[kind].items()):
                names.append("%s/%s" % (inventory, name))
                configs.append(without_redirects(with_switch_base(drv.config_db_tables(intent, plan["qos"]))))
    assert any("lab/leaf" in n for n in names) and any("rail512/spine" in n for n in names)
    assert all(c["PORT"] and "BGP_NEIGHBOR" in c for c in configs)
    failed = ["%s: %s" % (n, msg) for n, (ok, msg) in zip(names, oracle.validate_many(configs)) if not ok]
    assert not failed, failed[:3]


BROKEN = [
    ("PORT_QOS_MAP", "Ethernet0", "pfc_enable", "3,9"),            # pattern [0-7](,[0-7])*
    ("QUEUE", "Ethernet0|3", "scheduler", "NO-SUCH-SCHEDULER"),    # leafref
    ("WRED_PROFILE", "AIF-ECN", "ecn", "ecn_everything"),          # enumeration
    ("PFC_WD", "Ethernet0", "detection_time", "50"),               # range 100..5000
    ("PORT", "Ethernet0", "mtu", "9300"),                          # range 1..9216
]


def test_broken_renders_and_the_redirect_rule_are_refused(oracle, rendered):
    """A rendered config broken one field at a time is refused at that field. The PPD redirect (aclorch's
    ``REDIRECT:<next hop>``) is outside SONiC's own sonic-acl.yang enumeration: the oracle refuses it, which is
    why the platform table marks pbr unverified (when SONiC's models learn it, this test fails)."""
    clean = without_redirects(rendered["lab/leaf0"])
    configs = []
    for table, key, field, value in BROKEN:
        config = copy.deepcopy(clean)
        assert key in config[table]
        config[table][key][field] = value
        configs.append(config)
    assert redirects(rendered["lab/leaf0"])
    configs.append(rendered["lab/leaf0"])
    results = oracle.validate_many(configs)
    for (table, key, field, value), (ok, msg) in zip(BROKEN, results):
        assert not ok and field in msg, (table, key, field, msg)
    ok, msg = results[-1]
    assert not ok and "PACKET_ACTION" in msg and "REDIRECT:" in msg, msg


def test_sonic_own_samples_control_the_conversion(oracle):
    """SONiC's tests_config samples of the driver's tables, read as CONFIG_DB and converted back by the test's
    converter: the bad ones (an error string expected) are refused, the good ones accepted."""
    base = os.path.join(Y.MODELS, "tests")
    todo, skipped = [], 0
    for sample in SAMPLES:
        with open(os.path.join(base, "tests", sample)) as handle:
            cases = json.load(handle)
        with open(os.path.join(base, "tests_config", sample)) as handle:
            configs = json.load(handle)
        for name, meta in sorted(cases.items()):
            if name not in configs:
                continue
            try:
                config = oracle.from_yang_json(configs[name])
            except KeyError:   # a table the driver does not write (no mapping in the converter)
                skipped += 1
                continue
            bad = bool(meta.get("eStr")) or meta.get("eStrKey") not in (None, "Verify")
            todo.append(("%s:%s" % (sample, name), bad, config))
    results = oracle.validate_many([config for _n, _b, config in todo])
    wrong = ["%s (expected %s)" % (n, "refused" if bad else "accepted") for (n, bad, _c), (ok, _m) in zip(todo, results)
             if ok == bad]
    assert not wrong, wrong
    assert sum(1 for _n, bad, _c in todo if bad) >= 60 and sum(1 for _n, bad, _c in todo if not bad) >= 40
