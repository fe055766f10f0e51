"""GOR's scheduler side against a real Slurm 22.05 (slurmctld, a slurmd per plan host, munge) started on this machine.

The plan's topology.conf is the one slurmctld loads; drains go through the slurm_node module, by ansible-playbook
(playbooks/gor_drain.yml, timed from the event to the node shown drained) and in-process; a node someone else drained
is never resumed."""
import json
import os
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))

import slurm_cluster  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.gor import slurm  # noqa: E402
from ansible_collections.aifabric.roce.plugins.modules import slurm_node  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests"))
from unit.module_runner import run_module  # noqa: E402

# issue 39: a host-link fault drains the node in <= 10 s. make bench-gor holds the tests to it (AIFABRIC_GOR_STRICT=1,
# an otherwise idle machine); under make test's parallel lanes (load ~13 on 2 cores, 8.9 s seen) the bound is 20 s
DRAIN_BUDGET_S = 10.0 if os.environ.get("AIFABRIC_GOR_STRICT") else 20.0


def node(cluster, name):
    return cluster["node"](name)


def module(cluster, capsys, **args):
    args.setdefault("slurm_conf", cluster["conf"])
    return run_module(slurm_node, args, capsys)


def expand(cluster, expression):
    out = slurm_cluster.scontrol(cluster["root"], "show", "hostnames", expression)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def field(line, key):
    return [w for w in line.split() if w.startswith(key + "=")][0].split("=", 1)[1]


def test_slurmctld_loads_the_plans_topology(cluster):
    out = slurm_cluster.scontrol(cluster["root"], "show", "topology")
    assert out.returncode == 0, out.stderr
    lines = dict((line.split()[0], line) for line in out.stdout.splitlines() if line.strip())
    tree = slurm.topology(cluster["plan"])
    assert len(tree["groups"]) == 2
    for group in tree["groups"]:
        line = lines["SwitchName=%s" % group["switch"]]
        assert field(line, "Level") == "0"
        assert expand(cluster, field(line, "Nodes")) == group["nodes"]
        assert group["nodes"] == sorted(h for h, v in cluster["plan"]["hosts"].items() if v["group"] == group["group"])
    top = lines["SwitchName=%s" % tree["top"]["switch"]]
    assert field(top, "Level") == "1"
    assert expand(cluster, field(top, "Switches")) == [g["switch"] for g in tree["groups"]]


@pytest.mark.parametrize("names", [
    ["h001", "h002", "h003", "h007"], ["gpu01", "gpu02", "gpu10", "leaf-g1-r0", "leaf-g2-r0"],
    ["n9", "n10", "n11", "x"], ["a001", "a1", "a2", "a010"], ["x", "n1", "b2", "n3"], ["n1", "n01", "n010", "n10"]])
def test_hostlist_expression_expands_to_the_names_in_slurm(cluster, names):
    """Slurm's own parser (scontrol show hostnames) expands our expression to exactly the names, each once."""
    assert sorted(expand(cluster, slurm.compress(names))) == sorted(names)


def gom_event(link, status, fault="gom-41"):
    """A GOM event (docs/gom.md, schema aifabric.gom.event/1) for a host->leaf link."""
    event = {"schema": "aifabric.gom.event/1", "id": fault if status == "firing" else fault + "r", "fault_id": fault,
             "kind": "link_fault" if status == "firing" else "recovered", "link": link, "link_class": "host_up",
             "loss": 1.0, "first_loss": time.time() - 1, "detected": time.time(), "localised": time.time(),
             "cleared": time.time() if status != "firing" else None}
    return event


def test_event_drains_within_budget_and_resume_after_repair(cluster, tmp_path):
    name = sorted(cluster["plan"]["hosts"])[0]
    link = "%s:rail0>leaf-g1-r0:Ethernet1" % name
    playbook = os.path.join(ROOT, "playbooks", "gor_drain.yml")
    envp = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))

    def play(status, watch=False):
        """Run the playbook for the event; with watch, also the seconds from its start until Slurm shows the drain."""
        event = tmp_path / ("%s.json" % status)
        event.write_text(json.dumps({"gor_events": [gom_event(link, status)], "gor_slurm_conf": cluster["conf"]}))
        start = time.monotonic()
        proc = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                                 "-c", "local", "-e", "ansible_python_interpreter=%s" % sys.executable, playbook,
                                 "-e", "@%s" % event], env=envp, cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        drained_after = None
        while watch and proc.poll() is None and drained_after is None:
            if node(cluster, name)["drain"]:
                drained_after = time.monotonic() - start
            time.sleep(0.1)
        out = proc.communicate(timeout=120)[0]
        if watch and drained_after is None and node(cluster, name)["drain"]:
            drained_after = time.monotonic() - start
        return proc.returncode, out, drained_after, time.monotonic() - start

    rc, out, drained_after, total = play("firing", watch=True)
    assert rc == 0, out[-4000:]
    now = node(cluster, name)
    assert now["drain"] and now["reason"] == "aifabric: %s gom-41" % link
    print("GOM event -> Slurm shows the node drained in %.2f s (playbook done in %.2f s; ansible-playbook "
          "gor_drain.yml against real slurmctld)" % (drained_after, total))
    assert drained_after <= DRAIN_BUDGET_S
    rc, out, _drained, _total = play("resolved")
    assert rc == 0, out[-4000:]
    assert not node(cluster, name)["drain"]


def test_someone_elses_drain_is_never_resumed(cluster, capsys):
    name = sorted(cluster["plan"]["hosts"])[1]
    link = "%s:rail1>leaf-g1-r1:Ethernet2" % name
    out = slurm_cluster.scontrol(cluster["root"], "update", "nodename=%s" % name, "state=drain", "reason=DIMM swap")
    assert out.returncode == 0, out.stderr
    result = module(cluster, capsys, node=name, state="drained", link=link, event_id="gom-7")
    assert not result["changed"] and result["action"] is None and "DIMM swap" in result["why"]
    result = module(cluster, capsys, node=name, state="resumed", link=link)
    assert not result["changed"] and "never resumed" in result["why"]
    now = node(cluster, name)
    assert now["drain"] and now["reason"] == "DIMM swap"
    slurm_cluster.scontrol(cluster["root"], "update", "nodename=%s" % name, "state=resume")


def test_two_faults_resume_only_after_both_repaired_and_check_mode_writes_nothing(cluster, capsys):
    name = sorted(cluster["plan"]["hosts"])[2]
    first, second = "%s:rail0>leaf-g1-r0:Ethernet3" % name, "%s:rail1>leaf-g1-r1:Ethernet3" % name
    result = module(cluster, capsys, node=name, state="drained", link=first, event_id="gom-1", _ansible_check_mode=True,
                    _ansible_diff=True)
    assert result["changed"] and result["action"] == "drain" and "+DRAIN" in result["diff"]["after"]
    assert not node(cluster, name)["drain"]
    assert module(cluster, capsys, node=name, state="drained", link=first, event_id="gom-1")["action"] == "drain"
    again = module(cluster, capsys, node=name, state="drained", link=first, event_id="gom-1")
    assert not again["changed"]
    assert module(cluster, capsys, node=name, state="drained", link=second, event_id="gom-2")["action"] == "update_reason"
    assert node(cluster, name)["reason"] == "aifabric: %s gom-1; %s gom-2" % (first, second)
    result = module(cluster, capsys, node=name, state="resumed", link=first)
    assert result["action"] == "update_reason" and node(cluster, name)["drain"]
    assert node(cluster, name)["reason"] == "aifabric: %s gom-2" % second
    result = module(cluster, capsys, node=name, state="resumed", link=second)
    assert result["action"] == "resume" and result["changed"]
    assert not node(cluster, name)["drain"]
    assert not module(cluster, capsys, node=name, state="resumed", link=second)["changed"]


def test_unknown_node_fails_with_the_fix(cluster, capsys):
    result = module(cluster, capsys, node="nosuch", state="resumed", link="a:b>c:d")
    assert result["failed"] and "nosuch" in result["msg"] and "Fix" in result["msg"]
