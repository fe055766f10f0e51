"""BGP sessions read over SSH from the EOS, NVUE and NX-OS simulators (issue 27 item 1): after the product pushed the
underlay (Applier, the switch_config path) on the lab's leafs and spines, switch_validate's reading (nos/bgp_state.py,
netmiko, the NOS's own summary command in the format of its real capture) passes every session between configured
switches; a neighbor line removed on the spine in its own CLI takes the leaf's session out of Established (the check
fails naming it), and the session is back once the line is."""
import json
import os

import lab
import pytest
from ansible.module_utils.testing import patch_module_args
from helpers import applier, bgp_findings as read, params, reset

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import write_plan
from ansible_collections.aifabric.roce.plugins.modules import switch_validate

from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state
from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import lock_key, netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

SWITCHES = ("leaf1", "leaf2", "leaf3", "spine1", "spine2")   # eos, nvue, nxos, eos, eos in the lab fabric
NAME_CSONIC = "csonic0"   # community SONiC in leaf0's place (tests/lab/switches/lab.py extra devices)


def spine_cli(switch_lab, spine, lines):
    """An engineer on the spine's EOS CLI."""
    dev = switch_lab["devices"][spine]
    conn = netmiko_factory(params(switch_lab, spine), get_driver(dev["platform"]))()
    try:
        conn.send_config_set(lines, error_pattern=r"% Invalid input|% Incomplete command")
    finally:
        conn.disconnect()


def module(switch_lab, capsys, name, checks, plan=None):
    """switch_validate's main(), in process, against the simulator (as AnsiballZ runs it)."""
    plan_dir = os.path.join(switch_lab["root"], "plan")
    write_plan(plan or switch_lab["plan"], plan_dir)
    args = dict((k, v) for k, v in params(switch_lab, name).items() if k in ("host", "port", "username", "password"))
    args.update(plan=plan_dir, device=name, checks=checks, failover=True,
                known_hosts=os.path.join(switch_lab["root"], "known_hosts"))
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            switch_validate.main()
    return json.loads(capsys.readouterr().out)


def same_link(a, b):
    return a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0] and int(a.rsplit(".", 1)[1]) // 2 == int(b.rsplit(".", 1)[1]) // 2


def test_underlay_sessions_pass_and_a_neighbor_removed_on_the_spine_fails(switch_lab, capsys):
    for name in SWITCHES:
        reset(switch_lab, name)
        a = applier(switch_lab, name, sections=("underlay",))
        before, after, cmds = a.plan()
        a.apply(before, after, cmds)
        a.close()
    for name in SWITCHES:
        got = read(switch_lab, name)
        for n in switch_lab["devices"][name]["intent"]["bgp"]["neighbors"]:
            # leaf0 (AsterNOS) carries no underlay in the lab: the spines' sessions towards it are not up
            assert got["bgp %s" % n["address"]]["status"] == ("fail" if n["peer"] == "leaf0" else "ok"), (name, got)
    assert read(switch_lab, "leaf3")["bgp_sessions"]["actual"] == "4 of 4 Established"
    # the module itself (what validate.yml runs): BGP on the NX-OS leaf checked, failover left unverified
    capsys.readouterr()
    result = module(switch_lab, capsys, "leaf3", ["bgp_sessions", "failover"])
    assert result["platform"] == "nxos" and result["findings"][-1] == bgp_state.finding(
        "bgp_sessions", "ok", "4 planned sessions Established", "4 of 4 Established")
    assert [f["status"] for f in result["findings"]] == ["skipped"] + ["ok"] * 5

    leaf = switch_lab["devices"]["leaf2"]["intent"]        # NVUE
    n = leaf["bgp"]["neighbors"][0]
    spine = switch_lab["devices"][n["peer"]]["intent"]
    # the spine's neighbor on the same /31: the leaf's own address there
    mine = next(s for s in spine["bgp"]["neighbors"] if s["peer"] == "leaf2" and same_link(s["address"], n["address"]))
    asn = "router bgp %d" % spine["bgp"]["asn"]
    spine_cli(switch_lab, n["peer"], [asn, "no neighbor %s remote-as %d" % (mine["address"], mine["remote_as"])])
    got = read(switch_lab, "leaf2")
    assert got["bgp %s" % n["address"]]["status"] == "fail" and got["bgp %s" % n["address"]]["actual"] == "active, AS not shown"
    assert got["bgp_sessions"]["status"] == "fail" and got["bgp_sessions"]["actual"] == "3 of 4 Established"
    spine_cli(switch_lab, n["peer"], [asn, "neighbor %s remote-as %d" % (mine["address"], mine["remote_as"])])
    assert read(switch_lab, "leaf2")["bgp_sessions"]["status"] == "ok"


def test_community_sonic_sessions_over_ssh(switch_lab):
    """csonic0 (community SONiC in leaf0's place): the underlay through GCU, then sonic-utilities' `show ip bgp summary`
    read over SSH: its sessions to the EOS spines are up once the spines carry theirs."""
    for name in ("csonic0", "spine1", "spine2"):
        reset(switch_lab, name)
        a = applier(switch_lab, name, sections=("underlay",))
        before, after, cmds = a.plan()
        a.apply(before, after, cmds)
        a.close()
    got = read(switch_lab, "csonic0")
    assert got["bgp_sessions"]["status"] == "ok" and got["bgp_sessions"]["actual"] == "4 of 4 Established", got


def test_community_sonic_ppd_verified_over_ssh_and_an_unresolvable_next_hop_fails(switch_lab, capsys):
    """csonic0's PPD end to end: the product applies the underlay and the pbr section through GCU under the fabric's
    opt-in (`community_sonic_pbr: gcu_ignore_acl_rule`: `config apply-patch -i /ACL_RULE`, sonic-acl.yang refuses the
    redirect), then switch_validate (what validate.yml runs) reads acl-loader's `show acl table` / `show acl rule` over
    SSH: every host port pinned to its planned next hop. With one uplink's address removed by an engineer the
    redirects to its peer are not created (status N/A) and exactly those ports fail."""
    reset(switch_lab, NAME_CSONIC)
    intent = dict(switch_lab["devices"][NAME_CSONIC]["intent"], community_sonic_pbr="gcu_ignore_acl_rule")
    drv = get_driver("community_sonic")
    p = params(switch_lab, NAME_CSONIC)
    a = Applier(drv, netmiko_factory(p, drv), intent, switch_lab["plan"]["qos"], ("underlay", "pbr"), lock_key=lock_key(p),
                read_timeout=20, reconnect_timeout=5, lock_dir=os.path.join(switch_lab["root"], "locks"))
    before, after, cmds = a.plan()
    a.apply(before, after, cmds)
    a.close()
    # the lab's GCU checks the result against SONiC's models (yanglint): only ACL_RULE left out of it let this in
    st = lab.read_state(NAME_CSONIC, switch_lab["root"])
    assert st["running"]["ACL_RULE"] == drv.tables(intent, switch_lab["plan"]["qos"], ("pbr",))["ACL_RULE"]
    assert st["running"] == st["startup"] and st["checkpoints"] == {}

    def engineer(change):
        st = lab.read_state(NAME_CSONIC, switch_lab["root"])
        change(st["running"])
        with open(os.path.join(switch_lab["root"], NAME_CSONIC, "state.json"), "w") as fh:
            json.dump(st, fh)

    # the plan as a fabric with csonic0 in leaf0's place holds it
    plan = dict(switch_lab["plan"], leafs=dict(switch_lab["plan"]["leafs"], **{NAME_CSONIC: intent}))
    capsys.readouterr()
    result = module(switch_lab, capsys, NAME_CSONIC, ["ppd_paths"], plan)
    pinned = [f for f in result["findings"] if f["probe"].startswith("pinned ")]
    assert result["platform"] == "community_sonic" and len(pinned) == len(intent["bindings"]) >= 2, result
    assert all(f["status"] == "ok" and "Active" in f["actual"] for f in pinned), pinned
    hop = intent["bindings"][0]["next_hop"]
    port = next(u["port"] for u in intent["uplinks"] if u["peer"] == hop)
    engineer(lambda running: [running["INTERFACE"].pop(k) for k in list(running["INTERFACE"])
                              if k.startswith(drv.port(port) + "|")])
    result = module(switch_lab, capsys, NAME_CSONIC, ["ppd_paths"], plan)
    failed = [f for f in result["findings"] if f["status"] != "ok"]
    assert len(failed) == sum(b["next_hop"] == hop for b in intent["bindings"]) >= 1, result
    assert all("not active on the switch" in f["message"] for f in failed), failed
