"""Read once, change only what drifted, on the twin's GPU hosts (issue 28): real kernels (each host its own network
namespace), reached by Ansible over SSH, converged by playbooks/site.yml.

A no-op run reads each host once (module host_state) and skips every host role's apply tasks; a wrong MTU on one
host's NIC and a missing rule on another are found by the read, previewed by --check --diff with the same diff the
role shows without the read, repaired by the next run on those two hosts only, and read back from the kernel.
Needs root and FRR (the twin). Reuses the Molecule twin (AIFABRIC_TWIN_STATE) when set, else builds its own."""
import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TWIN = os.path.join(ROOT, "tests", "lab", "twin", "twin.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import labid  # noqa: E402  (tests/lab)

# each role's apply task, as the JSON callback names it (role FQCN : task name)
APPLY = {"host_network": "aifabric.roce.host_network : Configure rail NICs (MTU, addresses, routing tables, rules, sysctls, persistence)",
         "host_rdma_qos": "aifabric.roce.host_rdma_qos : Apply the RoCE QoS profile to the rail NICs",
         "host_irq_affinity": "aifabric.roce.host_irq_affinity : Pin rail NIC completion IRQs to their NUMA node",
         "host_nccl": "aifabric.roce.host_nccl : Write the NCCL settings from the plan"}
READ = "Read the host's managed state once (rail network, RoCE QoS, IRQ affinity, NCCL)"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/lib/frr/bgpd"),
                                reason="the twin needs root and FRR (apt install frr; tools/setup-system.sh)")


def site(state, *extra):
    """site.yml on the twin's hosts (plan + host plays), JSON callback -> {task name: {host: result}}, recap."""
    env = dict(((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_")),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PYTHONPATH=os.path.join(ROOT, ".collections"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                          os.path.join(state, "inventory.yml"), os.path.join(ROOT, "playbooks", "site.yml"),
                          "--tags", "host_network,host_qos"] + list(extra),
                         capture_output=True, text=True, env=env, check=False)
    try:
        data = json.loads(out.stdout[out.stdout.index("{"):])
    except ValueError:
        raise AssertionError("no JSON from site.yml (rc %d): %s %s" % (out.returncode, out.stdout[-3000:], out.stderr[-3000:]))
    tasks = {}
    for play in data["plays"]:
        for task in play["tasks"]:
            tasks.setdefault(task["task"]["name"], {}).update(task["hosts"])
    assert out.returncode == 0, json.dumps(data["stats"]) + out.stderr[-3000:]
    return tasks, data["stats"]


def not_run(tasks, name, host):
    """The task did not run on the host: skipped, or never reached (a host in sync ends its play after the read)."""
    result = tasks.get(name, {}).get(host)
    return result is None or result.get("skipped") is True


def ip_json(namespace, *args):
    return json.loads(subprocess.run(["ip", "-n", namespace, "-j"] + list(args), capture_output=True, text=True,
                                     check=True).stdout or "[]")


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    reuse = os.environ.get("AIFABRIC_TWIN_STATE")
    if reuse:   # the Molecule twin: hosts converged by site.yml
        with open(os.path.join(reuse, "twin.json")) as handle:
            record = json.load(handle)
        with open(os.path.join(reuse, "plan", "plan.json")) as handle:
            yield {"state": reuse, "plan": json.load(handle), "prefix": record["prefix"]}
        return
    state = str(tmp_path_factory.mktemp("twin-hosts"))
    prefix, base_port = labid.twin_names("aifh")
    base = ["--state", state, "--ns-prefix", prefix, "--base-port", str(base_port)]
    try:
        up = subprocess.run([sys.executable, TWIN, "up", "--inventory", os.path.join(ROOT, "inventories", "lab")] + base,
                            capture_output=True, text=True, check=False)
        assert up.returncode == 0, up.stderr[-3000:]
        with open(os.path.join(state, "plan", "plan.json")) as handle:
            plan = json.load(handle)
        tasks, stats = site(state)   # first converge: every role drifted on the fresh hosts
        assert all(tasks[READ][h]["drifted"] for h in plan["hosts"]), tasks[READ]
        yield {"state": state, "plan": plan, "prefix": prefix}
    finally:
        subprocess.run([sys.executable, TWIN, "down"] + base, capture_output=True, check=False)
        shutil.rmtree(state, ignore_errors=True)


def test_a_no_op_run_reads_each_host_once_and_applies_nothing(twin):
    tasks, stats = site(twin["state"])
    hosts = sorted(twin["plan"]["hosts"])
    assert sorted(tasks[READ]) == hosts
    for host in hosts:
        assert tasks[READ][host]["drifted"] == [], (host, tasks[READ][host]["roles"])
        assert tasks[READ][host]["changed"] is False
        for role, name in APPLY.items():
            assert not_run(tasks, name, host), (host, role, tasks[name][host])
        assert stats[host]["changed"] == 0


def test_injected_drift_is_previewed_truthfully_then_repaired_on_those_hosts_only(twin):
    plan, prefix = twin["plan"], twin["prefix"]
    hosts = sorted(plan["hosts"])
    mtu_host, rule_host = hosts[0], hosts[1]
    nic = plan["hosts"][mtu_host]["nics"][1]
    rule = plan["hosts"][rule_host]["rules"][0]
    subprocess.run(["ip", "-n", prefix + mtu_host, "link", "set", "dev", nic["netdev"], "mtu", "1500"], check=True)
    subprocess.run(["ip", "-n", prefix + rule_host, "rule", "del", "priority", str(rule["priority"])], check=True)
    try:
        # --check --diff: the read names the two hosts' network drift; the role shows the same diff as without the read
        tasks, stats = site(twin["state"], "--check", "--diff")
        for host in hosts:
            want = ["host_network"] if host in (mtu_host, rule_host) else []
            assert tasks[READ][host]["drifted"] == want, (host, tasks[READ][host]["roles"])
        assert "mtu %s 1500 -> %d" % (nic["netdev"], nic["mtu"]) in tasks[READ][mtu_host]["roles"]["host_network"]["changes"]
        assert any(c.startswith("rule add priority %d " % rule["priority"])
                   for c in tasks[READ][rule_host]["roles"]["host_network"]["changes"])
        with_read = tasks[APPLY["host_network"]]
        without, dummy = site(twin["state"], "--check", "--diff", "-e", "site_host_read=false")
        for host in (mtu_host, rule_host):
            assert with_read[host]["changed"] and with_read[host]["diff"] == without[APPLY["host_network"]][host]["diff"]
            assert with_read[host]["changes"] == without[APPLY["host_network"]][host]["changes"]
        for host in set(hosts) - {mtu_host, rule_host}:
            assert not_run(tasks, APPLY["host_network"], host), with_read.get(host)
            assert without[APPLY["host_network"]][host]["changed"] is False   # without the read the role runs anyway
        # nothing was written by the preview
        assert [l["mtu"] for l in ip_json(prefix + mtu_host, "link", "show", "dev", nic["netdev"])] == [1500]
    finally:
        tasks, stats = site(twin["state"])
    for host in hosts:
        drifted = host in (mtu_host, rule_host)
        assert tasks.get(APPLY["host_network"], {}).get(host, {}).get("changed", False) is drifted, (host, tasks.get(APPLY["host_network"]))
        assert stats[host]["changed"] == (1 if drifted else 0), (host, stats[host])
        for role in ("host_rdma_qos", "host_irq_affinity", "host_nccl"):
            assert not_run(tasks, APPLY[role], host), (host, role)
    assert [l["mtu"] for l in ip_json(prefix + mtu_host, "link", "show", "dev", nic["netdev"])] == [nic["mtu"]]
    rules = ip_json(prefix + rule_host, "rule", "show")
    assert any(r.get("priority") == rule["priority"] and r.get("table") == str(rule["table"]) for r in rules), rules
