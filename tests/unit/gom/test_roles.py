"""Roles gom_agent and gom_collector on localhost into a temp tree: check mode writes nothing, apply, idempotent;
then the installed scripts run as installed (the collector beside localise.py and devicelock.py, no collection on
the path): the agent on this machine's loopback sends its probes to the collector, which judges them."""
import json
import os
import subprocess
import sys
import time

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.modules import probe_plan

from ..fabric.intents import lab
from ..module_runner import run_module
from ..telemetry.test_role import playbook

PLAY = """
- name: GOM roles test
  hosts: localhost
  gather_facts: false
  connection: local
  roles:
    - role: aifabric.roce.gom_collector
      vars:
        gom_collector_plan_file: {plan}
        gom_collector_probes_file: {probes}
        gom_collector_packages: []
        gom_collector_install_dir: {base}/lib/gom
        gom_collector_config_dir: {base}/etc
        gom_collector_events: {base}/var/events.jsonl
        gom_collector_systemd_dir: {base}/systemd
        gom_collector_manage_systemd: false
    - role: aifabric.roce.gom_agent
      vars:
        gom_agent_host: gpu01
        gom_agent_probes_file: {probes}
        gom_agent_collector: "unix:{base}/ingest.sock"
        gom_agent_install_dir: {base}/lib
        gom_agent_config_dir: {base}/etc
        gom_agent_systemd_dir: {base}/systemd
        gom_agent_manage_systemd: false
"""


def test_roles_check_apply_idempotent_and_the_installed_scripts_run(tmp_path, capsys):
    plan_path, probes = tmp_path / "plan.json", tmp_path / "probes.json"
    plan_path.write_text(json.dumps(build_plan(lab())))
    run_module(probe_plan, {"fabric": lab(), "dest": str(probes)}, capsys)
    base = tmp_path / "host"
    play = tmp_path / "play.yml"
    play.write_text(PLAY.format(plan=plan_path, probes=probes, base=base))
    assert playbook(play, check=True) > 0
    assert not base.exists()
    assert playbook(play) > 0
    assert playbook(play) == 0
    config = json.loads((base / "etc" / "gom-agent.json").read_text())
    planned = json.loads(probes.read_text())
    assert config["probes"] == planned["probes_by_host"]["gpu01"] and config["dport"] == 4792
    assert set(config["addresses"]) == set(p["dst_address"] for p in planned["probes"] if p["dst_host"] == "gpu01")
    package = base / "lib" / "gom" / "ansible_collections" / "aifabric" / "roce" / "plugins" / "module_utils"
    assert sorted(os.listdir(str(package / "gom"))) == [
        "collector.py", "linkstate.py", "localise.py", "planwatch.py", "probes.py"]
    # the installed collector, run as the unit runs it (PYTHONPATH the install dir only; prometheus-client from this venv)
    env = dict(os.environ, PYTHONPATH=str(base / "lib" / "gom"))
    collector = subprocess.Popen(
        [sys.executable, "-B", str(package / "gom" / "collector.py"), "--plan", str(base / "etc" / "gom-plan.json"),
         "--probes", str(base / "etc" / "gom-probes.json"), "--listen", "unix:%s/ingest.sock" % base, "--http", "",
         "--events", str(base / "var" / "events.jsonl"), "--seconds", "4"],
        cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    # the installed agent on loopback addresses (the lab's 10.x addresses do not exist here): its batches get through
    config.update(addresses=[], probes=[dict(p, src_address="127.0.0.1", udp_sport=None) for p in config["probes"]])
    (base / "etc" / "loopback.json").write_text(json.dumps(config))
    agent = subprocess.run([sys.executable, str(base / "lib" / "gom_agent.py"), "--config", str(base / "etc" / "loopback.json"),
                            "--seconds", "1.5"], env=env, capture_output=True, text=True, timeout=30, check=False)
    assert agent.returncode == 0, agent.stderr
    out, err = collector.communicate(timeout=30)
    assert collector.returncode == 0, err
    counters = json.loads(out.splitlines()[-1])
    assert counters["batches"] >= 10 and counters["unknown_probe"] == 0
    bad = subprocess.run([sys.executable, str(base / "lib" / "gom_agent.py"), "--config", str(tmp_path / "none.json")],
                         env=env, capture_output=True, text=True, timeout=30, check=False)
    assert bad.returncode == 2 and "none.json" in bad.stderr
