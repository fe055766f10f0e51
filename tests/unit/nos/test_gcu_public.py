"""A first apply of the qos and mtu sections on public community SONiC CONFIG_DBs (SONiC's own template output for a
Mellanox SN4600C in the dynamic buffer model and an Arista 7260CX3 in the traditional one,
tests/fixtures/switches/sonic/configdb), through the shared apply flow (apply.Applier + gcu.GcuTxn) on the lab's model
of such a switch (tests/lab/switches/configdb_sim.py with gcu_model.py: field-operation validators, port admin-down
moves, buffermgrd, the final check without backend tables):

* check mode names the ports GCU will flap, and what is left to the switch (buffer model, PFC watchdog);
* the patch removes nothing (PG 0's lossy buffer, a template's lossless range, the operator's tables stay);
* the apply converges (verified by the read-back), a second run changes nothing, in both buffer models;
* the ports the model took admin down are exactly the ones named before the apply.
"""
import copy
import json

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.audit import roce_health as H
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import ports_of

# the lab shell and its fake sessions, the sections and the `plan` fixture (community_sonic on every switch)
from . import test_gcu_transaction
from .test_gcu_transaction import SECTIONS, Switch, applier, configdb_sim

plan = test_gcu_transaction.plan

import public_configdb  # noqa: E402 - tests/lab/switches, on the path test_gcu_transaction puts it


class PublicSwitch(Switch):
    def __init__(self, name, pfcwd=False):
        Switch.__init__(self, {})
        self.state = public_configdb.state(name)
        if pfcwd:   # the operator ran `pfcwd interval 200`: PFC_WD|GLOBAL (pfcwd/main.py interval())
            self.state["running"]["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": "200"}}
            self.state["startup"] = copy.deepcopy(self.state["running"])
        self.shell = configdb_sim.SonicShell(self.state, validate=lambda c: ("subset", configdb_sim.subset_errors(c)))


def _intent(plan, sw):
    return public_configdb.remap(plan["leafs"]["leaf0"], sw.state["running"], ports_of)


@pytest.mark.parametrize("name", sorted(public_configdb.SWITCHES))
@pytest.mark.parametrize("pfcwd", [False, True])
def test_a_first_apply_on_a_public_config_removes_nothing_names_the_flaps_and_converges(plan, tmp_path, name, pfcwd):
    sw = PublicSwitch(name, pfcwd)
    intent = _intent(plan, sw)
    before_cfg = copy.deepcopy(sw.state["running"])
    run = applier(sw, plan, tmp_path, intent=intent)
    before, after, cmds = run.plan()
    ports = [run.driver.port(p) for p in ports_of(intent)]
    # check mode: the flapping ports named (every planned port: its PORT_QOS_MAP and QUEUE rows change)
    assert [d["kind"] for d in run.disruptions] == ["port flap"]
    assert sorted(run.disruptions[0]["ports"]) == sorted(ports)
    model = public_configdb.SWITCHES[name]["metadata"]["buffer_model"]
    notes = " ".join(run.fit_notes)
    assert ("traditional buffer model" in notes) == (model == "traditional")
    assert ("no PFC_WD table" in notes) == (not pfcwd)
    run.apply(before, after, cmds)
    ops = [json.loads(op) for op in run.attempted if op.startswith("{")]
    assert ops and not [op for op in ops if op["op"] == "remove"], "a first apply removes nothing"
    got = sw.state["running"]
    # nothing of the switch's own buffers is gone: PG 0 lossy, the template's lossless ranges, the queues' buffers
    for key, row in before_cfg["BUFFER_PG"].items():
        assert got["BUFFER_PG"][key] == row, key
    assert got["BUFFER_QUEUE"] == before_cfg["BUFFER_QUEUE"]
    if model == "traditional":
        # buffermgrd made the plan's lossless PG 3 with its own profile; our read-back agreed (the apply verified)
        for port in ports:
            assert got["BUFFER_PG"]["%s|3" % port]["profile"].startswith("pg_lossless_100000_")
    else:
        assert not [k for k in got["BUFFER_PG"] if k.endswith("|3")], "no PG 3 beside the template's 3-4"
    assert ("PFC_WD" in got) == pfcwd
    # GCU took exactly the named ports down, and brought every one back up
    assert sorted(set(sw.state["flaps"])) == sorted(ports)
    assert all(got["PORT"][p]["admin_status"] == "up" for p in ports)
    # a second run changes nothing: the audit reads it in sync
    again = applier(sw, plan, tmp_path, intent=intent)
    b, a, c = again.plan()
    assert c == [] and b == a and again.disruptions == []


def _replaced(drv, img, cmds):
    """Every (table, key, field, value) of the switch's that the device patch replaces or removes (not an AIF- value)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import configdb
    config, owned, foreign = configdb.device_view(img.managed, img.outside)
    ops = configdb.device_patch([json.loads(c) for c in cmds], config, owned, foreign, managed=drv.config_tables)
    out = []
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        rows = [(parts[1], parts[2], op.get("value"))] if len(parts) == 3 else \
            [(parts[1], f, v) for f, v in (op.get("value") or {}).items()] if len(parts) == 2 else []
        for key, field, value in rows:
            old = ((config.get(parts[0]) or {}).get(key) or {}).get(field)
            if old is not None and old != value and not str(old).startswith("AIF-"):
                out.append((parts[0], key, field, old))
    return out


@pytest.mark.parametrize("name", sorted(public_configdb.SWITCHES))
def test_the_takeover_guard_names_every_field_of_the_switchs_the_first_apply_replaces(plan, tmp_path, name):
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover
    sw = PublicSwitch(name, pfcwd=True)
    intent = _intent(plan, sw)
    run = applier(sw, plan, tmp_path, intent=intent)
    before, after, cmds = run.plan()
    items = takeover.find(run.driver, run.before_image, after, intent, SECTIONS)
    named = set(t["item"] for t in items)
    replaced = _replaced(run.driver, run.before_image, cmds)
    # PORT mtu of unrouted ports (the mtu section's own job) is the only replacement the guard leaves unnamed
    unnamed = [r for r in replaced if "%s|%s %s" % r[:3] not in named and not (r[0] == "PORT" and r[2] == "mtu")]
    assert replaced and unnamed == []
    kinds = sorted(set(t["kind"] for t in items))
    assert kinds == ["classification", "policy", "qos"], kinds
    port = run.driver.port(ports_of(intent)[0])
    messages = " ".join(takeover.messages(items))
    assert "pfc_enable 3,4 on %s would become 3: priority 4 in use there would lose PFC" % port in messages
    assert "queue %s|3 scheduler scheduler.1 (the switch's) would be replaced by AIF-ETS-ROCE" % port in messages
    assert "cable length 300m of %s would become 40m" % port in messages
    print("%s: %d fields replaced, %d takeover items, kinds %s" % (name, len(replaced), len(items), kinds))


def test_a_routed_uplinks_mtu_a_second_vlan_and_unnumbered_bgp_are_named(plan):
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import configdb, takeover
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
    drv = get_driver("community_sonic")
    config = public_configdb.load("arista-7260cx3-traditional")
    intent = public_configdb.remap(plan["leafs"]["leaf0"], config, ports_of)
    up = drv.port(intent["uplinks"][0]["port"])
    config["INTERFACE"] = {up: {"ipv6_use_link_local_only": "enable"}, "%s|10.0.0.0/31" % up: {}}
    config["BGP_GLOBALS"] = {"default": {"local_asn": "65100"}}
    config["BGP_NEIGHBOR"] = {"default|%s" % up: {"peer_group_name": "PG"}}
    items = takeover.from_running(drv, configdb.show_running(config), intent, plan["qos"], ("qos", "mtu"))
    mtu = [t for t in items if t["kind"] == "mtu"]
    assert [t["item"] for t in mtu] == ["PORT|%s mtu" % up] and "10.0.0.0/31" in mtu[0]["message"]
    items = takeover.from_running(drv, configdb.show_running(config), intent, plan["qos"], ("qos", "mtu", "underlay"))
    messages = " ".join(takeover.messages(items))
    assert "ipv6_use_link_local_only enable on %s (the switch's) would be removed: unnumbered BGP" % up in messages
    assert "FRR management framework (BGP_GLOBALS|default, BGP_NEIGHBOR|default|%s)" % up in messages
    vlan_config = copy.deepcopy(config)
    host = drv.port(intent["downlinks"][0]["port"])
    vlan_config["VLAN"] = {"Vlan10": {"vlanid": "10"}}
    vlan_config["VLAN_MEMBER"] = {"Vlan10|%s" % host: {"tagging_mode": "untagged"}}
    after = configdb.tables_of(drv.render(intent, plan["qos"], ("qos", "mtu", "underlay")))
    if after.get("VLAN_MEMBER"):
        items = takeover.from_running(drv, configdb.show_running(vlan_config), intent, plan["qos"], ("qos", "mtu", "underlay"))
        assert any(t["kind"] == "vlan" and host in t["message"] for t in items)


def test_a_lossless_priority_on_a_lossy_queue_or_another_pg_is_named(plan, tmp_path):
    """SONiC's templates give queues 3-4 the lossless egress profile and Mellanox binds pfc_to_pg_map AZURE {3: 3, 4: 4}:
    the plan's priority 3 fits; a plan with lossless priority 5 would run PFC on a lossy queue (q_lossy_profile) and map
    its PFC frames to no PG: both named in `fitted` before anything is sent."""
    sw = PublicSwitch("mellanox-sn4600c-dynamic", pfcwd=True)
    intent = _intent(plan, sw)
    sw.state["running"]["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] = {"AZURE": {"3": "3", "4": "4"}}
    port = public_configdb.active_ports(sw.state["running"])[0]
    sw.state["running"]["PORT_QOS_MAP"][port]["pfc_to_pg_map"] = "AZURE"
    run = applier(sw, plan, tmp_path, intent=intent)
    run.plan()
    assert not [n for n in run.fit_notes if "BUFFER_QUEUE" in n or "pfc_to_pg_map" in n]
    qos = dict(plan["qos"], lossless_priorities=[5])
    other = applier(sw, dict(plan, qos=qos), tmp_path, intent=intent)
    other.plan()
    notes = " ".join(other.fit_notes)
    assert "BUFFER_QUEUE|%s|5-7 gives lossless queue 5 the egress profile q_lossy_profile" % port in notes
    assert "%s's pfc_to_pg_map AZURE sends PFC priority 5 to PG none" % port in notes


class _Facts(object):
    """A netmiko-like session on the public switch's running CONFIG_DB (what switch_facts reads)."""

    def __init__(self, sw):
        self.sw = sw

    def send_command(self, command, **_kw):
        assert command == "show runningconfiguration all", command
        return json.dumps(self.sw.state["running"])


@pytest.mark.parametrize("name", sorted(public_configdb.SWITCHES))
@pytest.mark.parametrize("pfcwd", [False, True])
def test_roce_health_judges_a_converged_public_switch_by_the_fitted_render(plan, tmp_path, name, pfcwd):
    """After switch_config converged, the audit's RoCE health check (switch_facts -> roce_health) reads the switch
    in sync: it compares with what switch_config wants on that switch (Driver.fit), not the plain render, and names
    what fit left to the switch (the traditional model's lossless PGs, a watchdog the switch has no table for)."""
    from ansible_collections.aifabric.roce.plugins.modules import switch_facts
    from ansible_collections.aifabric.roce.plugins.modules.roce_health import evaluate
    sw = PublicSwitch(name, pfcwd)
    intent = _intent(plan, sw)
    run = applier(sw, plan, tmp_path, intent=intent)
    run.apply(*run.plan())
    facts = switch_facts.collect(run.driver, _Facts(sw), intent, list(SECTIONS), counters=False)
    mine = dict(plan, leafs=dict(plan["leafs"], leaf0=intent))
    section, entries, _snap = evaluate(mine, {"leaf0": facts}, {}, None, 1000)
    assert [f for f in section["consistency"] if f["kind"] == "qos_profile"] == [], section["consistency"]
    assert section["status"] == "ok" and entries == []
    # what fit left to the switch is named, the same notes switch_config gave
    assert section["left_to_switch"]["leaf0"] == run.fit_notes
    line = H.coverage_line(section)
    model = public_configdb.SWITCHES[name]["metadata"]["buffer_model"]
    assert ("traditional buffer model" in line) == (model == "traditional")
    assert ("no PFC_WD table" in line) == (not pfcwd)
    # the plain render would have reported the lines fit leaves to the switch as missing
    plain = run.driver.render(intent, plan["qos"], ("qos",))
    fitted = run.driver.fit_to(plain, facts["fit_view"])[0]
    assert (plain != fitted) == bool(run.fit_notes)
    if model == "traditional":
        assert "BUFFER_PG|" in plain and "BUFFER_PG|" not in fitted


def test_roce_health_on_a_dynamic_switch_whose_pgs_we_write_is_unchanged_and_real_drift_still_found(plan, tmp_path):
    """A dynamic-model switch without a template range (our BUFFER_PG <port>|3 NULL rows) and with its PFC_WD table:
    fit keeps the whole render, so roce_health compares with it as before; a field changed behind our back on it, or
    on a traditional switch, is still a finding (the fit leaves nothing else out)."""
    from ansible_collections.aifabric.roce.plugins.modules import switch_facts
    from ansible_collections.aifabric.roce.plugins.modules.roce_health import evaluate
    for model in ("dynamic", "traditional"):
        sw = Switch(plan["leafs"]["leaf0"])
        for db in ("running", "startup"):
            sw.state[db]["DEVICE_METADATA"]["localhost"]["buffer_model"] = model
        run = applier(sw, plan, tmp_path)
        run.apply(*run.plan())
        facts = switch_facts.collect(run.driver, _Facts(sw), plan["leafs"]["leaf0"], list(SECTIONS), counters=False)
        plain = run.driver.render(plan["leafs"]["leaf0"], plan["qos"], ("qos",))
        section = evaluate(plan, {"leaf0": facts}, {}, None, 1000)[0]
        assert section["consistency"] == [] and section["status"] == "ok"
        if model == "dynamic":
            assert run.fit_notes == [] and section["left_to_switch"] == {}
            assert run.driver.fit_to(plain, facts["fit_view"]) == (plain, [])
            assert "BUFFER_PG|" in facts["sections"]["qos"]["config"]
        # someone changes the watchdog's restoration time on a planned port: found on either model
        port = sorted(k for k in sw.state["running"]["PFC_WD"] if k != "GLOBAL")[0]
        sw.state["running"]["PFC_WD"][port]["restoration_time"] = "999"
        facts = switch_facts.collect(run.driver, _Facts(sw), plan["leafs"]["leaf0"], list(SECTIONS), counters=False)
        found = evaluate(plan, {"leaf0": facts}, {}, None, 1000)[0]["consistency"]
        assert [f["kind"] for f in found] == ["qos_profile"] and "restoration_time 999" in found[0]["actual"], (model, found)
