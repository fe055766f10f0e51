"""Congestion control (DCQCN) on NICs that are not ConnectX (issue 29 item 4): read back, and set where they differ,
through each driver's own configfs interface (stacks.NIC_DRIVERS[...]["cc"], cited there), or say why not.

Witnesses: Broadcom's bnxt_re README.TXT and configfs.c (out-of-tree driver: attributes shown "%#x", parsed "%x",
nothing applied until "apply"), Intel's irdma README ("ECN Configuration": roce_dcqcn_enable, default off). The
trees are the synthetic mi300x-bnxt fixture (gen_fixtures.py) and minimal stand-ins built here."""
import json
import os

from ansible_collections.aifabric.roce.plugins.module_utils.host import qos, stacks
from ansible_collections.aifabric.roce.plugins.modules import rdma_qos

from ..module_runner import run_module

PROFILE = {"trust": "dscp", "roce_priority": 3, "lossless_priorities": [3], "roce_dscp": 26, "cnp_dscp": 48,
           "cnp_priority": 6, "roce_tos": 106, "dscp_to_priority": {"26": 3, "48": 6}}


def _qos(root, tools, check=False, nics=("rail0",), rdma="bnxt_re0"):
    args = {"interfaces": [{"netdev": n, "rdma": rdma} for n in nics], "profile": PROFILE, "root": root,
            "tool_output_dir": tools, "persist": True}
    if check:
        args["_ansible_check_mode"] = True
    return args


def test_values_as_the_drivers_show_and_parse_them():
    bnxt = stacks.NIC_DRIVERS["bnxt_re"]["cc"]
    # configfs.c: show "%#x" (0 prints "0"), store sscanf "%x"
    assert [qos.cc_parse(t, "hex") for t in ("0x1a", "0", "0x30\n", "", "zz")] == [26, 0, 48, None, None]
    assert (qos.cc_format(26, "hex"), qos.cc_format(1, "dec")) == ("0x1a", "1")
    assert qos.cc_parse("1\n", "dec") == 1 and qos.cc_parse("off", "dec") == 0  # irdma kstrtobool words
    assert qos.cc_want(bnxt, PROFILE) == {"ecn_enable": 1, "roce_dscp": 26, "cnp_dscp": 48}
    assert qos.cc_want(bnxt, dict(PROFILE, roce_dscp=None))["roce_dscp"] == 26  # from roce_tos 106 >> 2
    assert qos.cc_want(stacks.NIC_DRIVERS["irdma"]["cc"], PROFILE) == {"roce_dcqcn_enable": 1}
    # the boot replay writes apply last (README: nothing takes effect before it)
    assert qos.cc_replay(bnxt, "bnxt_re0", qos.cc_want(bnxt, PROFILE))[-1] == (
        "/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/apply", "0x1")


def test_bnxt_re_cc_set_through_configfs_then_idempotent(host_copy, capsys):
    base = host_copy("mi300x-bnxt")
    root, tools = os.path.join(base, "root"), os.path.join(base, "tools")
    cc = os.path.join(root, "sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc")
    check = run_module(rdma_qos, _qos(root, tools, check=True), capsys)
    assert check["rc"] == 0 and check["changed"] is True
    report = check["interfaces"]["rail0"]["congestion"]
    assert (report["status"], report["before"]) == ("would change", {"ecn_enable": 1, "roce_dscp": 0, "cnp_dscp": 0})
    assert open(os.path.join(cc, "roce_dscp")).read().strip() == "0"  # check mode wrote nothing
    done = run_module(rdma_qos, _qos(root, tools), capsys)
    report = done["interfaces"]["rail0"]["congestion"]
    assert done["rc"] == 0 and report["status"] == "set" and report["after"] == {"ecn_enable": 1, "roce_dscp": 26, "cnp_dscp": 48}
    assert [open(os.path.join(cc, a)).read().strip() for a in ("roce_dscp", "cnp_dscp", "apply")] == ["0x1a", "0x30", "0x1"]
    assert not [g for g in done["gaps"] if "(ecn)" in g]  # no mlx5 ECN sysfs gap on a Broadcom NIC
    script = open(os.path.join(root, "usr/local/sbin/aifabric-rdma-qos")).read()
    assert "mkdir /sys/kernel/config/bnxt_re/bnxt_re0" in script
    assert script.index("cc/cnp_dscp") < script.index("cc/apply")
    again = run_module(rdma_qos, _qos(root, tools), capsys)
    assert again["changed"] is False and again["interfaces"]["rail0"]["congestion"]["status"] == "ok"


def test_bnxt_re_group_is_made_by_mkdir_not_in_check_mode(host_copy, capsys):
    import shutil
    base = host_copy("mi300x-bnxt")
    root, tools = os.path.join(base, "root"), os.path.join(base, "tools")
    shutil.rmtree(os.path.join(root, "sys/kernel/config/bnxt_re/bnxt_re0"))
    check = run_module(rdma_qos, _qos(root, tools, check=True), capsys)
    report = check["interfaces"]["rail0"]["congestion"]
    assert report["status"] == "not_run" and "needs mkdir /sys/kernel/config/bnxt_re/bnxt_re0" in report["why"]
    assert any("congestion control not run" in g and "(ecn)" in g for g in check["gaps"])
    assert not os.path.exists(os.path.join(root, "sys/kernel/config/bnxt_re/bnxt_re0"))
    # applied: the group is made (in a tree mkdir gives an empty directory, so the attributes are then missing)
    done = run_module(rdma_qos, _qos(root, tools), capsys)
    report = done["interfaces"]["rail0"]["congestion"]
    assert report["created"] == "/sys/kernel/config/bnxt_re/bnxt_re0" and "missing or unreadable" in report["why"]


def test_upstream_bnxt_re_without_configfs_is_not_run_with_why(host_copy, capsys):
    import shutil
    base = host_copy("mi300x-bnxt")
    root, tools = os.path.join(base, "root"), os.path.join(base, "tools")
    shutil.rmtree(os.path.join(root, "sys/kernel/config/bnxt_re"))
    done = run_module(rdma_qos, _qos(root, tools), capsys)
    report = done["interfaces"]["rail0"]["congestion"]
    assert report["status"] == "not_run" and "bnxt_re_setup_cc" in report["why"] and "upstream" in report["why"]
    required = run_module(rdma_qos, dict(_qos(root, tools), require=["ecn"]), capsys)
    assert required["rc"] == 1 and "bnxt_re congestion control not run" in required["msg"]


def test_ibdev_comes_from_sysfs_not_the_plan_name(host_copy, capsys):
    base = host_copy("mi300x-bnxt")
    root, tools = os.path.join(base, "root"), os.path.join(base, "tools")
    done = run_module(rdma_qos, _qos(root, tools, rdma="mlx5_0"), capsys)  # a plan naming the rail mlx5_0
    assert done["interfaces"]["rail0"]["congestion"]["interface"] == "/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc"


def _irdma_tree(tmp, dcqcn="0"):
    def write(rel, text=""):
        path = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)
    dev = "sys/devices/pci0000:00/0000:00:01.0/0000:51:00.0"
    write(dev + "/infiniband/rdmap81s0f0/node_type", "1: CA")
    write("sys/bus/pci/drivers/ice/module")
    os.symlink(os.path.join(tmp, "sys/bus/pci/drivers/ice"), os.path.join(tmp, dev, "driver"))
    write(dev + "/net/ens81f0/mtu", "9000")
    os.symlink("../../../0000:51:00.0", os.path.join(tmp, dev, "net/ens81f0/device"))
    os.makedirs(os.path.join(tmp, "sys/class/net"), exist_ok=True)
    os.symlink(os.path.join(tmp, dev, "net/ens81f0"), os.path.join(tmp, "sys/class/net/ens81f0"))
    if dcqcn is not None:
        write("sys/kernel/config/irdma/rdmap81s0f0/roce_dcqcn_enable", dcqcn)  # after mkdir (Intel irdma README)
    return tmp


def test_irdma_dcqcn_enable_read_back_and_set(tmp_path, capsys):
    root = _irdma_tree(str(tmp_path))
    args = {"interfaces": [{"netdev": "ens81f0", "rdma": "rdmap81s0f0"}], "profile": PROFILE, "root": root,
            "tool": "none", "persist": False}
    done = run_module(rdma_qos, args, capsys)
    report = done["interfaces"]["ens81f0"]["congestion"]
    assert (report["driver"], report["status"], report["before"], report["after"]) == (
        "irdma", "set", {"roce_dcqcn_enable": 0}, {"roce_dcqcn_enable": 1})
    assert open(os.path.join(root, "sys/kernel/config/irdma/rdmap81s0f0/roce_dcqcn_enable")).read().strip() == "1"
    assert run_module(rdma_qos, args, capsys)["changed"] is False


def test_irdma_upstream_and_ionic_say_why_not(tmp_path, capsys):
    root = _irdma_tree(str(tmp_path), dcqcn=None)
    import shutil
    shutil.rmtree(os.path.join(root, "sys/kernel/config"), ignore_errors=True)
    args = {"interfaces": [{"netdev": "ens81f0", "rdma": "rdmap81s0f0"}], "profile": PROFILE, "root": root,
            "tool": "none", "persist": False}
    report = run_module(rdma_qos, args, capsys)["interfaces"]["ens81f0"]["congestion"]
    assert report["status"] == "not_run" and "upstream irdma" in report["why"]
    ionic = stacks.NIC_DRIVERS["ionic"]
    assert ionic["cc"]["base"] is None and "nicctl" in ionic["cc"]["missing"] and "unverified" in ionic["cc"]["missing"]
    assert json.dumps(stacks.NIC_DRIVERS)  # data stays plain


def test_upstream_bnxt_re_debugfs_is_read_back_not_written(host_copy, capsys):
    """Upstream bnxt_re (torvalds/linux debugfs.c): cc_config/<name> per PCI function, "%d", mode 0400."""
    import shutil
    base = host_copy("mi300x-bnxt")
    root, tools = os.path.join(base, "root"), os.path.join(base, "tools")
    shutil.rmtree(os.path.join(root, "sys/kernel/config/bnxt_re"))
    pci = os.path.basename(os.path.realpath(os.path.join(root, "sys/class/net/rail0/device")))
    dbg = os.path.join(root, "sys/kernel/debug/bnxt_re", pci, "cc_config")
    os.makedirs(dbg)
    for name, value in (("enable_cc", "1\n"), ("tos_dscp", "26\n"), ("alt_vlan_dscp", "48\n"), ("tos_ecn", "1\n")):
        with open(os.path.join(dbg, name), "w") as handle:
            handle.write(value)
    done = run_module(rdma_qos, _qos(root, tools), capsys)
    report = done["interfaces"]["rail0"]["congestion"]
    assert (report["status"], report["read_only"], report["before"]) == (
        "ok", True, {"enable_cc": 1, "tos_dscp": 26, "alt_vlan_dscp": 48})
    with open(os.path.join(dbg, "alt_vlan_dscp"), "w") as handle:
        handle.write("0\n")  # the firmware's CNP DSCP is not the profile's
    done = run_module(rdma_qos, _qos(root, tools), capsys)
    report = done["interfaces"]["rail0"]["congestion"]
    assert report["status"] == "differs" and "alt_vlan_dscp 0 (profile 48)" in report["why"]
    assert open(os.path.join(dbg, "alt_vlan_dscp")).read() == "0\n"  # never written
    assert any("(ecn)" in g and "does not write a debugging interface" in g for g in done["gaps"])
