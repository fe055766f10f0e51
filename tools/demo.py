"""The main job on the built-in lab, end to end (README's `make demo`; `make test-e2e` runs it too).

1. bring-up: playbooks/site.yml (plan, switches, hosts, validation) - must succeed; the validation's
   LLDP check passes on every rail NIC of every host (the lab runs lldpd on the hosts and on the leafs'
   ports: tests/lab/hosts/lab_lldp.py), and a miscabled port (one leaf port announcing another port id)
   fails rail_validate's LLDP check naming that NIC;
2. a second site.yml run changes nothing;
3. audit: playbooks/audit.yml reports zero drift (with --with-runner, this audit runs through
   ansible-runner from an AWX-style private_data_dir, and its report is checked the same way: one
   audit instead of two on an unchanged fabric; the plain ansible-playbook audits run in 5 and 6);
4. inject one host drift (gpu02 rail1 MTU 1500) and one switch drift (leaf1 Ethernet1 MTU 1500,
   typed on the switch CLI the way an operator would);
5. audit again: exactly those two devices and items drift; print where the report is;
6. repair with site.yml and audit once more: zero drift.
Needs `make lab-up`. Exit status 0 only when every expectation holds.

Each stage prints a progress line per play with the elapsed time (and a heartbeat while a long
task runs), a recap table per playbook run, and on failure a hint at the likely cause.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import labid  # noqa: E402  the lab's per-checkout container names and ports
BIN = os.path.dirname(sys.executable)
REPORT = os.path.join(ROOT, "build", "audit", "drift-report.json")
DRIFT_COPY = os.path.join(ROOT, "build", "audit-injected-drift")
VALIDATION = os.path.join(ROOT, "build", "validate", "drift-report.json")
RECAP_RE = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)
HEADER_RE = re.compile(r"^(PLAY|TASK) \[(.*)\] \**$")
HEARTBEAT_S = 20
STAGES = 5
# (what the output says, what to do): the likely fix for the failures seen in the lab
HINTS = (
    (re.compile(r"no such container|podman.*(not found|does not exist)|Failed to create temporary directory"),
     "the lab's GPU host containers are not running: make lab-up (make lab-status shows them)"),
    (re.compile(r"TCP connection to device failed|Connection refused"),
     "the switch simulators are not running: make lab-up (or make lab-up-switches)"),
    (re.compile(r"fabric intent is invalid"),
     "the fabric intent has errors: fix the keys listed above in inventories/lab/group_vars/all/fabric.yml"),
    (re.compile(r"No module named|couldn't resolve module|could not be resolved"),
     "the environment is incomplete: make setup"),
)
_stage = [0]


# the switch play's line naming its batch (playbooks/site.yml "Say which switch batch this is")
BATCH_RE = re.compile(r'"msg": "(switch batch \d+ of \d+: [^"]*)"')


def say(text):
    _stage[0] += 1
    print("\n=== [%d/%d] %s" % (_stage[0], STAGES, text), flush=True)


def hint(output):
    for pattern, advice in HINTS:
        if pattern.search(output):
            return advice
    return "read the failed task above; rerun the playbook by hand with -v for details"


def recap_table(recap):
    lines = ["  %-10s %4s %8s %12s %7s" % ("device", "ok", "changed", "unreachable", "failed")]
    for host in sorted(recap):
        lines.append("  %-10s %4d %8d %12d %7d" % ((host,) + recap[host]))
    return "\n".join(lines)


def playbook(name, *extra):
    """Run a playbook, printing one line per play with the elapsed time and a heartbeat while a
    task runs long; returns {host: (ok, changed, unreachable, failed)}."""
    cmd = [os.path.join(BIN, "ansible-playbook"), os.path.join("playbooks", name)] + list(extra)
    start, state, lines = time.time(), {"task": "starting", "since": time.time()}, []
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    done = threading.Event()

    def heartbeat():
        while not done.wait(HEARTBEAT_S):
            print("  [%6.1fs]   ... %s (%.0f s)" % (time.time() - start, state["task"], time.time() - state["since"]), flush=True)

    threading.Thread(target=heartbeat, daemon=True).start()
    try:
        for line in proc.stdout:
            lines.append(line)
            match = HEADER_RE.match(line.strip())
            if match:
                state.update(task=match.group(2), since=time.time())
                if match.group(1) == "PLAY":
                    print("  [%6.1fs] %s: %s" % (time.time() - start, name, match.group(2)), flush=True)
            batch = BATCH_RE.search(line)
            if batch:   # site.yml's switch play runs once per batch under one name: say which batch
                print("  [%6.1fs] %s:   %s" % (time.time() - start, name, batch.group(1)), flush=True)
        proc.wait()
    finally:
        done.set()
    output = "".join(lines)
    recap = dict((m.group(1), tuple(int(g) for g in m.groups()[1:])) for m in RECAP_RE.finditer(output))
    print("  [%6.1fs] %s finished, rc %d\n%s" % (time.time() - start, name, proc.returncode, recap_table(recap)), flush=True)
    if proc.returncode != 0:
        print(output[-6000:])
        raise SystemExit("%s failed (rc %d). Hint: %s" % (name, proc.returncode, hint(output)))
    return dict((host, counts[1:]) for host, counts in recap.items())


# the reasons a driver gives a failed planned session towards a switch it configures no BGP on, per session and on the
# switch's bgp_sessions row (nos/validation.py explain_peers_without_bgp), read back from the report's own rows
NO_BGP_RE = re.compile(r"(\S+) runs (\S+), where this collection configures no BGP \(only by hand\)")
NO_BGP_TOWARDS_RE = re.compile(r"\(\d+ towards ([^:()]+): no BGP configured there by this collection\)")


def validation_summary():
    """The validation report's verdict, what ran, why the rest did not (one line per reason), each failed check with
    the reason its row gives, and whether the FAILED is the lab's expected one. Returns the closing line on it."""
    with open(VALIDATION) as handle:
        report = json.load(handle)
    checks = report["summary"]["checks"]
    print("validation: %s - %d checks run (%d passed, %d failed), %d not run" % (
        report["verdict"], checks["run"], checks["passed"], checks["failed"], checks["not_run"]))
    reasons, failed, why_peer, unexplained = {}, {}, {}, []
    for entry in report["entries"]:
        for result in entry.get("results", []):
            if result["result"] == "not_run" and result.get("required", True):
                reasons.setdefault(result["why"], set()).add(entry["device"])
            elif result["result"] == "failed":
                text = "%s %s" % (result.get("expected", ""), result.get("why", ""))
                subject = "%s %s" % (entry["device"], result["subject"])
                peers = [m.group(1) for m in NO_BGP_RE.finditer(text)]
                why_peer.update((m.group(1), m.group(0)) for m in NO_BGP_RE.finditer(text))
                for m in NO_BGP_TOWARDS_RE.finditer(text):
                    peers += m.group(1).split(", ")
                for peer in sorted(set(peers)):
                    failed.setdefault(peer, []).append(subject)
                if not peers:
                    unexplained.append("%s (%s)" % (subject, result.get("why") or result.get("actual") or "failed"))
    for why, devices in sorted(reasons.items()):
        print("  not run on %d device(s): %s" % (len(devices), why))
    for peer, subjects in sorted(failed.items()):
        print("  failed, %d check(s) (%s): %s" % (len(subjects), ", ".join(sorted(set(subjects))), why_peer.get(
            peer, "sessions towards %s, where this collection configures no BGP" % peer)))
    for line in unexplained:
        print("  failed: %s" % line)
    html = os.path.join(os.path.dirname(VALIDATION), "drift-report.html")
    if not failed and not unexplained:
        return "validation %s: %s" % (report["verdict"], html)
    if unexplained:
        return "validation %s on checks this lab does not explain (%s): %s" % (
            report["verdict"], "; ".join(unexplained), html)
    expected = ("FAILED is expected in this lab: every failed check is a BGP session towards %s (%s: docs/platforms.md); "
                "the report explains each row: %s" % (", ".join(sorted(failed)), "; ".join(
                    why_peer.get(p, "%s: no BGP configured there by this collection" % p) for p in sorted(failed)), html))
    print(expected)
    return "validation " + expected


def lab_hosts():
    """tests/lab/hosts/lab.py as a module: the lab's topology from the plan, its leaf namespace and LLDP daemons."""
    import importlib.util  # pylint: disable=import-outside-toplevel
    spec = importlib.util.spec_from_file_location("aifabric_lab_hosts", os.path.join(ROOT, "tests", "lab", "hosts", "lab.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_lldp_report(hosts):
    """validation: an LLDP result per rail NIC of every host, each passed with the planned leaf and port."""
    with open(VALIDATION) as handle:
        report = json.load(handle)
    want = sorted((h["name"], "lldp %s" % n["netdev"], "passed", "%s %s" % (n["leaf"], n["leaf_port"]))
                  for h in hosts for n in h["nics"])
    got = sorted((e["device"], r["subject"], r["result"], r["expected"]) for e in report["entries"] if e["kind"] == "host"
                 for r in e.get("results", []) if r["subject"].startswith("lldp"))
    if got != want:
        raise SystemExit("validation's LLDP results are not the plan's neighbours, all passed:\n  want %s\n  got  %s" % (want, got))
    print("LLDP: %d/%d rail NICs of %d hosts hear their planned leaf port" % (len(got), len(want), len(hosts)))


def rail_validate_lldp(host, expected):
    """rail_validate's LLDP check alone on one host (what validate.yml runs there): its findings."""
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    proc = subprocess.run([os.path.join(BIN, "ansible"), host, "-m", "aifabric.roce.rail_validate", "-a",
                           json.dumps({"lldp": dict((k, list(v)) for k, v in expected.items())})],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    try:
        return json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"][host]["findings"]
    except (ValueError, KeyError, IndexError):
        raise SystemExit("rail_validate on %s gave no findings (rc %d): %s" % (host, proc.returncode, (proc.stdout + proc.stderr)[-2000:]))


def check_miscabled(lab, host="gpu02", netdev="rail1", wrong="Ethernet9"):
    """Make one leaf port announce another port id (as if the cable sat in the leaf's port `wrong`), check that
    rail_validate fails that NIC by name and passes the others, then put the planned port id back."""
    hosts = dict((h["name"], h) for h in lab.lab_topology()[0])
    nic = next(n for n in hosts[host]["nics"] if n["netdev"] == netdev)
    expected = dict((n["netdev"], (n["leaf"], n["leaf_port"])) for n in hosts[host]["nics"])
    daemons = lab.leaf_lldpd()
    port = lab.leaf_port(hosts[host], nic["rail"])
    container = hosts[host]["container"]

    def announce(port_id):
        result = daemons.lldpcli(nic["leaf"], "configure", "ports", port, "lldp", "portidsubtype", "local", port_id)
        if result.returncode != 0:
            raise SystemExit("lldpcli of %s refused the port id: %s" % (nic["leaf"], result.stderr))
        deadline = time.time() + 10 * lab.lldp.TX_INTERVAL
        while lab.lldp.host_neighbours(container).get(netdev) != (nic["leaf"], port_id):
            if time.time() > deadline:
                raise SystemExit("%s %s did not hear %s %s within %d s" % (host, netdev, nic["leaf"], port_id, 10 * lab.lldp.TX_INTERVAL))
            time.sleep(0.2)

    print("miscabled: %s's port %s (cabled to %s %s) announces %s" % (nic["leaf"], nic["leaf_port"], host, netdev, wrong))
    announce(wrong)
    try:
        findings = rail_validate_lldp(host, expected)
    finally:
        announce(nic["leaf_port"])
    findings = [f for f in findings if f["probe"].startswith("lldp ")]   # (rdma bandwidth: not asked for, skipped)
    failed = [(f["probe"], f["expected"], f["actual"]) for f in findings if f["status"] != "ok"]
    passed = sorted(f["probe"] for f in findings if f["status"] == "ok")
    print("  rail_validate on %s: failed %s; passed %s" % (host, failed, passed))
    if failed != [("lldp %s" % netdev, "%s %s" % (nic["leaf"], nic["leaf_port"]), "%s %s" % (nic["leaf"], wrong))] \
            or passed != sorted("lldp %s" % n for n in expected if n != netdev):
        raise SystemExit("rail_validate did not fail exactly %s %s for the miscabled port" % (host, netdev))


def audit():
    playbook("audit.yml")
    with open(REPORT) as handle:
        return json.load(handle)


def runner_audit():
    """audit.yml through ansible-runner from an AWX-style private_data_dir (tests/integration/awx): the job must
    succeed with its artifacts; its report, kept in build/audit-runner, is returned for the same checks as audit()'s."""
    kept = os.path.join(ROOT, "build", "audit-runner")
    start = time.time()
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "integration", "awx", "run_audit_with_runner.py"),
                           "--keep-report", kept], cwd=ROOT, capture_output=True, text=True, check=False)
    print(proc.stdout.rstrip())
    print("  [%6.1fs] audit.yml through ansible-runner finished, rc %d" % (time.time() - start, proc.returncode), flush=True)
    report_file = os.path.join(kept, "drift-report.json")
    report = None
    if os.path.isfile(report_file):
        with open(report_file) as handle:
            report = json.load(handle)
        if report["drift"]:
            raise SystemExit("unexpected drift after bring-up (audit through ansible-runner): %s" % drifted_items(report))
    if proc.returncode != 0 or report is None:
        print(proc.stderr[-3000:])
        raise SystemExit("the audit through ansible-runner failed (rc %d%s). Hint: %s" % (
            proc.returncode, "" if report else ", no report", hint(proc.stdout + proc.stderr)))
    return report


def check_roce_read(report):
    """The audit's RoCE health section read every switch (each asked only for what its driver renders)."""
    roce = report.get("roce") or {}
    print("RoCE health: %s; read %s" % (roce.get("status", "?").upper(), ", ".join(
        "%s (%s)" % (name, ", ".join(what)) for name, what in sorted((roce.get("read") or {}).items()))))
    if roce.get("not_read") or "qos" not in (roce.get("read") or {}).get("leaf0", ["qos"]):
        raise SystemExit("the audit's RoCE health section did not read every switch: %s" % roce.get("not_read"))


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
    known_hosts = os.path.join(labid.switch_state_root(), "known_hosts")
    # `ansible-inventory --list` gives the port's template: the lab's port, as tests/lab/switches/lab.py has it
    port = labid.switch_port(switch)
    conn = ConnectHandler(device_type=plan_device_type, host=hostvars.get("ansible_host", "127.0.0.1"),
                          port=port, username=hostvars.get("ansible_user", "admin"),
                          password=hostvars.get("ansible_password", "admin"), ssh_strict=True,
                          system_host_keys=False, alt_host_keys=True, alt_key_file=known_hosts)
    try:
        conn.send_config_set(commands, error_pattern=r"% Invalid input|% Incomplete command")
    finally:
        conn.disconnect()


def main():
    try:
        return run()
    except subprocess.CalledProcessError as exc:
        output = "%s%s" % (exc.stdout or "", exc.stderr or "")
        print(output[-3000:])
        raise SystemExit("%s failed (rc %d). Hint: %s" % (" ".join(exc.cmd[:3]), exc.returncode, hint(output)))


def run():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--with-runner", action="store_true", help="also run the audit through ansible-runner (AWX layout)")
    args = parser.parse_args()
    inv = inventory()
    have_switches = "leaf1" in inv["_meta"]["hostvars"]

    say("bring-up: ansible-playbook playbooks/site.yml")
    playbook("site.yml")
    validation_closing = validation_summary()
    lab = lab_hosts()
    check_lldp_report(lab.lab_topology()[0])
    check_miscabled(lab)
    say("second run changes nothing (validation skipped: its report holds measurements, which may differ)")
    recap = playbook("site.yml", "--skip-tags", "validate")
    changed = dict((host, counts[0]) for host, counts in recap.items() if counts[0])
    if changed:
        raise SystemExit("second site.yml run changed: %s" % changed)
    print("changed=0 on %d hosts" % len(recap))

    say("audit: zero drift expected%s" % (" (through ansible-runner, AWX layout)" if args.with_runner else ""))
    report = runner_audit() if args.with_runner else audit()
    if report["drift"]:
        raise SystemExit("unexpected drift after bring-up: %s" % drifted_items(report))
    print("%s: %d devices" % (report.get("verdict", "IN SYNC"), report["summary"]["devices"]))
    if have_switches:
        check_roce_read(report)
    if not report.get("ready", True):
        print("NOT READY is expected in this lab: its GPU hosts are containers without RDMA NICs, GPUs or GPUDirect "
              "(host_preflight findings); it is not drift. gpu04's preflight reads its synthetic 8x MI300X + Broadcom "
              "bnxt_re tree instead (RCCL's rules, bnxt modules): see build/preflight/preflight.md")

    say("inject drift: gpu02 rail1 MTU 1500%s" % (", leaf1 Ethernet1 MTU 1500" if have_switches else ""))
    subprocess.run(["podman", "exec", labid.container("gpu02"), "ip", "link", "set", "rail1", "mtu", "1500"], check=True,
                   capture_output=True, text=True)
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
    print("The bring-up's %s" % validation_closing)  # the validation's verdict, and why, as the demo's last line
    return 0


if __name__ == "__main__":
    sys.exit(main())
