"""issue 37 on community SONiC: an engineer's edit landing while GCU applies this run's patch (after GCU's one read
of CONFIG_DB), on the lab's model of the switch (configdb_sim.py: GCU as generic_updater.py/change_applier.py run it;
sudo's syslog records as SONiC writes them). Never SUCCESS with their change lost: kept, or named with who and when
from sudo's records (nos/sudolog.py)."""
import json

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError

from .helpers import plan_on_platform
from .test_gcu_transaction import Switch, applier, configdb_sim

SECTIONS = ("qos", "mtu")


@pytest.fixture(scope="module")
def plan():
    return plan_on_platform("lab", "community_sonic")


class EditingSwitch(Switch):
    """The lab switch, with the engineer's shell line (from their own terminal) run where GCU sleeps after its
    ``at``-th change."""

    def __init__(self, intent, at, line, log=True):
        Switch.__init__(self, intent)
        self.at, self.line = at, line
        if not log:   # a switch whose sudo logs nothing (Defaults !syslog)
            self.shell.record = lambda text: None
        self.on_change = self.engineer

    def engineer(self, i):
        if i == self.at and self.line:
            line, self.line = self.line, None
            configdb_sim.SonicShell(self.state, validate=self.shell.validate, tty=7, record=self.shell.record).command(line)


def _mtu_ports(cmds):
    """The ports whose MTU this run's patch replaces, in the patch's order."""
    ops = [json.loads(c) for c in cmds]
    return [op["path"].split("/")[2] for op in ops if op["path"].startswith("/PORT/") and op["path"].endswith("/mtu")]


def _run(plan, tmp_path, line, at=1, log=True, files=None):
    """One apply of the qos and mtu sections on a switch whose ports hold MTU 4200; ``line(ports)`` is the engineer's
    shell line, run after GCU's ``at``-th change (the first: a port taken admin down for its QoS rows)."""
    sw = EditingSwitch(plan["leafs"]["leaf0"], at, None, log=log)
    sw.state["files"].update(files or {})
    for port in sw.state["running"]["PORT"].values():
        port["mtu"] = "4200"
    run = applier(sw, plan, tmp_path, sections=SECTIONS)
    before, after, cmds = run.plan()
    sw.line = line(_mtu_ports(cmds))
    try:
        run.apply(before, after, cmds)
        claim = "success"
    except ApplyError as exc:
        claim = exc
    return sw, run, claim


@pytest.mark.parametrize("pick", [0, -1], ids=["in-flight-first-port", "later-key-last-port"])
def test_an_mtu_gcu_reverts_is_named_with_who_and_when_from_sudos_record(plan, tmp_path, pick):
    """GCU writes the port's whole key from the config it read before the engineer's `config interface mtu`: their
    1500 is reverted and GCU says "Patch applied successfully."; sudo's record names it, so the run is NOT a success."""
    ports = []
    sw, run, claim = _run(plan, tmp_path, lambda mtu_ports: ports.append(mtu_ports[pick]) or
                          "sudo config interface mtu %s 1500" % mtu_ports[pick])
    port = ports[0]
    assert sw.state["running"]["PORT"][port]["mtu"] != "1500"   # GCU reverted it (change_applier.py _upd_data)
    assert claim != "success", "SUCCESS over the engineer's lost MTU"
    assert "overwrote a concurrent edit by admin at " in str(claim) and "(pts/7): PORT > %s > mtu 1500" % port in str(claim)
    assert claim.rolled_back is False, str(claim)


def test_an_edit_of_a_key_the_patch_does_not_write_is_kept_and_fails_gcus_own_check(plan, tmp_path):
    sw, run, claim = _run(plan, tmp_path, lambda _ports: "sudo config hostname engineer-was-here")
    assert sw.state["running"]["DEVICE_METADATA"]["localhost"]["hostname"] == "engineer-was-here"
    assert claim != "success" and claim.rolled_back is not True, str(claim)
    assert "there are still some parts not updated" in str(claim) and "engineer-was-here" in str(claim), str(claim)
    assert not any(c.startswith("sudo -n config rollback") for c in sw.sent)


def test_no_edit_no_record_of_anyone_else_success(plan, tmp_path):
    sw, run, claim = _run(plan, tmp_path, lambda _ports: None)
    assert claim == "success" and not any("concurrent edit" in n for n in run.notes), run.notes


def test_mutation_sudo_logging_off_the_reverted_mtu_is_success_with_the_check_not_run(plan, tmp_path):
    """No sudo record (the switch logs nothing): the engineer's MTU is lost behind SUCCESS, and the run says the check
    did NOT run, so the test above can fail."""
    sw, run, claim = _run(plan, tmp_path, lambda mtu_ports: "sudo config interface mtu %s 1500" % mtu_ports[0], log=False)
    print("MUTATION no sudo record: claim=%s notes=%s" % (str(claim)[:200], run.notes))
    assert claim == "success" and any("NOT checked for a concurrent edit" in n for n in run.notes), run.notes


def test_sudos_record_parses_in_the_format_a_sonic_user_quoted():
    """The line quoted in sonic-net/sonic-buildimage pull request 17874 (SONiC's rsyslog SONiCFileFormat), and the same
    format with CONFIG_DB writes: only those from another terminal between this run's apply-patch and its next command
    (pts/1's `config save`) count; a refused sudo ("command not allowed") ran nothing; `docker ps` writes nothing."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import sudolog
    text = ("Jan 22 17:34:43.000001 st01-sw1g-r01-u32 NOTICE sudo:    bob : TTY=pts/3 ; PWD=/home/bob ; USER=root ; "
            "COMMAND=/usr/local/bin/config interface mtu Ethernet4 1500\n"
            "Jan 22 17:34:43.500001 st01-sw1g-r01-u32 NOTICE sudo:    admin : TTY=pts/1 ; PWD=/home/admin ; USER=root ; "
            "COMMAND=/usr/local/bin/config apply-patch /tmp/aif-run.json-patch\n"
            "Jan 22 17:34:44.534159 st01-sw1g-r01-u32 NOTICE sudo:    admin : TTY=pts/2 ; PWD=/home/admin ; USER=root ; "
            "COMMAND=/usr/bin/docker ps\n"
            "Jan 22 17:34:45.000001 st01-sw1g-r01-u32 NOTICE sudo:    bob : TTY=pts/3 ; PWD=/home/bob ; USER=root ; "
            "COMMAND=/usr/local/bin/config interface mtu Ethernet8 1500\n"
            "Jan 22 17:34:46.000001 st01-sw1g-r01-u32 NOTICE sudo:    eve : command not allowed ; TTY=pts/4 ; "
            "PWD=/home/eve ; USER=root ; COMMAND=/usr/local/bin/config hostname x\n"
            "Jan 22 17:34:47.000001 st01-sw1g-r01-u32 NOTICE sudo:    bob : TTY=pts/3 ; PWD=/home/bob ; USER=root ; "
            "COMMAND=/usr/bin/sonic-db-cli CONFIG_DB hset PORT|Ethernet8 description x\n"
            "Jan 22 17:34:48.000001 st01-sw1g-r01-u32 NOTICE sudo:    admin : TTY=pts/1 ; PWD=/home/admin ; USER=root ; "
            "COMMAND=/usr/local/bin/config save -y\n"
            "Jan 22 17:34:49.000001 st01-sw1g-r01-u32 NOTICE sudo:    bob : TTY=pts/3 ; PWD=/home/bob ; USER=root ; "
            "COMMAND=/usr/local/bin/config interface mtu Ethernet12 1500\n")
    got = sudolog.edits(text, 1769103283, "aif-run", ["PORT > Ethernet0 > mtu 9100"])
    assert [(e.user, e.where, e.path[:40]) for e in got] == [
        ("admin", "this run", "PORT > Ethernet0 > mtu 9100"), ("bob", "pts/3", "PORT > Ethernet8 > mtu 1500"),
        ("bob", "pts/3", "`sonic-db-cli CONFIG_DB hset PORT|Ethern")]
    assert got[1].at == 1769103285   # 2026-01-22 17:34:45, the device's wall clock read as UTC


def test_an_engineers_own_apply_patch_during_ours_is_named_as_possibly_overwritten(plan, tmp_path):
    """The review's case: the engineer's own `config apply-patch` (MTU 1500 on a port ours writes later) answers
    "Patch applied successfully." while ours runs, then GCU's run of ours reverts it. sudo's record names the command
    (what a patch file held is not in the record), so the run is not a success."""
    theirs = "/tmp/theirs.json-patch"
    written = []

    def line(mtu_ports):
        written.extend(mtu_ports)
        return "sudo config apply-patch %s" % theirs
    sw, run, claim = _run(plan, tmp_path, line, files={theirs: json.dumps(
        [{"op": "replace", "path": "/PORT/Ethernet9/mtu", "value": "1500"}])})
    assert "Ethernet9" in written and sw.state["running"]["PORT"]["Ethernet9"]["mtu"] != "1500"   # reverted by ours
    assert claim != "success" and claim.rolled_back is False, str(claim)
    assert "by admin at " in str(claim) and "`config apply-patch %s`" % theirs in str(claim), str(claim)
