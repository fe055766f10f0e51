"""A real Slurm on this machine for the scheduler tests (test plumbing): munged, slurmctld and one slurmd per node.

Debian 12's slurm-wlm 22.05 and munge (tools/setup-system.sh). Every node is a slurmd of its own on localhost
(``NodeName=X NodeHostname=localhost NodeAddr=127.0.0.1 Port=P`` and ``slurmd -N X``), with its own spool, pid and
log files (``%n``), so one machine holds a cluster whose node names are the plan's GPU hosts. Everything lives in
one directory (key, sockets, state, logs); ports are this checkout's (tests/lab/labid.py SLURM_PORT + offset).

    python3 slurm_cluster.py up DIR NODE... | down DIR
"""
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import labid  # noqa: E402

BINARIES = ("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/scontrol")


def missing():
    return [b for b in BINARIES if not os.access(b, os.X_OK)]


def conf(root, nodes, port, topology=True):
    lines = [
        "ClusterName=aiftest", "SlurmctldHost=localhost", "SlurmctldPort=%d" % port, "SlurmdPort=%d" % (port + 1),
        "AuthType=auth/munge", "AuthInfo=socket=%s/munge/munge.sock" % root, "CredType=cred/munge",
        "StateSaveLocation=%s/state" % root, "SlurmdSpoolDir=%s/spool/%%n" % root,
        "SlurmctldPidFile=%s/slurmctld.pid" % root, "SlurmdPidFile=%s/slurmd-%%n.pid" % root,
        "SlurmctldLogFile=%s/log/slurmctld.log" % root, "SlurmdLogFile=%s/log/slurmd-%%n.log" % root,
        "SlurmUser=root", "SlurmdUser=root", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none", "SelectType=select/cons_tres", "MpiDefault=none",
        "ReturnToService=2", "SlurmdTimeout=30",
    ]
    if topology:
        lines.append("TopologyPlugin=topology/tree")
    for index, node in enumerate(nodes):
        lines.append("NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d CPUs=1 RealMemory=100 "
                     "State=UNKNOWN" % (node, port + 1 + index))
    lines.append("PartitionName=gpu Nodes=ALL Default=YES State=UP")
    return "\n".join(lines) + "\n"


def env(root):
    return dict(os.environ, SLURM_CONF=os.path.join(root, "slurm.conf"))


def scontrol(root, *args):
    return subprocess.run(["scontrol"] + list(args), env=env(root), capture_output=True, text=True, timeout=30,
                          check=False)


def up(root, nodes, topology_conf=None, offset=None):
    """Start munged, slurmctld and a slurmd per node; wait until every node is idle. Returns the env to use."""
    if len(nodes) > 9:
        raise SystemExit("at most 9 nodes (ports SLURM_PORT+1..+9 of this checkout)")
    port = labid.SLURM_PORT + (labid.port_offset() if offset is None else offset)
    down(root)
    for sub in ("munge", "state", "spool", "log"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    os.chmod(os.path.join(root, "munge"), 0o711)
    key = os.path.join(root, "munge", "munge.key")
    with open(key, "wb") as handle:
        handle.write(os.urandom(1024))
    os.chmod(key, 0o600)
    with open(os.path.join(root, "slurm.conf"), "w") as handle:
        handle.write(conf(root, nodes, port, topology_conf is not None))
    if topology_conf is not None:
        with open(os.path.join(root, "topology.conf"), "w") as handle:
            handle.write(topology_conf)
    munge = os.path.join(root, "munge")
    subprocess.run(["/usr/sbin/munged", "-f", "--socket=%s/munge.sock" % munge, "--key-file=%s" % key,
                    "--log-file=%s/log/munged.log" % root, "--pid-file=%s/munged.pid" % munge,
                    "--seed-file=%s/seed" % munge], check=True, timeout=30)
    subprocess.run(["/usr/sbin/slurmctld", "-i"], env=env(root), check=True, timeout=30)
    for node in nodes:
        subprocess.run(["/usr/sbin/slurmd", "-N", node], env=env(root), check=True, timeout=30)
    deadline = time.time() + 60
    while time.time() < deadline:
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], env=env(root), capture_output=True, text=True,
                             check=False)
        states = dict(line.split() for line in out.stdout.splitlines() if line.strip())
        if sorted(states) == sorted(nodes) and set(states.values()) == {"idle"}:
            return env(root)
        time.sleep(0.5)
    raise RuntimeError("Slurm nodes not idle after 60 s: %s; logs in %s/log" % (out.stdout or out.stderr, root))


def _stop(pidfile):
    try:
        with open(pidfile) as handle:
            pid = int(handle.read().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _try in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def down(root):
    """Stop what up() started in ``root`` (by the pid files it wrote)."""
    if not os.path.isdir(root):
        return
    for name in sorted(os.listdir(root)):
        if name.startswith("slurmd-") and name.endswith(".pid"):
            _stop(os.path.join(root, name))
    _stop(os.path.join(root, "slurmctld.pid"))
    _stop(os.path.join(root, "munge", "munged.pid"))


def main(argv):
    if len(argv) >= 2 and argv[0] == "up":
        up(argv[1], argv[2:])
    elif len(argv) == 2 and argv[0] == "down":
        down(argv[1])
        shutil.rmtree(argv[1], ignore_errors=True)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
