"""The demo lab's non-NVIDIA host (issue 29 item 1): gpu04 gets a synthetic 8x MI300X + Broadcom bnxt_re tree
named as the lab plan names its NICs (tests/lab/hosts/lab.py HW_FIXTURES), and the host's own roles judge it by
its stack: preflight by RCCL's rules with bnxt modules (only synthetic_root left), QoS reads the firmware DCBX
back and sets DCQCN through the bnxt_re configfs, the IRQ role finds bnxt_en's <netdev>-TxRx-<n> vectors with the
glob inventories/lab/host_vars/gpu04.yml sets. The make demo run exercises the same in the podman lab."""
import os
import shutil

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.host import checks, irq
from ansible_collections.aifabric.roce.plugins.module_utils.host import facts as hf
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot
from ansible_collections.aifabric.roce.plugins.modules import rdma_qos

from ..module_runner import run_module

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _load_lab():
    """tests/lab/hosts/lab.py under a name of its own (tests/lab/switches has a lab.py too)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("aifabric_lab_hosts", os.path.join(ROOT, "tests", "lab", "hosts", "lab.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lab = _load_lab()


@pytest.fixture(scope="module")
def gpu04():
    hosts, _gateways = lab.lab_topology()
    host = [h for h in hosts if h["name"] == "gpu04"][0]
    assert lab.HW_FIXTURES == {"gpu04": "mi300x-bnxt"}
    tree = lab.generate_hw_tree(lab.HW_FIXTURES["gpu04"], host["plan_nics"])
    yield host, tree
    shutil.rmtree(os.path.dirname(tree), ignore_errors=True)


def test_gpu04_host_vars_point_the_stack_defaults_at_the_tree():
    with open(os.path.join(ROOT, "inventories", "lab", "host_vars", "gpu04.yml")) as handle:
        host_vars = yaml.safe_load(handle)
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "gpu_hosts.yml")) as handle:
        group = yaml.safe_load(handle)
    assert host_vars["host_preflight_root"] == group["host_rdma_qos_root"] == lab.HW_ROOT + "/root"
    assert host_vars["host_nccl_conf_path"] == "/etc/rccl.conf"


def test_gpu04_preflight_by_its_stack(gpu04):
    host, tree = gpu04
    facts = hf.gather(os.path.join(tree, "root"), os.path.join(tree, "tools"), netdevs=[n["netdev"] for n in host["plan_nics"]])
    assert facts["stack"]["gpu_vendor"] == "amd" and facts["stack"]["nic_drivers"] == ["bnxt_re"]
    assert (facts["gdr"]["library"], facts["gdr"]["ready"]) == ("RCCL", True)
    # the plan's rail addresses and speeds are the tree's: no GID, speed or NIC findings
    nics = [dict(n, rail=i) for i, n in enumerate(host["plan_nics"])]
    found = checks.host_findings(facts, checks.expectations(nics), "gpu04")
    assert [(f["id"], f["subject"]) for f in found] == [("synthetic_root", "root")]


def test_gpu04_qos_and_irq_act_on_the_bnxt_tree(gpu04, capsys):
    host, tree = gpu04
    root, tools = os.path.join(tree, "root"), os.path.join(tree, "tools")
    profile = {"trust": "dscp", "roce_priority": 3, "lossless_priorities": [3], "roce_dscp": 26, "cnp_dscp": 48,
               "cnp_priority": 6, "roce_tos": 106, "dscp_to_priority": {"26": 3, "48": 6}}
    args = {"interfaces": [{"netdev": n["netdev"], "rdma": n["rdma"]} for n in host["plan_nics"]], "profile": profile,
            "root": root, "tool_output_dir": tools, "persist": False, "require": ["tool"]}
    done = run_module(rdma_qos, args, capsys)
    assert done["rc"] == 0, done.get("msg")
    rail0 = done["interfaces"]["rail0"]
    assert rail0["dcbx"] == "firmware" and rail0["commands"] == []
    assert rail0["congestion"]["status"] == "set"
    assert rail0["congestion"]["interface"] == "/sys/kernel/config/bnxt_re/mlx5_0/ports/1/cc"
    assert run_module(rdma_qos, args, capsys)["changed"] is False
    assignments, problems = irq.plan(SysRoot(root), [n["netdev"] for n in host["plan_nics"]], name_glob="rail*-TxRx-*")
    assert problems == [] and len(assignments) == 4 * 16
