"""The standard `ansible-galaxy collection build` cannot pack an inventory of your own (issue 18 item 6):
`make new-fabric` creates inventories/<name> with hosts, vault files and known_hosts in the collection tree,
untracked, and a plain build packs untracked files. Only the real-gear example inventory ships."""
import os
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLANTED = ["zzz", "mine", "examples", "example2", "example.old", "exampl", "ex", "e", "Example", "lab2", "rail512-copy"]


def checkout_copy(dest):
    """The files git tracks, as they are in this working tree (galaxy.yml included)."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, stdout=subprocess.PIPE, check=True).stdout
    for rel in tracked.decode().split("\0"):
        if rel and os.path.isfile(os.path.join(ROOT, rel)):
            os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, rel), os.path.join(dest, rel))


def test_a_plain_galaxy_build_ships_the_example_inventory_and_no_other(tmp_path):
    src, out = tmp_path / "aifabric-roce", tmp_path / "out"
    checkout_copy(str(src))
    for name in PLANTED:  # what `make new-fabric NAME=<name>` leaves behind, credentials included
        vault = src / "inventories" / name / "group_vars" / "switches"
        vault.mkdir(parents=True)
        (vault / "vault.yml").write_text("vault_switch_password: s3cret\n")
        (src / "inventories" / name / "hosts.yml").write_text("all: {}\n")
    (src / "inventories" / "secrets.yml").write_text("vault_switch_password: s3cret\n")
    galaxy = os.path.join(os.path.dirname(sys.executable), "ansible-galaxy")
    built = subprocess.run([galaxy, "collection", "build", "--output-path", str(out), str(src)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert built.returncode == 0, built.stdout.decode()
    (tarball,) = list(out.iterdir())
    with tarfile.open(str(tarball)) as handle:
        names = handle.getnames()
    inventories = sorted(n for n in names if n.startswith("inventories/"))
    assert [n for n in inventories if not n.startswith("inventories/example/") and n != "inventories/example"] == []
    shipped = subprocess.run(["git", "ls-files", "inventories/example"], cwd=ROOT, stdout=subprocess.PIPE,
                             check=True).stdout.decode().split()
    assert shipped and set(shipped) <= set(names)
    assert not [n for n in names if n.endswith("vault.yml")]
