"""Readers check their input (issue 40): a malformed nvidia-smi topo -m row is refused with its line, vendor firmware
suffixes are stripped with a source. Every case starts from a real capture under tests/fixtures/hosts/captures."""
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host import facts as hf
from ansible_collections.aifabric.roce.plugins.module_utils.host import pcitopo

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.join(HERE, "..", "..", "fixtures", "hosts", "captures")


def capture(name, filename):
    with open(os.path.join(CAPTURES, name, filename)) as handle:
        return handle.read()


# --- nvidia-smi topo -m: a row that lost a tab is refused, not guessed -------------------------------

H100_TOPO = capture("nccl-1453-topo-h100", "nvidia-smi_topo_-m.txt")
GPU3_ROW = "GPU3\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tSYS\tSYS\tSYS\tSYS\tSYS\tPIX\tNODE\tNODE\tNODE\t0-79\t0\t\tN/A"


def test_real_topo_rows_all_pass_the_check():
    parsed = pcitopo.parse_topo_matrix(H100_TOPO)
    assert parsed["gpu_nic"]["3"]["NIC5"] == "PIX" and len(parsed["gpu_nic"]) == 8


def test_topo_row_with_a_glued_cell_is_refused_with_its_line():
    assert GPU3_ROW in H100_TOPO
    glued = H100_TOPO.replace(GPU3_ROW, GPU3_ROW.replace("PIX\tNODE", "PIXNODE", 1))
    with pytest.raises(pcitopo.TopoError) as err:
        pcitopo.parse_topo_matrix(glued)
    message = str(err.value)
    assert "line 5" in message and "GPU3" in message and "'PIXNODE' under NIC5" in message


def test_topo_row_shifted_by_a_lost_tab_is_refused():
    # one tab lost between two relations: every cell after it moves left and the CPU list lands under NIC8
    shifted = H100_TOPO.replace(GPU3_ROW, GPU3_ROW.replace("SYS\tSYS\tSYS\tSYS\tSYS", "SYS\tSYS\tSYS\tSYSSYS", 1))
    with pytest.raises(pcitopo.TopoError, match="'SYSSYS' under NIC3"):
        pcitopo.parse_topo_matrix(shifted)


def test_space_separated_topo_row_with_an_unknown_relation_is_refused():
    text = capture("deepep-60-topo-mp-14nics", "nvidia-smi_topo_-mp.txt")
    row = next(line for line in text.splitlines() if line.startswith("GPU2 "))
    bad = text.replace(row, row.replace(" X ", " Y ", 1))
    with pytest.raises(pcitopo.TopoError, match=r"'Y' under GPU2 is not a relation nvidia-smi prints"):
        pcitopo.parse_topo_matrix(bad)
    assert pcitopo.parse_topo_matrix(text)["gpu_gpu"]["2"]["2"] == "X"


def test_gather_falls_back_to_sysfs_and_says_why(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "nvidia-smi_topo_-m.txt").write_text(H100_TOPO.replace(GPU3_ROW, GPU3_ROW.replace("PIX\tNODE", "PIXNODE", 1)))
    (tmp_path / "root").mkdir()
    f = hf.gather(str(tmp_path / "root"), str(tools))
    assert f["topology"]["source"] == "sysfs"
    assert f["topology"]["nvidia_smi"].startswith("refused: nvidia-smi topo -m line 5 ")


# --- ethtool -i firmware-version: vendor suffixes ----------------------------------------------------

@pytest.mark.parametrize("filename,pattern", [("notes-ethtool-firmware-version.txt", r"bnxt_en `([^`]+)`"),
                                              ("aorta-env-probe-nics.txt", r"broadcom\(fw=(\S+ \S+) links")])
def test_bnxt_en_pkg_suffix_is_not_the_version(filename, pattern):
    import re
    value = re.search(pattern, capture("bnxt-en-ethtool-fw-pkg", filename)).group(1)
    version, psid = hf.firmware_from_ethtool({"firmware-version": value})
    package = hf.ethtool_fw_package(value)[1]
    assert "/" not in version and psid is None
    assert (version, package) in (("229.2.52.0", "22.92.06.10"), ("232.0.219.16", "232.1.196.16"))


def test_mlx5_firmware_version_keeps_its_psid():
    line = capture("bnxt-en-ethtool-fw-pkg", "aorta-env-probe-nics.txt")
    assert "cx7(fw=28.36.1010 (FB_0000000038)" in line
    assert hf.firmware_from_ethtool({"firmware-version": "28.36.1010 (FB_0000000038)"}) == ("28.36.1010", "FB_0000000038")


# --- rocm-smi --showtopo: a reader of its own, used on AMD hosts ----------------------------------------

ROCM8 = capture("rocm-smi-showtopo-8gpu-two-hives", "rocm-smi_--showtopo.txt")
# the node's GPUs as the capture's own file lists them (index -> PCI address)
ROCM8_PCI = ("0000:05:00.0", "0000:08:00.0", "0000:47:00.0", "0000:4a:00.0", "0000:85:00.0", "0000:88:00.0",
             "0000:c5:00.0", "0000:c8:00.0")


def test_rocm_smi_two_hives_read_whole():
    topo = pcitopo.parse_rocm_smi_topo(ROCM8)
    assert topo["gpus"] == [str(i) for i in range(8)]
    assert topo["link_type"]["0"] == dict([(str(i), "XGMI") for i in (1, 2, 3)] + [(str(i), "PCIE") for i in (4, 5, 6, 7)])
    assert topo["weight"]["5"]["6"] == 15 and topo["weight"]["5"]["1"] == 72 and topo["hops"]["7"]["0"] == 3
    assert [topo["numa"][str(i)] for i in (0, 7)] == [{"node": 0, "affinity": 0}, {"node": 1, "affinity": 1}]


def test_rocm_smi_older_numa_lines_and_collapsed_spaces():
    old = pcitopo.parse_rocm_smi_topo(capture("rocm-smi-showtopo-4gpu-rocm5", "rocm-smi_--showtopo.txt"))
    assert old["numa"]["3"] == {"node": 3, "affinity": 3} and old["link_type"]["2"]["0"] == "XGMI"
    issue = pcitopo.parse_rocm_smi_topo(capture("rocm-1503-mi100-showtopo", "rocm-smi_--showtopo.txt"))
    assert issue["link_type"] == {"0": {"1": "PCIE"}, "1": {"0": "PCIE"}} and issue["weight"] == {}


@pytest.mark.parametrize("old,new,why", [
    ("GPU3   XGMI         XGMI         XGMI         0            PCIE",
     "GPU3   XGMI         XGMIXGMI     0            PCIE", "7 cells for 8 GPU columns"),
    ("GPU6   PCIE         PCIE         PCIE         PCIE         XGMI         XGMI         0",
     "GPU6   PCIE         PCIE         PCIE         PCIE         XGMI         NVLINK       0", "'NVLINK' under GPU5 is not a link type"),
    ("GPU2   15           15           0            15",
     "GPU2   15           15           15           15", "GPU2 against itself is '15', not 0"),
    ("GPU[4]\t\t: (Topology) Numa Node: 1", "GPU[4]\t\t: (Topology) Numa Node 1", "not a '(Topology) Numa"),
])
def test_rocm_smi_malformed_rows_are_refused_with_the_line(old, new, why):
    assert old in ROCM8
    with pytest.raises(pcitopo.TopoError) as err:
        pcitopo.parse_rocm_smi_topo(ROCM8.replace(old, new, 1))
    assert why in str(err.value) and "rocm-smi --showtopo line " in str(err.value)


def test_rocm_smi_output_is_not_taken_for_an_nvidia_smi_matrix():
    with pytest.raises(pcitopo.TopoError, match="'0' under GPU0"):
        pcitopo.parse_topo_matrix(ROCM8)
    assert pcitopo.parse_rocm_smi_topo(H100_TOPO) is None


def _amd8_tree(root, numa_of=lambda i: 0 if i < 4 else 1):
    os.makedirs(os.path.join(root, "sys/bus/pci/devices"))
    for index, bdf in enumerate(ROCM8_PCI):
        dev = os.path.join(root, "sys/devices/pci0000:00", bdf)
        os.makedirs(dev)
        for name, value in (("vendor", "0x1002"), ("device", "0x74a1"), ("class", "0x120000"), ("numa_node", str(numa_of(index)))):
            with open(os.path.join(dev, name), "w") as handle:
                handle.write(value + "\n")
        os.symlink(dev, os.path.join(root, "sys/bus/pci/devices", bdf))


def test_amd_host_topology_comes_from_rocm_smi(tmp_path):
    _amd8_tree(str(tmp_path / "root"))
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "rocm-smi_--showtopo.txt").write_text(ROCM8)
    f = hf.gather(str(tmp_path / "root"), str(tools))
    topo = f["topology"]
    assert (topo["source"], topo["rocm_smi"], topo["nvidia_smi"]) == ("rocm-smi", "ok", "not run (AMD GPUs)")
    assert [topo["gpu_affinity"][str(i)]["numa"] for i in range(8)] == ["0"] * 4 + ["1"] * 4
    assert topo["numa_mismatch"] == [] and topo["gpu_gpu"]["link_type"]["4"]["5"] == "XGMI"
    # a sysfs that disagrees with rocm-smi is named, GPU by GPU
    _amd8_tree(str(tmp_path / "other"), numa_of=lambda i: 0)
    assert hf.gather(str(tmp_path / "other"), str(tools))["topology"]["numa_mismatch"] == ["4", "5", "6", "7"]


def test_amd_host_with_a_refused_rocm_smi_falls_back_to_sysfs(tmp_path):
    _amd8_tree(str(tmp_path / "root"))
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "rocm-smi_--showtopo.txt").write_text(ROCM8.replace("GPU1   XGMI         0 ", "GPU1   XGMI         X ", 1))
    topo = hf.gather(str(tmp_path / "root"), str(tools))["topology"]
    assert topo["source"] == "sysfs" and topo["rocm_smi"].startswith("refused: rocm-smi --showtopo line ")


# --- dcb app with DSCP names (iproute2 prints them without -N) ------------------------------------------

def test_symbolic_dcb_app_read_by_iproute2s_names():
    from ansible_collections.aifabric.roce.plugins.module_utils.host import qos
    felix = qos.parse_dcb("", "", capture("dcb-app-symbolic", "felix-dcb_app_show.txt"))
    assert felix["dscp_prio"] == {16: 2, 24: 5}
    commit = qos.parse_dcb("", "", capture("dcb-app-symbolic", "iproute2-8e9bed14-dcb_app_show.txt"))
    assert commit["dscp_prio"] == {0: 0, 24: 3, 48: 6}
    # the man page prints one table both ways: the names read as the numbers -N prints
    named = qos.parse_dcb("", "", capture("dcb-app-symbolic", "dcb-app.8-dcb_app_show.txt"))
    numeric = qos.parse_dcb("", "", capture("dcb-app-symbolic", "dcb-app.8-dcb_-N_app_show.txt"))
    assert named == numeric and named["dscp_prio"] == {0: 0, 48: 6} and named["dscp_prio_multi"] == {24: [2, 3]}
    # the RoCE profile's own values by name: AF31 is DSCP 26 (rt_dsfield 0x68), CS6 is 48 (0xC0)
    assert qos.parse_dcb("", "", "dscp-prio AF31:3 CS6:6\n")["dscp_prio"] == {26: 3, 48: 6}


def test_symbolic_dcb_app_with_a_doubly_mapped_dscp_is_set_again():
    from ansible_collections.aifabric.roce.plugins.module_utils.host import qos
    named = qos.parse_dcb("order dscp\n", "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n",
                          capture("dcb-app-symbolic", "dcb-app.8-dcb_app_show.txt"))
    want = {"trust": "dscp", "pfc": [3], "dscp_prio": {24: 3, 48: 6}}
    assert qos.dcb_commands("eth0", named, want) == [["dcb", "app", "replace", "dev", "eth0", "dscp-prio", "24:3"]]


def test_unknown_dscp_name_is_refused_with_the_way_to_read_it(tmp_path):
    from ansible_collections.aifabric.roce.plugins.module_utils.host import qos
    from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import ToolRunner
    text = capture("dcb-app-symbolic", "felix-dcb_app_show.txt").replace("CS2:2", "GOLD:2")
    with pytest.raises(qos.DcbError, match="'GOLD' is neither 0-63 nor a name of iproute2's standard rt_dsfield"):
        qos.parse_dcb("", "", text)
    # through the tool reader: one clear problem, no half-read state
    (tmp_path / "dcb_pfc_show_dev_rail0.txt").write_text("prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n")
    (tmp_path / "dcb_-N_app_show_dev_rail0.txt").write_text(text)
    state, problem = qos.read_tool_state(ToolRunner(capture_dir=str(tmp_path)), "dcb", "rail0")
    assert state is None and problem.startswith("rail0: dcb app: DSCP 'GOLD'") and "dcb -N app show" in problem
