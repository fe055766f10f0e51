"""The virtual lab's GPU hosts and rail gateways (test plumbing, not product code).

    lab.py up      create what is missing (idempotent); builds the image once
    lab.py down    remove every container, netns, bridge and veth this script created
    lab.py status  print what exists, exit 1 when the lab is incomplete

Topology, derived from the lab fabric's plan (inventories/lab/group_vars/all/fabric.yml):

Every name carries this checkout's lab id (tests/lab/labid.py, ``<id>`` below), so the labs of two
checkouts on one machine never meet (`make demo` here leaves a `make test` there alone):

* one podman container per GPU host (``aifabric-<id>-gpu01`` ...), ``--network none``, runc, low ulimits,
  CAP_NET_ADMIN/NET_RAW, writable /proc/sys (the role sets per-NIC sysctls);
* a management link ``eth0`` per host: veth to the bridge ``mgmt`` in the namespace ``aflab-<id>-mgmt``
  (the controller's place on the management network), which holds the management gateway
  192.168.250.1/24: every host is 192.168.250.(10+N) and has a main-table default route via .1
  (Ansible reaches the containers through podman, not over this network; in a namespace of its
  own the subnet is private to this lab);
* one L2 segment per rail: the namespace ``aflab-<id>-leaf`` plays the rail leafs' routed ports: one
  bridge per rail (MTU 9000) carrying each rail subnet's gateway address from the plan (.6 of each
  /29), IPv4 forwarding on, so gateways answer and cross-rail traffic is routed by them;
* each host's rail NIC is the container end of a veth into that bridge, named after the plan's
  netdev (rail0..rail3) and created at MTU 1500, like a NIC nobody has configured yet;
* LLDP (tests/lab/hosts/lab_lldp.py): lldpd in every host container, and in the leaf namespace one lldpd per
  rail leaf on that rail's bridge ports, announcing the leaf's name and, per port, the port the cabling
  plan cables that NIC to (files and pids under /tmp/aif-lab-lldp-<id>); ``up`` returns once every host
  hears its planned neighbours, so validate.yml's LLDP check runs and passes.
"""
from __future__ import annotations

import argparse
import fcntl
import ipaddress
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
FABRIC_FILE = os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")
sys.path.insert(0, os.path.dirname(HERE))
import labid  # noqa: E402  pylint: disable=wrong-import-position
sys.path.insert(0, HERE)
import lab_lldp as lldp  # noqa: E402  pylint: disable=wrong-import-position

LAB_ID = labid.lab_id(ROOT)
LABEL = "aifabric.lab=hosts-" + LAB_ID
PREFIX = "aifabric-%s-" % LAB_ID
LEAF_NS = "aflab-%s-leaf" % LAB_ID
MGMT_NS = "aflab-%s-mgmt" % LAB_ID
MGMT_BRIDGE = "mgmt"
LLDP_DIR = "/tmp/aif-lab-lldp-%s" % LAB_ID
MGMT_NET = ipaddress.ip_network(os.environ.get("LAB_MGMT_NET", "192.168.250.0/24"))
RAIL_MTU = 9000
IMAGE_LOCK = "/tmp/aifabric-lab-image.lock"
NIC_INITIAL_MTU = 1500
# Containers have no RDMA NICs or mlx5 IRQs: each gets a synthetic 8x H100 + 8x ConnectX-7 tree
# (tests/fixtures/hosts/gen_fixtures.py, NICs named rail0..rail7) at HW_ROOT, and the lab inventory
# points the QoS and IRQ roles' `root` there, so they act on files shaped like real sysfs/procfs.
# gpu04 is the lab's non-NVIDIA host: 8x AMD MI300X + 8x Broadcom bnxt_re (firmware DCBX, RCCL amdkfd peer
# memory, the bnxt_re configfs congestion-control group). Its tree takes the plan's NIC names, rail addresses
# and speeds (the fabric has one NIC list for every server, so its bnxt_re devices carry the plan's RDMA names,
# as `rdma dev set <dev> name <new>` would on a real mixed fabric); inventories/lab/host_vars/gpu04.yml points
# its preflight at the tree too, so the audit shows that stack's verdicts (RCCL's rules, bnxt modules and QoS).
HW_ROOT = "/opt/aifabric-hw"
HW_FIXTURE = "h100-cx7"
HW_FIXTURES = {"gpu04": "mi300x-bnxt"}


def run(cmd, check=True, capture=True, quiet=False):
    """Run a command; return stdout (text)."""
    if not quiet and os.environ.get("LAB_VERBOSE"):
        print("+ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, check=False, text=True, stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if capture else None)
    if check and proc.returncode != 0:
        raise SystemExit("lab: command failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), (proc.stderr or "").strip()))
    return proc.stdout if capture else ""


def ok(cmd):
    return subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def lab_topology():
    """Hosts, rails and gateways of the lab, from the planner (one source of truth)."""
    sys.path.insert(0, os.path.join(ROOT, ".collections"))
    import yaml  # pylint: disable=import-outside-toplevel
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan  # pylint: disable=import-outside-toplevel
    with open(FABRIC_FILE, encoding="utf-8") as handle:
        fabric = yaml.safe_load(handle)["fabric"]
    plan = build_plan(fabric)
    hosts = []
    gateways = {}
    for index, name in enumerate(sorted(plan["hosts"]), start=1):
        intent = plan["hosts"][name]
        hosts.append({
            "name": name,
            "container": PREFIX + name,
            "index": index,
            "mgmt_interface": intent["mgmt_interface"],
            "mgmt_address": str(MGMT_NET.network_address + 10 + index),
            "nics": [dict((k, nic[k]) for k in ("rail", "netdev", "leaf", "leaf_port")) for nic in intent["nics"]],
            "plan_nics": [dict((k, nic[k]) for k in ("netdev", "rdma", "gpu", "address", "speed_gbps") if k in nic)
                          for nic in intent["nics"]],
        })
        for nic in intent["nics"]:
            gateways.setdefault(nic["rail"], set()).add("%s/%s" % (nic["gateway"], nic["prefixlen"]))
    return hosts, {rail: sorted(addrs) for rail, addrs in gateways.items()}


def bridge_name(rail):
    return "br-rail%d" % rail


def leaf_port(host, rail):
    return "afl%02dr%d" % (host["index"], rail)


def mgmt_port(host):
    return "m%02d" % host["index"]


def in_leaf(*args):
    return ["ip", "netns", "exec", LEAF_NS] + list(args)


def in_mgmt(*args):
    return ["ip", "netns", "exec", MGMT_NS] + list(args)


def ensure_netns(name):
    if name not in run(["ip", "netns", "list"]).split():
        run(["ip", "netns", "add", name])
    run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"])


def ensure_image():
    # two labs coming up at once (make test: test-e2e beside test-host-network) build the image once: one waits
    with open(IMAGE_LOCK, "a", encoding="ascii") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return run(["bash", os.path.join(HERE, "build-image.sh")]).strip().splitlines()[-1]


def ensure_mgmt_bridge():
    ensure_netns(MGMT_NS)
    if not ok(in_mgmt("ip", "link", "show", "dev", MGMT_BRIDGE)):
        run(in_mgmt("ip", "link", "add", MGMT_BRIDGE, "type", "bridge"))
    gateway = "%s/%d" % (MGMT_NET.network_address + 1, MGMT_NET.prefixlen)
    run(in_mgmt("ip", "addr", "replace", gateway, "dev", MGMT_BRIDGE))
    run(in_mgmt("ip", "link", "set", MGMT_BRIDGE, "up"))


def ensure_leaf(gateways):
    ensure_netns(LEAF_NS)
    run(in_leaf("sysctl", "-qw", "net.ipv4.ip_forward=1"))
    for rail, addrs in sorted(gateways.items()):
        bridge = bridge_name(rail)
        if not ok(in_leaf("ip", "link", "show", "dev", bridge)):
            run(in_leaf("ip", "link", "add", bridge, "mtu", str(RAIL_MTU), "type", "bridge"))
        for addr in addrs:
            run(in_leaf("ip", "addr", "replace", addr, "dev", bridge))
        run(in_leaf("ip", "link", "set", bridge, "mtu", str(RAIL_MTU), "up"))


def leaf_lldpd():
    return lldp.LeafDaemons(LLDP_DIR, LEAF_NS)


def ensure_lldp(hosts):
    """lldpd on the leaf side (one per rail leaf) and in every host, then wait until the frames have crossed."""
    leafs = lldp.leaf_ports(hosts, leaf_port)
    daemons = leaf_lldpd()
    daemons.ensure(leafs)
    for host in hosts:
        lldp.ensure_host(host["container"])
    lldp.wait_neighbours(daemons, leafs, hosts)


def container_pid(host):
    out = run(["podman", "inspect", "-f", "{{.State.Running}} {{.State.Pid}}", host["container"]], check=False).strip()
    if not out:
        return None
    running, pid = out.split()
    if running != "true":
        return None
    # podman's record can outlive the container: when the processes of an earlier lab were killed
    # (a session ending, a reboot without teardown) it still says "running" with a dead PID.
    # Only a live process has a network namespace to join.
    try:
        os.readlink("/proc/%s/ns/net" % pid)
    except OSError:
        return None
    return int(pid)


def ensure_container(host, image):
    pid = container_pid(host)
    if pid:
        return pid
    run(["podman", "rm", "-f", "--ignore", host["container"]])
    run(["podman", "--runtime", "runc", "run", "-d", "--name", host["container"], "--hostname", host["name"],
         "--label", LABEL, "--network", "none", "--cap-add", "NET_ADMIN,NET_RAW",
         "--security-opt", "unmask=/proc/sys", "--sysctl", "net.ipv4.ping_group_range=0 0",
         "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024", image, "sleep", "infinity"])
    return container_pid(host)


def in_host(pid, *args):
    return ["nsenter", "-t", str(pid), "-n"] + list(args)


def ensure_links(host, pid):
    # Management link: the management bridge <-> eth0 (address and default route only if absent).
    mgmt_if = host["mgmt_interface"]
    if not ok(in_host(pid, "ip", "link", "show", "dev", mgmt_if)):
        run(in_mgmt("ip", "link", "del", mgmt_port(host)), check=False)
        run(in_mgmt("ip", "link", "add", mgmt_port(host), "type", "veth", "peer", "name", mgmt_if, "netns", str(pid)))
        run(in_mgmt("ip", "link", "set", mgmt_port(host), "master", MGMT_BRIDGE, "up"))
        run(in_host(pid, "ip", "link", "set", "lo", "up"))
        run(in_host(pid, "ip", "addr", "add", "%s/%d" % (host["mgmt_address"], MGMT_NET.prefixlen), "dev", mgmt_if))
        run(in_host(pid, "ip", "link", "set", mgmt_if, "up"))
        run(in_host(pid, "ip", "route", "replace", "default", "via", str(MGMT_NET.network_address + 1), "dev", mgmt_if))
    # Rail links: leaf bridge <-> railN, the NIC at 1500 as delivered.
    for nic in host["nics"]:
        port = leaf_port(host, nic["rail"])
        if ok(in_host(pid, "ip", "link", "show", "dev", nic["netdev"])):
            continue
        run(in_leaf("ip", "link", "del", port), check=False)
        run(in_leaf("ip", "link", "add", port, "mtu", str(RAIL_MTU), "type", "veth", "peer", "name", nic["netdev"],
                    "mtu", str(NIC_INITIAL_MTU), "netns", str(pid)))
        run(in_leaf("ip", "link", "set", port, "master", bridge_name(nic["rail"]), "up"))
        run(in_host(pid, "ip", "link", "set", nic["netdev"], "up"))


def ensure_hw_tree(host, tree):
    """Copy the synthetic hardware tree into the container once (a fresh container gets a fresh tree)."""
    if ok(["podman", "exec", host["container"], "test", "-d", HW_ROOT + "/root"]):
        return
    run(["podman", "exec", host["container"], "mkdir", "-p", HW_ROOT])
    run(["podman", "cp", os.path.join(tree, "root"), "%s:%s/root" % (host["container"], HW_ROOT)])
    run(["podman", "cp", os.path.join(tree, "tools"), "%s:%s/tools" % (host["container"], HW_ROOT)])


def generate_hw_tree(fixture=HW_FIXTURE, nics=None):
    import tempfile
    out = tempfile.mkdtemp(prefix="aflab-hw-")
    cmd = [sys.executable, os.path.join(ROOT, "tests", "fixtures", "hosts", "gen_fixtures.py")]
    if nics:
        with open(os.path.join(out, "nics.json"), "w", encoding="utf-8") as handle:
            json.dump(nics, handle)
        cmd += ["--nics", os.path.join(out, "nics.json")]
    run(cmd + [out, fixture])
    return os.path.join(out, fixture)


def up(_args):
    import shutil
    hosts, gateways = lab_topology()
    image = ensure_image()
    ensure_mgmt_bridge()
    ensure_leaf(gateways)
    trees = {HW_FIXTURE: generate_hw_tree()}
    try:
        for host in hosts:
            pid = ensure_container(host, image)
            ensure_links(host, pid)
            fixture = HW_FIXTURES.get(host["name"], HW_FIXTURE)
            tree = trees[HW_FIXTURE] if fixture == HW_FIXTURE else generate_hw_tree(fixture, host["plan_nics"])
            trees.setdefault(host["name"], tree)
            ensure_hw_tree(host, tree)
    finally:
        for tree in trees.values():
            shutil.rmtree(os.path.dirname(tree), ignore_errors=True)
    ensure_lldp(hosts)
    return status(_args)


def down(_args):
    names = run(["podman", "ps", "-a", "--filter", "label=" + LABEL, "--format", "{{.Names}}"]).split()
    if names:
        run(["podman", "rm", "-f", "-t", "0"] + names)
    # before the namespace goes: a process inside would keep it alive, unnamed
    leaf_lldpd().stop()
    # the namespaces take their bridges and veth ends with them
    for netns in (LEAF_NS, MGMT_NS):
        if netns in run(["ip", "netns", "list"]).split():
            run(["ip", "netns", "del", netns])
    print("lab hosts: down (lab %s)" % LAB_ID)
    return 0


def status(_args):
    hosts, gateways = lab_topology()
    missing = []
    for host in hosts:
        pid = container_pid(host)
        if not pid:
            missing.append("%s: container not running" % host["container"])
            continue
        names = [link["ifname"] for link in json.loads(run(in_host(pid, "ip", "-j", "link", "show")))]
        for want in [host["mgmt_interface"]] + [nic["netdev"] for nic in host["nics"]]:
            if want not in names:
                missing.append("%s: no %s" % (host["name"], want))
    if MGMT_NS not in run(["ip", "netns", "list"]).split() or not ok(in_mgmt("ip", "link", "show", "dev", MGMT_BRIDGE)):
        missing.append("management bridge (netns %s) missing" % MGMT_NS)
    if LEAF_NS not in run(["ip", "netns", "list"]).split():
        missing.append("netns %s missing" % LEAF_NS)
    else:
        for rail in gateways:
            if not ok(in_leaf("ip", "link", "show", "dev", bridge_name(rail))):
                missing.append("leaf bridge %s missing" % bridge_name(rail))
        running = leaf_lldpd().pids()
        for leaf in sorted(lldp.leaf_ports(hosts, leaf_port)):
            if leaf not in running:
                missing.append("lldpd of %s not running (netns %s)" % (leaf, LEAF_NS))
    for line in missing:
        print("lab hosts: " + line)
    if missing:
        return 1
    print("lab hosts: up (lab %s: %s; mgmt %s, rail gateways %s)" % (
        LAB_ID, ", ".join("%s=%s" % (h["container"], h["mgmt_address"]) for h in hosts), MGMT_NET,
        ", ".join(a for addrs in gateways.values() for a in addrs)))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("action", choices=["up", "down", "status"])
    args = parser.parse_args()
    return {"up": up, "down": down, "status": status}[args.action](args)


if __name__ == "__main__":
    sys.exit(main())
