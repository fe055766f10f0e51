import os
import subprocess

from ansible_collections.aifabric.roce.plugins.module_utils.host import irq, qos
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot, ToolRunner

PROFILE = {"trust": "dscp", "roce_dscp": 26, "roce_priority": 3, "cnp_dscp": 48, "cnp_priority": 6,
           "lossless_priorities": [3], "roce_tos": 106, "dscp_to_priority": {"26": 3, "48": 6}}


def test_irq_plan_spreads_on_the_nic_numa_node(host_copy):
    root = SysRoot(os.path.join(host_copy("h100-cx7"), "root"))
    plan, problems = irq.plan(root, ["rail0", "rail1", "rail4"], reserved=[0, 64])
    assert problems == []
    rail0 = [a["cpu"] for a in plan if a["netdev"] == "rail0"]
    rail1 = [a["cpu"] for a in plan if a["netdev"] == "rail1"]
    rail4 = [a["cpu"] for a in plan if a["netdev"] == "rail4"]
    assert len(rail0) == 16 and rail0 == list(range(1, 17))       # node 0 minus reserved 0
    assert rail1 == list(range(17, 32)) + [64 + 1]                 # staggered after rail0, skips 64
    assert rail4 == list(range(32, 48))                            # node 1
    assert all(a["name"].startswith("mlx5_comp") for a in plan)    # async IRQ left alone


def test_irq_plan_reports_problems(host_copy):
    root = SysRoot(os.path.join(host_copy("h100-cx7"), "root"))
    problems = irq.plan(root, ["rail9"])[1]
    assert problems == ["rail9: netdev not found (this host has: rail0, rail1, rail2, rail3, rail4, rail5, rail6, rail7). "
                        "Fix: name the NIC in fabric.servers.nics as the host names it (ip -br link), or point "
                        "host_irq_affinity_root at a tree that has it"]
    problems = irq.plan(root, ["rail0"], reserved=range(0, 128))[1]
    assert "no usable CPUs" in problems[0]


def test_irqbalance_defaults_idempotent():
    once = irq.irqbalance_defaults('#IRQBALANCE_ONESHOT=\nIRQBALANCE_ARGS="--hintpolicy=ignore"\n', "/etc/x.sh")
    assert 'IRQBALANCE_ARGS="--hintpolicy=ignore --policyscript=/etc/x.sh"' in once
    assert irq.irqbalance_defaults(once, "/etc/x.sh") == once
    assert irq.irqbalance_defaults("", "/etc/x.sh").strip() == 'IRQBALANCE_ARGS="--policyscript=/etc/x.sh"'


def test_rendered_scripts_are_valid_shell(host_copy):
    root = SysRoot(os.path.join(host_copy("gpu8-nic4"), "root"))
    plan = irq.plan(root, ["rail0", "rail1"])[0]
    for text in (irq.replay_script([], "mlx5_comp*", plan), irq.policy_script([a["pci"] for a in plan])):
        assert subprocess.run(check=False, args=["sh", "-n"], input=text.encode()).returncode == 0
    policy = irq.policy_script([a["pci"] for a in plan])
    out = subprocess.run(check=False, args=["sh", "-s", "/sys/devices/pci0000:10/x/%s" % plan[0]["pci"], "101"], input=policy.encode(), stdout=subprocess.PIPE)
    assert out.stdout.decode().strip() == "ban=true"
    out = subprocess.run(check=False, args=["sh", "-s", "/sys/devices/pci0000:10/x/0000:99:00.0", "7"], input=policy.encode(), stdout=subprocess.PIPE)
    assert out.stdout.decode().strip() == ""


def test_mlnx_qos_state_and_commands(fixture_hosts):
    runner = ToolRunner(capture_dir=os.path.join(fixture_hosts, "h100-cx7", "tools"))
    assert qos.choose_tool(runner, "auto") == "mlnx_qos"
    state, problem = qos.read_tool_state(runner, "mlnx_qos", "rail0")
    assert problem is None and state["trust"] == "pcp" and state["pfc"] == [] and state["dscp_prio"][26] == 3
    want = qos.desired(PROFILE)
    cmds = qos.mlnx_qos_commands("rail0", state, want)
    # factory map already sends 26->3 and 48->6: only trust and PFC change
    assert cmds == [["mlnx_qos", "-i", "rail0", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0"]]
    assert qos.mlnx_qos_commands("rail0", dict(state, trust="dscp", pfc=[3]), want) == []


def test_dcb_state_and_commands(fixture_hosts):
    runner = ToolRunner(capture_dir=os.path.join(fixture_hosts, "gpu8-nic4", "tools"))
    assert qos.choose_tool(runner, "auto") == "dcb" and qos.choose_tool(runner, "mlnx_qos") is None
    state, problem = qos.read_tool_state(runner, "dcb", "rail1")
    assert problem is None and state == {"trust": "pcp", "pfc": [], "dscp_prio": {}, "dcbx": None}
    cmds = qos.dcb_commands("rail1", state, qos.desired(PROFILE))
    assert cmds == [["dcb", "apptrust", "set", "dev", "rail1", "order", "dscp"],
                    ["dcb", "pfc", "set", "dev", "rail1", "prio-pfc", "0:off", "1:off", "2:off", "3:on", "4:off", "5:off", "6:off", "7:off"],
                    ["dcb", "app", "replace", "dev", "rail1", "dscp-prio", "26:3", "48:6"]]
    done = qos.parse_dcb("order dscp\n", "pfc-cap 8 macsec-bypass off delay 0\nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n",
                         "dscp-prio 26:3 48:6\n")
    assert qos.dcb_commands("rail1", done, qos.desired(PROFILE)) == []


def test_no_tool_output_means_missing(fixture_hosts):
    runner = ToolRunner(capture_dir=os.path.join(fixture_hosts, "broken", "tools"))
    assert qos.choose_tool(runner, "auto") is None


def test_sysfs_targets_follow_the_profile():
    targets = dict(qos.sysfs_targets("rail0", "mlx5_0", PROFILE))
    assert targets == {"/sys/class/net/rail0/ecn/roce_np/enable/3": "1", "/sys/class/net/rail0/ecn/roce_rp/enable/3": "1",
                       "/sys/class/net/rail0/ecn/roce_np/cnp_dscp": "48", "/sys/class/net/rail0/ecn/roce_np/cnp_802p_prio": "6",
                       "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos": "106"}
    script = qos.replay_script([{"tool_commands": qos.full_commands("dcb", "rail0", qos.desired(PROFILE)), "sysfs": sorted(targets.items())}])
    assert subprocess.run(check=False, args=["sh", "-n"], input=script.encode()).returncode == 0
    assert "dcb apptrust set dev rail0 order dscp" in script and "echo 106 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos" in script


# --- firmware-managed DCBX: read and report, never set ----------------------------------------------

def test_dcbx_owner_is_read_from_either_tool():
    # iproute2 dcb/dcb_dcbx.c prints the DCB_CAP_DCBX_* flags by name
    assert qos.parse_dcbx("lld-managed ieee\n") == qos.DCBX_FIRMWARE
    assert qos.parse_dcbx("host ieee\n") == qos.DCBX_HOST and qos.parse_dcbx("") is None
    # real mlnx_qos first line of a port whose DCBX the firmware runs (search index file 310222282)
    state = qos.parse_mlnx_qos("DCBX mode: Firmware controlled\nPriority trust state: dscp\n")
    assert (state["dcbx"], state["trust"]) == (qos.DCBX_FIRMWARE, "dscp")
    assert qos.parse_mlnx_qos("DCBX mode: OS controlled\n")["dcbx"] == qos.DCBX_HOST


def test_firmware_dcbx_report_names_the_drivers_way():
    want = qos.desired(PROFILE)
    ok, text = qos.firmware_dcbx_report("ens1f0np0", "bnxt_re", {"trust": "dscp", "pfc": [3]}, want)
    assert ok and "(they match)" in text
    ok, text = qos.firmware_dcbx_report("ens1f0np0", "bnxt_re", {"trust": "pcp", "pfc": []}, want)
    assert not ok and "read back trust pcp, PFC on []" in text and "bnxt_dcb.c" in text and "not set from the host" in text
    _ok, text = qos.firmware_dcbx_report("ens2f0", "irdma", {"trust": "pcp", "pfc": []}, want)
    assert "fw-lldp-agent" in text
