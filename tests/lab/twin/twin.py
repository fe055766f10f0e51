# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The routed twin: a plan's leafs and spines as network namespaces running FRR, wired as the
plan's cabling, with its GPU hosts as light namespaces on their leaf ports.

    twin.py up   [--plan plan.json | --inventory inventories/lab] [--state build/twin] [--configure]
                 (writes <state>/plan/ with plan.json and devices/*.json, <state>/inventory.yml)
    twin.py down [--state build/twin]

Per router: namespace ``<prefix><name>`` (prefix ``aif<lab id>-``, this checkout's: two checkouts' twins live side by
side; ``--ns-prefix``), FRR 8.4 ``zebra``/``bgpd``/``pbrd`` started with ``-N <prefix><name>`` (config
/etc/frr/<prefix><name>/frr.conf), IPv4 forwarding on, L4 ECMP hashing
(``fib_multipath_hash_policy=1``: the UDP source port of RoCEv2 enters the hash), and interfaces
named as the plan's ports. Each router's management path is an SSH endpoint on 127.0.0.1 (ports from this checkout's
own first port, labid.twin_up_names, or ``--base-port``; one
asyncssh server process for all routers, tests/lab/twin/sshd.py) whose sessions are a real bash
inside the router's namespace with ``vtysh`` bound to that router: the controller reaches it
with netmiko device_type ``linux``, the same path switch_config takes to a whitebox switch.

The twin configures links and bridges (what the OS does on a whitebox switch), never FRR: the
FRR config comes from the ``frr`` driver, pushed with ``--configure`` (or switch_config).
GPU hosts are left unconfigured (rail NICs down at MTU 1500, no address) and reached like real hosts:
an SSH endpoint per host on 127.0.0.1 (the same sshd, root, public key <state>/ssh_client_key) whose
sessions run bash in the host's network namespace and in a mount namespace of its own (/sys of the
netns, /etc and /opt as overlays whose writes land in <state>/hosts/<name>/), listed in the inventory's
``gpu_hosts``, so site.yml's host roles converge them. ``--host-config`` keeps the old behaviour: the
twin gives the hosts the plan's MTU, addresses, routes, rules and sysctls itself, and no endpoints.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import labid  # noqa: E402  (tests/lab/labid.py: this checkout's twin names and ports)

FRR_DAEMONS = ("zebra", "bgpd", "pbrd")
# without --ns-prefix/--base-port: this checkout's own (labid.twin_up_names), so two checkouts' twins live side by side
PREFIX, BASE_PORT = labid.twin_up_names()
TWIN_UP_PORTS = labid.TWIN_UP_STEP
PASSWORD = "twin"   # lab-only credential of the twin's management SSH
CLIENT_KEY = "ssh_client_key"   # the controller's key for the GPU hosts (root, public key; written by sshd.py)


def run(*args, check=True):
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    if check and out.returncode:
        raise RuntimeError("%s: %s" % (" ".join(args), out.stderr.strip() or out.stdout.strip()))
    return out.stdout


def nsrun(ns, *args, check=True):
    return run("ip", "netns", "exec", ns, *args, check=check)


def ns_of(name):
    return PREFIX + name


def set_prefix(prefix):
    """Namespace prefix: a test twin (``aift-``) never meets the one `make twin-up` built."""
    global PREFIX
    PREFIX = prefix


def say_what_the_gear_differs_in(intent):
    """The twin runs every router as FRR, which renders and verifies everything: say what the inventory's own platforms
    will not configure or cannot verify (plan.yml's warnings, nos/capabilities.py), so the twin's green is read right."""
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import capabilities
    try:
        lines = capabilities.warning_lines(capabilities.platform_notes(build_plan(intent)))
    except Exception as exc:  # noqa: BLE001 - the twin's own plan (below) reports a bad intent by key path
        lines = ["(the inventory's own plan failed: %s)" % exc]
    for line in lines:
        print("twin: every router runs frr here; on your gear, %s" % line, file=sys.stderr)


def load_plan(args):
    if args.plan:
        with open(args.plan) as handle:
            return json.load(handle)
    sys.path.insert(0, os.path.join(ROOT, ".collections"))
    import yaml
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
    source = args.intent_file or os.path.join(args.inventory, "group_vars", "all", "fabric.yml")
    with open(source) as handle:
        intent = yaml.safe_load(handle)["fabric"]
    say_what_the_gear_differs_in(intent)
    # The twin's routers run FRR whatever the inventory's NOS: same plan, `frr` driver.
    intent["leafs"].update(platform="frr", device_type=None, platform_overrides={})
    intent["spines"].update(platform="frr", device_type=None)
    if args.port_name:
        for model in intent["switch_models"].values():
            model["port_name"] = args.port_name
    args.intent = intent     # into the inventory: playbooks (validate.yml) plan the twin's fabric again
    return build_plan(intent)


IFNAME = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")   # Linux: at most 15 bytes (IFNAMSIZ), no '/', no space


def check_port_names(plan):
    bad = sorted(set(port for _name, record in routers(plan)
                     for port in [d["port"] for d in record["downlinks"]] + [u["port"] for u in record.get("uplinks", [])]
                     if not IFNAME.match(port)))
    if bad:
        raise SystemExit("port names %s are not Linux interface names (a router of the twin is a Linux box): "
                         "rerun with --port-name, e.g. --port-name 'swp{port}s{lane}'" % ", ".join(bad[:5]))


def write_plan_dir(plan, plan_dir):
    """plan.json and one slice per device, as role aifabric.roce.plan writes them (planstore)."""
    sys.path.insert(0, os.path.join(ROOT, ".collections"))
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import write_plan
    write_plan(plan, plan_dir)


def routers(plan):
    return list(plan["leafs"].items()) + list(plan["spines"].items())


def batch(ns, commands):
    """Run iproute2 commands in one `ip [-n ns] -batch -` process; stops at the first failure."""
    if not commands:
        return
    out = subprocess.run(["ip"] + (["-n", ns] if ns else []) + ["-batch", "-"], input="\n".join(commands) + "\n",
                         capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError("ip -batch%s: %s" % (" in %s" % ns if ns else "", out.stderr.strip()))


PARKED = "parked-ports"   # namespace holding the far ends of the leaf ports of hosts the twin does not run


def emulated_hosts(plan, limit=None):
    """The GPU hosts the twin runs, in plan order: all, or the first ``limit`` (a 4K-GPU twin keeps all its
    routers but only as many hosts as the machine can converge: whole server groups first, plan order)."""
    names = list(plan["hosts"])
    return names if limit is None else names[:limit]


def wiring(plan, host_config=False, hosts=None):
    """iproute2 commands: veth pairs created straight into their namespaces with the plan's port
    names (root namespace), and per namespace what comes up on them (links, bridges; with
    ``host_config`` also the host addresses, routes and rules). Without it a host NIC is left as a
    NIC nobody has configured (down, MTU 1500, no address): site.yml's host_network converges it.
    A host not in ``hosts`` (default: all) is not run: each of its leaf ports is a veth whose peer is up in
    the namespace PARKED (no dummy interfaces: this kernel has no dummy driver), so the leaf's bridges and its
    FRR config (PBR per host port) see every planned port, with carrier, as with a cabled idle host."""
    links, per_ns = [], {}
    hosts = list(plan["hosts"]) if hosts is None else hosts
    running = set(hosts)

    def add(ns, command):
        per_ns.setdefault(ns, []).append(command)

    for name in [pair[0] for pair in routers(plan)] + hosts:
        add(ns_of(name), "link set lo up")
    # leaf <-> spine links, as views.cabling (leaf uplink port <-> spine downlink port)
    for name, leaf in plan["leafs"].items():
        for uplink in leaf["uplinks"]:
            links.append("link add %s netns %s mtu %d type veth peer name %s netns %s mtu %d" % (
                uplink["port"], ns_of(name), leaf["mtu"], uplink["spine_port"], ns_of(uplink["spine"]), leaf["mtu"]))
            add(ns_of(name), "link set %s up" % uplink["port"])
            add(ns_of(uplink["spine"]), "link set %s up" % uplink["spine_port"])
    # host <-> leaf links (host side at the host MTU with --host-config, else unconfigured), then with
    # --host-config the host's plan: addresses, routes, rules
    for name, host in plan["hosts"].items():
        if name not in running:
            for nic in host["nics"]:
                leaf = plan["leafs"][nic["leaf"]]
                peer = "p%d" % len(per_ns.get(ns_of(PARKED), []))
                links.append("link add %s netns %s mtu %d type veth peer name %s netns %s mtu %d" % (
                    nic["leaf_port"], ns_of(nic["leaf"]), leaf["mtu"], peer, ns_of(PARKED), leaf["mtu"]))
                add(ns_of(PARKED), "link set %s up" % peer)
                add(ns_of(nic["leaf"]), "link set %s up" % nic["leaf_port"])
            continue
        ns = ns_of(name)
        for nic in host["nics"]:
            leaf = plan["leafs"][nic["leaf"]]
            links.append("link add %s netns %s mtu %d type veth peer name %s netns %s mtu %d" % (
                nic["netdev"], ns, nic["mtu"] if host_config else NIC_INITIAL_MTU, nic["leaf_port"], ns_of(nic["leaf"]),
                leaf["mtu"]))
            if host_config:
                add(ns, "link set %s up" % nic["netdev"])
                add(ns, "addr add %s/%d dev %s" % (nic["address"], nic["prefixlen"], nic["netdev"]))
            add(ns_of(nic["leaf"]), "link set %s up" % nic["leaf_port"])
        if not host_config:
            continue
        for route in host["routes"]:
            cmd = "route replace %s dev %s table %s" % (route["dst"], route["dev"], route["table"])
            if route.get("via"):
                cmd += " via %s" % route["via"]
            if route.get("src"):
                cmd += " src %s scope %s" % (route["src"], route.get("scope", "link"))
            add(ns, cmd)
        for rule in host["rules"]:
            add(ns, "rule add priority %d from %s table %s" % (rule["priority"], rule["from"], rule["table"]))
    # scheme A: the leaf's host ports are members of a bridge that will hold the SVI's gateway
    for name, leaf in plan["leafs"].items():
        for iface in leaf.get("host_interfaces") or []:
            if iface["kind"] == "svi":
                bridge = "vlan%d" % iface["vlan"]
                add(ns_of(name), "link add %s mtu %d type bridge" % (bridge, leaf["mtu"]))
                for port in iface["members"]:
                    add(ns_of(name), "link set %s master %s" % (port, bridge))
                add(ns_of(name), "link set %s up" % bridge)
    return links, per_ns


NIC_INITIAL_MTU = 1500   # a host NIC nobody has configured yet (as the podman lab's)

ROUTER_SYSCTLS = ("net.ipv4.ip_forward=1", "net.ipv4.fib_multipath_hash_policy=1",
                  "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                  "net.ipv4.conf.all.ignore_routes_with_linkdown=1")


def bootstrap_conf(name):
    # Debian's default profile (/etc/frr/frr.conf ships `frr defaults traditional`); the rest of
    # the config is the frr driver's.
    return "frr version 8.4.4\nfrr defaults traditional\nhostname %s\nno ipv6 forwarding\nservice integrated-vtysh-config\n!\n" % name


def start_frr(ns, name, state):
    etc, var = "/etc/frr/%s" % ns, "/var/run/frr/%s" % ns
    for path in (etc, var):
        os.makedirs(path, exist_ok=True)
        shutil.chown(path, "frr", "frr")
    conf = os.path.join(etc, "frr.conf")
    with open(conf, "w") as handle:
        handle.write(bootstrap_conf(name))
    shutil.chown(conf, "frr", "frr")
    with open(os.path.join(etc, "vtysh.conf"), "w") as handle:
        handle.write("service integrated-vtysh-config\n")
    for daemon in FRR_DAEMONS:
        nsrun(ns, "/usr/lib/frr/%s" % daemon, "-d", "-N", ns, "-f", conf)
    # vtysh of this router, for the management shell's PATH
    bindir = os.path.join(state, "bin", ns)
    os.makedirs(bindir, exist_ok=True)
    with open(os.path.join(bindir, "vtysh"), "w") as handle:
        handle.write("#!/bin/sh\nexec /usr/bin/vtysh -N %s \"$@\"\n" % ns)
    os.chmod(os.path.join(bindir, "vtysh"), 0o755)


def check_ports(base, count, ranges="/proc/sys/net/ipv4/ip_local_port_range"):
    """The twin's SSH ports [base, base + count) must stay out of the kernel's ephemeral range: an outgoing connection
    may hold any port there, and the twin's sshd then fails to bind (seen with a benchmark offset of 8200)."""
    try:
        with open(ranges) as handle:
            low, high = (int(x) for x in handle.read().split())
    except (OSError, ValueError):
        return
    if base < high + 1 and low < base + count:
        raise SystemExit("twin ports %d-%d overlap the kernel's ephemeral ports %d-%d (net.ipv4.ip_local_port_range): "
                         "choose a smaller AIFABRIC_TEST_PORT_OFFSET or --base-port" % (base, base + count - 1, low, high))


def check_free(base, count, state):
    """Every SSH port of the twin must be free on 127.0.0.1 (this state's own twin is already down): a port in use is
    another twin's (a checkout whose lab id shares this one's slot) or another program's. Raises naming the fix."""
    import socket  # pylint: disable=import-outside-toplevel
    taken = []
    for port in range(base, base + count):
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as the twin's sshd: only a listener blocks it
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                taken.append(port)
    if taken:
        raise SystemExit("twin ports %d-%d: %s in use on 127.0.0.1 (another checkout's twin, or another program); nothing "
                         "was built for %s. Give a free range: make twin-up TWIN_BASE_PORT=<port> (twin.py --base-port)"
                         % (base, base + count - 1, ", ".join(str(p) for p in taken[:5]), state))


def up(args):
    t0 = time.monotonic()
    plan = load_plan(args)
    check_port_names(plan)
    state = os.path.abspath(args.state)
    if os.path.exists(os.path.join(state, "twin.json")):
        down(args)
    hosts = emulated_hosts(plan, args.hosts)
    check_ports(args.base_port, len(routers(plan)) + len(hosts))
    if args.base_port == BASE_PORT and len(routers(plan)) + len(hosts) > TWIN_UP_PORTS:
        raise SystemExit("this checkout's twin ports %d-%d hold %d endpoints; the plan needs %d (routers and hosts): give "
                         "a free range, make twin-up TWIN_BASE_PORT=<port> (twin.py --base-port), or fewer hosts "
                         "(twin.py --hosts)" % (BASE_PORT, BASE_PORT + TWIN_UP_PORTS - 1, TWIN_UP_PORTS,
                                                len(routers(plan)) + len(hosts)))
    check_free(args.base_port, len(routers(plan)) + len(hosts), state)
    os.makedirs(state, exist_ok=True)
    write_plan_dir(plan, os.path.join(state, "plan"))
    record = {"routers": {}, "hosts": [], "namespaces": [], "prefix": PREFIX}
    if args.lock_dirs:
        # each router's lock markers in a directory of its own (AIF_LOCK_DIR of its SSH sessions), as on a real
        # switch, where GOM's collector reads them (docs/gom.md); by default they share the machine's /tmp
        record["lock_dirs"] = os.path.join(state, "locks")
        for name, _kind in routers(plan):
            os.makedirs(os.path.join(record["lock_dirs"], name), exist_ok=True)
    with open(os.path.join(state, "twin.json"), "w") as handle:  # written early so `down` can clean a failed `up`
        json.dump(record, handle)
    names = [pair[0] for pair in routers(plan)] + hosts + ([PARKED] if len(hosts) < len(plan["hosts"]) else [])
    existing = set(line.split()[0] for line in run("ip", "netns", "list").splitlines() if line.strip())
    for name in names:
        if ns_of(name) in existing:    # left by a run that was killed: our prefix, so ours to clear
            remove_namespace(ns_of(name))
    # `ip -batch`: one process per namespace instead of one per command (rail512: ~5000 commands)
    batch(None, ["netns add %s" % ns_of(name) for name in names])
    record["namespaces"] = [ns_of(name) for name in names]
    with open(os.path.join(state, "twin.json"), "w") as handle:
        json.dump(record, handle)
    links, per_ns = wiring(plan, args.host_config, hosts)
    batch(None, links)
    for name in names:
        batch(ns_of(name), per_ns.get(ns_of(name), []))
    for name in plan["leafs"].keys() | plan["spines"].keys():
        nsrun(ns_of(name), "sysctl", "-qw", *ROUTER_SYSCTLS)
    record["neighbour_table"] = raise_neighbour_table(plan, hosts)
    for name in hosts:
        host = plan["hosts"][name]
        if host["sysctls"] and args.host_config:
            nsrun(ns_of(name), "sysctl", "-qw", *["%s=%s" % kv for kv in sorted(host["sysctls"].items())])
        record["hosts"].append(name)
    for index, (name, _record) in enumerate(routers(plan)):
        ns = ns_of(name)
        start_frr(ns, name, state)
        record["routers"][name] = {"namespace": ns, "port": args.base_port + index}
    with open(os.path.join(state, "twin.json"), "w") as handle:
        json.dump(record, handle)
    if not args.host_config:   # hosts reached by Ansible (site.yml's host plays); --host-config: configured here, no endpoints
        hosts_up(plan, hosts, record, state, args.base_port + len(record["routers"]))
    with open(os.path.join(state, "twin.json"), "w") as handle:
        json.dump(record, handle)
    start_sshd(plan, record, state)
    if not args.host_config:
        start_lldpd(plan, record, state, hosts)
    write_inventory(plan, record, state, getattr(args, "intent", None))
    with open(os.path.join(state, "twin.json"), "w") as handle:
        json.dump(record, handle)
    record["up_seconds"] = round(time.monotonic() - t0, 2)
    if args.configure:
        t1 = time.monotonic()
        configure(plan, record, state)
        record["configure_seconds"] = round(time.monotonic() - t1, 2)
    record["memory_kib"] = memory_kib(record)
    record["memory_rss_kib"] = memory_kib(record, "Rss")
    with open(os.path.join(state, "twin.json"), "w") as handle:
        json.dump(record, handle, indent=1)
    print(json.dumps({k: record[k] for k in ("up_seconds", "configure_seconds", "memory_kib", "memory_rss_kib") if k in record}))


NEIGH_THRESH = "/proc/sys/net/ipv4/neigh/default/gc_thresh%d"


def neighbour_entries(plan, hosts):
    """ARP entries the twin holds at once, every namespace together: both ends of every fabric /31 (the BGP
    sessions), and per host NIC its leaf's gateway, its ring peer and the leaf's entry for it."""
    fabric = 2 * sum(len(leaf["uplinks"]) for leaf in plan["leafs"].values())
    return fabric + 3 * sum(len(plan["hosts"][h]["nics"]) for h in hosts)


def raise_neighbour_table(plan, hosts):
    """The kernel's IPv4 neighbour table is one table for all network namespaces, capped by the init namespace's
    gc_thresh3 (1024 by default): a 1K-GPU twin (2,048 fabric entries alone) overflows it, the kernel logs
    'neighbor table overflow' and refuses new neighbours, and the hosts' validation pings fail. Raise the caps to
    twice what the twin needs when they are lower (never lowered, not put back by `down`: another twin may be up,
    and a higher cap blocks nothing). Returns what was found and set, for twin.json."""
    need = 2 * neighbour_entries(plan, hosts)
    try:
        with open(NEIGH_THRESH % 3) as handle:
            current = int(handle.read())
    except (OSError, ValueError):
        return None
    out = {"needed": need // 2, "gc_thresh3": current}
    if current < need:
        for index, value in ((1, need // 8), (2, need // 2), (3, need)):
            with open(NEIGH_THRESH % index) as handle:
                if int(handle.read()) >= value:
                    continue
            with open(NEIGH_THRESH % index, "w") as handle:
                handle.write(str(value))
        out["raised_to"] = need
    return out


HW_FIXTURE = "h100-cx7"   # the podman lab's synthetic hardware tree (tests/lab/hosts/lab.py), same path on the host
HW_DIR = "aifabric-hw"    # -> /opt/aifabric-hw/{root,tools} inside every twin host


def overlay(target, lower, upper, work):
    return "mount -t overlay overlay -o lowerdir=%s,upperdir=%s,workdir=%s %s" % (lower, upper, work, target)


def mount_points():
    """Mount points of this mount namespace (/proc/self/mountinfo; os.path.ismount misses same-filesystem binds)."""
    with open("/proc/self/mountinfo") as handle:
        return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4]) for line in handle]


def unmount_host_namespaces(state):
    """Release the persistent mount namespaces bound under <state>/mnt (a killed run's too) and that mount."""
    mnt = os.path.join(state, "mnt")
    points = mount_points()
    for path in sorted(p for p in set(points) if p.startswith(mnt + "/")):
        run("umount", path, check=False)
    for _count in range(points.count(mnt)):
        run("umount", mnt, check=False)


def nic_names(plan, hosts):
    """[{netdev, rdma, gpu}] of the hosts' NICs as the plan names them (one intent: every server alike)."""
    first = plan["hosts"][hosts[0]] if hosts else {"nics": []}
    return [dict((key, nic[key]) for key in ("netdev", "rdma", "gpu") if nic.get(key) is not None)
            for nic in sorted(first["nics"], key=lambda n: n["rail"])]


def hosts_up(plan, hosts, record, state, first_port):
    """Each GPU host gets a filesystem view of its own, entered with its network namespace by the management
    sshd: a persistent mount namespace (bound at <state>/mnt/<namespace>) where /sys shows the host's own
    interfaces, /etc is an overlay of the machine's /etc whose writes land in <state>/hosts/<name>/etc (the
    machine's /etc is never written; `twin.py down` drops them), and /opt is an overlay that adds the podman
    lab's synthetic RDMA tree at /opt/aifabric-hw (writes in <state>/hosts/<name>/opt)."""
    if re.search(r"[,:\s]", state):
        raise SystemExit("state dir %s: overlay mount options cannot hold ',', ':' or blanks; pick another --state" % state)
    unmount_host_namespaces(state)
    hosts_dir = os.path.join(state, "hosts")
    shutil.rmtree(hosts_dir, ignore_errors=True)
    mnt = os.path.join(state, "mnt")
    os.makedirs(mnt, exist_ok=True)
    run("mount", "--bind", mnt, mnt)            # a bind target for namespace files must be a private mount
    run("mount", "--make-private", mnt)
    hw = os.path.join(state, "hw")
    # the synthetic tree's NICs carry the names the intent declares (fabric.servers.nics), not the fixture's railN
    names = os.path.join(hw, "nics.json")
    nics = json.dumps(nic_names(plan, hosts), sort_keys=True)
    if not os.path.isdir(os.path.join(hw, HW_DIR)) or not os.path.isfile(names) or open(names).read() != nics:
        shutil.rmtree(hw, ignore_errors=True)
        os.makedirs(hw)
        with open(names, "w") as handle:
            handle.write(nics)
        run(sys.executable, os.path.join(ROOT, "tests", "fixtures", "hosts", "gen_fixtures.py"), "--nics", names, hw, HW_FIXTURE)
        os.rename(os.path.join(hw, HW_FIXTURE), os.path.join(hw, HW_DIR))
    record["host_endpoints"] = {}
    for index, name in enumerate(hosts):
        ns = ns_of(name)
        base = os.path.join(hosts_dir, name)
        for sub in ("etc", "opt", "run", "work/etc", "work/opt", "work/run"):
            os.makedirs(os.path.join(base, sub))
        nsfile = os.path.join(mnt, ns)
        open(nsfile, "w").close()
        script = " && ".join([
            "umount -l /sys", "mount -t sysfs sysfs /sys",     # as `ip netns exec` does: /sys of this netns
            overlay("/etc", "/etc", os.path.join(base, "etc"), os.path.join(base, "work", "etc")),
            overlay("/opt", "%s:/opt" % hw, os.path.join(base, "opt"), os.path.join(base, "work", "opt")),
            # /run of its own: the host's lldpd answers lldpctl on /run/lldpd.socket (never the machine's lldpd)
            overlay("/run", "/run", os.path.join(base, "run"), os.path.join(base, "work", "run"))])
        run("unshare", "--mount=%s" % nsfile, "--propagation", "slave",
            "nsenter", "--net=/run/netns/%s" % ns, "sh", "-ec", script)
        record["host_endpoints"][name] = {"namespace": ns, "mount_ns": nsfile, "port": first_port + index, "root": base}


def host_exec(record, name, *args, check=True):
    """Run a command on a twin host as its management session does (its network and mount namespaces)."""
    info = record["host_endpoints"][name]
    return run("nsenter", "--net=/run/netns/%s" % info["namespace"], "--mount=%s" % info["mount_ns"], *args, check=check)


def start_sshd(plan, record, state):
    key = os.path.join(state, "ssh_host_key")
    log = open(os.path.join(state, "sshd.log"), "a")
    proc = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sshd.py"),
                             "--state", state, "--key", key, "--password", PASSWORD,
                             "--client-key", os.path.join(state, CLIENT_KEY)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    record["sshd_pid"] = proc.pid
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(state, "known_hosts")):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("twin sshd did not start; see %s" % log.name)
        time.sleep(0.1)


LLDP_TX_INTERVAL = 2   # seconds: neighbours are known a few seconds after a link comes up
LLDP_READY_SECONDS = 20


def start_lldpd(plan, record, state, hosts):
    """lldpd on every leaf (system name = the leaf's plan name, port id = interface name, as validate.yml's LLDP
    probe expects from the cabling plan) and on every GPU host reached by Ansible (in its own /run, so the probe's
    plain ``lldpctl`` asks it). Foreground daemons in their own sessions; pids kept for ``down``.

    Their config files and the leafs' control sockets live in a directory of their own under /tmp, not in the
    state: lldpd drops to its user ``_lldpd``, and so does the lldpcli it runs to apply ``-O`` and resume, so a
    state under a directory only root may enter (Molecule's ``~/.ansible/tmp/molecule.*``, mode 0700) left every
    leaf paused and every host with its default config: no LLDP frame anywhere, every host port "no neighbour".
    Each daemon is waited for until it holds its config, so such a failure stops ``up`` by name."""
    if shutil.which("lldpd") is None:
        print("lldpd not installed (tools/setup-system.sh): validate.yml reports LLDP not run", file=sys.stderr)
        return
    run_dir = tempfile.mkdtemp(prefix="aif-twin-lldp-%s" % PREFIX)
    os.chmod(run_dir, 0o755)   # _lldpd reads its config and binds its socket here
    record["lldp_dir"], record["lldpd_pids"] = run_dir, []
    logs = os.path.join(state, "lldp")
    os.makedirs(logs, exist_ok=True)
    asks = {}

    def start(name, enter, options=()):
        conf = os.path.join(run_dir, "%s.conf" % name)
        with open(conf, "w") as handle:
            handle.write("configure system hostname %s\nconfigure lldp portidsubtype ifname\n"
                         "configure lldp tx-interval %d\n" % (name, LLDP_TX_INTERVAL))
        os.chmod(conf, 0o644)
        log = open(os.path.join(logs, "%s.log" % name), "a")
        proc = subprocess.Popen(enter + ["lldpd", "-d", "-O", conf] + list(options), stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        record["lldpd_pids"].append(proc.pid)
        asks[name] = (enter + ["lldpcli"] + list(options[:2]) + ["-f", "json", "show", "configuration"], log.name)

    for name in sorted(plan["leafs"]):   # the routers share the machine's /run: a control socket each
        start(name, ["ip", "netns", "exec", ns_of(name)], ["-u", os.path.join(run_dir, "%s.socket" % name)])
    for name in hosts:
        info = record.get("host_endpoints", {}).get(name)
        if info:
            start(name, ["nsenter", "--net=/run/netns/%s" % info["namespace"], "--mount=%s" % info["mount_ns"]])
    wait_lldpd(asks)


def wait_lldpd(asks):
    """Until every lldpd answers its own lldpcli (which runs as _lldpd, as validate.yml's lldpctl does) with the
    system name and interval of its config: then it has resumed and sends."""
    deadline = time.monotonic() + LLDP_READY_SECONDS
    waiting = dict(asks)
    while waiting:
        for name, (cmd, log) in list(waiting.items()):
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            try:
                config = json.loads(out.stdout)["configuration"]["config"]
            except (ValueError, KeyError, TypeError):
                config = {}
            if config.get("hostname") == name and config.get("tx-delay") == str(LLDP_TX_INTERVAL):
                del waiting[name]
        if waiting and time.monotonic() > deadline:
            name, (_cmd, log) = sorted(waiting.items())[0]
            raise RuntimeError("lldpd of %s did not take its configuration within %d s (%d daemons waiting); see %s"
                               % (name, LLDP_READY_SECONDS, len(waiting), log))
        if waiting:
            time.sleep(0.2)


def stop_lldpd(record):
    """Stop the lldpd process groups this twin started (only processes still running lldpd), remove their files."""
    for pid in record.get("lldpd_pids", []):
        try:
            with open("/proc/%d/comm" % pid) as handle:
                if handle.read().strip() != "lldpd":
                    continue   # that pid ended and now belongs to something else
            os.killpg(pid, 15)
        except OSError:
            pass
    run_dir = record.get("lldp_dir")
    if run_dir and os.path.basename(run_dir).startswith("aif-twin-lldp-"):
        shutil.rmtree(run_dir, ignore_errors=True)


def write_inventory(plan, record, state, intent=None):
    """Inventory of the twin's routers, reached like switches: group ``twin_routers`` (converge.yml)
    inside ``switches`` (site.yml, audit.yml, validate.yml), and of its GPU hosts (``gpu_hosts``) unless
    they were configured by the twin (--host-config). Built from an inventory, it carries that
    fabric intent (routers as platform frr), ``plan_dir`` (the plan role rewrites the same plan into the
    twin's plan dir) and a build dir under the state (<state>/reports: validate/, audit/, preflight/ and the plan's
    artifacts), so site.yml's plan role plans this same twin."""
    lines = ["# Generated by tests/lab/twin/twin.py: the twin's routers, reached like switches.",
             "all:", "  vars:", "    twin_plan_dir: %s" % os.path.join(state, "plan")]
    if intent is not None:
        lines += ["    plan_dir: %s" % os.path.join(state, "plan"), "    aifabric_build_dir: %s" % os.path.join(state, "reports"),
                  "    fabric: %s" % json.dumps(intent, sort_keys=True)]
    known_hosts = os.path.join(state, "known_hosts")
    lines += ["  children:", "    switches:", "      children:", "        twin_routers:", "          hosts:"]
    for name, info in record["routers"].items():
        lines.append("            %s: {ansible_host: 127.0.0.1, ansible_port: %d, ansible_user: admin, ansible_connection: local, "
                     "ansible_password: %s, switch_known_hosts: %s}" % (name, info["port"], PASSWORD, known_hosts))
    if record.get("host_endpoints"):
        # site.yml's host plays target gpu_hosts: reached over SSH like a real host (root, key, pipelining; the
        # piped transfer method: the twin's sshd has no SFTP), Debian's own python3 running the modules. The connection
        # is named "ssh", as inventories/example names it: ansible-core 2.19 registers the ssh plugin's settings under
        # that name in the playbook process, and a worker asked for "ansible.builtin.ssh" parses the plugin's
        # documentation again (about 13 ms of controller CPU per task and host, docs/benchmarks.md)
        lines += ["    gpu_hosts:", "      vars:",
                  "        ansible_connection: ssh",
                  "        ansible_user: root",
                  "        ansible_ssh_private_key_file: %s" % os.path.join(state, CLIENT_KEY),
                  "        ansible_ssh_common_args: -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes"
                  % known_hosts,
                  "        ansible_ssh_transfer_method: piped",
                  "        ansible_pipelining: true",
                  "        ansible_python_interpreter: /usr/bin/python3",
                  "        # as inventories/lab/group_vars/gpu_hosts.yml: no RDMA NICs or GPUs here. The QoS and IRQ roles act",
                  "        # on the lab's synthetic 8x H100 + 8x ConnectX-7 tree (/opt/aifabric-hw in each host's own /opt),",
                  "        # nothing is persisted through systemd, preflight reports the missing hardware as findings.",
                  "        host_rdma_qos_persist: false",
                  "        host_irq_affinity_persist: false",
                  "        host_preflight_strict: false",
                  "        host_rdma_qos_root: /opt/%s/root" % HW_DIR,
                  "        host_rdma_qos_tool_output_dir: /opt/%s/tools" % HW_DIR,
                  "        host_irq_affinity_root: /opt/%s/root" % HW_DIR,
                  "      hosts:"]
        for name, info in record["host_endpoints"].items():
            lines.append("        %s: {ansible_host: 127.0.0.1, ansible_port: %d}" % (name, info["port"]))
    with open(os.path.join(state, "inventory.yml"), "w") as handle:
        handle.write("\n".join(lines) + "\n")


def connection_params(record, name, state):
    return dict(host="127.0.0.1", port=record["routers"][name]["port"], username="admin", password=PASSWORD,
                device_type=None, host_key_checking=True, known_hosts=os.path.join(state, "known_hosts"), timeout=30)


def configure(plan, record, state):
    """Push every router's plan intent with the frr driver over SSH (switch_config's path)."""
    sys.path.insert(0, os.path.join(ROOT, ".collections"))
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import lock_key, netmiko_factory
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.frr import FrrDriver
    driver = FrrDriver()
    for name, intent in routers(plan):
        intent = dict(intent, name=name)
        params = connection_params(record, name, state)
        tx = Applier(driver, netmiko_factory(params, driver), intent, plan["qos"], sections=("underlay", "pbr"),
                     lock_key=lock_key(params))
        try:
            before, after, cmds = tx.plan()
            if cmds:
                tx.apply(before, after, cmds)
        finally:
            tx.close()


def frr_pids(record):
    """Pids of the twin's FRR daemons, from their pid files (exact: no name matching)."""
    pids = []
    for info in record.get("routers", {}).values():
        for daemon in FRR_DAEMONS:
            try:
                with open("/var/run/frr/%s/%s.pid" % (info["namespace"], daemon)) as handle:
                    pids.append(int(handle.read().strip()))
            except (OSError, ValueError):
                pass
    return pids


def memory_kib(record, field="Pss"):
    """Memory of the twin's FRR daemons and its SSH server, in KiB: the sum of ``Pss`` (shared pages
    split between the processes sharing them) or ``Rss`` (shared pages counted in every process)."""
    total = 0
    pids = frr_pids(record) + ([record["sshd_pid"]] if record.get("sshd_pid") else [])
    for pid in pids:
        try:
            with open("/proc/%d/smaps_rollup" % pid) as handle:
                for line in handle:
                    if line.startswith(field + ":"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def alive(pid):
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def remove_namespace(ns):
    """Stop the FRR daemons of ``ns`` (by their pid files) and delete the namespace and its dirs."""
    pids = []
    for daemon in FRR_DAEMONS:
        try:
            with open("/var/run/frr/%s/%s.pid" % (ns, daemon)) as handle:
                pid = int(handle.read().strip())
            os.kill(pid, 15)
            pids.append(pid)
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + 5   # daemons gone before their namespace and dirs go
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    run("ip", "netns", "del", ns, check=False)
    shutil.rmtree("/etc/frr/%s" % ns, ignore_errors=True)
    shutil.rmtree("/var/run/frr/%s" % ns, ignore_errors=True)


def down(args):
    state = os.path.abspath(args.state)
    path = os.path.join(state, "twin.json")
    if not os.path.exists(path):
        return
    with open(path) as handle:
        record = json.load(handle)
    if record.get("sshd_pid"):
        try:
            os.kill(record["sshd_pid"], 15)
        except OSError:
            pass
    stop_lldpd(record)
    unmount_host_namespaces(state)
    for ns in record.get("namespaces", []):
        remove_namespace(ns)
    shutil.rmtree(os.path.join(state, "hosts"), ignore_errors=True)
    shutil.rmtree(os.path.join(state, "hw"), ignore_errors=True)
    os.remove(path)
    for name in ("known_hosts", "inventory.yml"):
        if os.path.exists(os.path.join(state, name)):
            os.remove(os.path.join(state, name))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("action", choices=["up", "down"])
    parser.add_argument("--plan", help="plan.json to build the twin from")
    parser.add_argument("--inventory", default=os.path.join(ROOT, "inventories", "lab"),
                        help="inventory whose fabric intent is planned (routers as platform frr)")
    parser.add_argument("--state", default=os.path.join(ROOT, "build", "twin"))
    parser.add_argument("--base-port", type=int, default=BASE_PORT,
                        help="first SSH port (default this checkout's, %(default)s: tests/lab/labid.py twin_up_names)")
    parser.add_argument("--configure", action="store_true", help="push the frr driver's config to every router")
    parser.add_argument("--port-name", help="port_name pattern for every switch model (inventory source only), "
                        "when the inventory's port names are not Linux interface names")
    parser.add_argument("--intent", dest="intent_file",
                        help="YAML/JSON file holding the fabric intent under `fabric:` (instead of --inventory's)")
    parser.add_argument("--hosts", type=int, help="run only the first N GPU hosts of the plan (default all); the "
                        "leaf ports of the others are dummy interfaces")
    parser.add_argument("--ns-prefix", default=PREFIX, help="namespace name prefix (default this checkout's, %(default)s)")
    parser.add_argument("--lock-dirs", action="store_true",
                        help="give every router's sessions a lock-marker directory of its own (<state>/locks/<router>, "
                        "AIF_LOCK_DIR) instead of the machine's shared /tmp (GOM's maintenance filter reads them)")
    parser.add_argument("--host-config", action="store_true",
                        help="give the GPU hosts the plan's MTU, addresses, routes, rules and sysctls at bring-up (the "
                        "old behaviour, for tests that configure only the routers); by default site.yml's host roles do it")
    args = parser.parse_args(argv)
    set_prefix(args.ns_prefix)
    if os.geteuid() != 0:
        parser.error("the twin needs root (network namespaces)")
    if args.action == "up":
        up(args)
    else:
        down(args)


if __name__ == "__main__":
    main()
