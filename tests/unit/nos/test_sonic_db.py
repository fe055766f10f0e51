"""community_sonic (CONFIG_DB): render, read-back of `show runningconfiguration all` JSON, what is ours, and the
JSON Patch between the managed views (never a whole table, never a port)."""
import copy
import json

import jsonpatch
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import configdb
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import image
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

from .helpers import plan_on_platform

ALL = ("qos", "mtu", "pbr", "underlay")


@pytest.fixture(scope="module")
def plan():
    return plan_on_platform("lab", "community_sonic")


def switch_own(intent):
    """What a switch holds before we come: its ports with lanes/speed/description, its own default QoS objects
    (qos_config.j2's AZURE map and scheduler.0 on queue 1), a foreign ACL, its hostname."""
    ports = [d["port"] for d in intent.get("downlinks") or []] + [u["port"] for u in intent.get("uplinks") or []]
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": "sw1", "hwsku": "Force10-S6000", "type": "LeafRouter"}},
        "PORT": dict((p, {"lanes": str(i), "speed": "100000", "mtu": "9100", "description": "to " + p})
                     for i, p in enumerate(ports)),
        "DSCP_TO_TC_MAP": {"AZURE": {"0": "1", "8": "0"}},
        "SCHEDULER": {"scheduler.0": {"type": "DWRR", "weight": "14"}},
        "QUEUE": dict(("%s|1" % p, {"scheduler": "scheduler.0"}) for p in ports),
        "ACL_TABLE": {"DATAACL": {"type": "L3", "stage": "ingress", "ports": [ports[0]]}},
        "ACL_RULE": {"DATAACL|RULE_1": {"PRIORITY": "9999", "PACKET_ACTION": "DROP", "SRC_IP": "10.0.0.2/32"}},
    }


def merged(base, tables):
    out = copy.deepcopy(base)
    for table, rows in tables.items():
        for key, fields in rows.items():
            out.setdefault(table, {}).setdefault(key, {}).update(fields)
    return out


def test_render_matches_the_tables_sonic_stores(plan):
    drv = get_driver("community_sonic")
    leaf, qos = plan["leafs"]["leaf0"], plan["qos"]
    t = drv.tables(leaf, qos, ALL)
    # every value is a string, as in CONFIG_DB (lists only where SONiC keeps a list: ACL_TABLE ports)
    for table, rows in t.items():
        for key, fields in rows.items():
            for field, value in fields.items():
                assert isinstance(value, str) or (table, field) in configdb.LIST_FIELDS, (table, key, field, value)
    port = leaf["downlinks"][0]["port"]
    assert t["DSCP_TO_TC_MAP"]["AIF-DSCP-TC"]["26"] == "3" and t["DSCP_TO_TC_MAP"]["AIF-DSCP-TC"]["48"] == "6"
    assert len(t["DSCP_TO_TC_MAP"]["AIF-DSCP-TC"]) == 64
    assert t["PORT_QOS_MAP"][port]["pfc_enable"] == "3" and t["PORT_QOS_MAP"][port]["pfcwd_sw_enable"] == "3"
    assert t["QUEUE"][port + "|3"] == {"scheduler": "AIF-ETS-ROCE", "wred_profile": "AIF-ECN"}
    assert t["SCHEDULER"]["AIF-STRICT"] == {"type": "STRICT"} and t["QUEUE"][port + "|6"] == {"scheduler": "AIF-STRICT"}
    assert t["WRED_PROFILE"]["AIF-ECN"]["ecn"] == "ecn_all"
    assert t["WRED_PROFILE"]["AIF-ECN"]["green_min_threshold"] == str(qos["ecn_min_kbytes"] * 1000)
    assert t["BUFFER_PG"][port + "|3"] == {"profile": "NULL"} and t["CABLE_LENGTH"]["AZURE"][port] == "40m"
    assert t["PFC_WD"][port] == {"action": "drop", "detection_time": "200", "restoration_time": "400"}
    assert t["PORT"][port] == {"mtu": "9216"}
    # underlay: /31s, loopback, SVI, BGP as bgpcfgd reads it
    up = leaf["uplinks"][0]
    assert t["INTERFACE"]["%s|%s/31" % (up["port"], up["address"])] == {}
    assert "Loopback0|%s/32" % leaf["loopback"] in t["LOOPBACK_INTERFACE"]
    assert t["DEVICE_METADATA"] == {"localhost": {"bgp_asn": str(leaf["bgp"]["asn"])}}
    assert t["BGP_NEIGHBOR"][up["peer"]]["local_addr"] == up["address"]
    # PPD: one L3 ACL on the host ports, a redirect per host source under its local-destination FORWARD rules
    b = leaf["bindings"][0]
    rules = dict((k, v) for k, v in t["ACL_RULE"].items() if v["SRC_IP"] == b["source"])
    redirect = [v for v in rules.values() if v["PACKET_ACTION"] == "REDIRECT:%s" % b["next_hop"]]
    forward = [v for v in rules.values() if v["PACKET_ACTION"] == "FORWARD"]
    assert len(redirect) == 1 and forward and all(int(f["PRIORITY"]) > int(redirect[0]["PRIORITY"]) for f in forward)
    assert t["ACL_TABLE"]["AIF-PBR"]["ports"] == [d["port"] for d in leaf["downlinks"]]


def test_show_runningconfiguration_reads_back_only_what_is_ours(plan):
    drv = get_driver("community_sonic")
    leaf, qos = plan["leafs"]["leaf0"], plan["qos"]
    base = switch_own(leaf)
    clean = configdb.show_running(base)
    # a clean switch: of its tables only the plan ports' mtu field is ours
    ports = [d["port"] for d in leaf["downlinks"]] + [u["port"] for u in leaf["uplinks"]]
    assert drv.parse(clean, leaf, ALL) == configdb.text({"PORT": dict((p, {"mtu": "9100"}) for p in ports)})
    configured = configdb.show_running(merged(base, drv.tables(leaf, qos, ALL)))
    assert drv.parse(configured, leaf, ALL) == drv.render(leaf, qos, ALL)
    assert drv.commands(drv.diff(drv.parse(configured, leaf, ALL), drv.render(leaf, qos, ALL))) == []
    # the switch's own objects stay outside: AZURE map, scheduler.0, DATAACL, lanes, hostname
    img = image(drv, configured, leaf, ALL)
    outside = "\n".join(img.outside)
    for item in ("DSCP_TO_TC_MAP > AZURE > 0 1", "SCHEDULER > scheduler.0 > type DWRR",
                 "ACL_RULE > DATAACL|RULE_1 > PACKET_ACTION DROP", "PORT > %s > lanes 0" % leaf["downlinks"][0]["port"],
                 "DEVICE_METADATA > localhost > hostname sw1", "QUEUE > %s|1 > scheduler scheduler.0" % leaf["downlinks"][0]["port"]):
        assert item in outside, item
    assert "AIF-" not in outside


def test_patch_is_key_or_field_level_and_applies(plan):
    """From the switch's own config to the intent: the JSON Patch (jsonpatch) touches keys and fields only, never a
    whole table and never a port; applied to the device's JSON it gives exactly the intent; the reverse takes our
    fields off the ports and leaves the ports."""
    drv = get_driver("community_sonic")
    leaf, qos = plan["leafs"]["leaf0"], plan["qos"]
    base = switch_own(leaf)
    before = drv.parse(configdb.show_running(base), leaf, ALL)
    after = drv.render(leaf, qos, ALL)
    ops = [json.loads(op) for op in drv.commands(drv.diff(before, after))]
    assert ops and all(op["path"].count("/") >= 2 for op in ops)
    # the switch holds these tables already: ops into them need no table add
    device = copy.deepcopy(base)
    for table in set(op["path"].split("/")[1] for op in ops):
        device.setdefault(table, {})
    got = jsonpatch.apply_patch(device, ops)
    assert drv.parse(configdb.show_running(got), leaf, ALL) == after
    back = [json.loads(op) for op in drv.commands(drv.diff(after, before))]
    port = leaf["downlinks"][0]["port"]
    assert {"op": "replace", "path": "/PORT/%s/mtu" % port, "value": "9100"} in back
    assert not [op for op in back if op["op"] == "remove" and op["path"].count("/") == 2 and op["path"].startswith("/PORT/")]
    restored = jsonpatch.apply_patch(got, back)
    assert restored["PORT"] == base["PORT"] and restored["ACL_RULE"]["DATAACL|RULE_1"] == base["ACL_RULE"]["DATAACL|RULE_1"]


def test_keys_with_slashes_are_escaped_in_json_pointers(plan):
    drv = get_driver("community_sonic")
    leaf = plan["leafs"]["leaf0"]
    ops = [json.loads(op) for op in drv.commands(drv.diff("", drv.render(leaf, plan["qos"], ("underlay",))))]
    up = leaf["uplinks"][0]
    assert {"op": "add", "path": "/INTERFACE/%s|%s~131" % (up["port"], up["address"]), "value": {}} in ops


def test_an_error_page_is_never_an_empty_switch(plan):
    drv = get_driver("community_sonic")
    leaf = plan["leafs"]["leaf0"]
    for answer in ("Error: Got unexpected extra argument (all)", "bash: show: command not found", "Permission denied\n"):
        with pytest.raises(ValueError):
            drv.parse(answer, leaf, ALL)


def test_family_hooks_paths_takeover_and_protection(plan):
    """CONFIG_DB is its own driver family: paths `TABLE > key > field value`; a switch with its own BGP ASN, an
    address on a plan uplink and its own DSCP map bound on a plan port is a takeover; a clean or already configured
    switch is not; a patch op removing a PORT key or a whole table is refused."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import StepError, check_safe
    drv = get_driver("community_sonic")
    leaf, qos = plan["leafs"]["leaf0"], plan["qos"]
    assert drv.paths("PORT|Ethernet0 mtu 9216\nINTERFACE|Ethernet8|10.0.0.1/31\n") == [
        "PORT > Ethernet0 > mtu 9216", "INTERFACE > Ethernet8|10.0.0.1/31"]
    assert drv.value("PORT > Ethernet0 > mtu 9216") == ("PORT > Ethernet0 > mtu", "9216")
    base = switch_own(leaf)
    assert takeover.from_running(drv, configdb.show_running(base), leaf, qos, ALL) == []
    mine = configdb.show_running(merged(base, drv.tables(leaf, qos, ALL)))
    assert takeover.from_running(drv, mine, leaf, qos, ALL) == []
    up, port = leaf["uplinks"][0]["port"], leaf["downlinks"][0]["port"]
    theirs = merged(base, {"DEVICE_METADATA": {"localhost": {"bgp_asn": "65001"}},
                           "INTERFACE": {up: {}, "%s|192.0.2.0/31" % up: {}},
                           "PORT_QOS_MAP": {port: {"dscp_to_tc_map": "AZURE"}}})
    items = takeover.from_running(drv, configdb.show_running(theirs), leaf, qos, ALL)
    assert [(t["kind"], t["actual"]) for t in items] == [("bgp", "65001"), ("address", "192.0.2.0/31"), ("policy", "AZURE")]
    for op in ('{"op": "remove", "path": "/PORT/Ethernet0"}', '{"op": "remove", "path": "/QUEUE"}'):
        with pytest.raises(StepError):
            check_safe([op], drv)
    check_safe(['{"op": "remove", "path": "/PORT/Ethernet0/mtu"}'], drv)
