"""LLDP in the podman lab (test plumbing, not product code): what validate.yml's neighbour check reads.

Every GPU host container runs lldpd (the image has it: build-image.sh), so ``lldpctl -f json`` on the host
answers as on a real server. The rail leafs' host ports are the bridge-port veths in the leaf namespace
(lab.py), so that namespace runs one lldpd per rail leaf, restricted with ``-I`` to that rail's bridge ports,
that announces what the leaf would: system name = the leaf's plan name, and per port the port id the NOS
prints for it (the cabling plan's ``leaf_port``: EOS Ethernet1, NX-OS Ethernet1/1, NVUE swp1, AsterNOS
Ethernet0) as a locally assigned port id, and the port description ``<server> <netdev>``.

Linux bridges never forward 01:80:c2:00:00:0e (it is outside the default group_fwd_mask), so a host hears
only its own leaf port; lldpd reads and writes each port through a packet socket bound to the veth, which sees
the frame before the bridge does. ``wait_neighbours`` checks both directions before ``lab.py up`` returns.

The leaf daemons share the machine's /run (the namespace has no mount namespace of its own), so each gets a
control socket of its own (``-u``) in a directory under /tmp named after the lab id; they run in the
foreground (``-d``: a daemonized lldpd writes the machine's /run/lldpd.pid) in sessions of their own, and their
pids are kept in that directory for ``lab.py down``. Their privilege-separated halves chroot to lldpd's
compiled-in /run/lldpd (shared, read-only use) and run as ``_lldpd``, which must read the config files: hence
a 0755 directory outside any 0700 one (the twin learnt this: tests/lab/twin/twin.py start_lldpd).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

TX_INTERVAL = 2        # seconds: a leaf port id change reaches the host within one interval
READY_SECONDS = 40     # the hosts' lldpd keep the default 30 s interval (each sends at start): a restarted leaf hears them in 30 s


def leaf_ports(hosts, leaf_port_name):
    """{leaf: {"rail": rail, "ports": [(bridge port, planned port id, description), ...]}} from the hosts' plan NICs.

    ``hosts`` are lab.py's topology entries (their NICs carry the plan's ``leaf`` and ``leaf_port``);
    ``leaf_port_name(host, rail)`` names the leaf-side veth of that host's rail NIC."""
    leafs = {}
    for host in hosts:
        for nic in host["nics"]:
            entry = leafs.setdefault(nic["leaf"], {"rail": nic["rail"], "ports": []})
            if entry["rail"] != nic["rail"]:
                raise SystemExit("lab: leaf %s serves rails %s and %s; the lab's leaf namespace has one bridge per rail"
                                 % (nic["leaf"], entry["rail"], nic["rail"]))
            entry["ports"].append((leaf_port_name(host, nic["rail"]), nic["leaf_port"], "%s %s" % (host["name"], nic["netdev"])))
    for entry in leafs.values():
        entry["ports"].sort()
    return leafs


def leaf_config(name, spec):
    """lldpcli commands that make one leaf's lldpd announce the plan's names (lldpcli(8) `configure` syntax)."""
    lines = ["configure system hostname %s" % name, "configure lldp tx-interval %d" % TX_INTERVAL]
    for port, port_id, description in spec["ports"]:
        lines.append("configure ports %s lldp portidsubtype local %s" % (port, port_id))
        lines.append('configure ports %s lldp portdescription "%s"' % (port, description))
    return "\n".join(lines) + "\n"


def parse_interfaces(text):
    """`lldpcli -f json show interfaces` -> {interface: (port id, port description)}."""
    try:
        interfaces = json.loads(text or "{}").get("lldp", {}).get("interface", [])
    except ValueError:
        return {}
    if isinstance(interfaces, dict):
        interfaces = [{name: value} for name, value in interfaces.items()]
    out = {}
    for entry in interfaces:
        for name, info in entry.items():
            port = info.get("port", {})
            port_id = port.get("id", {})
            out[name] = (port_id.get("value") if isinstance(port_id, dict) else port_id, port.get("descr"))
    return out


class LeafDaemons:
    """The leaf namespace's lldpd, one per rail leaf; files under ``run_dir`` (<leaf>.conf/.socket/.pid/.log)."""

    def __init__(self, run_dir, netns):
        self.run_dir = run_dir
        self.netns = netns
        self.enter = ["ip", "netns", "exec", netns]

    def path(self, leaf, suffix):
        return os.path.join(self.run_dir, "%s.%s" % (leaf, suffix))

    def lldpcli(self, leaf, *args):
        return subprocess.run(self.enter + ["lldpcli", "-u", self.path(leaf, "socket")] + list(args),
                              capture_output=True, text=True, check=False)

    def pids(self):
        """{leaf: pid} of the daemons this lab started that still run: lldpd in the leaf namespace (lldpd rewrites
        its command line, "lldpd: monitor.", so the pid's name and network namespace identify it)."""
        out = {}
        try:
            netns = os.stat("/run/netns/%s" % self.netns)
        except OSError:
            netns = None
        if not os.path.isdir(self.run_dir) or netns is None:
            return out
        for entry in sorted(os.listdir(self.run_dir)):
            if not entry.endswith(".pid"):
                continue
            leaf = entry[:-4]
            try:
                with open(os.path.join(self.run_dir, entry), encoding="utf-8") as handle:
                    pid = int(handle.read().strip())
                with open("/proc/%d/comm" % pid, encoding="utf-8") as handle:
                    comm = handle.read().strip()
                ns = os.stat("/proc/%d/ns/net" % pid)
            except (OSError, ValueError):
                continue
            # a pid that ended and was reused by something else is not ours
            if comm == "lldpd" and (ns.st_dev, ns.st_ino) == (netns.st_dev, netns.st_ino):
                out[leaf] = pid
        return out

    def ensure(self, leafs):
        """Start the missing daemons and (re)apply every leaf's config (a recreated veth comes back with lldpd's
        defaults). Returns the leafs started."""
        if not (shutil.which("lldpd") and shutil.which("lldpcli")):
            raise SystemExit("lab: lldpd is not installed on this machine (the leaf namespace runs it): "
                             "bash tools/setup-system.sh, or apt-get install lldpd")
        os.makedirs(self.run_dir, exist_ok=True)
        os.chmod(self.run_dir, 0o755)   # _lldpd reads the configs and binds the sockets here
        running = self.pids()
        started = []
        for leaf, spec in sorted(leafs.items()):
            conf = self.path(leaf, "conf")
            with open(conf, "w", encoding="utf-8") as handle:
                handle.write(leaf_config(leaf, spec))
            os.chmod(conf, 0o644)
            if leaf in running:
                result = self.lldpcli(leaf, "-c", conf)
                if result.returncode != 0:
                    raise SystemExit("lab: lldpd of %s refused its config %s: %s" % (leaf, conf, result.stderr.strip()))
                continue
            if os.path.exists(self.path(leaf, "socket")):
                os.unlink(self.path(leaf, "socket"))   # left by a daemon that was killed: lldpd refuses a stale socket
            with open(self.path(leaf, "log"), "a", encoding="utf-8") as log:
                proc = subprocess.Popen(self.enter + ["lldpd", "-d", "-u", self.path(leaf, "socket"), "-O", conf,
                                                      "-I", ",".join(port for port, _id, _descr in spec["ports"])],
                                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True)
            with open(self.path(leaf, "pid"), "w", encoding="utf-8") as handle:
                handle.write("%d\n" % proc.pid)
            started.append(leaf)
        return started

    def announced(self, leaf):
        return parse_interfaces(self.lldpcli(leaf, "-f", "json", "show", "interfaces").stdout)

    def neighbours(self, leaf):
        return _neighbours(self.lldpcli(leaf, "-f", "json", "show", "neighbors").stdout)

    def stop(self):
        """Stop the daemons this lab started (by their recorded pids), then remove the directory."""
        pids = self.pids()
        for pid in pids.values():
            try:
                os.killpg(pid, signal.SIGTERM)
            except OSError:
                pass
        deadline = time.monotonic() + 5
        while any(os.path.exists("/proc/%d" % pid) for pid in pids.values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(self.run_dir, ignore_errors=True)


def _neighbours(text):
    """`lldpctl -f json` -> {interface: (system name, port id)}, read by the product's own probe parser."""
    from ansible_collections.aifabric.roce.plugins.module_utils.validate.probes import parse_lldp  # pylint: disable=import-outside-toplevel
    return parse_lldp(text)


def host_lldpd_running(container):
    return subprocess.run(["podman", "exec", container, "lldpcli", "-f", "json", "show", "configuration"],
                          capture_output=True, text=True, check=False).returncode == 0


def ensure_host(container):
    """lldpd in a GPU host container, with the package's defaults (as an operator installs it on a server);
    it daemonizes inside the container (its own /run: ``lldpctl`` there reaches it). Returns True when started."""
    if host_lldpd_running(container):
        return False
    result = subprocess.run(["podman", "exec", container, "lldpd"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        # a container kept from a lab started before the image had lldpd: up keeps running containers
        raise SystemExit("lab: lldpd did not start in %s (%s); if its image predates lldpd in build-image.sh, "
                         "recreate the lab: make lab-down && make lab-up" % (container, (result.stderr or result.stdout).strip()))
    return True


def host_neighbours(container):
    return _neighbours(subprocess.run(["podman", "exec", container, "lldpctl", "-f", "json"],
                                      capture_output=True, text=True, check=False).stdout)


def wait_neighbours(daemons, leafs, hosts, seconds=READY_SECONDS):
    """Until every host sees, on every rail NIC, its planned leaf and port, and every leaf port sees its host:
    the frames really cross the veths and bridge ports. Raises naming what is still missing."""
    want_hosts = dict((host["container"], dict((nic["netdev"], (nic["leaf"], nic["leaf_port"])) for nic in host["nics"]))
                      for host in hosts)
    want_leafs = {}
    for leaf, spec in leafs.items():
        want_leafs[leaf] = dict((port, descr.split()[0]) for port, _id, descr in spec["ports"])
    deadline = time.monotonic() + seconds
    while True:
        gone = sorted(set(leafs) - set(daemons.pids()))
        if gone:
            raise SystemExit("lab: the lldpd of %s stopped; see %s" % (", ".join(gone), daemons.path(gone[0], "log")))
        missing = []
        for leaf, spec in sorted(leafs.items()):
            announced = daemons.announced(leaf)
            for port, port_id, descr in spec["ports"]:
                if announced.get(port) != (port_id, descr):
                    missing.append("%s %s announces %s, not %s" % (leaf, port, announced.get(port), (port_id, descr)))
            seen = daemons.neighbours(leaf)
            for port, host in sorted(want_leafs[leaf].items()):
                if (seen.get(port) or (None,))[0] != host:
                    missing.append("%s %s hears %s, not %s" % (leaf, port, seen.get(port), host))
        for container, want in sorted(want_hosts.items()):
            seen = host_neighbours(container)
            for netdev, neighbour in sorted(want.items()):
                if seen.get(netdev) != neighbour:
                    missing.append("%s %s hears %s, not %s" % (container, netdev, seen.get(netdev), neighbour))
        if not missing:
            return
        if time.monotonic() > deadline:
            raise SystemExit("lab: LLDP not exchanged within %d s (%d missing), e.g.:\n  %s\nleaf daemon logs: %s"
                             % (seconds, len(missing), "\n  ".join(missing[:8]), daemons.run_dir))
        time.sleep(0.5)
