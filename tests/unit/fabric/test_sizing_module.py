"""fabric_sizing (issue 27 item 7): the user-facing answer reproduces the source articles' figures (DIGEST 001),
and a server whose GPUs outnumber its NICs is warned about - in the calculator, the planner and the plan report."""
import os
import subprocess

import pytest
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.artifacts import report_markdown
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.sizing import gpu_nic_warnings
from ansible_collections.aifabric.roce.plugins.modules import fabric_sizing, fabric_plan

from ..module_runner import run_module
from .intents import lab, small

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(autouse=True)
def warned(monkeypatch):
    """What the modules pass to AnsibleModule.warn (in-process, where the result's warnings depend on whether
    controller code was imported before: then ansible-core displays them instead of returning them)."""
    seen = []
    monkeypatch.setattr(AnsibleModule, "warn", lambda self, text: seen.append(text))
    return seen


def size(capsys, **args):
    return run_module(fabric_sizing, args, capsys)


def test_article_32k_gpu_three_tier_fat_tree(capsys, warned):
    result = size(capsys, design="fat_tree", gpus=32768, radix=128, tiers=3)
    sizing = result["sizing"]
    assert result["changed"] is False and warned == [] and sizing["warnings"] == []
    assert sizing["switches_per_tier"] == [512, 512, 256] and sizing["switches"] == 1280
    assert sizing["optics"] == 196608 == 1280 * 128 + 32768
    assert result["summary"][0].startswith("fat_tree, 32768 GPUs on 32768 NIC ports, 3 tiers of 128-port switches: "
                                           "1280 switches (512 + 512 + 256, bottom tier first), 196608 optics")


def test_article_512_gpu_rail_optimized(capsys):
    result = size(capsys, gpus=512, nic_gbps=200, leaf_ports=64, leaf_port_gbps=400, spine_ports=64,
                  spine_port_gbps=800)
    sizing = result["sizing"]
    assert (sizing["leafs"], sizing["spines"], sizing["switches"], sizing["rails"]) == (8, 2, 10, 8)
    assert result["summary"][0] == "rail_optimized, 512 GPUs (64 servers, 8 rails): 10 switches (8 leafs + 2 spines), 1152 optics"


def test_article_28k_gpus_at_7_to_1(capsys):
    sizing = size(capsys, gpus=28672, nic_gbps=400, leaf_ports=128, leaf_port_gbps=400, spine_ports=64,
                  spine_port_gbps=800, oversubscription="7:1")["sizing"]
    assert (sizing["groups"], sizing["servers_per_group"] * 8, sizing["leafs"], sizing["spines"]) == (32, 896, 256, 32)


def test_fewer_nics_than_gpus_is_warned_and_sized_for_the_nics(capsys, warned):
    result = size(capsys, gpus=256, nics_per_server=2, nic_gbps=400, leaf_ports=64, leaf_port_gbps=400,
                  spine_port_gbps=400)
    assert result["sizing"]["rails"] == 2 and result["sizing"]["leafs"] == 2  # 32 servers x 2 NICs, 32 per leaf
    warnings = warned
    assert warnings == result["sizing"]["warnings"] and len(warnings) == 1 and "8 GPUs per server share 2 rail NICs (4 GPUs per NIC)" in warnings[0]
    assert "GPUs 2-7 have no NIC of their own" in warnings[0]
    assert result["summary"][-1].startswith("WARNING: 8 GPUs per server share 2")
    fat = size(capsys, design="fat_tree", gpus=1024, nics_per_server=4, radix=64, tiers=2)
    assert fat["sizing"]["nic_ports"] == 512 and fat["sizing"]["switches_per_tier"] == [16, 8]
    assert fat["sizing"]["warnings"] and len(warned) == 2


@pytest.mark.parametrize("args,words", [
    ({"gpus": 0}, "gpus is 0: it must be between 1 and 10000000"),
    ({"gpus": 10 ** 12}, "gpus is 1000000000000: it must be between 1 and 10000000"),
    ({"gpus": 10 ** 6}, "3907 leafs per rail exceed what a 64-port spine connects"),
    ({"gpus": 10 ** 6, "design": "fat_tree", "radix": 64, "tiers": 2}, "exceed what a 2-tier non-blocking fat tree"),
    ({"gpus": 64, "oversubscription": "1:2"}, "oversubscription '1:2' is not a ratio n:1"),
    ({"gpus": 64, "design": "fat_tree", "radix": 7}, "even radix"),
    ({"gpus": 64, "nic_gbps": 800, "leaf_ports": 2, "leaf_port_gbps": 400}, "does not fit"),
])
def test_bad_input_fails_with_the_fix(capsys, args, words):
    result = size(capsys, **args)
    assert result["failed"] and words in result["msg"] and "Fix:" in result["msg"]


def test_gpu_indices_without_a_nic_follow_the_declared_nics():
    assert gpu_nic_warnings(8, 8) == [] and gpu_nic_warnings(4, 4, [0, 1, 2, 3]) == []
    assert "GPUs 1-3, 5-7 have no NIC" in gpu_nic_warnings(8, 2, [0, 4])[0]
    assert "GPU 2 has no NIC of its own" in gpu_nic_warnings(3, 2)[0] and "(1.5 GPUs per NIC)" in gpu_nic_warnings(3, 2)[0]


def test_planner_warns_when_gpus_outnumber_nics_and_the_report_shows_it(capsys, tmp_path, warned):
    intent = small(servers=4, rails=2, spg=4)
    intent["servers"]["gpus"] = 8
    plan = build_plan(intent)
    assert len(plan["sizing"]["warnings"]) == 1 and plan["sizing"]["gpus_per_server"] == 8
    report = report_markdown(plan)
    assert report.index("## Warnings") < report.index("## Sizing")
    assert "8 GPUs per server share 2 rail NICs" in report
    assert "| rails (rail NICs per server) | 2 (8 GPUs per server) |" in report
    module = run_module(fabric_plan, {"fabric": intent, "dest": str(tmp_path / "plan")}, capsys)
    assert module["plan"]["sizing"]["warnings"] == warned == plan["sizing"]["warnings"]
    balanced = build_plan(lab())
    assert balanced["sizing"]["warnings"] == [] and "## Warnings" not in report_markdown(balanced)


def test_sizing_playbook_answers_without_an_inventory():
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    out = subprocess.run(["ansible-playbook", os.path.join(ROOT, "playbooks", "sizing.yml"),
                          "-e", "sizing_design=fat_tree", "-e", "sizing_gpus=32768", "-e", "sizing_radix=128"],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False, timeout=120)
    text = out.stdout.decode()
    assert out.returncode == 0, text
    assert "1280 switches (512 + 512 + 256, bottom tier first), 196608 optics" in text


def test_summary_counts_one_of_a_kind_in_the_singular(capsys):
    result = size(capsys, gpus=8, nics_per_server=1, nic_gbps=400, leaf_ports=64, leaf_port_gbps=400,
                  spine_ports=64, spine_port_gbps=800)
    sizing, summary = result["sizing"], result["summary"]
    assert (sizing["servers"], sizing["rails"], sizing["leafs"], sizing["spines"]) == (1, 1, 1, 1)
    assert summary[0].startswith("rail_optimized, 8 GPUs (1 server, 1 rail): 2 switches (1 leaf + 1 spine), ")
    assert summary[1].startswith("1 server group of 32 servers, ") and summary[1].endswith(", 1 host link + 32 fabric links")
