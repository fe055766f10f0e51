"""Scripts written to hosts quote every word that came from inventory (defence in depth).

The planner refuses hostile names and QoS strings; these tests hand the host renderers and modules
such values directly (as a hand-written play could) and check nothing is executed or written.
"""
import os
import shlex
import subprocess

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host import irq, qos
from ansible_collections.aifabric.roce.plugins.modules import irq_affinity, rdma_qos

from ..module_runner import run_module

HOSTILE_TRUST = "dscp; touch PWNED-trust #"
HOSTILE_NETDEV = "rail0$(touch PWNED-netdev)"
PROFILE = {"trust": HOSTILE_TRUST, "roce_dscp": 26, "roce_priority": 3, "cnp_dscp": 48, "cnp_priority": 6,
           "lossless_priorities": [3], "roce_tos": 106, "dscp_to_priority": {"26": 3, "48": 6}}


def _fake_tools(tmp_path):
    """A PATH whose mlnx_qos and dcb succeed without doing anything."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("mlnx_qos", "dcb"):
        path = bin_dir / tool
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)
    return str(bin_dir)


@pytest.mark.parametrize("tool", ["mlnx_qos", "dcb"])
def test_qos_replay_script_runs_hostile_values_as_plain_words(tmp_path, tool):
    want = qos.desired(PROFILE)
    sysfs = [("/sys/class/net/%s/ecn/roce_np/cnp_dscp" % HOSTILE_NETDEV, "48; touch PWNED-value"),
             ("/sys/kernel/config/rdma_cm/mlx5_0$(touch PWNED-rdma)/ports/1/default_roce_tos", "106")]
    script = qos.replay_script([{"tool_commands": qos.full_commands(tool, HOSTILE_NETDEV, want), "sysfs": sysfs}])
    env = dict(os.environ, PATH=_fake_tools(tmp_path) + ":/usr/bin:/bin")
    done = subprocess.run(["sh", "-s"], input=script.encode(), cwd=str(tmp_path), env=env, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert not [name for name in os.listdir(str(tmp_path)) if name.startswith("PWNED")]
    # Each tool line parses back to exactly the argv the module runs.
    tool_lines = [line.split(" || ")[0] for line in script.splitlines() if line.startswith(tool)]
    assert [shlex.split(line) for line in tool_lines] == qos.full_commands(tool, HOSTILE_NETDEV, want)


def test_qos_replay_script_of_plain_names_is_unchanged():
    want = qos.desired(dict(PROFILE, trust="dscp"))
    script = qos.replay_script([{"tool_commands": qos.full_commands("dcb", "rail0", want),
                                 "sysfs": [("/sys/class/net/rail0/ecn/roce_np/cnp_dscp", "48")]}])
    assert "dcb apptrust set dev rail0 order dscp || echo 'aifabric: dcb failed' >&2" in script
    assert "[ -e /sys/class/net/rail0/ecn/roce_np/cnp_dscp ] && echo 48 > /sys/class/net/rail0/ecn/roce_np/cnp_dscp" in script


def test_irq_replay_script_quotes_netdevs_and_refuses_a_hostile_glob():
    assignments = [{"netdev": HOSTILE_NETDEV, "cpu": 3}, {"netdev": "rail1", "cpu": 4}]
    script = irq.replay_script([], "mlx5_comp*", assignments)
    assert "spread 'rail0$(touch PWNED-netdev)' 3" in script and "spread rail1 4" in script
    assert subprocess.run(["sh", "-n"], input=script.encode(), check=False).returncode == 0
    with pytest.raises(ValueError):
        irq.replay_script([], "mlx5_comp*) reboot ;;\n  x", assignments)


def test_irq_policy_script_keeps_a_hostile_pci_address_literal(tmp_path):
    script = irq.policy_script(["0000:18:00.0", "x) touch PWNED ;; y"])
    out = subprocess.run(["sh", "-s", "/sys/devices/x/0000:18:00.0", "7"], input=script.encode(), cwd=str(tmp_path),
                         stdout=subprocess.PIPE, check=False)
    assert out.stdout.decode().strip() == "ban=true" and os.listdir(str(tmp_path)) == []


def test_rdma_qos_refuses_hostile_names_and_trust_before_touching_anything(tmp_path, capsys):
    result = run_module(rdma_qos, {"interfaces": [{"netdev": "rail0;reboot", "rdma": "mlx5_0/../x"}],
                                   "profile": PROFILE, "root": str(tmp_path)}, capsys)
    assert result["failed"] and len(result["problems"]) == 3
    assert os.listdir(str(tmp_path)) == []


def test_irq_affinity_refuses_hostile_netdevs_and_globs(tmp_path, capsys):
    result = run_module(irq_affinity, {"nics": ["../../etc"], "irq_name_glob": "mlx5*;reboot",
                                       "root": str(tmp_path)}, capsys)
    assert result["failed"] and len(result["problems"]) == 2
    assert os.listdir(str(tmp_path)) == []


@pytest.mark.parametrize("value", ["rail0\n", "rail0\nreboot", "rail0 ", "\trail0"])
def test_host_names_with_whitespace_anywhere_are_refused(value):
    from ansible_collections.aifabric.roce.plugins.module_utils.host import names
    assert names.netdev_problem(value) and names.rdma_problem(value)
    assert names.glob_problem("mlx5_comp*\n")
