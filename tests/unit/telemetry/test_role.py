"""rdma_telemetry role on localhost into a temp tree: check mode writes nothing, apply, idempotent,
then the installed collector runs on the fixture counters with the plan's labels."""
import json
import os
import subprocess
import sys

from .test_exporter import FIX

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

PLAY = """
- name: Role test
  hosts: localhost
  gather_facts: false
  connection: local
  roles:
    - role: aifabric.roce.rdma_telemetry
      vars:
        rdma_telemetry_host: gpu01
        rdma_telemetry_nics: {nics}
        rdma_telemetry_install_dir: {base}/lib
        rdma_telemetry_config_dir: {base}/etc
        rdma_telemetry_textfile_dir: {base}/textfile
        rdma_telemetry_systemd_dir: {base}/systemd
        rdma_telemetry_manage_systemd: false
"""


def playbook(path, check=False):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_NOCOLOR="1")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-e",
           "ansible_python_interpreter=%s" % sys.executable, str(path)]
    if check:
        cmd.append("--check")
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recap = [line for line in proc.stdout.splitlines() if line.startswith("localhost")][-1]
    return int(recap.split("changed=")[1].split()[0])


def test_role_check_apply_idempotent_and_collect(tmp_path):
    with open(os.path.join(FIX, "config.json")) as handle:
        nics = json.load(handle)["nics"]
    base = tmp_path / "host"
    play = tmp_path / "play.yml"
    play.write_text(PLAY.format(nics=json.dumps(nics), base=base))
    assert playbook(play, check=True) > 0
    assert not base.exists()
    assert playbook(play) > 0
    assert playbook(play) == 0
    config = json.loads((base / "etc" / "roce-telemetry.json").read_text())
    assert config["host"] == "gpu01" and config["nics"][0]["leaf"] == "leaf0"
    out = base / "textfile" / "aifabric_roce.prom"
    proc = subprocess.run([sys.executable, str(base / "lib" / "roce_exporter.py"), "--config", str(base / "etc" / "roce-telemetry.json"),
                           "--root", os.path.join(FIX, "root"), "--ethtool-dir", os.path.join(FIX, "ethtool"),
                           "--output", str(out)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert 'roce_pfc_pause_frames_total{direction="rx",host="gpu01",leaf="leaf0",leaf_port="Ethernet1",netdev="rail0",' \
           'priority="3",rail="0",rdma="mlx5_0"} 20411' in out.read_text()
