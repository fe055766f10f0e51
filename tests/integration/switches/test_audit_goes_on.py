"""Previews and audits go on past unreachable devices (issue 15 item 3), apply mode still stops.

An inventory with one unreachable GPU host (SSH to a closed port) and one unreachable switch (the
canary leaf0 on a closed port), the other switches on the private simulators:
- playbooks/audit.yml writes a complete report listing both as unreachable, the rest audited;
- playbooks/site.yml --check previews every reachable switch past the unreachable canary;
- playbooks/site.yml (apply) stops at the failed canary and touches no other switch."""
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import lab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RECAP_RE = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once the socket is closed


def inventory(switch_lab, tmp_path):
    inv = tmp_path / "inventory"
    (inv / "group_vars" / "all").mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml"), str(inv / "group_vars" / "all"))
    dead = closed_port()
    ports = dict(switch_lab["ports"], leaf0=dead)
    switches = {"switches": {
        "vars": {"ansible_host": "127.0.0.1", "ansible_user": "admin", "ansible_password": "admin", "ansible_connection": "local",
                 "switch_known_hosts": os.path.join(switch_lab["root"], "known_hosts")},
        "children": {"leafs": {"hosts": {n: {"ansible_port": ports[n]} for n in ("leaf0", "leaf1", "leaf2", "leaf3")}},
                     "spines": {"hosts": {n: {"ansible_port": ports[n]} for n in ("spine1", "spine2")}}}}}
    hosts = {"gpu_hosts": {"hosts": {"gpu01": {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": dead,
                                               "ansible_ssh_common_args": "-o ConnectTimeout=3"}}}}
    (inv / "switches.yml").write_text(json.dumps(switches))
    (inv / "hosts.yml").write_text(json.dumps(hosts))
    return str(inv)


def play(switch_lab, inv, build, *args):
    env = dict(os.environ, AIFABRIC_SWITCH_LAB=switch_lab["root"], ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inv, "-e", "aifabric_build_dir=%s" % build]
    proc = subprocess.run(cmd + list(args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    recap = dict((m.group(1), tuple(int(g) for g in m.groups()[1:])) for m in RECAP_RE.finditer(proc.stdout))
    return proc, recap


def test_audit_and_check_go_on_past_unreachable_devices_apply_stops(switch_lab, tmp_path):
    for name in ("leaf1", "leaf2", "leaf3", "spine1", "spine2"):
        dev = switch_lab["devices"][name]
        lab.reset(name, dev["platform"], dev["intent"], switch_lab["root"])
    inv, build = inventory(switch_lab, tmp_path), str(tmp_path / "build")

    proc = play(switch_lab, inv, build, "playbooks/audit.yml")[0]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    with open(os.path.join(build, "audit", "drift-report.json")) as handle:
        report = json.load(handle)
    summary = report["summary"]
    assert summary["devices_unreachable"] == ["gpu01", "leaf0"]
    assert report["verdict"].endswith("2 UNREACHABLE") and report["generated"]
    with open(os.path.join(build, "lab", "plan.json"), "rb") as handle:
        assert report["plan"]["digest"] == hashlib.sha256(handle.read()).hexdigest()
    audited = dict((e["device"], e["status"]) for e in report["entries"] if e["kind"] == "switch")
    assert set(audited) == {"leaf0", "leaf1", "leaf2", "leaf3", "spine1", "spine2"}
    assert all(audited[n] in ("ok", "drift") for n in ("leaf1", "leaf2", "leaf3", "spine1", "spine2")), audited
    with open(os.path.join(build, "audit", "drift-report.html")) as handle:
        page = handle.read()
    assert "2 UNREACHABLE" in page and "gpu01" in page and "leaf0" in page
    # RoCE health: every reachable switch read (QoS/MTU its driver renders, counters), the unreachable one named
    assert report["roce"]["not_read"] == {"leaf0": "not read (its switch check could not read it)"}, report["roce"]
    assert report["roce"]["read"] == dict((n, ["mtu", "qos", "counters"]) for n in ("leaf1", "leaf2", "leaf3", "spine1", "spine2"))
    # telemetry (module roce_metrics): the switches' counters as Prometheus text; the unreachable leaf is up 0. The
    # EOS, NVUE and NX-OS leafs show their PBR state (switch_validate ppd_paths): these fresh ones pin no host, so every
    # binding is off its planned uplink (0); the unreachable AsterNOS canary's bindings stay unverified
    with open(os.path.join(build, "audit", "aifabric_roce_switches.prom")) as handle:
        prom = handle.read()
    assert 'roce_switch_counters_up{role="leaf",switch="leaf0"} 0' in prom
    assert 'roce_switch_counters_up{role="leaf",switch="leaf1"} 1' in prom
    assert re.search(r'^roce_switch_pfc_pause_frames_total\{.*host="gpu0\d".*switch="leaf2"\} \d+$', prom, re.M), prom[:2000]
    assert re.findall(r'^roce_ppd_on_planned_uplink\{[^}]*\} (\d+)$', prom, re.M) == ["0"] * 12, prom[-4000:]
    assert len(re.findall(r'^roce_ppd_binding_info\{[^}]*leaf="leaf0"[^}]*status="unverified"[^}]*\} 1$', prom, re.M)) == 4

    # --check previews every reachable switch although the canary is unreachable
    proc, recap = play(switch_lab, inv, build, "playbooks/site.yml", "--check", "--tags", "switches")
    assert proc.returncode == 2 and "not previewed: switches leaf0 " in proc.stdout, proc.stdout[-3000:]
    assert "; previewed: leaf1, leaf2, leaf3, spine1, spine2" in proc.stdout, proc.stdout[-3000:]  # exactly those
    for name in ("leaf1", "leaf2", "leaf3", "spine1", "spine2"):
        assert recap[name][0] >= 1 and recap[name][2] == 0, (name, recap, proc.stdout[-3000:])

    # apply keeps stop-on-failure: the failed canary stops the play before any other switch
    before = dict((n, lab.read_state(n, switch_lab["root"])["running"]) for n in ("leaf1", "spine1"))
    proc, recap = play(switch_lab, inv, build, "playbooks/site.yml", "--tags", "switches")
    assert proc.returncode != 0 and recap["leaf0"][2] == 1
    # the others ran only site.yml's one read (include of read_args, its one set_fact), never their reconcile
    assert all(recap.get(n, (0,))[0] == 2 for n in ("leaf1", "leaf2", "leaf3", "spine1", "spine2")), recap
    assert before == dict((n, lab.read_state(n, switch_lab["root"])["running"]) for n in ("leaf1", "spine1"))
