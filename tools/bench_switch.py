"""Switch benchmarks (run with the venv python: `make bench-switch`).

1. No-op switch_config vs a bare netmiko connect + one show on the same simulator (EOS leaf,
   already converged), each as its own Python process (interpreter + imports + SSH + show), median
   of N runs; also the in-process library figure (Applier.plan vs ConnectHandler + send_command).
   Target: ratio <= 1.5.
2. Fleet: 64 simulated switches (the lab's four leaf NOSes in turn) on free loopback ports, role
   aifabric.roce.switch in check mode with forks 16; prints the wall time. Target: < 1.5 s per
   switch (measured 0.74 s).
Exits 1 when a target is missed.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_RATIO = 1.5      # no-op switch_config process vs bare netmiko connect + show
TARGET_FLEET_S = 1.5    # check-mode wall time per switch, 64 switches, forks 16

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))

import lab  # noqa: E402

BIN = os.path.dirname(sys.executable)

BARE = r"""
import sys
from netmiko import ConnectHandler
c = ConnectHandler(device_type="arista_eos", host="127.0.0.1", port=int(sys.argv[1]), username="admin", password="admin",
                   system_host_keys=False, alt_host_keys=True, alt_key_file=sys.argv[2], ssh_strict=True, fast_cli=True)
c.send_command("show running-config")
c.disconnect()
"""


def free_ports(n, start=30000):
    out, port = [], start
    while len(out) < n:
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            out.append(port)
        except OSError:
            pass
        finally:
            s.close()
        port += 1
    return out


def start_sims(root, devs):
    """devs: {name: (platform, intent, port)} -> list of Popen; writes known_hosts."""
    key = lab.host_key(root)
    procs, known = [], []
    for name, (platform, intent, port) in sorted(devs.items()):
        lab.reset(name, platform, intent, root)
        d = os.path.join(root, name)
        procs.append(subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "lab", "switches", "simulator.py"), "--name", name,
                                       "--nos", platform, "--port", str(port), "--state-dir", d,
                                       "--host-key", os.path.join(root, "host_key")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        known.append("[127.0.0.1]:%d %s %s" % (port, key.get_name(), key.get_base64()))
    with open(os.path.join(root, "known_hosts"), "w") as fh:
        fh.write("\n".join(known) + "\n")
    for name, spec in devs.items():
        port = spec[2]
        if not lab.wait_port(port, 30):
            raise RuntimeError("simulator %s did not start" % name)
    return procs


def stop_sims(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


def timed(cmd, env=None):
    t = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.time() - t


def bench_noop(root, runs):
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import netmiko_factory
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
    from netmiko import ConnectHandler

    plan = lab.lab_plan()
    intent = plan["leafs"]["leaf1"]
    port = free_ports(1, 31000)[0]
    procs = start_sims(root, {"leaf1": ("eos", intent, port)})
    known = os.path.join(root, "known_hosts")
    try:
        params = dict(host="127.0.0.1", port=port, username="admin", password="admin", device_type=None, host_key_checking=True,
                      known_hosts=known, timeout=10)
        drv = get_driver("eos")
        a = Applier(drv, netmiko_factory(params, drv), intent, plan["qos"], ("qos", "mtu", "pbr"))
        before, after, cmds = a.plan()
        a.apply(before, after, cmds)
        a.close()
        args = os.path.join(root, "args.json")
        with open(args, "w") as fh:
            json.dump({"ANSIBLE_MODULE_ARGS": dict(platform="eos", intent=intent, qos=plan["qos"], host="127.0.0.1", port=port,
                                                   username="admin", password="admin", known_hosts=known)}, fh)
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, ".collections"))
        module = [sys.executable, os.path.join(ROOT, "plugins", "modules", "switch_config.py"), args]
        out = subprocess.run(module, env=env, capture_output=True, text=True, cwd=ROOT, check=False).stdout
        res = json.loads(out)
        assert res["changed"] is False and not res.get("failed"), out
        bare = [sys.executable, "-c", BARE, str(port), known]
        proc_mod = statistics.median([timed(module, env) for dummy in range(runs)])
        proc_bare = statistics.median([timed(bare) for dummy in range(runs)])

        def lib():
            t = time.time()
            b = Applier(drv, netmiko_factory(params, drv), intent, plan["qos"], ("qos", "mtu", "pbr"))
            assert b.plan()[2] == []
            b.close()
            return time.time() - t

        def raw():
            t = time.time()
            c = ConnectHandler(device_type="arista_eos", host="127.0.0.1", port=port, username="admin", password="admin",
                               system_host_keys=False, alt_host_keys=True, alt_key_file=known, ssh_strict=True, fast_cli=True)
            c.send_command("show running-config")
            c.disconnect()
            return time.time() - t
        lib_t = statistics.median([lib() for dummy in range(runs)])
        raw_t = statistics.median([raw() for dummy in range(runs)])
    finally:
        stop_sims(procs)
    print("no-op switch_config (process, median of %d): %.3f s" % (runs, proc_mod))
    print("bare netmiko connect + show (process):        %.3f s" % proc_bare)
    print("ratio (process):                              %.2fx (target <= 1.5x)" % (proc_mod / proc_bare))
    print("in-process: Applier.plan %.3f s vs ConnectHandler+show %.3f s -> %.2fx" % (lib_t, raw_t, lib_t / raw_t))
    return proc_mod / proc_bare


def bench_fleet(root, n, forks):
    plan = lab.lab_plan()
    leafs = [plan["leafs"][k] for k in sorted(plan["leafs"])]
    ports = free_ports(n, 32000)
    devs, records = {}, {}
    for i in range(n):
        name = "fleet%02d" % i
        intent = dict(leafs[i % len(leafs)])
        devs[name] = (intent["platform"], intent, ports[i])
        records[name] = intent
    procs = start_sims(root, devs)
    try:
        inv = os.path.join(root, "fleet.json")
        with open(inv, "w") as fh:
            json.dump({"fleet": {"hosts": {name: {"ansible_port": devs[name][2]} for name in devs},
                                 "vars": {"ansible_host": "127.0.0.1", "ansible_user": "admin", "ansible_password": "admin",
                                          "ansible_connection": "local",
                                          "switch_known_hosts": os.path.join(root, "known_hosts")}}}, fh)
        # each switch's slice, as role aifabric.roce.plan would write it (QoS + MTU sections only)
        planfile = os.path.join(root, "slices.json")
        with open(planfile, "w") as fh:
            json.dump({"fleet_slices": dict((name, dict(records[name], qos=plan["qos"], kind="spine")) for name in records)}, fh)
        book = os.path.join(root, "fleet.yml")
        with open(book, "w") as fh:
            fh.write("- name: Fleet switch QoS\n  hosts: fleet\n  gather_facts: false\n  roles:\n    - role: aifabric.roce.switch\n"
                     "      vars:\n        switch_intent: \"{{ fleet_slices[inventory_hostname] }}\"\n")
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
        cmd = [os.path.join(BIN, "ansible-playbook"), "-i", inv, "-e", "@" + planfile, "-f", str(forks), "--check", book]
        t = time.time()
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.time() - t
        if proc.returncode != 0:
            raise RuntimeError(proc.stdout[-3000:] + proc.stderr[-2000:])
        recap = [line for line in proc.stdout.splitlines() if line.startswith("fleet") and "ok=" in line]
        assert len(recap) == n and all("failed=0" in r and "unreachable=0" in r for r in recap), recap
    finally:
        stop_sims(procs)
    print("fleet: %d switches, forks %d, switch role (qos, mtu) --check: %.1f s wall (%.2f s per switch)" % (n, forks, wall, wall / n))
    return wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fleet", type=int, default=64)
    ap.add_argument("--forks", type=int, default=16)
    ap.add_argument("--skip-fleet", action="store_true")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="aif-bench-switch-")
    try:
        os.makedirs(os.path.join(root, "noop"))
        ratio = bench_noop(os.path.join(root, "noop"), args.runs)
        missed = [] if ratio <= TARGET_RATIO else ["no-op ratio %.2fx (target <= %sx)" % (ratio, TARGET_RATIO)]
        if not args.skip_fleet:
            os.makedirs(os.path.join(root, "fleet"))
            per_switch = bench_fleet(os.path.join(root, "fleet"), args.fleet, args.forks) / args.fleet
            if per_switch >= TARGET_FLEET_S:
                missed.append("fleet %.2f s per switch (target < %s s)" % (per_switch, TARGET_FLEET_S))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for text in missed:
        print("MISSED: %s" % text)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
