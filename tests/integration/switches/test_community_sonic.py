"""community_sonic end to end on the lab's community SONiC switch (csonic0: bash + sonic-utilities' GCU as modelled in
tests/lab/switches/configdb_sim.py, `config apply-patch` validated by yanglint on SONiC's own models when
../shared/oracles is here): check mode names the ports GCU will flap, the switch_config module converges it, a second
run changes nothing, check mode with
--diff reports exactly an engineer's drift and writes nothing, the repair sends only that field; the pbr section is
refused before anything is sent. The fault matrix, many-operator and lock-field suites run on it too
(test_fault_matrix.py, test_many_operators.py, test_lock_field.py)."""
import json
import os
import subprocess
import sys

import lab
import pytest
from helpers import applier, full_state, reset

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
NAME = "csonic0"

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars:
    conn: &conn
      platform: community_sonic
      intent: "{{ intent }}"
      qos: "{{ qos }}"
      sections: [qos, mtu]
      host: 127.0.0.1
      port: %(port)d
      username: admin
      password: admin
      known_hosts: %(known_hosts)s
      lock_dir: %(lock_dir)s
      read_timeout: 20
  tasks:
    - name: preview a first apply (check mode with diff)
      aifabric.roce.switch_config: *conn
      check_mode: true
      diff: true
      register: preview
    - name: converge
      aifabric.roce.switch_config: *conn
      register: first
    - name: again
      aifabric.roce.switch_config: *conn
      register: second
    - name: an engineer sets one port's MTU by hand (a GCU patch of their own)
      ansible.builtin.command: "%(python)s %(drift)s"
      changed_when: true
    - name: check with diff
      aifabric.roce.switch_config: *conn
      check_mode: true
      diff: true
      register: check
    - name: repair
      aifabric.roce.switch_config: *conn
      register: repair
    - name: results
      ansible.builtin.debug:
        msg: "{{ {'preview': preview, 'first': first, 'second': second, 'check': check, 'repair': repair} | to_json }}"
"""

DRIFT = """
import json, sys
sys.path.insert(0, %(lab)r)
import lab
st = lab.read_state(%(name)r, %(root)r)
st["running"]["PORT"][%(port)r]["mtu"] = "1500"
with open(%(path)r, "w") as fh:
    json.dump(st, fh)
"""


def test_module_converges_idempotent_check_diff_truthful(switch_lab, tmp_path):
    reset(switch_lab, NAME)
    dev = switch_lab["devices"][NAME]
    port = dev["intent"]["downlinks"][0]["port"]
    drift = tmp_path / "drift.py"
    drift.write_text(DRIFT % dict(lab=os.path.join(ROOT, "tests", "lab", "switches"), name=NAME, root=switch_lab["root"],
                                  port=port, path=os.path.join(switch_lab["root"], NAME, "state.json")))
    book = tmp_path / "csonic.yml"
    book.write_text(PLAYBOOK % dict(port=switch_lab["ports"][NAME], known_hosts=os.path.join(switch_lab["root"], "known_hosts"),
                                    lock_dir=str(tmp_path / "locks"), python=sys.executable, drift=drift))
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps({"intent": dev["intent"], "qos": switch_lab["plan"]["qos"]}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "-e", "ansible_python_interpreter=%s" % sys.executable, "-e", "@%s" % extra, str(book)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    out = json.loads(proc.stdout[proc.stdout.index("{"):])
    res = json.loads(out["plays"][0]["tasks"][-1]["hosts"]["localhost"]["msg"])
    first, second, check, repair = res["first"], res["second"], res["check"], res["repair"]
    # check mode names the ports GCU will take admin down and up (every planned port: its PORT_QOS_MAP and QUEUE rows
    # change) and what is left to the switch (the traditional buffer model's buffermgrd), writing nothing
    planned = sorted(set(d["port"] for d in dev["intent"]["downlinks"]) | set(u["port"] for u in dev["intent"]["uplinks"]))
    preview = res["preview"]
    assert preview["changed"] and not preview["config_mode"] and sorted(preview["commands"]) == sorted(first["commands"])
    assert [d["kind"] for d in preview["disruptive"]] == ["port flap"] and sorted(preview["disruptive"][0]["ports"]) == planned
    assert "DISRUPTIVE" in preview["diff"]["before_header"] and any("admin down" in w for w in preview["warnings"])
    assert any("traditional buffer model" in n for n in preview["fitted"])
    assert first["disruptive"] == preview["disruptive"] and second["disruptive"] == [] and check["disruptive"] == []
    assert first["changed"] and first["commands"] and first["config_mode"], first
    assert any(c.startswith('{"op": "add", "path": "/') for c in first["attempted"])   # the JSON Patch GCU was given
    assert not second["changed"] and second["commands"] == [] and not second["config_mode"], second
    # check mode: exactly the engineer's field, as before/after CONFIG_DB rows and the patch op; nothing written
    assert check["changed"] and check["drift"] == [{"item": "PORT > %s > mtu" % port, "expected": "mtu 9216", "actual": "mtu 1500"}]
    assert check["commands"] == ['{"op": "replace", "path": "/PORT/%s/mtu", "value": "9216"}' % port], check["commands"]
    assert "PORT|%s mtu 1500" % port in check["diff"]["before"] and "PORT|%s mtu 9216" % port in check["diff"]["after"]
    assert not check["config_mode"]
    assert repair["changed"] and repair["commands"] == check["commands"], repair
    assert [op for op in repair["attempted"] if op.startswith("{")] == [
        '{"op": "add", "path": "/PORT/%s/mtu", "value": "9216"}' % port], repair["attempted"]
    st = lab.read_state(NAME, switch_lab["root"])
    assert st["running"] == st["startup"] and st["checkpoints"] == {} and st["running"]["PORT"][port]["mtu"] == "9216"
    assert not [f for f in st["files"] if "aif-" in f]


def test_ppd_is_refused_before_anything_is_sent(switch_lab):
    """SONiC's sonic-acl.yang refuses ACL_RULE PACKET_ACTION `REDIRECT:<ip>` (tests/unit/nos/test_sonic_yang_oracle.py),
    so GCU would refuse the pbr section's patch: the transaction refuses it first, naming the way around."""
    reset(switch_lab, NAME)
    seen = full_state(NAME, switch_lab["root"])
    run = applier(switch_lab, NAME, sections=("qos", "mtu", "pbr"))
    with pytest.raises(ApplyError) as err:
        run.apply(*run.plan())
    run.close()
    assert err.value.rolled_back is None and "sonic-acl.yang" in str(err.value) and "switch_port_binding" in str(err.value)
    assert full_state(NAME, switch_lab["root"]) == seen
    assert not any("config" in c for c in run.attempted), run.attempted


def test_the_lab_switch_refuses_what_sonic_refuses(switch_lab):
    """The lab's `config apply-patch` refuses a patch SONiC's models refuse (here: a QUEUE naming a scheduler that does
    not exist) with GCU's text, and changes nothing."""
    reset(switch_lab, NAME)
    seen = full_state(NAME, switch_lab["root"])
    run = applier(switch_lab, NAME)
    conn = run._conn()
    patch = json.dumps([{"op": "add", "path": "/QUEUE/Ethernet0|3", "value": {"scheduler": "NO-SUCH-SCHEDULER"}}])
    conn.send_command("printf '%%s' '%s' > /tmp/p.json" % patch)
    out = conn.send_command("sudo config apply-patch /tmp/p.json")
    run.close()
    assert "Failed to apply patch due to: Given patch will produce invalid config" in out and "Error:" in out, out
    assert "NO-SUCH-SCHEDULER" in out
    assert full_state(NAME, switch_lab["root"])["running"] == seen["running"]
