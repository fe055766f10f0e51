"""The installed collection works alone (issue 15 item 2).

Builds the tarball the way users get it (tools/build_collection.sh: tracked files only, galaxy.yml
build_ignore), installs it into a clean collections path and, from a directory outside the
checkout with no access to it (no PYTHONPATH, no project ansible.cfg), runs aifabric.roce.plan,
aifabric.roce.site --check and aifabric.roce.audit against an inventory whose devices are all
unreachable. Asserts: the tarball holds only tracked files and no tests/tools/lab inventories;
plan artifacts and reports land under <working dir>/build; the preview and the audit report every
device as unreachable instead of stopping; nothing is written inside the installed collection."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.path.dirname(sys.executable)
RECAP_RE = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", re.M)
SWITCHES = ["leaf0", "leaf1", "leaf2", "leaf3", "spine1", "spine2"]


def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_env(collections, work):
    """The environment of a user who installed the tarball: no checkout on PYTHONPATH, no project config."""
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PYTHONPATH")))
    env.update(ANSIBLE_COLLECTIONS_PATH=str(collections), ANSIBLE_CONFIG=os.path.join(str(work), "ansible.cfg"),
               ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_PIPELINING="True", PATH=BIN + os.pathsep + env.get("PATH", ""))
    return env


def snapshot(tree):
    return sorted((os.path.relpath(os.path.join(d, f), tree), os.stat(os.path.join(d, f)).st_mtime_ns)
                  for d, _dirs, files in os.walk(tree) for f in files)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp("installed")
    dist, collections, work = base / "dist", base / "collections", base / "work"
    subprocess.run(["bash", os.path.join(ROOT, "tools", "build_collection.sh"), str(dist)], check=True, capture_output=True,
                   env=dict(os.environ, ANSIBLE_GALAXY=os.path.join(BIN, "ansible-galaxy")))
    tarball = str(next(dist.glob("aifabric-roce-*.tar.gz")))
    work.mkdir()
    (work / "ansible.cfg").write_text("[defaults]\n")  # the user's own, empty: nothing from the checkout
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "-p", str(collections), tarball],
                   check=True, capture_output=True, env=clean_env(collections, work))
    # a user's own inventory: the lab's fabric intent, devices on ports where nothing listens
    inv = work / "inventory"
    (inv / "group_vars" / "all").mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml"), str(inv / "group_vars" / "all"))
    dead = closed_port()
    ssh = {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": dead,
           "ansible_ssh_common_args": "-o ConnectTimeout=3 -o StrictHostKeyChecking=no"}
    (inv / "hosts.yml").write_text(json.dumps({
        "gpu_hosts": {"hosts": dict(("gpu%02d" % i, ssh) for i in range(1, 5))},
        "switches": {"vars": {"ansible_connection": "local", "ansible_host": "127.0.0.1", "ansible_port": dead,
                              "ansible_user": "admin", "ansible_password": "admin"},
                     "children": {"leafs": {"hosts": dict((n, {}) for n in SWITCHES[:4])},
                                  "spines": {"hosts": dict((n, {}) for n in SWITCHES[4:])}}}}))
    root = collections / "ansible_collections" / "aifabric" / "roce"
    assert os.path.isfile(str(root / "playbooks" / "plan.yml"))
    return {"tarball": tarball, "collections": str(collections), "work": str(work), "inventory": str(inv), "root": str(root)}


def play(installed, name, *args):
    env = clean_env(installed["collections"], installed["work"])
    proc = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", installed["inventory"], name] + list(args),
                          cwd=installed["work"], env=env, capture_output=True, text=True, timeout=400, check=False)
    recap = dict((m.group(1), tuple(int(g) for g in m.groups()[1:])) for m in RECAP_RE.finditer(proc.stdout))
    return proc, recap


def test_tarball_ships_tracked_collection_files_only(installed):
    tracked = set(subprocess.run(["git", "ls-files", "--cached"], cwd=ROOT, check=True, capture_output=True,
                                 text=True).stdout.split())
    with tarfile.open(installed["tarball"]) as tar:
        files = [m.name for m in tar.getmembers() if m.isfile()]
    assert "plugins/modules/drift_report.py" in files and "requirements.txt" in files and "bindep.txt" in files
    assert "meta/execution-environment.yml" in files and "inventories/example/hosts.yml" in files
    assert not [f for f in files if f not in tracked and f not in ("MANIFEST.json", "FILES.json")]
    assert not [f for f in files if f.startswith(("tests/", "tools/", "mk/", "inventories/lab/", "inventories/rail512/", ".ci/"))
                or f in ("Makefile", "ansible.cfg", "requirements-dev.txt")]


def test_plan_preview_and_audit_run_from_outside_and_write_nothing_inside(installed):
    before = snapshot(installed["root"])
    proc = play(installed, "aifabric.roce.plan")[0]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    build = os.path.join(installed["work"], "build")
    assert os.path.isfile(os.path.join(build, "lab", "plan.json")) and os.path.isfile(os.path.join(build, "lab", "cabling.csv"))

    # the preview goes on past every unreachable device and says which ones
    proc, recap = play(installed, "aifabric.roce.site", "--check")
    assert proc.returncode == 2, proc.stdout[-3000:]
    assert "not previewed: switches leaf0, leaf1, leaf2, leaf3, spine1, spine2" in proc.stdout, proc.stdout[-3000:]
    assert "unreachable hosts gpu01, gpu02, gpu03, gpu04; no device was previewed" in proc.stdout, proc.stdout[-3000:]
    for name in SWITCHES + ["gpu%02d" % i for i in range(1, 5)]:  # every device was tried, none stopped the others
        assert recap[name][0] >= 1, (name, recap)

    proc = play(installed, "aifabric.roce.audit")[0]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    with open(os.path.join(build, "audit", "drift-report.json")) as handle:
        report = json.load(handle)
    assert report["summary"]["devices_unreachable"] == sorted(["gpu%02d" % i for i in range(1, 5)] + SWITCHES)
    assert report["verdict"] == "NOT AUDITED / 10 UNREACHABLE"
    assert snapshot(installed["root"]) == before, "files written inside the installed collection"
