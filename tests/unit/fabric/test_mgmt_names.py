"""A rail NIC named `lo` and switch ports named as management ports are refused by the fabric validation,
with one problem naming the key path and the fix (issue 18 item 6)."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

from .intents import lab
from .malformed import apply_edits


def refused(edits):
    with pytest.raises(FabricError) as err:
        build_plan(apply_edits(lab(), edits))
    assert len(err.value.problems) == 1, err.value.render()
    return err.value.problems[0]


@pytest.mark.parametrize("rail", [0, 3])
def test_the_loopback_is_no_rail_nic(rail):
    problem = refused([("set", "servers.nics.%d.netdev" % rail, "lo")])
    assert problem.path == "fabric.servers.nics[%d].netdev" % rail
    assert "'lo' is the loopback interface, not a rail NIC" in problem.message
    assert "rail NIC's own interface name" in problem.fix


@pytest.mark.parametrize("model, pattern, shown", [
    ("lab-leaf", "Management{port}", "'Management1'"),        # EOS
    ("lab-leaf", "Management1/{port}", "'Management1/1'"),    # EOS modular supervisors
    ("lab-leaf", "mgmt{port}", "'mgmt1'"),                    # NX-OS mgmt0, Dell OS10 mgmt1/1/1
    ("lab-leaf", "mgmt1/1/{port}", "'mgmt1/1/1'"),
    ("lab-spine", "eth{index}", "'eth0'"),                    # SONiC, Cumulus: eth0 is the management port
    ("lab-leaf", "em{port}", "'em1'"),                        # Junos
    ("lab-leaf", "fxp{port}", "'fxp1'"),
    ("lab-leaf", "MEth0/0/{port}", "'MEth0/0/1'"),            # Huawei VRP
])
def test_a_management_port_name_is_refused(model, pattern, shown):
    problem = refused([("set", "switch_models.%s.port_name" % model, pattern)])
    assert problem.path == "fabric.switch_models.%s.port_name" % model
    assert "port name %s is a management port" % shown in problem.message
    assert "front-panel data port names" in problem.fix


@pytest.mark.parametrize("model, pattern", [
    ("lab-leaf", "Ethernet{port}"), ("lab-leaf", "ethernet{port}"), ("lab-leaf", "member{port}"),
    ("lab-spine", "Ethernet1/{port}"), ("lab-spine", "et-0/0/{port}"), ("lab-spine", "Eth1/{port}"),
    ("lab-spine", "eth{port}"), ("lab-spine", "Ethernet{index}"),  # leaf2 is on nvue: no '/' in leaf ports
])
def test_data_port_names_are_still_accepted(model, pattern):
    plan = build_plan(apply_edits(lab(), [("set", "switch_models.%s.port_name" % model, pattern)]))
    assert plan["leafs"] and plan["spines"]
