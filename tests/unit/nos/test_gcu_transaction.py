"""community_sonic on the shared apply flow (apply.Applier + gcu.GcuTxn), on a fake login shell that runs the lab's
model of a community SONiC switch (tests/lab/switches/configdb_sim.py: GCU's apply-patch with its empty-table and
YANG refusals, checkpoints, rollback, save, in sonic-utilities' formats). Each case asserts the whole switch state
(running CONFIG_DB, saved config, checkpoints, files), not only the managed view."""
import copy
import json
import os
import re
import sys
import threading

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import configdb, gcu, sonic_db
from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier, ApplyError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.gcu import GcuTxn
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

from .helpers import ROOT, plan_on_platform

sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
import configdb_sim  # noqa: E402

SECTIONS = ("qos", "mtu")


@pytest.fixture(scope="module")
def plan():
    return plan_on_platform("lab", "community_sonic")


class Switch(object):
    """One fake switch: the lab's shell model behind netmiko-like sessions, with a few faults."""

    def __init__(self, intent, reject=False, drop_after_ops=None, hook=None):
        self.state = {"running": configdb_sim.seed("csonic0", intent)}
        self.state["startup"] = copy.deepcopy(self.state["running"])
        # the subset of SONiC's YANG checks: the same refusals without yanglint's 0.25 s per apply
        self.shell = configdb_sim.SonicShell(self.state, validate=lambda c: ("subset", configdb_sim.subset_errors(c)))
        self.reject, self.drop_after_ops, self.hook = reject, drop_after_ops, hook
        self.on_change = None   # called with the change's number where GCU sleeps after each (another writer's window)
        self.sent = []
        self.mutex = threading.Lock()

    def session(self):
        return Session(self)


class Dropped(EOFError):
    pass


class Session(object):
    def __init__(self, switch):
        self.switch = switch

    def send_command(self, command, **_kw):
        sw = self.switch
        sw.sent.append(command)
        if sw.hook:
            sw.hook(command)

        def on_op(i):
            if sw.on_change is not None:
                sw.on_change(i)
            if sw.drop_after_ops and i >= sw.drop_after_ops:
                sw.drop_after_ops = None
                raise configdb_sim.Stop()
        with sw.mutex:
            try:
                out = sw.shell.line(command, on_op, reject=sw.reject and "apply-patch" in command)
            except configdb_sim.Stop:
                raise Dropped("SSH session closed by the device")
        assert out is not None, "unexpected command %r" % command
        return out

    def disconnect(self):
        pass


def applier(switch, plan, tmp_path, sections=SECTIONS, intent=None, **kw):
    drv = get_driver("community_sonic")
    return Applier(drv, switch.session, intent or plan["leafs"]["leaf0"], plan["qos"], sections, lock_key="127.0.0.1_23999",
                   lock_dir=str(tmp_path), lock_timeout=5, read_timeout=5, reconnect_timeout=1, **kw)


def configs(switch):
    return json.dumps([switch.state["running"], switch.state["startup"]], sort_keys=True)


def test_a_change_is_checkpointed_patched_verified_saved_and_idempotent(plan, tmp_path):
    sw = Switch(plan["leafs"]["leaf0"])
    run = applier(sw, plan, tmp_path)
    before, after, cmds = run.plan()
    assert cmds and all(json.loads(c)["op"] in ("add", "replace", "remove") for c in cmds)
    run.apply(before, after, cmds)
    config = [c[:-len(configdb_sim.SUFFIX)] for c in sw.sent if c.endswith(configdb_sim.SUFFIX) and " config " in c]
    assert [c.split()[3] for c in config if "list-checkpoints" not in c] == [
        "checkpoint", "apply-patch", "save", "delete-checkpoint"], config
    # one patch: the tables the switch lacked are added whole, its own tables (AZURE map, scheduler.0, QUEUE) keyed
    patch_ops = [json.loads(op) for op in run.attempted if op.startswith("{")]
    assert {"op": "add", "path": "/WRED_PROFILE", "value": {"AIF-ECN": run.driver.tables(
        plan["leafs"]["leaf0"], plan["qos"], SECTIONS)["WRED_PROFILE"]["AIF-ECN"]}} in patch_ops
    assert any(op["path"].startswith("/QUEUE/") for op in patch_ops) and not any(op["path"] == "/QUEUE" for op in patch_ops)
    st = sw.state
    assert st["running"] == st["startup"] and st["checkpoints"] == {} and st["files"] == {}
    assert st["running"]["DSCP_TO_TC_MAP"]["AZURE"] and st["running"]["QUEUE"]["Ethernet0|1"] == {"scheduler": "scheduler.0"}
    again = applier(sw, plan, tmp_path)
    b, a, c = again.plan()
    rendered = run.driver.render(plan["leafs"]["leaf0"], plan["qos"], SECTIONS)
    # the lab switch runs the traditional buffer model (a Broadcom image): buffermgrd owns the lossless PGs
    assert "BUFFER_PG|" in rendered and "BUFFER_PG|" not in a and again.fit_notes and "traditional" in again.fit_notes[0]
    assert c == [] and b == a == run.driver.fit(rendered, again.before_image)[0]
    assert sw.shell.checked == ["subset"]


def test_check_mode_reads_only(plan, tmp_path):
    sw = Switch(plan["leafs"]["leaf0"])
    seen = configs(sw)
    run = applier(sw, plan, tmp_path)
    before, after, cmds = run.plan()
    assert cmds and configs(sw) == seen and sw.sent == ["show runningconfiguration all"]


def test_a_refused_step_mid_patch_is_rolled_back_to_the_checkpoint(plan, tmp_path):
    sw = Switch(plan["leafs"]["leaf0"], reject=True)
    seen = configs(sw)
    run = applier(sw, plan, tmp_path)
    with pytest.raises(ApplyError) as err:
        run.apply(*run.plan())
    assert err.value.rolled_back is True and "rejected" in str(err.value) and "rolled back to checkpoint" in str(err.value)
    assert "Error: change" in err.value.device_error
    assert configs(sw) == seen and sw.state["checkpoints"] == {} and sw.state["files"] == {}
    assert any(c.startswith("sudo -n config rollback aif-") for c in sw.sent)


def test_a_session_lost_mid_patch_is_rolled_back_on_a_new_one(plan, tmp_path):
    sw = Switch(plan["leafs"]["leaf0"], drop_after_ops=3)
    seen = configs(sw)
    run = applier(sw, plan, tmp_path)
    with pytest.raises(ApplyError) as err:
        run.apply(*run.plan())
    assert err.value.rolled_back is True, str(err.value)
    assert configs(sw) == seen and sw.state["checkpoints"] == {}


def test_a_yang_refusal_changes_nothing(plan, tmp_path):
    """GCU validates the patched config before it changes anything: a PFC priority out of the pattern is refused
    with SONiC's text, the switch never changed, and the run says so."""
    qos = dict(plan["qos"], lossless_priorities=[3, 9])
    sw = Switch(plan["leafs"]["leaf0"])
    seen = configs(sw)
    run = Applier(get_driver("community_sonic"), sw.session, plan["leafs"]["leaf0"], qos, SECTIONS,
                  lock_key="127.0.0.1_23998", lock_dir=str(tmp_path), lock_timeout=5, read_timeout=5, reconnect_timeout=1)
    with pytest.raises(ApplyError) as err:
        run.apply(*run.plan())
    assert "Given patch will produce invalid config" in err.value.device_error and "pfc_enable" in err.value.device_error
    assert err.value.rolled_back is True and configs(sw) == seen and sw.state["checkpoints"] == {}


def test_ppd_redirect_is_refused_before_anything_is_sent(plan, tmp_path):
    sw = Switch(plan["leafs"]["leaf0"])
    seen = configs(sw)
    run = applier(sw, plan, tmp_path, sections=("qos", "mtu", "pbr"))
    with pytest.raises(ApplyError) as err:
        run.apply(*run.plan())
    assert err.value.rolled_back is None and "sonic-acl.yang" in str(err.value) and "pbr" in str(err.value)
    assert "community_sonic_pbr: gcu_ignore_acl_rule" in str(err.value)
    assert configs(sw) == seen and not any(" config " in c for c in sw.sent)


def with_redirect_rules(sw, plan):
    """The plan's PBR tables in the switch's CONFIG_DB, as an engineer loads them (acl-loader / sonic-db-cli write
    CONFIG_DB without GCU's YANG check): SONiC's models refuse their `REDIRECT:<ip>`."""
    tables = get_driver("community_sonic").tables(plan["leafs"]["leaf0"], plan["qos"], ("pbr",))
    for table, rows in tables.items():
        sw.state["running"].setdefault(table, {}).update(copy.deepcopy(rows))
    sw.state["startup"] = copy.deepcopy(sw.state["running"])
    assert configdb_sim.subset_errors(sw.state["running"]), "the loaded rules are outside SONiC's YANG"
    return tables["ACL_RULE"]


def patches_sent(sw):
    return [c[:-len(configdb_sim.SUFFIX)] for c in sw.sent if " apply-patch " in c or " rollback " in c]


def test_a_switch_holding_redirect_rules_is_still_managed_and_the_rules_are_kept(plan, tmp_path):
    """GCU validates the whole target CONFIG_DB, so a switch holding redirect rules refuses every plain patch: the
    transaction leaves ACL_RULE out of GCU's YANG check (`-i /ACL_RULE`) while the switch holds such a rule and the
    patch does not touch that table, and the rules stay as they were."""
    sw = Switch(plan["leafs"]["leaf0"])
    rules = with_redirect_rules(sw, plan)
    run = applier(sw, plan, tmp_path)
    run.apply(*run.plan())
    assert [c.split()[3:6] for c in patches_sent(sw)] == [["apply-patch", "-i", "/ACL_RULE"]], sw.sent
    assert sw.state["running"]["ACL_RULE"] == rules and sw.state["running"]["QUEUE"]
    assert sw.state["running"] == sw.state["startup"] and sw.state["checkpoints"] == {}
    # without the rules the check stays whole: no -i
    clean = Switch(plan["leafs"]["leaf0"])
    run = applier(clean, plan, tmp_path)
    run.apply(*run.plan())
    assert [c.split()[3] for c in patches_sent(clean)] == ["apply-patch"] and "-i" not in patches_sent(clean)[0]


def test_a_refused_patch_on_a_switch_holding_redirect_rules_is_rolled_back_with_them(plan, tmp_path):
    sw = Switch(plan["leafs"]["leaf0"], reject=True)
    with_redirect_rules(sw, plan)
    seen = configs(sw)
    run = applier(sw, plan, tmp_path)
    with pytest.raises(ApplyError) as err:
        run.apply(*run.plan())
    assert err.value.rolled_back is True, str(err.value)
    assert configs(sw) == seen and sw.state["checkpoints"] == {}
    assert [c.split()[3:5] for c in patches_sent(sw)] == [["apply-patch", "-i"], ["rollback", "-i"]], sw.sent


def opted_in(plan):
    return dict(plan["leafs"]["leaf0"], community_sonic_pbr="gcu_ignore_acl_rule")


def test_the_opt_in_applies_ppd_with_acl_rule_out_of_the_yang_check_and_is_idempotent(plan, tmp_path):
    """fabric.community_sonic_pbr: gcu_ignore_acl_rule: the pbr section goes in the one patch with `-i /ACL_RULE`,
    the switch holds the planned redirect rules, and a second run sends nothing."""
    intent = opted_in(plan)
    sw = Switch(intent)
    drv = get_driver("community_sonic")
    sections = ("qos", "mtu", "pbr")
    run = applier(sw, plan, tmp_path, sections, intent)
    run.apply(*run.plan())
    assert [c.split()[3:6] for c in patches_sent(sw)] == [["apply-patch", "-i", "/ACL_RULE"]], sw.sent
    want = drv.tables(intent, plan["qos"], ("pbr",))
    assert sw.state["running"]["ACL_RULE"] == want["ACL_RULE"] and sw.state["running"]["ACL_TABLE"] == want["ACL_TABLE"]
    assert any(v["PACKET_ACTION"].startswith("REDIRECT:") for v in want["ACL_RULE"].values())
    again = applier(sw, plan, tmp_path, sections, intent)
    assert again.plan()[2] == []
    # back to the default with pbr left out: an MTU change still goes through (the switch holds the rules: -i) and
    # the rules the opt-in run put there are kept
    sent = len(patches_sent(sw))
    mtu = applier(sw, plan, tmp_path, ("qos", "mtu"), dict(plan["leafs"]["leaf0"], mtu=9100))
    before, after, cmds = mtu.plan()
    assert cmds and all("/PORT/" in c for c in cmds), cmds
    mtu.apply(before, after, cmds)
    assert [c.split()[3:6] for c in patches_sent(sw)[sent:]] == [["apply-patch", "-i", "/ACL_RULE"]]
    assert sw.state["running"]["ACL_RULE"] == want["ACL_RULE"]


def test_the_opt_in_rolls_a_refused_ppd_patch_back(plan, tmp_path):
    intent = opted_in(plan)
    sw = Switch(intent, reject=True)
    seen = configs(sw)
    run = applier(sw, plan, tmp_path, ("qos", "mtu", "pbr"), intent)
    with pytest.raises(ApplyError) as err:
        run.apply(*run.plan())
    assert err.value.rolled_back is True, str(err.value)
    assert configs(sw) == seen and sw.state["checkpoints"] == {}
    assert [c.split()[3] for c in patches_sent(sw)] == ["apply-patch", "rollback"], sw.sent


def test_a_foreign_change_during_the_apply_is_kept_and_only_ours_is_taken_back(plan, tmp_path):
    """An engineer sets the hostname while GCU applies our patch: verification sees it, the checkpoint rollback
    (which would undo it) is not used; this run's own fields are taken back by a patch, proven, and the message
    names the engineer's change."""
    sw = Switch(plan["leafs"]["leaf0"])

    def engineer(command):
        if "apply-patch" in command and sw.hook:
            sw.hook = None
            sw.shell.command("sudo -n config hostname operator-was-here")
    sw.hook = engineer
    run = applier(sw, plan, tmp_path)
    before, after, cmds = run.plan()
    run_read = copy.deepcopy(sw.state["running"])
    # the verification read must fail: let the engineer's change land before the patch applies
    with pytest.raises(ApplyError) as err:
        run.apply(before, after, cmds)
    assert err.value.rolled_back is False and "operator-was-here" in str(err.value), str(err.value)
    assert "taken back and the foreign change kept" in str(err.value), str(err.value)
    assert not any(c.startswith("sudo -n config rollback") for c in sw.sent)
    expected = copy.deepcopy(run_read)
    expected["DEVICE_METADATA"]["localhost"]["hostname"] = "operator-was-here"
    assert sw.state["running"] == expected and sw.state["checkpoints"] == {}


def test_a_rollback_is_refused_while_the_switch_holds_a_change_not_ours(plan, tmp_path):
    """abort() itself re-reads the switch: with a foreign change there, config rollback is never sent."""
    sw = Switch(plan["leafs"]["leaf0"])
    drv = get_driver("community_sonic")
    run = applier(sw, plan, tmp_path)
    before, after, cmds = run.plan()
    txn = run._transaction()
    txn.prepare(run.before_image, run.before_image.with_managed(after), cmds)
    txn.committed = True
    sw.shell.command("sudo -n config hostname someone-else")
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import StepError
    with pytest.raises(StepError, match="not run"):
        txn.abort(lambda: "", before)
    assert not any("rollback" in c for c in sw.sent) and drv.name == "community_sonic"


def test_a_dead_runs_checkpoint_and_patch_file_are_recovered_not_rolled_back(plan, tmp_path):
    sw = Switch(plan["leafs"]["leaf0"])
    dead = "aif-200101000000-deadhost-0badc0-4242-abc"
    sw.shell.command("sudo -n config checkpoint %s" % dead)
    sw.state["files"]["/tmp/aifabric-lock.%s" % dead] = "controller=deadhost\n"
    sw.state["files"]["/tmp/%s.json-patch" % dead] = "[]"
    run = applier(sw, plan, tmp_path, lock_ttl=60)
    run.apply(*run.plan())
    assert any(dead in n and "deleted its checkpoint" in n for n in run.notes), run.notes
    assert sw.state["checkpoints"] == {} and sw.state["files"] == {}
    assert not any("rollback" in c for c in sw.sent)


def test_device_patch_adds_missing_tables_whole_and_never_empties_one():
    """The patch GCU gets: a missing table added whole; a table left with nothing is removed whole only when it held
    nothing but ours; a key with fields not ours is changed field by field; a PORT key is never removed."""
    config = {"PORT": {"Ethernet0": {"lanes": "0", "mtu": "9216"}},
              "QUEUE": {"Ethernet0|1": {"scheduler": "scheduler.0"}, "Ethernet0|3": {"scheduler": "AIF-S"}},
              "SCHEDULER": {"AIF-S": {"type": "STRICT"}}}
    owned = {"PORT": {"Ethernet0": {"mtu": "9216"}}, "QUEUE": {"Ethernet0|3": {"scheduler": "AIF-S"}},
             "SCHEDULER": {"AIF-S": {"type": "STRICT"}}}
    foreign = {"PORT": {"Ethernet0": {"lanes"}}, "QUEUE": {"Ethernet0|1": {"scheduler"}}}
    ops = [{"op": "remove", "path": "/PORT/Ethernet0"}, {"op": "remove", "path": "/QUEUE/Ethernet0|3"},
           {"op": "remove", "path": "/SCHEDULER/AIF-S"}, {"op": "add", "path": "/WRED_PROFILE/AIF-ECN", "value": {"ecn": "ecn_all"}}]
    assert configdb.device_patch(ops, config, owned, foreign, managed=sonic_db.SonicDbDriver.config_tables) == [
        {"op": "remove", "path": "/PORT/Ethernet0/mtu"},
        {"op": "remove", "path": "/QUEUE/Ethernet0|3"},
        {"op": "remove", "path": "/SCHEDULER"},
        {"op": "add", "path": "/WRED_PROFILE", "value": {"AIF-ECN": {"ecn": "ecn_all"}}}]
    # a key the switch holds with its own fields: ours go in field by field
    ops = [{"op": "add", "path": "/QUEUE/Ethernet0|1", "value": {"wred_profile": "AIF-ECN"}}]
    assert configdb.device_patch(ops, config, {}, foreign, managed=sonic_db.SonicDbDriver.config_tables) == [
        {"op": "add", "path": "/QUEUE/Ethernet0|1/wred_profile", "value": "AIF-ECN"}]
    # jsonpatch's move (a row of ours under another key) becomes the remove and the add it stands for
    have, want = {"QUEUE": {"Ethernet0|3": {"scheduler": "AIF-S"}}}, {"QUEUE": {"Ethernet4|3": {"scheduler": "AIF-S"}}}
    moved = configdb.patch(have, want)
    assert [op["op"] for op in moved] == ["move"]
    assert configdb.device_patch(moved, config, have, foreign, managed=sonic_db.SonicDbDriver.config_tables) == [
        {"op": "remove", "path": "/QUEUE/Ethernet0|3"}, {"op": "add", "path": "/QUEUE/Ethernet4|3", "value": {"scheduler": "AIF-S"}}]


def test_outside_shows_a_bare_key_of_the_switch_and_ignores_bgpraw(plan):
    drv = get_driver("community_sonic")
    leaf = plan["leafs"]["leaf0"]
    shown = json.dumps({"INTERFACE": {"Ethernet200": {}, "Ethernet200|192.0.2.1/31": {}}, "bgpraw": "router bgp 1\n"})
    assert drv.outside(shown, leaf, ("qos", "mtu")) == ["INTERFACE > Ethernet200", "INTERFACE > Ethernet200|192.0.2.1/31"]


def test_the_transaction_class_is_gcu():
    drv = get_driver("community_sonic")
    assert drv.transaction is GcuTxn and GcuTxn.native_undo


def test_drain_is_sonic_traffic_shift_away_by_a_patch_and_only_that_field_moves(plan, tmp_path):
    """SONiC's TSA state (CONFIG_DB BGP_DEVICE_GLOBAL|STATE tsa_enabled) is the drain: set true by one patch before the
    change, false after it, each proven by the read-back; a switch without the field is not drained, saying why."""
    sections = ("qos", "mtu", "underlay")
    sw = Switch(plan["leafs"]["leaf0"])
    run = applier(sw, plan, tmp_path, sections=sections)
    run.apply(*run.plan())
    leaf = dict(plan["leafs"]["leaf0"], mtu=9100)
    run = Applier(get_driver("community_sonic"), sw.session, leaf, plan["qos"], sections, lock_key="127.0.0.1_23997",
                  lock_dir=str(tmp_path), lock_timeout=5, read_timeout=5, reconnect_timeout=1, drain="always", drain_wait=0)
    run.apply(*run.plan())
    ops = [json.loads(c) for c in run.attempted if c.startswith("{")]
    tsa = [i for i, op in enumerate(ops) if op["path"] == "/BGP_DEVICE_GLOBAL/STATE/tsa_enabled"]
    mtu = [i for i, op in enumerate(ops) if op["path"].endswith("/mtu")]
    assert [ops[i]["value"] for i in tsa] == ["true", "false"] and tsa[0] < min(mtu) and tsa[1] > max(mtu), ops
    assert run.drained.startswith("drained (drain: always)") and "proven" in run.drained
    assert sw.state["running"]["BGP_DEVICE_GLOBAL"]["STATE"]["tsa_enabled"] == "false"
    assert sw.state["running"] == sw.state["startup"] and sw.state["checkpoints"] == {} and sw.state["files"] == {}
    # a SONiC that keeps no TSA state in CONFIG_DB: not drained, and the run says why
    del sw.state["running"]["BGP_DEVICE_GLOBAL"]
    leaf = dict(plan["leafs"]["leaf0"], mtu=9000)
    run = Applier(get_driver("community_sonic"), sw.session, leaf, plan["qos"], sections, lock_key="127.0.0.1_23997",
                  lock_dir=str(tmp_path), lock_timeout=5, read_timeout=5, reconnect_timeout=1, drain="always", drain_wait=0)
    run.apply(*run.plan())
    assert run.drained.startswith("not drained") and "TSA" in run.drained, run.drained
    assert "BGP_DEVICE_GLOBAL" not in sw.state["running"]


def test_what_gcus_field_validators_refuse_is_refused_before_anything_is_sent(plan, tmp_path):
    """Removing PFC_WD|GLOBAL POLL_INTERVAL (the plan turns the watchdog off) is illegal to GCU on every switch
    (gu_common.py validate_field_operation): refused with the reason, nothing sent, the switch as it was."""
    sw = Switch(plan["leafs"]["leaf0"])
    run = applier(sw, plan, tmp_path)
    run.apply(*run.plan())
    # the operator's own watchdog field on a port (pfcwd start writes pfc_stat_history): the PFC_WD table stays, so
    # the patch removes the GLOBAL row rather than the whole table
    port = sorted(k for k in sw.state["running"]["PFC_WD"] if k != "GLOBAL")[0]
    sw.state["running"]["PFC_WD"][port]["pfc_stat_history"] = "disable"
    seen = configs(sw)
    qos = dict(plan["qos"], pfc_watchdog=False)
    drv = get_driver("community_sonic")
    off = Applier(drv, sw.session, plan["leafs"]["leaf0"], qos, SECTIONS, lock_key="127.0.0.1_23999",
                  lock_dir=str(tmp_path), lock_timeout=5, read_timeout=5, reconnect_timeout=1)
    before, after, cmds = off.plan()
    assert any("/PFC_WD/GLOBAL" in c for c in cmds)
    sent = len(sw.sent)
    with pytest.raises(ApplyError) as err:
        off.apply(before, after, cmds)
    assert err.value.rolled_back is None and "remove is illegal" in str(err.value) and "/PFC_WD/GLOBAL" in str(err.value)
    assert not [c for c in sw.sent[sent:] if "apply-patch" in c or "checkpoint " in c]
    assert configs(sw) == seen
    # the same patch sent anyway: the lab's GCU (upstream's validator when ../shared is here) refuses it too
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import gcu
    config = copy.deepcopy(sw.state["running"])
    ops = [{"op": "remove", "path": "/PFC_WD/GLOBAL"}]
    assert gcu.field_refusal(config, ops) and configdb_sim.gcu_model.field_refusal(config, {**config, "PFC_WD": {
        k: v for k, v in config["PFC_WD"].items() if k != "GLOBAL"}})


def _edit(config, path, value):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
    node = config
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value


def _engineer_edits_what_the_patch_replaces(sw):
    """Right before `config apply-patch` runs, an engineer changes a value the patch sets over an existing one (a
    port's MTU); returns [path, value] once done."""
    done = []

    def engineer(command):
        if "apply-patch" in command and not done:
            ops = json.loads(sw.state["files"][re.search(r"(/tmp/\S+\.json-patch)", command).group(1)])
            path = [op["path"] for op in ops if op["op"] in ("add", "replace") and isinstance(op.get("value"), str)][0]
            _edit(sw.state["running"], path, "7")
            done.extend([path, "7"])
    sw.hook = engineer
    return done


def test_an_edit_between_the_read_and_apply_patch_fails_the_patchs_test_ops_and_is_kept(plan, tmp_path):
    """issue 37 item 1: the patch carries an RFC 6902 `test` of every value it replaces, so GCU (which simulates the
    whole patch on the CONFIG_DB it reads as apply-patch starts) refuses it when someone changed one since our read:
    nothing of ours is applied, the engineer's value stays and is named - never SUCCESS over it."""
    sw = Switch(plan["leafs"]["leaf0"])
    run = applier(sw, plan, tmp_path)
    before, after, cmds = run.plan()
    edit = _engineer_edits_what_the_patch_replaces(sw)
    with pytest.raises(ApplyError) as err:
        run.apply(before, after, cmds)
    path, value = edit
    node = sw.state["running"]
    for part in path.split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    assert node == value, "the engineer's value was overwritten"
    assert err.value.rolled_back is not True and path.split("/")[2] in str(err.value), str(err.value)


def test_mutation_without_test_ops_the_edit_is_overwritten(plan, tmp_path, monkeypatch):
    monkeypatch.setattr(gcu, "guarded", lambda ops, config: list(ops))
    sw = Switch(plan["leafs"]["leaf0"])
    run = applier(sw, plan, tmp_path)
    before, after, cmds = run.plan()
    edit = _engineer_edits_what_the_patch_replaces(sw)
    try:
        run.apply(before, after, cmds)
        claim = "success"
    except ApplyError as exc:
        claim = exc
    path, value = edit
    node = sw.state["running"]
    for part in path.split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    print("MUTATION no-test-ops: claim=%s kept=%s" % (str(claim)[:200], node == value))
    assert node != value   # GCU writes our value over theirs: the test above can fail
