"""Playbook-level test of role switch against the simulators: converge in the plan's safe batches
with one transaction per switch, idempotence (changed=0, no config-mode entry), check-mode drift
after a manual change (exactly that drift, nothing written), tags selecting parts, converge repairs it."""
import json
import os
import subprocess
import sys

import lab
from helpers import applier, bgp_findings, reset

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(ROOT, "tests", "integration", "switches", "converge.yml")
SWITCHES = ["leaf0", "leaf1", "leaf2", "leaf3", "spine1", "spine2"]


def run_playbook(switch_lab, *args, **kw):
    over = os.path.join(switch_lab["root"], "ports.yml")
    with open(over, "w") as fh:
        # the lab's switches only (the fixture also runs drivers no lab leaf uses, e.g. sonic0)
        json.dump({"switches": {"hosts": {n: {"ansible_port": switch_lab["ports"][n]} for n in SWITCHES}}}, fh)
    env = dict(os.environ, AIFABRIC_SWITCH_LAB=switch_lab["root"], ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "inventories/lab", "-i", over,
                           kw.get("playbook", PLAYBOOK)] + list(args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    out = json.loads(proc.stdout[proc.stdout.index("{"):])
    # with serial, each batch runs the role's task again: one task entry per batch
    run_playbook.batches = [sorted(task["hosts"]) for play in out["plays"][1:] for task in play["tasks"]
                            if task["task"]["name"].endswith(TASK)]
    results = {}
    for play in out["plays"]:
        for task in play["tasks"]:
            for host, res in task["hosts"].items():
                results.setdefault(host, {})[task["task"]["name"].split(" : ")[-1]] = res
    return out["stats"], results


TASK = "Reconcile RoCE QoS, port MTU and port binding with the plan"
READ = "Read every switch once, side by side"
SITE = os.path.join(ROOT, "playbooks", "site.yml")


def entries(switch_lab):
    return {n: lab.read_state(n, switch_lab["root"]).get("config_entries", 0) for n in SWITCHES}


def test_roles_converge_idempotent_drift_repair(switch_lab):
    # the stand-ins in leaf0's place (lab.EXTRA: sonic0, csonic0) too: another test that converged one with its
    # underlay made the spines' sessions towards leaf0's addresses come up, which this test expects down
    for name in SWITCHES + sorted(lab.EXTRA):
        reset(switch_lab, name)

    # converge from the baseline: every switch changes in one transaction (one config-mode entry);
    # the batches are the plan's (the lab: one group, so one leaf at a time, then one spine per plane)
    seen, revision = entries(switch_lab), lab.read_state("leaf2", switch_lab["root"]).get("revision", 1)
    stats, res = run_playbook(switch_lab)
    assert run_playbook.batches == [["leaf0"], ["leaf1"], ["leaf2"], ["leaf3"], ["spine1"], ["spine2"]]
    for name in SWITCHES:
        assert stats[name]["failures"] == 0 and stats[name]["changed"] >= 1, (name, stats[name])
        assert res[name][TASK]["changed"] and res[name][TASK]["drift"], name
        st = lab.read_state(name, switch_lab["root"])
        assert st["startup"] == st["running"], "%s: config saved" % name
    # CLI NOSes count config-mode entries; the NVUE simulator counts every nv set, so count its revisions
    # (EOS: the device lock is a configuration session of its own, and the change session is entered again after the
    # compare-and-swap read just before its commit: 3 entries, one commit)
    now = entries(switch_lab)
    # (AsterNOS: no config mode; the simulator counts each changing REST call: POST the profile, PATCH its cable length,
    # PATCH its bound ports)
    # (NX-OS, Dell SONiC: lines apply as typed; config mode is left for the compare-and-swap re-read each time it is
    # due, every RECHECK_EVERY s of sending, so a slow machine enters more than once: one entry per "configure
    # terminal" the run sent, with one save)
    fixed = {"eos": 3, "asternos": 3}
    per_switch = {}
    for n in SWITCHES:
        platform, sent = switch_lab["devices"][n]["platform"], res[n][TASK]["attempted"]
        if platform == "nvue":
            continue   # no config mode: its revisions are counted below
        per_switch[n] = fixed.get(platform) or sent.count("configure terminal")
        assert per_switch[n] >= 1, (n, sent)
        if platform in ("nxos", "dell_sonic"):
            assert len([c for c in sent if c.startswith(("copy running-config", "write"))]) == 1, (n, sent)
    assert all(now[n] == seen[n] + per_switch[n] for n in per_switch), ("one transaction per switch", seen, now, per_switch)
    assert lab.read_state("leaf2", switch_lab["root"]).get("revision", 1) == revision + 1, "one NVUE revision"
    # the port binding: per-port AIF-BIND-* objects, or one AIF-PBR-<L3 ingress> policy (EOS/NVUE bind on the SVI)
    for name in ("spine1", "spine2"):
        text = "\n".join(res[name][TASK]["commands"])
        assert "AIF-BIND" not in text and "AIF-PBR" not in text, name  # spines carry no port binding
        assert "router bgp" in text, name  # the EOS spines carry the underlay
    for name in ("leaf1", "leaf2", "leaf3"):
        text = "\n".join(res[name][TASK]["commands"])
        assert "AIF-BIND" in text or "AIF-PBR" in text, name
    # nxos is in switch_underlay_platforms (the role's default, every driver that renders it): the NX-OS leaf carries the
    # underlay in the same transaction, every line accepted by the simulator, and its sessions to both spines come up;
    # the AsterNOS leaf carries none, so the spines' sessions towards leaf0 stay down
    leaf3 = switch_lab["devices"]["leaf3"]["intent"]
    assert sorted(res["leaf3"][TASK]["invocation"]["module_args"]["sections"]) == ["mtu", "pbr", "qos", "underlay"]
    assert {"feature bgp", "router bgp %d" % leaf3["bgp"]["asn"]} <= set(c.strip() for c in res["leaf3"][TASK]["commands"])
    assert bgp_findings(switch_lab, "leaf3")["bgp_sessions"]["actual"] == "4 of 4 Established"
    for name in ("spine1", "spine2"):
        got = bgp_findings(switch_lab, name)
        for n in switch_lab["devices"][name]["intent"]["bgp"]["neighbors"]:
            assert got["bgp %s" % n["address"]]["status"] == ("fail" if n["peer"] == "leaf0" else "ok"), (name, n, got)
    # AsterNOS: Easy RoCE's REST model only (no PPD without the config_db opt-in)
    assert [c.split(" -X ")[1].split()[0] for c in res["leaf0"][TASK]["commands"]] == ["POST", "PATCH", "PATCH"]
    assert "service-policy type pbr input AIF-PBR-Vlan100" in "\n".join(res["leaf1"][TASK]["commands"])
    assert "nv set interface vlan100 router pbr map AIF-PBR-vlan100" in res["leaf2"][TASK]["commands"]

    # idempotence: nothing changes and no switch enters config mode
    seen = entries(switch_lab)
    stats, res = run_playbook(switch_lab)
    assert all(stats[n]["changed"] == 0 for n in SWITCHES), stats
    assert entries(switch_lab) == seen, "a no-op run entered config mode"
    assert all(res[n][TASK]["drift"] == [] for n in SWITCHES)

    # manual drift on one switch: check mode reports exactly that, writes nothing
    a = applier(switch_lab, "leaf1")
    a._conn().send_config_set(["interface Ethernet2", "mtu 1500"])
    a.close()
    drifted = lab.read_state("leaf1", switch_lab["root"])
    seen = entries(switch_lab)
    stats, res = run_playbook(switch_lab, "--check", "--diff")
    assert {n for n in SWITCHES if stats[n]["changed"]} == {"leaf1"}, stats
    qos = res["leaf1"][TASK]
    assert qos["drift"] == [{"item": "interface Ethernet2 > mtu", "expected": "mtu 9214", "actual": "mtu 1500"}]
    assert "mtu 1500" in qos["diff"]["before"] and "mtu 1500" not in qos["diff"]["after"]
    assert entries(switch_lab) == seen, "check mode entered config mode"
    # tags select parts: the port-binding part alone does not see an MTU drift, the QoS part does
    stats, res = run_playbook(switch_lab, "--check", "--tags", "switch_port_binding")
    assert not any(stats[n]["changed"] for n in SWITCHES), stats
    assert res["spine1"][TASK].get("skipped"), "spines have no port-binding part"
    stats, res = run_playbook(switch_lab, "--check", "--tags", "switch_qos")
    assert {n for n in SWITCHES if stats[n]["changed"]} == {"leaf1"}, stats
    assert lab.read_state("leaf1", switch_lab["root"])["running"] == drifted["running"], "check mode wrote"

    # converge repairs it, and only it
    stats, res = run_playbook(switch_lab)
    assert {n for n in SWITCHES if stats[n]["changed"]} == {"leaf1"}, stats
    assert [c.strip() for c in res["leaf1"][TASK]["commands"]][-1] == "mtu 9214"  # EOS: clamped to 9214
    stats, res = run_playbook(switch_lab, "--check")
    assert all(stats[n]["changed"] == 0 for n in SWITCHES), stats


def one_read(res):
    """The run_once read's result (reported under the first switch of the play)."""
    found = [r[READ] for r in res.values() if READ in r]
    assert len(found) == 1, found
    return found[0]


def test_site_reads_every_switch_once_and_reconciles_only_the_drifted(switch_lab):
    """playbooks/site.yml (issue 28): one switch_state read of the whole lab; a switch in sync ends its play before
    switch_config (no module run, no session of its own), a drifted one is previewed and repaired as without the read."""
    site = ("--limit", "switches,localhost", "--tags", "switches")
    for name in SWITCHES:
        reset(switch_lab, name)
    stats, res = run_playbook(switch_lab, *site, playbook=SITE)      # converge: every switch drifted, every one reconciled
    read = one_read(res)
    assert read["drifted"] == sorted(SWITCHES) and read["in_sync"] == [], read
    assert all(res[n][TASK]["changed"] for n in SWITCHES)
    # the play runs once per batch under one name: each batch says its number (issue 41); the lab goes one at a time
    said = sorted(res[n]["Say which switch batch this is"]["msg"] for n in SWITCHES)
    assert sorted(int(m.split()[2]) for m in said) == list(range(1, 7)), said
    assert all(m.startswith("switch batch ") and " of 6: " in m and m.split(": ")[1] in SWITCHES for m in said), said
    assert len(set(m.split(": ")[1] for m in said)) == 6, said
    seen = entries(switch_lab)
    stats, res = run_playbook(switch_lab, *site, playbook=SITE)      # no-op: read once, nothing else runs
    read = one_read(res)
    assert read["in_sync"] == sorted(SWITCHES) and read["drifted"] == [], read["switches"]
    assert all(TASK not in res[n] for n in SWITCHES), [n for n in SWITCHES if TASK in res[n]]
    assert all(stats[n]["changed"] == 0 for n in SWITCHES) and entries(switch_lab) == seen
    # an engineer changes one port's MTU on leaf1 (EOS) in its own CLI: only leaf1 is previewed, with that drift
    a = applier(switch_lab, "leaf1")
    a._conn().send_config_set(["interface Ethernet2", "mtu 1500"])
    a.close()
    stats, res = run_playbook(switch_lab, *(site + ("--check", "--diff")), playbook=SITE)
    read = one_read(res)
    assert read["drifted"] == ["leaf1"] and read["switches"]["leaf1"]["reason"] == "2 command(s) to send", read   # interface, mtu
    assert [n for n in SWITCHES if TASK in res[n]] == ["leaf1"]
    assert res["leaf1"][TASK]["drift"] == [{"item": "interface Ethernet2 > mtu", "expected": "mtu 9214", "actual": "mtu 1500"}]
    # without the read every switch runs switch_config, and the verdicts agree
    stats, without = run_playbook(switch_lab, *(site + ("--check", "-e", "site_switch_read=false")), playbook=SITE)
    assert all(without[n][TASK]["changed"] == (n == "leaf1") for n in SWITCHES)
    stats, res = run_playbook(switch_lab, *site, playbook=SITE)      # apply repairs leaf1 only
    assert {n for n in SWITCHES if stats[n]["changed"]} == {"leaf1"}, stats
    assert [n for n in SWITCHES if TASK in res[n]] == ["leaf1"]
