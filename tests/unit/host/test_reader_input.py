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
