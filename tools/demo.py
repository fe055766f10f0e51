"""The main job on the built-in lab, end to end (README's `make demo`; `make test-e2e` runs it too).

1. bring-up: playbooks/site.yml (plan, switches, hosts, validation) - must succeed;
2. a second site.yml run changes nothing;
3. audit: playbooks/audit.yml reports zero drift (also run through ansible-runner from an
   AWX-style private_data_dir when --with-runner is given);
4. inject one host drift (gpu02 rail1 MTU 1500) and one switch drift (leaf1 Ethernet1 MTU 1500,
   typed on the switch CLI the way an operator would);
5. audit again: exactly those two devices and items drift; print where the report is;
6. repair with site.yml and audit once more: zero drift.
Needs `make lab-up`. Exit status 0 only when every expectation holds.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
REPORT = os.path.join(ROOT, "build", "audit", "drift-report.json")
DRIFT_COPY = os.path.join(ROOT, "build", "audit-injected-drift")
RECAP_RE = re.compile(r"^(\S+)\s+:\s+ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def say(text):
    print("\n=== %s" % text, flush=True)


def playbook(name, *extra):
    cmd = [os.path.join(BIN, "ansible-playbook"), os.path.join("playbooks", name)] + list(extra)
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    recap = dict((m.group(1), (int(m.group(2)), int(m.group(3)), int(m.group(4)))) for m in RECAP_RE.finditer(proc.stdout))
    if proc.returncode != 0:
        print(proc.stdout[-6000:], proc.stderr[-2000:])
        raise SystemExit("%s failed (rc %d)" % (name, proc.returncode))
    return recap


def audit():
    playbook("audit.yml")
    with open(REPORT) as handle:
        return json.load(handle)


def drifted_items(report):
    return sorted((e["device"], item["item"], item["expected"], item["actual"])
                  for e in report["entries"] if e["status"] == "drift" for item in e["items"])


def inventory():
    out = subprocess.run([os.path.join(BIN, "ansible-inventory"), "--list"], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def switch_drift(inv, switch, commands):
    """Change the running config of a simulated switch through its CLI, with netmiko."""
    from netmiko import ConnectHandler  # the controller's runtime library
    hostvars = inv["_meta"]["hostvars"][switch]
    plan_device_type = {"leaf1": "arista_eos"}[switch]
    known_hosts = os.path.join(os.environ.get("AIFABRIC_SWITCH_LAB", "/tmp/aifabric-lab/switches"), "known_hosts")
    conn = ConnectHandler(device_type=plan_device_type, host=hostvars.get("ansible_host", "127.0.0.1"),
                          port=hostvars["ansible_port"], username=hostvars.get("ansible_user", "admin"),
                          password=hostvars.get("ansible_password", "admin"), ssh_strict=True,
                          system_host_keys=False, alt_host_keys=True, alt_key_file=known_hosts)
    try:
        conn.send_config_set(commands, error_pattern=r"% Invalid input|% Incomplete command")
    finally:
        conn.disconnect()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--with-runner", action="store_true", help="also run the audit through ansible-runner (AWX layout)")
    args = parser.parse_args()
    inv = inventory()
    have_switches = "leaf1" in inv["_meta"]["hostvars"]

    say("bring-up: ansible-playbook playbooks/site.yml")
    recap = playbook("site.yml")
    print("recap: %s" % recap)
    say("second run changes nothing")
    recap = playbook("site.yml")
    changed = dict((host, counts[0]) for host, counts in recap.items() if counts[0])
    if changed:
        raise SystemExit("second site.yml run changed: %s" % changed)
    print("changed=0 on %d hosts" % len(recap))

    say("audit: zero drift expected")
    report = audit()
    if report["drift"]:
        raise SystemExit("unexpected drift after bring-up: %s" % drifted_items(report))
    print("IN SYNC: %d devices" % report["summary"]["devices"])
    if args.with_runner:
        say("audit through ansible-runner from an AWX-style private_data_dir")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "integration", "awx", "run_audit_with_runner.py")],
                       check=True, cwd=ROOT)

    say("inject drift: gpu02 rail1 MTU 1500%s" % (", leaf1 Ethernet1 MTU 1500" if have_switches else ""))
    subprocess.run(["podman", "exec", "aifabric-gpu02", "ip", "link", "set", "rail1", "mtu", "1500"], check=True)
    expected_devices = ["gpu02"]
    if have_switches:
        switch_drift(inv, "leaf1", ["interface Ethernet1", "mtu 1500"])
        expected_devices.append("leaf1")
    report = audit()
    devices = report["summary"]["devices_drift"]
    items = drifted_items(report)
    print("drifted devices: %s" % devices)
    for item in items:
        print("  %s: %s expected %s, actual %s" % item)
    if devices != expected_devices or ("gpu02", "mtu rail1", "9000", "1500") not in items:
        raise SystemExit("audit did not find exactly the injected drift (devices %s)" % devices)
    if have_switches and not [i for i in items if i[0] == "leaf1" and "1500" in i[3] + i[2]]:
        raise SystemExit("audit did not show leaf1's MTU drift: %s" % items)
    # keep this report: the audit after the repair below rewrites build/audit
    shutil.copytree(os.path.dirname(REPORT), DRIFT_COPY, dirs_exist_ok=True)
    print("report: file://%s" % os.path.join(DRIFT_COPY, "drift-report.html"))

    say("repair: site.yml, then audit")
    playbook("site.yml")
    report = audit()
    if report["drift"]:
        raise SystemExit("drift left after repair: %s" % drifted_items(report))
    print("IN SYNC again. Reports: build/audit-injected-drift/drift-report.html (the injected drift), "
          "build/audit/drift-report.html (audit after repair), build/validate/drift-report.html "
          "(validation), build/preflight/preflight.md (preflight), build/lab/ (plan artifacts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
