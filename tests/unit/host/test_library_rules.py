"""Host rules that follow the stacks they judge (issue 40): the collective library's version, read from the host,
picks the rule set it is judged by (stacks.NCCL_RULES, stacks.RCCL_RULES, each citing its source at a commit); an
unknown version gets the newest rules and says so. The same host, fed RCCL 2024 and current RCCL, gets each source's
answer."""
import gzip
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host import checks
from ansible_collections.aifabric.roce.plugins.module_utils.host import facts as hf
from ansible_collections.aifabric.roce.plugins.module_utils.host import stacks
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot

KERNEL = "6.8.0-45-generic"
RDMA = {"bnxt_re0": {}}
MODS = {"ib_uverbs": "loaded"}


def write(root, rel, text="", mode="w"):
    path = os.path.join(str(root), rel.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as handle:
        handle.write(text)


def amd_host(tmp_path, rocm=None, rccl_code=None):
    """An MI300X host with a RoCE device and no peer-memory client; its kernel config only where Ubuntu/Fedora also
    keep it (/usr/lib/modules/<release>/config), no /boot/config-<release> (a container's view); the ROCm release and
    rccl.h where the ROCm packages put them."""
    write(tmp_path, "proc/sys/kernel/osrelease", KERNEL)
    write(tmp_path, "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0")
    write(tmp_path, "usr/lib/modules/%s/config" % KERNEL, "CONFIG_DMABUF_MOVE_NOTIFY=y\nCONFIG_PCI_P2PDMA=y\n")
    if rocm:
        write(tmp_path, "opt/rocm/.info/version", rocm + "\n")
    if rccl_code:
        write(tmp_path, "opt/rocm/include/rccl/rccl.h", "#define NCCL_MAJOR 2\n#define NCCL_VERSION_CODE %d\n" % rccl_code)
    return SysRoot(str(tmp_path))


def gdr_of(root):
    return hf.read_gdr(root, set(), RDMA, MODS, "amd", library_version=hf.read_library_version(root, "amd"))


def findings(gdr):
    facts = {"gdr": gdr, "modules": {}, "rdma_devices": {}, "netdevs": {}, "gpus": [], "topology": {},
             "stack": {"gpu_vendor": "amd", "nic_drivers": ["bnxt_re"]}, "iommu": {"mode": "off", "cmdline": []},
             "root": "/", "live": True}
    exp = checks.expectations([{"netdev": "x", "rdma": None}], rdma_modules=["ib_core"], iommu_allowed=[])
    return dict((f["id"], f) for f in checks.host_findings(facts, exp, "mi300x") if f["id"].startswith("gdr"))


def test_rccl_2024_and_current_rccl_give_their_sources_answers_on_the_same_host(tmp_path):
    # RCCL 2.21.5 (ROCm 6.3, ROCm/rccl 0cbce2a7571c): NCCL_DMABUF_ENABLE defaults to 0 and only /boot/config-<release>
    # is read, so this host has no dma-buf path for it
    old = gdr_of(amd_host(tmp_path / "old", rocm="6.3.0-39", rccl_code=22105))
    assert old["rules"]["rule_set"].startswith("RCCL 2024") and old["rules"]["version"] == "2.21.5"
    assert old["rules"]["version_source"] == ["/opt/rocm/include/rccl/rccl.h", "/opt/rocm/.info/version"]
    assert "0cbce2a7571c" in old["rules"]["source"]
    assert old["ready"] is False and old["dmabuf"] == hf.DMABUF_PREREQUISITES_MISSING
    assert any("/boot/config-%s" % KERNEL in r and "not readable" in r for r in old["reasons"])
    assert any("NCCL_DMABUF_ENABLE=1 (default 0 for RCCL 2024" in r for r in old["reasons"])
    assert "gdr_ready" in findings(old)
    # current RCCL (ROCm 7.12 on, ROCm/rocm-systems 018c383d7607): default 1, nine kernel-config places: the same
    # host meets the dma-buf prerequisites and is told that (untested), not told to set a variable
    new = gdr_of(amd_host(tmp_path / "new", rocm="7.12.0-10", rccl_code=22803))
    assert new["rules"]["rule_set"] == "RCCL 2.28.3 for ROCm 7.12 and newer" and new["rules"]["chosen_by"] == "ROCm 7.12.0"
    assert "018c383d7607" in new["rules"]["source"]
    assert (new["ready"], new["mode"], new["dmabuf"]) == (None, "dmabuf", hf.DMABUF_PREREQUISITES_MET)
    assert new["kernel_config"] == "/usr/lib/modules/%s/config" % KERNEL and new["dmabuf_env_default"] == "1"
    found = findings(new)
    assert list(found) == ["gdr_dmabuf_untested"] and "NCCL_DMABUF_ENABLE=1 is not set" not in found["gdr_dmabuf_untested"]["message"]


def test_rccl_2024_without_the_variable_is_told_to_set_it_current_rccl_is_not(tmp_path):
    # both read /boot/config-<release> with both options; only RCCL 2024 needs NCCL_DMABUF_ENABLE=1 set
    for name, rocm, want in (("old", "6.2.1", "gdr_dmabuf_env"), ("new", "7.13.0", "gdr_dmabuf_untested")):
        root = amd_host(tmp_path / name, rocm=rocm)
        write(tmp_path / name, "boot/config-%s" % KERNEL, "CONFIG_DMABUF_MOVE_NOTIFY=y\nCONFIG_PCI_P2PDMA=y\n")
        assert list(findings(gdr_of(root))) == [want]


def test_explicit_zero_disables_dma_buf_on_current_rccl(tmp_path):
    root = amd_host(tmp_path, rocm="7.12.0")
    write(tmp_path, "etc/rccl.conf", "NCCL_DMABUF_ENABLE=0\n")
    gdr = gdr_of(root)
    assert gdr["ready"] is False and any("/etc/rccl.conf has NCCL_DMABUF_ENABLE=0" in r for r in gdr["reasons"])


def test_kallsyms_fallback_only_where_the_rccl_has_it(tmp_path):
    # no kernel-config file anywhere: current RCCL reads /proc/kallsyms (dma_buf_move_notify + pci_p2pdma)
    for name, rocm, ok in (("new", "7.12.0", True), ("mid", "7.11.0", False), ("old", "6.3.0", False)):
        base = tmp_path / name
        root = amd_host(base, rocm=rocm)
        os.remove(str(base / "usr/lib/modules" / KERNEL / "config"))
        write(base, "proc/kallsyms", "ffffffff81a1b2c0 T dma_buf_move_notify\nffffffff81c3d4e0 T pci_p2pdma_add_resource\n")
        write(base, "etc/rccl.conf", "NCCL_DMABUF_ENABLE=1\n")
        gdr = gdr_of(root)
        assert gdr["dmabuf_capable"] is ok, (name, gdr["reasons"])
        assert (gdr["kernel_config"] == "/proc/kallsyms") is ok


def test_proc_config_gz_is_read_by_current_rccl(tmp_path):
    root = amd_host(tmp_path, rocm="7.12.0")
    os.remove(str(tmp_path / "usr/lib/modules" / KERNEL / "config"))
    write(tmp_path, "proc/config.gz", gzip.compress(b"CONFIG_DMABUF_MOVE_NOTIFY=y\nCONFIG_PCI_P2PDMA=n\n"), "wb")
    gdr = gdr_of(root)
    # the first readable place decides: /proc/config.gz lacks P2PDMA, so no dma-buf (no fallback after a found file)
    assert gdr["kernel_config"] == "/proc/config.gz" and any("lacks CONFIG_PCI_P2PDMA=y" in r for r in gdr["reasons"])


def test_force_flag_exists_from_rocm_7_1(tmp_path):
    for name, rocm, forced in (("old", "6.4.0", False), ("new", "7.1.0", True)):
        root = amd_host(tmp_path / name, rocm=rocm)
        os.remove(str(tmp_path / name / "usr/lib/modules" / KERNEL / "config"))
        write(tmp_path / name, "etc/rccl.conf", "RCCL_FORCE_ENABLE_DMABUF=1\nNCCL_DMABUF_ENABLE=1\n")
        gdr = gdr_of(root)
        assert (gdr["dmabuf_forced"], gdr["dmabuf_capable"]) == (forced, forced), (name, gdr["reasons"])


@pytest.mark.parametrize("version,rocm,rule,why", [
    (None, None, "RCCL 2.28.3 for ROCm 7.12 and newer", "RCCL version unknown: the newest rules are applied"),
    ([2, 21, 5], None, "RCCL 2024 (ROCm before 7.1, RCCL up to 2.26)", "RCCL 2.21.5 (before 2.27.7, ROCm 7.1)"),
    ([2, 27, 7], None, "RCCL 2.27.7 (ROCm 7.1 - 7.10)", "RCCL 2.27.7 (ROCm 7.1 - 7.10)"),
    ([2, 28, 3], None, "RCCL 2.28.3 for ROCm 7.12 and newer", "RCCL 2.28.3 without its ROCm release"),
    ([2, 28, 3], [7, 11, 0], "RCCL 2.28.3 for ROCm 7.11", "ROCm 7.11.0"),
])
def test_rccl_rule_set_by_version(version, rocm, rule, why):
    found, reason = stacks.library_rules("RCCL", version, rocm)
    assert found["name"] == rule and reason.startswith(why)


# --- NCCL: which files mean peer memory depends on the NCCL version -----------------------------------

def nvidia_host(tmp_path, lib=None, header_code=None):
    write(tmp_path, "proc/sys/kernel/osrelease", KERNEL)
    write(tmp_path, "sys/module/nvidia_peermem/version", "580.126.20")  # real: gdr/1 capture (host-semantics review)
    if lib:
        write(tmp_path, "usr/lib/x86_64-linux-gnu/" + lib)
    if header_code:
        write(tmp_path, "usr/include/nccl.h", "#define NCCL_VERSION_CODE %d\n" % header_code)
    return SysRoot(str(tmp_path))


@pytest.mark.parametrize("lib,code,version,ready", [
    ("libnccl.so.2.21.5", None, "2.21.5", False),   # probes nv_mem and memory_peers/nvidia-peermem only
    ("libnccl.so.2.22.3", None, "2.22.3", False),   # nv_mem and nv_mem_nc
    ("libnccl.so.2.23.4", None, "2.23.4", True),    # /sys/module/nvidia_peermem/version counts from 2.23.4
    (None, 22703, "2.27.3", True),                  # nccl.h NCCL_VERSION_CODE
    (None, None, None, True),                       # unknown: newest rules, said so
])
def test_nccl_peer_memory_by_version(tmp_path, lib, code, version, ready):
    root = nvidia_host(tmp_path, lib, code)
    lib_version = hf.read_library_version(root, "nvidia")
    gdr = hf.read_gdr(root, {"nvidia_peermem"}, {"mlx5_0": {}}, MODS, "nvidia", [], lib_version)
    assert gdr["rules"]["version"] == version and (gdr["ready"] is True) is ready
    assert gdr["peermem_probes"] == list(stacks.library_rules("NCCL", lib_version["version"])[0]["peermem_probes"])
    if version is None:
        assert gdr["rules"]["chosen_by"] == "NCCL version unknown: the newest rules are applied"
    if not ready:
        assert any("none of the files NCCL %s probes exists" % version in r for r in gdr["reasons"])


def test_nccl_before_2_13_has_no_dma_buf_path():
    rule, _why = stacks.library_rules("NCCL", (2, 12, 12))
    assert rule["dmabuf"] is False and "19ab67d1727d" in rule["source"]
    assert stacks.library_rules("NCCL", (2, 13, 4))[0]["dmabuf"] is True


def test_version_codes_decode_both_formulas():
    assert hf.decode_version_code(22105) == (2, 21, 5) and hf.decode_version_code(2708) == (2, 7, 8)


def test_rccl_variables_hold_every_rccl_param_at_the_cited_commit():
    # the four names the review found missing at ROCm/rccl 0cbce2a7571c (git grep RCCL_PARAM there)
    for name in ("RCCL_LL128_FORCE_ENABLE", "RCCL_P2P_NET_DISABLE", "RCCL_P2P_NET_THRESHOLD", "RCCL_CLIQUE_ALLREDUCE_NCHANNELS"):
        assert name in stacks.RCCL_VARIABLES
    assert len(stacks.RCCL_VARIABLES) == 25  # 24 RCCL_PARAMs at 0cbce2a7571c + RCCL_FORCE_ENABLE_DMABUF


def test_generated_rules_table_is_current():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "host-rdma.md")
    with open(path) as handle:
        text = handle.read()
    assert stacks.with_rules_doc(text) == text, "run tools/gen_docs.py"
    for rule in stacks.NCCL_RULES + stacks.RCCL_RULES:
        assert rule["source"] in text


def test_capture_kit_lines_rebuild_the_version_files(tmp_path):
    # the kit's trace format ("+ command", output, "# rc=N"): the library versions it now records come back as files
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("from_capture", os.path.join(here, "..", "..", "fixtures", "hosts", "from_capture.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with open(os.path.join(here, "..", "..", "..", "tools", "capture_host.sh")) as handle:
        kit = handle.read()
    ls_cmd = next(line[5:-1] for line in kit.splitlines() if line.startswith("run 'ls /usr/lib") and "libnccl" in line)
    grep_cmd = next(line[5:-1] for line in kit.splitlines() if line.startswith("run 'grep -H -E \"^#define NCCL_VERSION_CODE"))
    trace = ("+ %s\n/usr/lib/x86_64-linux-gnu/libnccl.so.2\n/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5\n# rc=2\n"
             "+ %s\n/usr/include/nccl.h:#define NCCL_VERSION_CODE 22105\n# rc=2\n"
             "+ cat /opt/rocm/.info/version 2>&1\ncat: /opt/rocm/.info/version: No such file or directory\n# rc=1\n"
             % (ls_cmd, grep_cmd))
    (tmp_path / "trace.txt").write_text(trace)
    root = SysRoot(os.path.join(mod.build(str(tmp_path / "trace.txt"), str(tmp_path / "out")), "root"))
    found = hf.read_library_version(root, "nvidia")
    assert found["version"] == [2, 21, 5] and found["source"] == ["/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5"]
    assert hf.read_library_version(root, "amd")["rocm"] is None


@pytest.mark.parametrize("filename,version,rule,ready", [
    ("a100-ib-nccl-2.22.3.txt", (2, 22, 3), "NCCL 2.22", False),
    ("gpu-st-ml-nccl-2.29.2.txt", (2, 29, 2), "NCCL 2.23.4 and newer", True),
])
def test_real_nccl_banners_pick_their_rules(tmp_path, filename, version, rule, ready):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "fixtures", "hosts", "captures", "nccl-info-version-banners", filename)) as handle:
        banner = hf.parse_library_banner(handle.read())
    assert (banner["library"], banner["version"]) == ("NCCL", version)
    # the same host (nvidia_peermem loaded, only /sys/module/nvidia_peermem/version) judged by each NCCL
    root = nvidia_host(tmp_path)
    gdr = hf.read_gdr(root, {"nvidia_peermem"}, {"mlx5_0": {}}, MODS, "nvidia", [], dict(banner, source=[filename]))
    assert gdr["rules"]["rule_set"] == rule and (gdr["ready"] is True) is ready
