"""The switch role's default sections on community SONiC (issue 36 item 9): a leaf whose fabric has not opted in to
the pbr section (fabric.community_sonic_pbr) gets qos, mtu and underlay, and the pbr section is named as left out with
the reason, instead of the whole run being refused; with the opt-in, and on other NOSes, pbr is planned. The role's own
defaults file, templated by ansible-playbook with the collection's filter."""
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.aifabric.roce.plugins.filter.nos_waiting_sections import nos_waiting_sections

from .helpers import ROOT, plan_on_platform

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.include_vars: {file: %s}
    - ansible.builtin.debug:
        msg: "{{ {'planned': switch_sections_planned, 'waiting': switch_sections_waiting} | to_json }}"
"""


def role_sections(tmp_path, intent):
    play = tmp_path / "play.yml"
    play.write_text(PLAY % os.path.join(ROOT, "roles", "switch", "defaults", "main.yml"))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                           "-e", json.dumps({"switch_intent": intent}), str(play)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout[proc.stdout.index("{"):])
    return json.loads(out["plays"][0]["tasks"][1]["hosts"]["localhost"]["msg"])


@pytest.fixture(scope="module")
def sonic():
    return plan_on_platform("lab", "community_sonic")


def test_the_filter_names_the_sections_waiting_for_an_opt_in(sonic):
    leaf = sonic["leafs"]["leaf0"]
    assert leaf["community_sonic_pbr"] == "refuse"
    waiting = nos_waiting_sections(leaf)
    assert [w["section"] for w in waiting] == ["pbr"] and waiting[0]["key"] == "community_sonic_pbr"
    assert waiting[0]["value"] == "gcu_ignore_acl_rule" and "sonic-acl.yang" in waiting[0]["why"]
    assert nos_waiting_sections(dict(leaf, community_sonic_pbr="gcu_ignore_acl_rule")) == []
    assert nos_waiting_sections(plan_on_platform("lab", "eos")["leafs"]["leaf0"]) == []


def test_the_role_defaults_leave_pbr_out_on_community_sonic_and_say_so(sonic, tmp_path):
    leaf = dict(sonic["leafs"]["leaf0"], kind="leaf")
    got = role_sections(tmp_path, leaf)
    assert got["planned"] == ["qos", "mtu", "underlay"] and [w["section"] for w in got["waiting"]] == ["pbr"]
    got = role_sections(tmp_path, dict(leaf, community_sonic_pbr="gcu_ignore_acl_rule"))
    assert got["planned"] == ["qos", "mtu", "underlay", "pbr"] and got["waiting"] == []
    eos = dict(plan_on_platform("lab", "eos")["leafs"]["leaf0"], kind="leaf")
    assert role_sections(tmp_path, eos)["planned"] == ["qos", "mtu", "underlay", "pbr"]


def test_the_role_derives_asternos_sections_from_its_driver(tmp_path):
    """No AsterNOS branch in the role (issue 35): the sections come from the driver's ``sections_for`` through the
    nos_sections filter: Easy RoCE's QoS alone, and under ``asternos_config: config_db`` the SONiC-native ones too
    (which switch_config then refuses to apply, naming why: nos/asternos.py refusal)."""
    from ansible_collections.aifabric.roce.plugins.filter.nos_sections import nos_sections
    leaf = dict(plan_on_platform("lab", "asternos")["leafs"]["leaf0"], kind="leaf")
    assert nos_sections("asternos") == ["qos"] and nos_sections(leaf) == ["qos"]   # without it: Easy RoCE's QoS alone
    assert nos_sections(dict(leaf, asternos_config="config_db")) == ["qos", "mtu", "pbr", "underlay"]
    # one run of the role's template (each costs an ansible-playbook start): under the opt-in, mtu and pbr come in
    assert role_sections(tmp_path, dict(leaf, asternos_config="config_db"))["planned"] == ["qos", "mtu", "pbr"]
