"""Switch RoCE counters and PPD paths as Prometheus text (telemetry/switch_metrics.py, module roce_metrics).

Counters come from the real captures of tests/fixtures/switches (parsed by nos/counters.py, as switch_facts does);
the PPD finding texts are what switch_validate returns (`ip route get` first lines).
"""
import functools
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.nos import counters as C
from ansible_collections.aifabric.roce.plugins.module_utils.telemetry import switch_metrics as M
from ansible_collections.aifabric.roce.plugins.modules import roce_metrics

from ..module_runner import run_module
from .test_exporter import parse, value

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SWITCH_FIX = os.path.join(ROOT, "tests", "fixtures", "switches")


@functools.lru_cache(maxsize=1)
def _lab_plan_json():
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as fh:
        return json.dumps(build_plan(yaml.safe_load(fh)["fabric"]))


def lab_plan():
    return json.loads(_lab_plan_json())


def capture(nos, name):
    with open(os.path.join(SWITCH_FIX, nos, name)) as fh:
        return fh.read()


def real_counters():
    """Real SONiC captures, renamed onto the lab plan's leaf0 ports (Ethernet4 -> Ethernet1: gpu02's rail-0 NIC)."""
    wd = capture("sonic", "sonic-z9332-show-pfcwd-stats-storm-then-restore.txt").split("root@sonic-10431:~# show pfcwd stats\n")[1]
    table = C.merge(C.parse_sonic_pfc(capture("sonic", "sonic-utilities-show-pfc-counters.txt")),
                    C.parse_sonic_queue(capture("sonic", "sonic-utilities-show-queue-counters.txt")),
                    C.parse_sonic_wred(capture("sonic", "sonic-utilities-show-queue-wredcounters.txt")),
                    C.parse_sonic_pfcwd(wd))
    return {"Ethernet1": table["Ethernet4"]}


PPD = {"leaf0": {"findings": [
    {"probe": "pinned 10.100.0.1 -> 10.101.0.1", "status": "ok", "expected": "via 10.254.0.0 dev Ethernet8 (spine1)",
     "actual": "10.101.0.1 from 10.100.0.1 via 10.254.0.0 dev Ethernet8 table 100 iif vlan100"},
    {"probe": "pinned 10.100.0.2 -> 10.101.0.1", "status": "fail", "expected": "via 10.254.0.2 dev Ethernet9 (spine2)",
     "actual": "10.101.0.1 from 10.100.0.2 via 10.254.0.6 dev Ethernet11 iif vlan100"},
    {"probe": "pinned 10.100.0.3 -> 10.101.0.1", "status": "fail", "expected": "via 10.254.0.4 dev Ethernet10 (spine1)",
     "actual": "RTNETLINK answers: Network is unreachable"},
    {"probe": "local 10.100.0.1 -> 10.100.0.2", "status": "ok", "expected": "on this leaf", "actual": "10.100.0.2 dev vlan100"},
]}, "leaf1": {"findings": [{"probe": "ppd_paths", "status": "skipped", "message": "unverified - not implemented for eos"}]}}


@pytest.fixture(scope="module")
def plan():
    return lab_plan()


def render(plan):
    switches = {"leaf0": {"counters": real_counters()}, "leaf2": {"failed": True, "msg": "timeout"},
                "spine1": {"counters": {"Ethernet1": {"all": {"pfc_rx": 7, "pfc_tx": 9}}, "Ethernet3": {"3": {"drops": 4}}}}}
    return M.render(plan, switches, PPD, now=1700000000)


def test_counters_carry_the_host_nic_behind_the_leaf_port_and_lossless(plan):
    s = parse(render(plan))
    # gpu02's rail-0 NIC is behind leaf0 Ethernet1 (plan); the labels are the host collector's host/rail/netdev
    assert value(s, "roce_switch_pfc_pause_frames_total", switch="leaf0", port="Ethernet1", priority="3",
                 direction="rx", host="gpu02", rail="0", netdev="rail0", facing="host", lossless="true") == 403
    assert value(s, "roce_switch_pfc_pause_frames_total", switch="leaf0", port="Ethernet1", priority="0",
                 direction="tx", lossless="false") == 1410
    assert value(s, "roce_switch_queue_drops_total", switch="leaf0", priority="3", host="gpu02") == 48
    assert value(s, "roce_switch_queue_drop_bytes_total", switch="leaf0", priority="3") == 41
    assert value(s, "roce_switch_ecn_marked_packets_total", switch="leaf0", priority="3", facing="host", rail="0") == 48
    # the real Z9332 watchdog table: queue 3 stormed with one storm detected, no restore yet
    assert value(s, "roce_switch_pfcwd_storms_total", switch="leaf0", priority="3") == 1
    assert value(s, "roce_switch_pfcwd_restores_total", switch="leaf0", priority="3") == 0
    assert value(s, "roce_switch_pfcwd_stormed", switch="leaf0", priority="3", host="gpu02") == 1
    # a spine port: the leaf at the other end, per-port counters are lossless="port"
    assert value(s, "roce_switch_pfc_pause_frames_total", switch="spine1", port="Ethernet1", direction="tx",
                 facing="leaf", peer="leaf0", lossless="port", priority="all") == 9
    assert value(s, "roce_switch_queue_drops_total", switch="spine1", port="Ethernet3", lossless="true") == 4
    assert value(s, "roce_switch_counters_up", switch="leaf2") == 0
    assert value(s, "roce_switch_counters_up", switch="spine1", role="spine") == 1
    # empty labels are left out (no host on a spine port)
    assert not [k for k in s if k[0] == "roce_switch_pfc_pause_frames_total" and ("host", "") in k[1]]


def test_watchdog_state_is_one_only_while_stormed(plan):
    text = M.render(plan, {"leaf0": {"counters": {"Ethernet1": {"3": {"wd_state": "DEADLOCK"}, "4": {"wd_state": "OK"}}}}})
    s = parse(text)
    assert value(s, "roce_switch_pfcwd_stormed", priority="3") == 1
    assert value(s, "roce_switch_pfcwd_stormed", priority="4") == 0


def test_ppd_planned_uplink_against_live_path(plan):
    s = parse(render(plan))
    assert value(s, "roce_ppd_binding_info", leaf="leaf0", host="gpu01", planned_uplink="Ethernet8",
                 live_uplink="Ethernet8", live_via="10.254.0.0", status="on_plan") == 1
    assert value(s, "roce_ppd_on_planned_uplink", leaf="leaf0", host="gpu01") == 1
    assert value(s, "roce_ppd_binding_info", leaf="leaf0", host="gpu02", planned_uplink="Ethernet9",
                 live_uplink="Ethernet11", status="moved") == 1
    assert value(s, "roce_ppd_on_planned_uplink", leaf="leaf0", host="gpu02", planned_uplink="Ethernet9") == 0
    assert value(s, "roce_ppd_binding_info", leaf="leaf0", host="gpu03", status="no_route") == 1
    assert value(s, "roce_ppd_on_planned_uplink", leaf="leaf0", host="gpu03") == 0
    # unverified (EOS: switch_validate skipped; NVUE: not read): info only, no 0/1 that an alert could misread
    assert value(s, "roce_ppd_binding_info", leaf="leaf1", host="gpu01", status="unverified") == 1
    assert not [k for k in s if k[0] == "roce_ppd_on_planned_uplink" and ("leaf", "leaf1") in k[1]]
    infos = [k for k in s if k[0] == "roce_ppd_binding_info"]
    assert len(infos) == sum(len(r["bindings"]) for r in plan["leafs"].values())


@pytest.mark.skipif(not shutil.which("promtool"), reason="promtool (Debian package prometheus) not installed")
def test_promtool_lints_the_exposition(plan):
    proc = subprocess.run(["promtool", "check", "metrics"], input=render(plan), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_module_writes_the_textfile_once_and_honours_check_mode(plan, tmp_path, capsys):
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan))
    dest = tmp_path / "textfile" / "aifabric_roce_switches.prom"
    args = {"plan_path": str(plan_path), "dest": str(dest), "ppd": PPD,
            "switches": {"spine1": {"counters": {"Ethernet1": {"all": {"pfc_rx": 7}}}}}}
    got = run_module(roce_metrics, dict(args, _ansible_check_mode=True), capsys)
    assert got["changed"] and not dest.exists()
    got = run_module(roce_metrics, dict(args, _ansible_diff=True), capsys)
    assert got["changed"] and got["ppd"] == {"on_plan": 1, "moved": 1, "no_route": 1, "unverified": 13}
    text = dest.read_text()
    assert got["diff"]["after"] == text and got["series"] == len([ln for ln in text.splitlines() if not ln.startswith("#")])
    assert re.search(r'^roce_switch_pfc_pause_frames_total\{.*switch="spine1"\} 7$', text, re.M)
    assert not [p for p in os.listdir(str(dest.parent)) if p.endswith(".tmp")]
