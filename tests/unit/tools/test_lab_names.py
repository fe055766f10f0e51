"""Per-checkout lab names (issue 28 item 3): tests/lab/labid.py and inventories/lab agree, and two checkouts differ.

The lab scripts (tests/lab/hosts/lab.py, tests/lab/switches/lab.py, tools/demo.py) name containers, ports and the
state dir with labid.py; Ansible finds them through inventories/lab/group_vars/all/lab.yml, which computes the id
again from the inventory's own path. If the two formulas drifted apart, ansible-playbook would reach another
checkout's lab, or none.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import labid  # noqa: E402  pylint: disable=wrong-import-position

BIN = os.path.dirname(sys.executable)


def inventory_view(inventory, env_id=None):
    """What Ansible makes of the lab inventory: {host: "ansible_host ansible_port known_hosts"} (templated)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    env.pop("AIFABRIC_LAB_ID", None)
    env.pop("AIFABRIC_SWITCH_LAB", None)
    if env_id:
        env["AIFABRIC_LAB_ID"] = env_id
    proc = subprocess.run([os.path.join(BIN, "ansible"), "-i", inventory, "gpu02,leaf1,spine2", "-m", "ansible.builtin.debug",
                           "-a", json.dumps({"msg": "{{ ansible_host }} {{ ansible_port | default('-') }} {{ switch_known_hosts | default('-') }}"})],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    tasks = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]
    return {host: result["msg"] for host, result in tasks.items()}


def expected(ident):
    return {"gpu02": "%s - -" % labid.container("gpu02", ident),
            "leaf1": "127.0.0.1 %d /tmp/aifabric-lab-%s/switches/known_hosts" % (labid.switch_port("leaf1", ident), ident),
            "spine2": "127.0.0.1 %d /tmp/aifabric-lab-%s/switches/known_hosts" % (labid.switch_port("spine2", ident), ident)}


def test_inventory_and_lab_scripts_name_the_same_lab(monkeypatch):
    monkeypatch.delenv("AIFABRIC_LAB_ID", raising=False)
    ident = labid.lab_id(ROOT)
    assert len(ident) == 6 and int(ident, 16) >= 0
    assert inventory_view(os.path.join(ROOT, "inventories", "lab")) == expected(ident)


def test_another_checkout_gets_another_lab(tmp_path, monkeypatch):
    """A copy of the inventory elsewhere (another checkout) names other containers, ports and state; AIFABRIC_LAB_ID wins."""
    monkeypatch.delenv("AIFABRIC_LAB_ID", raising=False)
    other = tmp_path / "other-checkout"
    shutil.copytree(os.path.join(ROOT, "inventories", "lab"), str(other / "inventories" / "lab"))
    other_id = labid.lab_id(str(other))
    assert other_id != labid.lab_id(ROOT)
    assert inventory_view(str(other / "inventories" / "lab")) == expected(other_id)
    assert inventory_view(str(other / "inventories" / "lab"), env_id="0a1b2c") == expected("0a1b2c")


def test_port_bases_stay_below_the_twins_and_the_ephemeral_range():
    bases = {labid.switch_port_base("%06x" % n) for n in range(0, 0xffffff, 4099)}
    assert min(bases) >= 10000 and max(bases) + max(labid.SWITCH_NUMBERS.values()) < 24000


def test_a_malformed_lab_id_is_refused_with_the_fix(monkeypatch):
    monkeypatch.setenv("AIFABRIC_LAB_ID", "../x")
    with pytest.raises(SystemExit, match="AIFABRIC_LAB_ID='../x': give 6 lowercase hex digits"):
        labid.lab_id()
