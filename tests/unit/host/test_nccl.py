"""NCCL settings from a plan slice: values, validation, rendering as NCCL parses it, module check/diff/idempotence."""
import os
import stat

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.host import nccl
from ansible_collections.aifabric.roce.plugins.modules import nccl_config

from ..module_runner import run_module

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")


@pytest.fixture(scope="module")
def lab_plan():
    with open(os.path.join(REPO, "inventories", "lab", "group_vars", "all", "fabric.yml")) as handle:
        return build_plan(yaml.safe_load(handle)["fabric"])


def _host(plan):
    name = sorted(plan["hosts"])[0]
    return plan["hosts"][name]


def test_settings_from_the_lab_plan_slice(lab_plan):
    host = _host(lab_plan)
    settings = nccl.build_settings(host["nccl"], host["nics"], lab_plan["qos"])
    rdma = [nic["rdma"] for nic in sorted(host["nics"], key=lambda n: n["rail"])]
    assert settings["NCCL_IB_HCA"] == "=" + ",".join(rdma)  # exact match, rail order
    assert settings["NCCL_IB_TC"] == str(lab_plan["qos"]["roce_tos"]) == "106"  # DSCP 26 << 2 | ECT(0)
    assert int(settings["NCCL_IB_TC"]) >> 2 == lab_plan["qos"]["roce_dscp"]
    assert "NCCL_IB_GID_INDEX" not in settings     # the lab intent sets no gid_index: NCCL >= 2.21 picks the GID
    assert "NCCL_IB_GID_INDEX" not in nccl.render_conf(settings)
    assert settings["NCCL_SOCKET_IFNAME"] == "=" + host["mgmt_interface"]     # exact match, not a prefix
    # the lab is rail-optimized: every rail NIC on its own leaf
    assert len(set(nic["leaf"] for nic in host["nics"])) == len(host["nics"]) > 1
    assert settings["NCCL_CROSS_NIC"] == "0"


@pytest.mark.parametrize("leafs, want", [
    (["l1", "l2", "l3", "l4"], "0"),
    (["l1", "l1"], "1"),
    (["l1", "l1", "l2"], "2"),
    (["l1", None], "2"),
    (["l1"], None),
])
def test_cross_nic_follows_the_topology(leafs, want):
    assert nccl.cross_nic_for([{"leaf": leaf} for leaf in leafs]) == want


BASE = {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_GID_INDEX": "3", "NCCL_IB_TC": "106", "NCCL_SOCKET_IFNAME": "eno1"}


@pytest.mark.parametrize("change, message", [
    ({"NCCL_IB_HCA": "=mlx5_0 mlx5_1"}, "NCCL_IB_HCA: value"),
    ({"NCCL_IB_HCA": "=mlx5_0,,mlx5_1"}, "NCCL_IB_HCA: '=mlx5_0,,mlx5_1' is not"),
    ({"NCCL_SOCKET_IFNAME": "eno1;reboot"}, "NCCL_SOCKET_IFNAME: value"),
    ({"NCCL_SOCKET_IFNAME": "eno1\nNCCL_DEBUG=TRACE"}, "NCCL_SOCKET_IFNAME: value"),
    ({"NCCL_SOCKET_IFNAME": "eno1\n"}, "NCCL_SOCKET_IFNAME: value"),
    ({"NCCL_IB_GID_INDEX": "3\n"}, "NCCL_IB_GID_INDEX: value"),
    ({"NCCL_IB_GID_INDEX": "300"}, "NCCL_IB_GID_INDEX: '300' is not an integer from -1 to 255"),
    ({"NCCL_IB_TC": "x"}, "NCCL_IB_TC: 'x' is not an integer"),
    ({"NCCL_IB_TC": "96"}, "NCCL_IB_TC: 96 carries DSCP 24, the QoS profile's RoCE DSCP is 26"),
    ({"bad name": "1"}, "bad name: not an NCCL_* or RCCL_* variable name"),
])
def test_bad_values_are_refused_naming_the_variable(change, message):
    with pytest.raises(nccl.NcclError) as err:
        nccl.build_settings(dict(BASE, **change), qos={"roce_dscp": 26})
    assert message in str(err.value)


def test_topo_file_extra_and_conflicts():
    settings = nccl.build_settings(BASE, [], None, "none", "/etc/nccl/topo.xml", {"NCCL_IB_TIMEOUT": 22})
    assert settings["NCCL_TOPO_FILE"] == "/etc/nccl/topo.xml" and settings["NCCL_IB_TIMEOUT"] == "22"
    assert "NCCL_CROSS_NIC" not in settings
    with pytest.raises(nccl.NcclError, match="NCCL_TOPO_FILE: 'topo.xml' is not an absolute path"):
        nccl.build_settings(BASE, topo_file="topo.xml")
    with pytest.raises(nccl.NcclError, match="extra.NCCL_IB_TC: already set from the plan"):
        nccl.build_settings(BASE, extra={"NCCL_IB_TC": "0"})
    with pytest.raises(nccl.NcclError, match="NCCL_IB_HCA: missing"):
        nccl.build_settings({"NCCL_IB_TC": "106"})


def test_conf_renders_what_nccls_parser_reads():
    settings = nccl.build_settings(BASE, [{"leaf": "a"}, {"leaf": "b"}])
    text = nccl.render_conf(settings)
    # NCCL (src/misc/param.cc setEnvFile): skip '#' lines, split at the first '=', value verbatim
    assert nccl.parse_conf(text) == settings
    assert text.splitlines()[1:] == ["NCCL_IB_HCA==mlx5_0,mlx5_1", "NCCL_IB_GID_INDEX=3", "NCCL_IB_TC=106",
                                     "NCCL_SOCKET_IFNAME=eno1", "NCCL_CROSS_NIC=0"]
    assert "=" not in text.splitlines()[0] and text.startswith("#")
    profile = nccl.render_profile(settings)
    assert "export NCCL_IB_HCA='=mlx5_0,mlx5_1'\n" in profile
    assert nccl.parse_profile(profile) == settings


def test_drift_items_name_each_variable():
    items = nccl.drift_items("/etc/nccl.conf", {"NCCL_IB_TC": "0", "NCCL_DEBUG": "INFO"}, {"NCCL_IB_TC": "106"})
    assert items == [{"item": "/etc/nccl.conf NCCL_IB_TC", "expected": "106", "actual": "0"},
                     {"item": "/etc/nccl.conf NCCL_DEBUG", "expected": "(absent)", "actual": "INFO"}]


def test_module_check_apply_idempotent_and_drift(tmp_path, capsys, lab_plan):
    host = _host(lab_plan)
    args = {"nccl": host["nccl"], "nics": host["nics"], "qos": lab_plan["qos"], "root": str(tmp_path),
            "outputs": ["conf", "profile"]}
    conf = tmp_path / "etc" / "nccl.conf"
    res = run_module(nccl_config, dict(args, _ansible_check_mode=True, _ansible_diff=True), capsys)
    assert res["rc"] == 0 and res["changed"] and not conf.exists()
    assert {"item": "/etc/nccl.conf NCCL_CROSS_NIC", "expected": "0", "actual": "(absent)"} in res["drift"]
    res = run_module(nccl_config, args, capsys)
    assert res["changed"] and nccl.parse_conf(conf.read_text()) == res["settings"]
    assert stat.S_IMODE(conf.stat().st_mode) == 0o644
    assert (tmp_path / "etc" / "profile.d" / "aifabric-nccl.sh").exists()
    res = run_module(nccl_config, args, capsys)
    assert res["rc"] == 0 and res["changed"] is False and res["drift"] == []
    conf.write_text(conf.read_text().replace("NCCL_IB_TC=106", "NCCL_IB_TC=0"))
    res = run_module(nccl_config, dict(args, _ansible_check_mode=True), capsys)
    assert res["changed"] and res["drift"] == [{"item": "/etc/nccl.conf NCCL_IB_TC", "expected": "106", "actual": "0"}]
    assert "NCCL_IB_TC=0" in conf.read_text()  # check mode wrote nothing


def test_module_refuses_injection_and_writes_nothing(tmp_path, capsys):
    res = run_module(nccl_config, {"nccl": dict(BASE, NCCL_SOCKET_IFNAME="eno1\nLD_PRELOAD=/tmp/x.so"),
                                   "root": str(tmp_path)}, capsys)
    assert res["rc"] == 1 and "refusing NCCL settings: NCCL_SOCKET_IFNAME" in res["msg"]
    assert not (tmp_path / "etc").exists()


def test_check_mode_result_becomes_a_drift_report_entry(tmp_path, capsys):
    from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import entry_from_result
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "nccl.conf").write_text("NCCL_IB_HCA=mlx5\n")
    res = run_module(nccl_config, {"nccl": BASE, "root": str(tmp_path), "_ansible_check_mode": True}, capsys)
    entry = entry_from_result("gpu01", "host", "host_nccl", res)
    assert entry["status"] == "drift"
    assert {"item": "/etc/nccl.conf NCCL_IB_HCA", "expected": "=mlx5_0,mlx5_1", "actual": "mlx5"} in entry["items"]
    assert {"item": "/etc/nccl.conf NCCL_IB_TC", "expected": "106", "actual": "(absent)"} in entry["items"]


def test_module_writes_an_unknown_rccl_variable_and_warns(tmp_path, capsys):
    # RCCL_P2P_BATCH_ENABLE: "RCCL 2.27.7 for ROCm 7.1.0: Added RCCL_P2P_BATCH_ENABLE" (projects/rccl/CHANGELOG.md),
    # newer than the list the collection checked; the operator's setting is written, with a warning naming that list
    res = run_module(nccl_config, {"nccl": BASE, "extra": {"RCCL_P2P_BATCH_ENABLE": "1"}, "root": str(tmp_path)}, capsys)
    assert res["rc"] == 0 and res["changed"]
    assert "RCCL_P2P_BATCH_ENABLE=1" in (tmp_path / "etc" / "nccl.conf").read_text()
    assert any(str(w).find("RCCL_P2P_BATCH_ENABLE: not among the RCCL_* variables of ROCm/rccl 0cbce2a7571c") >= 0
               for w in res["warnings"])
