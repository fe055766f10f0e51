"""A run with --limit reports the devices in play only and keeps the last full report (issue 41 item 2).

Before: validate.yml built its report from every inventory group, so `validate.yml --limit leaf1` (the natural way
to check one repaired switch) counted every other device as failed ("not registered") and overwrote the last full
report's verdict; a limit without `localhost` wrote no report at all. Here, on the private switch simulators: a full
validation and audit, then each limited to leaf1 (no localhost in the limit): the limited report names leaf1 alone,
goes under <report dir>/limited and the full report's files stay byte for byte."""
import json
import os
import shutil
import subprocess
import sys

import lab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SWITCHES = ("leaf0", "leaf1", "leaf2", "leaf3", "spine1", "spine2")


def inventory(switch_lab, tmp_path):
    inv = tmp_path / "inventory"
    (inv / "group_vars" / "all").mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml"), str(inv / "group_vars" / "all"))
    switches = {"switches": {
        "vars": {"ansible_host": "127.0.0.1", "ansible_user": "admin", "ansible_password": "admin", "ansible_connection": "local",
                 "switch_known_hosts": os.path.join(switch_lab["root"], "known_hosts")},
        "children": {"leafs": {"hosts": {n: {"ansible_port": switch_lab["ports"][n]} for n in SWITCHES[:4]}},
                     "spines": {"hosts": {n: {"ansible_port": switch_lab["ports"][n]} for n in SWITCHES[4:]}}}}}
    (inv / "switches.yml").write_text(json.dumps(switches))
    (inv / "hosts.yml").write_text(json.dumps({"gpu_hosts": {"hosts": {}}}))
    return str(inv)


def play(switch_lab, inv, build, *args):
    env = dict(os.environ, AIFABRIC_SWITCH_LAB=switch_lab["root"], ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inv, "-e", "aifabric_build_dir=%s" % build]
    return subprocess.run(cmd + list(args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def files(directory):
    out = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                out[name] = handle.read()
    return out


def devices(report_dir):
    with open(os.path.join(report_dir, "drift-report.json")) as handle:
        report = json.load(handle)
    return report, sorted(set(e["device"] for e in report["entries"]))


def test_a_limited_validation_and_audit_report_their_devices_and_keep_the_full_report(switch_lab, tmp_path):
    for name in SWITCHES:
        dev = switch_lab["devices"][name]
        lab.reset(name, dev["platform"], dev["intent"], switch_lab["root"])
    inv, build = inventory(switch_lab, tmp_path), str(tmp_path / "build")
    for playbook, kind in (("playbooks/validate.yml", "validate"), ("playbooks/audit.yml", "audit")):
        full_dir = os.path.join(build, kind)
        proc = play(switch_lab, inv, build, playbook)
        assert os.path.isfile(os.path.join(full_dir, "drift-report.json")), proc.stdout[-3000:] + proc.stderr[-2000:]
        full, names = devices(full_dir)
        assert names == sorted(SWITCHES), names
        assert "limited to" not in proc.stdout
        kept = files(full_dir)

        proc = play(switch_lab, inv, build, playbook, "--limit", "leaf1")
        limited_dir = os.path.join(full_dir, "limited")
        assert os.path.isfile(os.path.join(limited_dir, "drift-report.json")), proc.stdout[-3000:] + proc.stderr[-2000:]
        report, names = devices(limited_dir)
        assert names == ["leaf1"], (kind, names, report["verdict"])
        assert "not registered" not in json.dumps(report)  # no device outside the limit counted as a check that did not run
        assert "limited to 1 of 6 devices (--limit leaf1)" in report["title"], report["title"]
        said = "limited to 1 of 6 devices (--limit leaf1): the last full report in %s is left as it was" % full_dir
        assert said in " ".join(proc.stdout.split()), proc.stdout[-3000:]
        assert files(full_dir) == kept, "the limited %s run rewrote the full report" % kind
        assert full["verdict"] == devices(full_dir)[0]["verdict"]
