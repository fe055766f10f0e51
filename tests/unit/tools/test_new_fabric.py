"""`make new-fabric NAME=...` and playbooks/new_fabric.yml take a fabric name, never a path or a command
(issue 18 item 6). make runs against a stand-in ansible-playbook that records its arguments."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RECORDER = """#!/bin/sh
for arg in "$@"; do printf '%s\\n' "$arg"; done > "$RECORD"
"""


@pytest.fixture
def make_new_fabric(tmp_path):
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "ansible-playbook").write_text(RECORDER)
    (fake_bin / "ansible-playbook").chmod(0o755)
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").write_text("")  # newer than the requirements: `setup` has nothing to do
    record = tmp_path / "argv"

    def run(name):
        env = dict(os.environ, RECORD=str(record))
        out = subprocess.run(["make", "--no-print-directory", "-C", ROOT, "new-fabric", "NAME=" + name,
                              "VENV=" + str(venv), "BIN=" + str(fake_bin)],
                             env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        argv = record.read_text().splitlines() if record.exists() else None
        return out.returncode, out.stdout.decode(), argv
    return run


@pytest.mark.parametrize("name", [
    "../../x", "/tmp/x", "x/y", ".hidden", "", "-x", "x y",
    "x; touch {pwned} #", "x`touch {pwned}`", "x\"; touch {pwned}; echo \"", "x'; touch {pwned}; echo '",
    "x$$(touch {pwned})",  # make would turn $$ into $: the shell must not run x$(touch ...)
    "y$(shell touch {pwned})",  # make's own function: expanded by make when it exports NAME, unless kept as text
])
def test_a_name_that_is_a_path_or_a_command_is_refused_before_anything_runs(make_new_fabric, tmp_path, name):
    pwned = tmp_path / "pwned"
    rc, out, argv = make_new_fabric(name.format(pwned=pwned))
    assert rc != 0 and "is not a fabric name" in out and "NAME=fab1" in out
    assert argv is None, "ansible-playbook ran"
    assert not pwned.exists(), "the name ran a command"


def test_a_good_name_goes_to_inventories_as_data(make_new_fabric):
    rc, out, argv = make_new_fabric("fab_1-a")
    assert rc == 0, out
    assert argv == ["playbooks/new_fabric.yml", "-e", "new_fabric_dest=%s/inventories/fab_1-a" % ROOT,
                    "-e", "new_fabric_name=fab_1-a"]


def playbook(tmp_path, *extra):
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), os.path.join(ROOT, "playbooks", "new_fabric.yml")]
    out = subprocess.run(cmd + list(extra), cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                         env=dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg")))
    return out.returncode, out.stdout.decode()


def test_the_playbook_refuses_a_name_that_would_edit_fabric_yml_and_writes_nothing(tmp_path):
    dest = tmp_path / "mine"
    rc, out = playbook(tmp_path, "-e", "new_fabric_dest=%s" % dest, "-e", '{"new_fabric_name": "x\\n  servers: {}"}')
    assert rc != 0 and "is not a fabric name" in out and "new_fabric_name=fab1" in out
    assert not dest.exists()
    rc, out = playbook(tmp_path, "-e", "new_fabric_dest=%s" % dest)
    assert rc == 0, out
    # the next steps end with the twin (issue 41): try the new fabric before the gear
    assert '"5. try it before your gear: make twin-up TWIN_INVENTORY=%s (from a checkout' % dest in out, out[-2000:]
    with open(str(dest / "group_vars" / "all" / "fabric.yml")) as handle:
        assert "\n  name: mine\n" in handle.read()
