"""How the lab's community SONiC switch (tests/lab/switches/configdb_sim.py, gcu_model.apply_change) writes a patch
into CONFIG_DB, held to SONiC's own GCU (../shared/oracles/sonic-utilities-gcu @691b1bbc):

* upstream's change_applier_test.py data (files/change_applier_test.data.json): each change writes exactly the keys
  that test's ``set_entry`` mock expects (change_applier_test.py:99-125: every key of the change's update/remove and
  no other, each as a whole entry), and the last change leaves the running config the test starts from (l.255-262);
* upstream's own ChangeApplier.apply (change_applier.py:127-179, with set_config writing into a dict) writes the same
  keys and data as the model for every change of a product patch, with an engineer's edits landing between changes;
* the simulator's ``config apply-patch`` with an edit landing after GCU's one read (generic_updater.py:113, 147-150):
  another field of a key it writes later is reverted and the patch still says "Patch applied successfully."; the
  same field of a later key is overwritten the same way; an edit of a key the patch does not write, or of a key it
  wrote already, stays and fails the final comparison (l.152-158) after every change was written.
Upstream's files live in ../shared/oracles; without them these tests skip, saying so."""
import copy
import json
import os
import sys

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import gcu

from .helpers import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
import configdb_sim  # noqa: E402
import gcu_model  # noqa: E402

UPSTREAM = os.path.join(gcu_model.ORACLE, "tests", "generic_config_updater")
needs_oracle = pytest.mark.skipif(not gcu_model.oracle_available(),
                                  reason="../shared/oracles/sonic-utilities-gcu is not here (a user's checkout)")
PATCH = "/tmp/aif-test.json-patch"
FAILED = "after applying patch to config, there are still some parts not updated"


def _as_patch(image, change):
    """One change of change_applier_test.data.json as a JSON patch on ``image``: what its mocked JsonChange.apply does
    (change_applier_test.py:130-154: the update's fields merged into a key, the remove's keys popped)."""
    ops = []
    for table, keys in change["update"].items():
        for key, fields in keys.items():
            if table not in image:
                ops.append({"op": "add", "path": gcu_model._pointer(table), "value": {}})
                image = dict(image, **{table: {}})
            if key in image[table]:
                ops.extend({"op": "add", "path": gcu_model._pointer(table, key, f), "value": v} for f, v in fields.items())
            else:
                ops.append({"op": "add", "path": gcu_model._pointer(table, key), "value": fields})
    for table, keys in change["remove"].items():
        ops.extend({"op": "remove", "path": gcu_model._pointer(table, key)} for key in keys if key in image.get(table, {}))
    return ops


@needs_oracle
def test_each_change_writes_exactly_the_keys_upstreams_change_applier_test_expects():
    with open(os.path.join(UPSTREAM, "files", "change_applier_test.data.json")) as handle:
        data = json.load(handle)
    running = copy.deepcopy(data["running_data"])
    for change in data["json_changes"]:
        image = copy.deepcopy(running)   # the test hands each apply a copy of the running config (l.240-241)
        written = []
        gcu_model.apply_change(running, image, _as_patch(image, change), on_write=lambda t, k: written.append((t, k)))
        expected = [(t, k) for part in ("update", "remove") for t, keys in change[part].items() for k in keys]
        assert sorted(written) == sorted(expected), change["name"]
        for table, keys in change["update"].items():   # whole entries: the key's old fields with the update's
            for key, fields in keys.items():
                assert all(running[table][key][f] == v for f, v in fields.items()), (change["name"], table, key)
        for table, keys in change["remove"].items():
            assert all(key not in running.get(table, {}) for key in keys), change["name"]
    assert running == data["running_data"]   # l.255-262: the changes bring the config back to where it started


def _switch():
    state = {"running": configdb_sim.seed("csonic0", {"downlinks": [{"port": "Ethernet0"}, {"port": "Ethernet4"}]})}
    return state, configdb_sim.SonicShell(state, validate=lambda c: ("subset", configdb_sim.subset_errors(c)))


def _ours(state):
    """This run's patch: both ports' MTU, with the test ops gcu.guarded puts before it (the product's patch file)."""
    ops = [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "4200"},
           {"op": "replace", "path": "/PORT/Ethernet4/mtu", "value": "4200"}]
    return gcu.guarded(ops, state["running"])


def _apply(state, shell, edits):
    """``config apply-patch`` with ``edits[i]`` (a function of the shell) run where GCU sleeps after its i-th change."""
    state["files"][PATCH] = json.dumps(_ours(state))

    def on_op(i):
        if i in edits:
            edits[i](shell)
    return shell.line("sudo -n config apply-patch %s%s" % (PATCH, configdb_sim.SUFFIX), on_op=on_op)


def _description(port, text):
    def edit(shell):   # an engineer's write of one field (sonic-db-cli CONFIG_DB hset: one field, the rest kept)
        shell.running["PORT"][port]["description"] = text
    return edit


def _cli(line):
    return lambda shell: shell.command("sudo " + line)


def test_an_edit_of_another_field_of_a_key_gcu_writes_later_is_reverted_behind_success():
    state, shell = _switch()
    out = _apply(state, shell, {1: _description("Ethernet4", "engineer-was-here")})
    assert "Patch applied successfully." in out and out.endswith("AIF-RC=0"), out
    assert state["running"]["PORT"]["Ethernet4"] == dict(state["running"]["PORT"]["Ethernet4"], mtu="4200",
                                                         description="aifabric Ethernet4")


def test_the_same_field_of_a_later_key_is_overwritten_behind_success():
    state, shell = _switch()
    out = _apply(state, shell, {1: _cli("config interface mtu Ethernet4 1500")})
    assert "Patch applied successfully." in out and state["running"]["PORT"]["Ethernet4"]["mtu"] == "4200", out


@pytest.mark.parametrize("edit", ["config hostname engineer-was-here", "config interface mtu Ethernet0 1500"],
                         ids=["a-key-the-patch-does-not-write", "a-key-the-patch-wrote-already"])
def test_an_edit_gcu_does_not_write_over_stays_and_fails_the_final_check_after_every_change(edit):
    state, shell = _switch()
    out = _apply(state, shell, {1: _cli(edit)})
    assert FAILED in out and out.endswith("AIF-RC=2"), out
    port = state["running"]["PORT"]
    assert port["Ethernet4"]["mtu"] == "4200"   # every change was written before the check failed
    if "hostname" in edit:
        assert state["running"]["DEVICE_METADATA"]["localhost"]["hostname"] == "engineer-was-here"
        assert port["Ethernet0"]["mtu"] == "4200"
    else:
        assert port["Ethernet0"]["mtu"] == "1500"


def test_an_edit_before_gcus_read_fails_the_test_ops_and_nothing_is_written():
    state, shell = _switch()
    state["files"][PATCH] = json.dumps(_ours(state))
    shell.command("sudo config interface mtu Ethernet4 1500")
    seen = copy.deepcopy(state["running"])
    out = shell.line("sudo -n config apply-patch %s%s" % (PATCH, configdb_sim.SUFFIX))
    assert "Failed to apply patch due to:" in out and out.endswith("AIF-RC=2") and state["running"] == seen, out


@needs_oracle
@pytest.mark.parametrize("when", [1, 2])
def test_upstreams_change_applier_writes_what_the_simulator_writes_with_edits_between_changes(when):
    """Upstream's ChangeApplier.apply run change by change on the simulator's sorted changes, the engineer's two edits
    (another field of a key written later, and a key not written) landing after change ``when``: the CONFIG_DB it
    leaves is the simulator's, field for field (the old simulator, jsonpatch on a fresh read, kept the description)."""
    state, shell = _switch()
    before = copy.deepcopy(state["running"])
    edits = [_description("Ethernet4", "engineer-was-here"), _cli("config hostname engineer-was-here")]
    _apply(state, shell, {when: lambda sh: [e(sh) for e in edits]})
    db, image = copy.deepcopy(before), copy.deepcopy(before)
    upstream = configdb_sim.SonicShell({"running": db}, validate=lambda c: ("subset", []))
    i = 0
    for change in gcu_model.sort(before, _ours({"running": before})):
        for op in change:
            i += 1
            image, _written = gcu_model.oracle_apply_change(db, image, [op])
            if i == when:
                for edit in edits:
                    edit(upstream)
    assert db == state["running"]
    expected = "aifabric Ethernet4" if when == 1 else "engineer-was-here"   # written after the edit: reverted
    assert db["PORT"]["Ethernet4"]["description"] == expected
