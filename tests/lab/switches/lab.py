"""Start / stop the switch lab: one simulator process per switch of the lab plan, on 127.0.0.1.

    lab.py up [--fresh]      start all (seed a baseline config when --fresh or none exists)
    lab.py down              stop all
    lab.py status

State lives in $AIFABRIC_SWITCH_LAB (default /tmp/aifabric-lab-<id>/switches): per device a directory
with state.json (running/startup config), faults.json, pid; plus the host key and known_hosts that
the inventory points netmiko at (host key checking stays on). The lab's ports are this checkout's
(tests/lab/labid.py: base + the device's number in PORTS), as inventories/lab computes them; the
tests pass their own ports and state dir.
"""

import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.dirname(HERE))
import labid  # noqa: E402

# Test ports (the integration tests add AIFABRIC_TEST_PORT_OFFSET); the lab itself listens on lab_ports().
PORTS = {"leaf0": 2201, "leaf1": 2202, "leaf2": 2203, "leaf3": 2204, "spine1": 2211, "spine2": 2212}


def state_root():
    return labid.switch_state_root()


def lab_ports():
    """This checkout's lab ports: labid's base + 1..4 (leafs), + 11..12 (spines), like inventories/lab."""
    return {name: labid.switch_port(name) for name in PORTS}


def lab_plan():
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as fh:
        return build_plan(yaml.safe_load(fh)["fabric"])


def devices(plan=None, extra=False):
    plan = plan or lab_plan()
    out = {}
    for name, intent in list(plan["leafs"].items()) + list(plan["spines"].items()):
        out[name] = {"platform": intent["platform"], "port": PORTS.get(name), "intent": intent}
    if extra:
        out.update(extra_devices())
    return out


# Drivers no lab leaf runs on: the fault and concurrency tests add them (`up(extra=True)`).
EXTRA = {"sonic0": ("leaf0", "dell_sonic", 2221), "csonic0": ("leaf0", "community_sonic", 2222)}


def extra_devices():
    """sonic0: Dell Enterprise SONiC (klish) in leaf0's place, planned with every switch on dell_sonic; csonic0:
    community SONiC (CONFIG_DB, GCU) in leaf0's place, planned with every switch on community_sonic."""
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as fh:
        fabric = yaml.safe_load(fh)["fabric"]
    out = {}
    for name, (like, platform, port) in EXTRA.items():
        fab = json.loads(json.dumps(fabric))
        fab["leafs"].pop("platform_overrides", None)
        fab["leafs"]["platform"] = fab["spines"]["platform"] = platform
        out[name] = {"platform": platform, "port": port, "intent": build_plan(fab)["leafs"][like]}
    return out


def seed(name, platform, intent):
    """Baseline config a switch has before we manage it: hostname, port descriptions."""
    if platform == "community_sonic":
        import configdb_sim
        return configdb_sim.seed(name, intent)
    ports = [d["port"] for d in intent.get("downlinks") or []] + [u["port"] for u in intent.get("uplinks") or []]
    # plan port names are the device's own (fabric/platforms.py): swp1 on NVUE, Ethernet1/1 on NX-OS
    if platform == "asternos":   # Easy RoCE's REST model (GET /rest/v1/running/roce) and the switch's own ports
        return {"rest": {"roce-accept": {}, "roce-profiles": []}, "ports": ports}
    if platform == "nvue":
        return sorted(["system hostname %s" % name] + ["interface %s link state up" % p for p in ports])
    tree = [["hostname %s" % name, []]]
    for p in ports:
        tree.append(["interface %s" % p, [["description aifabric %s" % p, []]]])
    return tree


def host_key(root):
    import paramiko
    path = os.path.join(root, "host_key")
    if not os.path.exists(path):
        paramiko.RSAKey.generate(2048).write_private_key_file(path)
    return paramiko.RSAKey(filename=path)


def reset(name, platform, intent, root=None):
    d = os.path.join(root or state_root(), name)
    os.makedirs(d, exist_ok=True)
    running = seed(name, platform, intent)
    with open(os.path.join(d, "state.json"), "w") as fh:
        json.dump({"running": running, "startup": running, "checkpoints": {}, "pending": None, "revision": 1, "sessions": {}}, fh)
    set_faults(name, {}, root)
    if os.path.exists(os.path.join(d, "down_until")):
        os.remove(os.path.join(d, "down_until"))


def set_faults(name, faults, root=None):
    d = os.path.join(root or state_root(), name)
    for old in glob.glob(os.path.join(d, "slowed-*")):   # the moments of the previous faults' sleeps
        os.remove(old)
    with open(os.path.join(d, "faults.json"), "w") as fh:
        json.dump(faults, fh)


def wait_slowed(name, index=0, root=None, timeout=120):
    """Wait until the simulator has started the sleep of ``slow`` spec ``index`` (simulator.py writes the file)."""
    path = os.path.join(root or state_root(), name, "slowed-%d" % index)
    end = time.time() + timeout
    while not os.path.exists(path):
        if time.time() > end:
            raise AssertionError("the simulator of %s never reached slow spec %d" % (name, index))
        time.sleep(0.05)


def read_state(name, root=None):
    with open(os.path.join(root or state_root(), name, "state.json")) as fh:
        return json.load(fh)


def wait_port(port, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def up(fresh=False, only=None, root=None, ports=None, extra=False):
    root = root or state_root()
    os.makedirs(root, exist_ok=True)
    key = host_key(root)
    devs = devices(extra=extra)
    known = []
    for name, dev in sorted(devs.items()):
        if only and name not in only:
            continue
        port = (ports or {}).get(name, dev["port"])
        d = os.path.join(root, name)
        if fresh or not os.path.exists(os.path.join(d, "state.json")):
            reset(name, dev["platform"], dev["intent"], root)
        stop_one(name, root)
        if wait_port(port, 0.05):
            raise RuntimeError("127.0.0.1:%d is already in use (another lab running? `lab.py down`)" % port)
        log = open(os.path.join(d, "sim.log"), "a")
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "simulator.py"), "--name", name, "--nos", dev["platform"],
                                 "--port", str(port), "--state-dir", d, "--host-key", os.path.join(root, "host_key")],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        with open(os.path.join(d, "pid"), "w") as fh:
            fh.write(str(proc.pid))
        known.append("[127.0.0.1]:%d %s %s" % (port, key.get_name(), key.get_base64()))
    with open(os.path.join(root, "known_hosts"), "w") as fh:
        fh.write("\n".join(known) + "\n")
    for name, dev in devs.items():
        if not only or name in only:
            if not wait_port((ports or {}).get(name, dev["port"])):
                raise RuntimeError("simulator %s did not start (see %s/%s/sim.log)" % (name, root, name))
    return root


def is_our_simulator(pid, name):
    """True when PID is a live simulator process for NAME (not a reused PID, not a zombie)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return False
    return any(arg.endswith(b"simulator.py") for arg in argv) and name.encode() in argv


def stop_one(name, root=None):
    pidfile = os.path.join(root or state_root(), name, "pid")
    if os.path.exists(pidfile):
        with open(pidfile) as fh:
            pid = int(fh.read().strip() or 0)
        if not is_our_simulator(pid, name):
            # A pid file left by a lab whose processes were killed: the PID may now be anyone's.
            os.remove(pidfile)
            return
        try:
            os.kill(pid, signal.SIGTERM)
            for dummy in range(50):
                try:  # our own child: reap it, or kill(pid, 0) keeps finding the zombie
                    if os.waitpid(pid, os.WNOHANG)[0] == pid:
                        break
                except ChildProcessError:
                    pass
                os.kill(pid, 0)
                time.sleep(0.02)
        except OSError:
            pass
        os.remove(pidfile)


def down(root=None):
    for name in list(devices()) + list(EXTRA):
        stop_one(name, root)


def main(argv):
    cmd = argv[1] if len(argv) > 1 else "status"
    ports = lab_ports()
    if cmd == "up":
        root = up(fresh="--fresh" in argv, ports=ports)
        print("switch lab up: %s (known_hosts %s/known_hosts)" % (", ".join("%s:%d" % kv for kv in sorted(ports.items())), root))
    elif cmd == "down":
        down()
        print("switch lab down")
    else:
        for name, dev in sorted(devices().items()):
            print("%-7s %-9s 127.0.0.1:%d %s" % (name, dev["platform"], ports[name], "up" if wait_port(ports[name], 0.3) else "down"))


if __name__ == "__main__":
    main(sys.argv)
