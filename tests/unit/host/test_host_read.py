"""Read once, change only what drifted (issue 28): the per-role judgement of module host_state, the host modules'
own comparisons it runs in check mode (on generated sysfs/procfs trees and on captured `ip -j` output), the module
as Ansible runs it, and the playbook wiring (the read passes each role exactly the arguments its role passes)."""
import hashlib
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.host import apply_irq, apply_nccl, apply_qos, state
from ansible_collections.aifabric.roce.plugins.module_utils.host_net import engine
from ansible_collections.aifabric.roce.plugins.modules import host_state
from tests.unit.host_net.helpers import lab_intent
from tests.unit.host_net.test_engine import FakeHost, converged_state

from ..module_runner import run_module

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PROFILE = {"trust": "dscp", "roce_dscp": 26, "roce_priority": 3, "cnp_dscp": 48, "cnp_priority": 6,
           "lossless_priorities": [3], "roce_tos": 106, "dscp_to_priority": {"26": 3, "48": 6}}
NICS = [{"netdev": "rail%d" % i, "rdma": "mlx5_%d" % i} for i in range(8)]


def tree_digest(base):
    """Every path and file content under base: proves a run wrote nothing."""
    digest = hashlib.sha256()
    for top, dirs, files in sorted(os.walk(base)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(top, name)
            digest.update(path.encode())
            if not os.path.islink(path):
                with open(path, "rb") as handle:
                    digest.update(handle.read())
    return digest.hexdigest()


def args_for(base):
    """The arguments the roles pass their modules, on a generated host tree (root/ and captured tools/)."""
    root = os.path.join(base, "root")
    return {
        "rdma_qos": {"interfaces": NICS, "profile": PROFILE, "root": root, "tool_output_dir": os.path.join(base, "tools"),
                     "persist": True},
        "irq_affinity": {"nics": [n["netdev"] for n in NICS], "root": root, "irqbalance": "ignore", "persist": True},
        "nccl_config": {"nccl": {"NCCL_IB_GID_INDEX": "3", "NCCL_IB_HCA": "=mlx5_0,mlx5_1"}, "root": root},
    }


def converge(params):
    """Apply each module once for real (check_mode False), the way the roles would."""
    apply_qos.run(dict(apply_qos_defaults(), **params["rdma_qos"]), False, lambda argv: (0, "", ""))
    apply_irq.run(dict(irq_defaults(), **params["irq_affinity"]), False)
    apply_nccl.run(dict(nccl_defaults(), **params["nccl_config"]), False)


def _defaults(spec):
    return dict((k, v.get("default")) for k, v in spec.items())


def apply_qos_defaults():
    return _defaults(apply_qos.ARGUMENT_SPEC)


def irq_defaults():
    return _defaults(apply_irq.ARGUMENT_SPEC)


def nccl_defaults():
    return _defaults(apply_nccl.ARGUMENT_SPEC)


# --- the judgement (pure) ---------------------------------------------------------------------------------------

def test_judge_runs_every_role_it_was_not_asked_about_or_could_not_check():
    roles = state.judge({"host_network": ("ok", {"changed": False}),
                         "host_nccl": ("error", "refusing NCCL settings: bad")})
    assert roles["host_network"] == {"drifted": False, "changes": [], "reason": "in sync"}
    assert roles["host_nccl"]["drifted"] and roles["host_nccl"]["reason"] == "check failed: refusing NCCL settings: bad"
    assert roles["host_rdma_qos"] == {"drifted": True, "changes": [], "reason": "not read"}
    assert roles["host_irq_affinity"]["reason"] == "not read"


def test_judge_names_the_changes_of_a_drifted_role():
    roles = state.judge({"host_network": ("ok", {"changed": True, "changes": ["mtu rail3 1500 -> 9000"]}),
                         "host_rdma_qos": ("ok", {"changed": False}), "host_irq_affinity": ("ok", {"changed": False}),
                         "host_nccl": ("ok", {"changed": False})})
    assert [r for r, v in sorted(roles.items()) if v["drifted"]] == ["host_network"]
    assert roles["host_network"]["changes"] == ["mtu rail3 1500 -> 9000"]


def test_a_unit_not_in_the_wanted_state_makes_its_role_drift():
    unit = {"role": "host_rdma_qos", "name": "aifabric-rdma-qos.service", "enabled": True}
    assert state.unit_problems(unit, "enabled", None) == []
    assert state.unit_problems(unit, "disabled", None) == ["service aifabric-rdma-qos.service is-enabled disabled (want enabled)"]
    assert state.unit_problems(unit, None, None) == ["service aifabric-rdma-qos.service: state unknown (no systemctl)"]
    stop = {"role": "host_irq_affinity", "name": "irqbalance", "enabled": False, "active": False}
    assert state.unit_problems(stop, "disabled", "inactive") == []
    assert state.unit_problems(stop, "enabled", "active") == ["service irqbalance is-enabled enabled (want disabled)",
                                                              "service irqbalance is-active active (want inactive)"]
    in_sync = dict((role, ("ok", {"changed": False})) for role, _m in state.ROLES)
    roles = state.judge(in_sync, [(unit, ["service aifabric-rdma-qos.service is-enabled disabled (want enabled)"])])
    assert roles["host_rdma_qos"]["drifted"] and roles["host_rdma_qos"]["reason"] == "service"
    assert not roles["host_irq_affinity"]["drifted"]


# --- the modules' own comparisons in check mode -----------------------------------------------------------------

def test_network_check_is_in_sync_on_a_converged_host_and_names_each_drift():
    """rail_network's engine in check mode on captured `ip -j` output: the read host_state runs."""
    intent = lab_intent("gpu04")
    files = {}
    applied = FakeHost("drifted", after=[converged_state()], files=files)
    engine.run(applied, intent, persistence="systemd", manage_sysctls=False)
    synced = FakeHost(converged_state(), files=dict(applied.files))
    synced.links = dict(applied.links)
    result = engine.run(synced, intent, check_mode=True, persistence="systemd", manage_sysctls=False)
    assert state.judge({"host_network": ("ok", result)})["host_network"]["drifted"] is False
    drifted = FakeHost("drifted", files=dict(applied.files))
    drifted.links = dict(applied.links)
    result = engine.run(drifted, intent, check_mode=True, persistence="systemd", manage_sysctls=False)
    judged = state.judge({"host_network": ("ok", result)})["host_network"]
    assert judged["drifted"] and "mtu rail3 1500 -> 9000" in judged["changes"]
    assert "rule add priority 1002 from 10.102.0.4/32 table 102" in judged["changes"]
    assert drifted.batches == [] and drifted.writes == []


def test_qos_irq_nccl_checks_find_drift_then_sync_after_apply(host_copy):
    base = host_copy("h100-cx7")
    params = args_for(base)
    first = dict((role, ("ok", run(params[module], True))) for role, module, run in (
        ("host_rdma_qos", "rdma_qos", lambda p, c: apply_qos.run(dict(apply_qos_defaults(), **p), c, None)),
        ("host_irq_affinity", "irq_affinity", lambda p, c: apply_irq.run(dict(irq_defaults(), **p), c)),
        ("host_nccl", "nccl_config", lambda p, c: apply_nccl.run(dict(nccl_defaults(), **p), c))))
    judged = state.judge(first)
    assert judged["host_rdma_qos"]["drifted"] and judged["host_irq_affinity"]["drifted"] and judged["host_nccl"]["drifted"]
    assert any(c.startswith("/sys/class/net/rail0/") for c in judged["host_rdma_qos"]["changes"]), judged["host_rdma_qos"]
    assert any(c.startswith("rail0 irq ") for c in judged["host_irq_affinity"]["changes"]), judged["host_irq_affinity"]
    assert "/etc/nccl.conf NCCL_IB_HCA: (absent) -> =mlx5_0,mlx5_1" in judged["host_nccl"]["changes"]
    converge(params)
    again = state.judge({
        "host_rdma_qos": ("ok", apply_qos.run(dict(apply_qos_defaults(), **params["rdma_qos"]), True, None)),
        "host_irq_affinity": ("ok", apply_irq.run(dict(irq_defaults(), **params["irq_affinity"]), True)),
        "host_nccl": ("ok", apply_nccl.run(dict(nccl_defaults(), **params["nccl_config"]), True))})
    assert [r for r in ("host_rdma_qos", "host_irq_affinity", "host_nccl") if again[r]["drifted"]] == []


def test_qos_check_mode_counts_the_tool_commands_it_would_run(host_copy, monkeypatch):
    """On a live host (no captured output) the trust/PFC commands check mode would run are a change."""
    from ansible_collections.aifabric.roce.plugins.module_utils.host import sysroot as sysroot_mod
    base = host_copy("h100-cx7")
    monkeypatch.setattr(sysroot_mod.SysRoot, "live", property(lambda self: True))
    params = dict(apply_qos_defaults(), interfaces=NICS[:1], profile=PROFILE, root=os.path.join(base, "root"),
                  persist=False, tool_output_dir=None)
    real = sysroot_mod.ToolRunner

    def replay(capture_dir=None, live=True):
        return real(capture_dir=os.path.join(base, "tools"), live=False)
    monkeypatch.setattr("ansible_collections.aifabric.roce.plugins.module_utils.host.apply_qos.ToolRunner", replay)
    result = apply_qos.run(params, True, None)
    assert result["pending_commands"] and result["changed"] is True
    assert state.judge({"host_rdma_qos": ("ok", result)})["host_rdma_qos"]["drifted"]


# --- the module as Ansible runs it --------------------------------------------------------------------------------

def test_module_reads_without_writing_and_judges_each_role(host_copy, capsys):
    base = host_copy("h100-cx7")
    params = args_for(base)
    before = tree_digest(base)
    res = run_module(host_state, params, capsys)
    assert res["rc"] == 0 and res["changed"] is False
    assert tree_digest(base) == before
    assert res["drifted"] == ["host_irq_affinity", "host_nccl", "host_network", "host_rdma_qos"]
    assert res["roles"]["host_network"]["reason"] == "not read"
    converge(params)
    res = run_module(host_state, params, capsys)
    assert res["drifted"] == ["host_network"], res["roles"]
    # injected drift: one IRQ moved off its CPU, one NCCL variable edited
    pinned = apply_irq.run(dict(irq_defaults(), **params["irq_affinity"]), True)["assignments"][0]
    with open(os.path.join(base, "root", "proc", "irq", str(pinned["irq"]), "smp_affinity_list"), "w") as handle:
        handle.write("127\n")
    conf = os.path.join(base, "root", "etc", "nccl.conf")
    with open(conf) as handle:
        text = handle.read()
    with open(conf, "w") as handle:
        handle.write(text.replace("NCCL_IB_GID_INDEX=3", "NCCL_IB_GID_INDEX=0"))
    res = run_module(host_state, params, capsys)
    assert res["roles"]["host_nccl"]["changes"] == ["/etc/nccl.conf NCCL_IB_GID_INDEX: 0 -> 3"], res["roles"]["host_nccl"]
    assert res["roles"]["host_irq_affinity"]["changes"] == ["%s irq %d (%s): 127 -> %d" % (
        pinned["netdev"], pinned["irq"], pinned["name"], pinned["cpu"])]
    assert not res["roles"]["host_rdma_qos"]["drifted"]


def test_module_judges_bad_arguments_as_drift_for_the_role_to_refuse(host_copy, capsys):
    params = args_for(host_copy("h100-cx7"))
    params["irq_affinity"]["reserved_cpus"] = "zero"
    params["nccl_config"]["bogus"] = 1
    res = run_module(host_state, params, capsys)
    assert res["rc"] == 0
    assert res["roles"]["host_irq_affinity"]["reason"].startswith("check failed: reserved_cpus: 'zero' is not a cpulist")
    assert "bogus" in res["roles"]["host_nccl"]["reason"]


# --- the wiring: site.yml's read passes each role's module exactly that role's arguments --------------------------

ROLE_TASK = {"rail_network": ("host_network", "aifabric.roce.rail_network"),
             "rdma_qos": ("host_rdma_qos", "aifabric.roce.rdma_qos"),
             "irq_affinity": ("host_irq_affinity", "aifabric.roce.irq_affinity"),
             "nccl_config": ("host_nccl", "aifabric.roce.nccl_config")}


def _module_args(tasks, fqcn):
    for task in tasks:
        if fqcn in task:
            return task[fqcn]
        found = _module_args(task.get("block") or [], fqcn)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("option", sorted(ROLE_TASK))
def test_the_read_passes_what_the_role_passes(option):
    with open(os.path.join(ROOT, "playbooks", "tasks", "host_read.yml")) as handle:
        read = yaml.safe_load(handle)[0]["aifabric.roce.host_state"][option]
    role, fqcn = ROLE_TASK[option]
    with open(os.path.join(ROOT, "roles", role, "tasks", "main.yml")) as handle:
        passed = _module_args(yaml.safe_load(handle), fqcn)
    # the role omits an unset optional argument (omit); the read passes None, which the module takes as unset
    normal = dict((k, v.replace("default(omit)", "default(None)").replace("or omit", "or None") if isinstance(v, str) else v)
                  for k, v in passed.items())
    assert read == normal


@pytest.mark.parametrize("role", [r for r, _m in state.ROLES])
def test_each_role_applies_only_on_drift_or_without_a_read(role):
    with open(os.path.join(ROOT, "roles", role, "tasks", "main.yml")) as handle:
        tasks = yaml.safe_load(handle)
    gated = [t for t in tasks if "block" in t]
    assert len(gated) == 1 and gated[0]["when"] == \
        "(aifabric_host_state | default({})).roles.%s.drifted | default(true)" % role
    module = "aifabric.roce." + state.MODULE_OF[role]
    assert _module_args(gated[0]["block"], module) is not None
    assert all(module not in t for t in tasks if "block" not in t)


def test_module_gathers_the_rdma_facts_the_facts_module_gathers(host_copy, capsys):
    """role host_preflight reuses them on a host where nothing drifted: they must be rdma_facts's own."""
    from ansible_collections.aifabric.roce.plugins.modules import rdma_facts
    base = host_copy("h100-cx7")
    wanted = {"root": os.path.join(base, "root"), "tool_output_dir": os.path.join(base, "tools"), "netdevs": ["rail0", "rail1"]}
    alone = run_module(rdma_facts, wanted, capsys)
    read = run_module(host_state, {"rdma_facts": wanted}, capsys)
    assert read["rc"] == 0 and read["changed"] is False
    assert read["rdma_facts_args"] == wanted
    assert read["ansible_facts"]["aifabric_rdma"] == alone["ansible_facts"]["aifabric_rdma"]
    assert read["ansible_facts"]["aifabric_rdma"]["rdma_devices"]
    bad = run_module(host_state, {"rdma_facts": {"root": "/", "bogus": 1}}, capsys)
    assert bad["rc"] == 0 and "ansible_facts" not in bad and "rdma_facts_args" not in bad
    assert bad["rdma_facts_error"].startswith("rdma_facts: bogus. Supported parameters include")


def test_qos_changes_name_tool_commands_values_congestion_and_files():
    result = {"changed": True, "files": ["/usr/local/sbin/aifabric-rdma-qos"],
              "interfaces": {"rail0": {"commands": [["dcb", "pfc", "set", "dev", "rail0", "prio-pfc", "3:on"]],
                                       "sysfs": [{"path": "/sys/class/net/rail0/ecn/roce_np/enable/3", "before": "0",
                                                  "after": "1", "changed": True}],
                                       "congestion": {"status": "would change", "interface": "/sys/kernel/config/bnxt_re/x",
                                                      "before": {"ecn": 0}, "after": {"ecn": 1}}}},
              "diff": [{"before_header": "/usr/local/sbin/aifabric-rdma-qos"}, {"before_header": "rail0 qos"}]}
    assert state.qos_changes(result) == [
        "rail0: dcb pfc set dev rail0 prio-pfc 3:on",
        "/sys/class/net/rail0/ecn/roce_np/enable/3 0 -> 1",
        "rail0 congestion control /sys/kernel/config/bnxt_re/x: {'ecn': 0} -> {'ecn': 1}",
        "file /usr/local/sbin/aifabric-rdma-qos"]
