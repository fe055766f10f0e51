"""GOR's scheduler side, pure: Slurm topology.conf and drain ownership (on real scontrol captures), Kubernetes labels
and cordon/taint commands (checked against Kubernetes' documented syntax; no cluster here)."""
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gor import k8s_nodes, slurm
from ansible_collections.aifabric.roce.plugins.modules import k8s_node_fault, scheduler_topology

from ..fabric.intents import lab, small
from ..module_runner import run_module

CAPTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "slurm")
LINK = "gpu01:rail0>leaf0:Ethernet0"


def capture(name):
    with open(os.path.join(CAPTURES, name)) as handle:
        return slurm.parse_node(handle.read())


def test_parse_real_scontrol_lines():
    idle = capture("show-node-idle.txt")
    assert idle["name"] == "gpu02" and idle["state"] == "IDLE" and not idle["drain"] and idle["reason"] is None
    ours = capture("show-node-drained-ours.txt")
    assert ours["drain"] and ours["flags"] == ["DRAIN"] and ours["reason"] == "aifabric: %s gom-17" % LINK
    assert ours["reason_user"] == "root" and ours["reason_time"] == "2026-11-28T20:04:23"
    other = capture("show-node-drained-other.txt")
    assert other["drain"] and other["reason"] == "disk replacement, ticket 4711"
    two = capture("show-node-drained-two.txt")
    assert slurm.owned_faults(two["reason"]) == [(LINK, "gom-17"), ("gpu01:rail1>leaf1:Ethernet0", "gom-18")]
    with pytest.raises(slurm.SlurmError, match="Fix"):
        slurm.parse_node("Node nosuch not found")


def test_drain_ownership_decisions():
    idle, ours, other = (capture(n) for n in ("show-node-idle.txt", "show-node-drained-ours.txt",
                                              "show-node-drained-other.txt"))
    d = slurm.decide(idle, "drained", LINK, "gom-1")
    assert d["action"] == "drain" and slurm.command("gpu02", d) == [
        "scontrol", "update", "nodename=gpu02", "state=drain", "reason=aifabric: %s gom-1" % LINK]
    assert slurm.decide(ours, "drained", LINK, "gom-2")["action"] is None
    assert slurm.decide(ours, "drained", "gpu01:rail1>leaf1:Ethernet0", "gom-2")["reason"] == \
        "aifabric: %s gom-17; gpu01:rail1>leaf1:Ethernet0 gom-2" % LINK
    # someone else's drain: never touched, never resumed
    for want in ("drained", "resumed"):
        d = slurm.decide(other, want, LINK, "gom-3")
        assert d["action"] is None and "disk replacement" in d["why"] and slurm.command("gpu02", d) is None
    assert slurm.decide(ours, "resumed", LINK, None)["action"] == "resume"
    assert slurm.decide(ours, "resumed", "gpu01:rail3>leaf3:Ethernet0", None)["action"] is None
    assert slurm.decide(idle, "resumed", LINK, None)["action"] is None
    # a reason edited by hand into another form is no longer ours
    edited = dict(ours, reason="aifabric: rail0 flapping, keep it down")
    assert slurm.decide(edited, "resumed", LINK, None)["action"] is None


@pytest.mark.parametrize("link", ["", "a b", "x;y", "-lead"])
def test_link_must_be_one_word(link):
    with pytest.raises(slurm.SlurmError, match="link"):
        slurm.decide(capture("show-node-idle.txt"), "drained", link, "gom-1")


def test_topology_conf_one_switch_per_group():
    plan = build_plan(small(servers=8, rails=2, spg=4))
    text = slurm.topology_conf(plan)
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines == ["SwitchName=%s-g1 Nodes=h[001-004]" % plan["fabric"], "SwitchName=%s-g2 Nodes=h[005-008]"
                     % plan["fabric"], "SwitchName=%s-spine Switches=%s-g[1-2]" % (plan["fabric"], plan["fabric"])]
    tree = slurm.topology(plan)
    assert tree["groups"][0]["leafs"] == sorted(set(n["leaf"] for h in ("h001", "h002") for n in plan["hosts"][h]["nics"]))
    assert slurm.topology_conf(build_plan(lab())).count("SwitchName=") == 2
    assert "Nodes=n[1-4]" in slurm.topology_conf(plan, {"h001": "n1", "h002": "n2", "h003": "n3", "h004": "n4"})


def test_compress_shapes():
    assert slurm.compress(["h003", "h001", "h002", "h007"]) == "h[001-003,007]"
    assert slurm.compress(["x"]) == "x"
    assert slurm.compress(["n9", "n10"]) == "n9,n10"


def test_k8s_labels_per_group_and_rail():
    plan = build_plan(lab())
    labels = k8s_nodes.node_labels(plan)
    assert labels["gpu01"] == {"aifabric.io/fabric": "lab", "aifabric.io/group": "1", "aifabric.io/rail0-leaf": "leaf0",
                               "aifabric.io/rail1-leaf": "leaf1", "aifabric.io/rail2-leaf": "leaf2",
                               "aifabric.io/rail3-leaf": "leaf3"}
    commands = k8s_nodes.label_commands(labels)
    assert commands[0].startswith("kubectl label node gpu01 aifabric.io/fabric=lab aifabric.io/group=1 ")
    assert commands[0].endswith(" --overwrite")
    with pytest.raises(k8s_nodes.K8sNodeError, match="leaf:0"):
        k8s_nodes.check_value("aifabric.io/rail0-leaf", "leaf:0")
    with pytest.raises(k8s_nodes.K8sNodeError):
        k8s_nodes.check_key("Aifabric.IO/x")
    assert k8s_nodes.check_key("aifabric.io/" + "a" * 63)
    with pytest.raises(k8s_nodes.K8sNodeError):
        k8s_nodes.check_key("aifabric.io/" + "a" * 64)


def node_object(unschedulable=False, annotations=None):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu01", "annotations": annotations or {}},
            "spec": {"unschedulable": unschedulable} if unschedulable else {}}


def test_k8s_cordon_taint_and_only_our_uncordon():
    d = k8s_nodes.decide(node_object(), "cordoned", LINK, "gom-1")
    assert d["commands"] == ["kubectl cordon gpu01",
                             "kubectl taint nodes gpu01 aifabric.io/fabric-fault=rail0:NoSchedule --overwrite",
                             "kubectl annotate node gpu01 'aifabric.io/drain-reason=aifabric: %s gom-1' --overwrite" % LINK]
    ours = node_object(True, {k8s_nodes.REASON_ANNOTATION: d["reason"]})
    undo = k8s_nodes.decide(ours, "uncordoned", LINK)
    assert undo["action"] == "uncordon" and undo["commands"][-1] == "kubectl uncordon gpu01"
    theirs = node_object(True, {"note": "kernel upgrade"})
    assert k8s_nodes.decide(theirs, "uncordoned", LINK)["commands"] == []
    assert k8s_nodes.decide(theirs, "cordoned", LINK, "gom-2")["commands"] == []
    with pytest.raises(k8s_nodes.K8sNodeError, match="effect"):
        k8s_nodes.decide(node_object(), "cordoned", LINK, "gom-1", effect="Never")


def test_modules(capsys):
    result = run_module(scheduler_topology, {"fabric": small(servers=8, rails=2, spg=4)}, capsys)
    assert not result["changed"] and "Nodes=h[001-004]" in result["topology_conf"]
    assert result["node_labels"]["h005"]["aifabric.io/group"] == "2"
    result = run_module(scheduler_topology, {"fabric": small(), "node_names": {"zz": "n1"}}, capsys)
    assert result["failed"] and "zz" in result["msg"]
    result = run_module(k8s_node_fault, {"node": node_object(), "state": "cordoned", "link": LINK, "event_id": "e1"},
                        capsys)
    assert result["action"] == "cordon" and len(result["commands"]) == 3 and not result["changed"]
    result = run_module(k8s_node_fault, {"node": {}, "state": "uncordoned", "link": LINK}, capsys)
    assert result["failed"] and "metadata.name" in result["msg"]
