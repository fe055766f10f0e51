"""nccl-tests all_reduce_perf: parser and verdict on a real output sample, module with stand-in binaries."""
import os
import stat

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.validate import nccl_tests
from ansible_collections.aifabric.roce.plugins.modules import nccl_tests as nccl_tests_module

from ..module_runner import run_module

SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "validate",
                      "nccl-tests-a3mega-all-reduce", "all_reduce_perf.txt")


def _sample():
    with open(SAMPLE) as handle:
        return handle.read()


def test_parse_real_sample_2_nodes_x_8_h100():
    parsed = nccl_tests.parse_output(_sample())
    rows = parsed["rows"]
    assert len(rows) == 31 and rows[0]["size"] == 8 and rows[-1]["size"] == 8589934592
    assert parsed["ranks"] == 16 and parsed["hosts"] == ["ztan-mig-235z", "ztan-mig-gq73"]
    last = rows[-1]
    assert last["count"] == 2147483648 and last["type"] == "float" and last["redop"] == "sum" and last["root"] == -1
    assert last["out_of_place"] == {"time_us": 47535.0, "algbw": 180.71, "busbw": 338.82, "wrong": 0.0}
    assert last["in_place"]["busbw"] == 337.35
    assert parsed["avg_busbw"] == 70.742 and parsed["out_of_bounds"] == 0


def test_parse_mpirun_tagged_output():
    tagged = "\n".join("[1,0]<stdout>:" + line for line in _sample().splitlines())
    assert nccl_tests.parse_output(tagged) == nccl_tests.parse_output(_sample())


def test_judge_against_the_planned_line_rate():
    parsed = nccl_tests.parse_output(_sample())
    ok = nccl_tests.judge(parsed, 1600, 0.8)  # 8 x 200 Gb/s = 200 GB/s, need 160
    assert ok["status"] == "ok" and ok["peak_busbw"] == 338.82 and ok["peak_size"] == 8589934592
    assert ok["reference_gbytes"] == 200.0 and ok["required"] == 160.0
    low = nccl_tests.judge(parsed, 3200, 0.9)  # 400 GB/s, need 360
    assert low["status"] == "fail" and "busbw peak 338.82 GB/s (at 8589934592 B) below 360.00 GB/s" in low["message"]


def test_judge_wrong_values_and_empty_output():
    text = _sample().replace("  47535  180.71  338.82      0", "  47535  180.71  338.82      3")
    verdict = nccl_tests.judge(nccl_tests.parse_output(text), 1600, 0.8)
    assert verdict["status"] == "fail" and "wrong results at size(s) 8589934592" in verdict["message"]
    empty = nccl_tests.judge(nccl_tests.parse_output("NCCL WARN ... unhandled system error\n"), 1600, 0.8)
    assert empty["status"] == "fail" and empty["message"] == "no all_reduce_perf result rows in the output"


def test_command_line():
    argv = nccl_tests.command("/usr/bin/mpirun", "/opt/nccl-tests/build/all_reduce_perf", ["gpu01", "gpu02"], 8,
                              ["--allow-run-as-root"])
    assert argv == ["/usr/bin/mpirun", "--allow-run-as-root", "-np", "16", "-H", "gpu01:8,gpu02:8",
                    "/opt/nccl-tests/build/all_reduce_perf", "-b", "512M", "-e", "8G", "-f", "2", "-g", "1"]


def _script(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def stand_ins(tmp_path):
    """A stand-in all_reduce_perf printing the real sample, and an mpirun that records its argv and runs the program."""
    binary = _script(tmp_path / "all_reduce_perf", "#!/bin/sh\ncat '%s'\n" % SAMPLE)
    launcher = _script(tmp_path / "mpirun", "#!/bin/sh\necho \"$@\" > '%s'\n"
                       "while [ $# -gt 0 ]; do case \"$1\" in */all_reduce_perf) break;; esac; shift; done\n"
                       "exec \"$@\"\n" % (tmp_path / "argv"))
    return binary, launcher, tmp_path


def test_module_runs_the_stand_ins_and_judges(stand_ins, capsys):
    binary, launcher, tmp = stand_ins
    args = {"hosts": ["gpu01", "gpu02"], "gpus_per_host": 8, "line_rate_gbps": 1600, "binary": binary, "launcher": launcher}
    res = run_module(nccl_tests_module, args, capsys)
    assert res["rc"] == 0 and res["changed"] is False
    assert (tmp / "argv").read_text().split()[:4] == ["-np", "16", "-H", "gpu01:8,gpu02:8"]
    assert res["findings"] == [{"probe": "nccl all_reduce busbw", "status": "ok", "expected": ">= 160.00 GB/s busbw",
                                "actual": "338.82 GB/s busbw (at 8589934592 B)", "message": res["verdict"]["message"]}]
    res = run_module(nccl_tests_module, dict(args, line_rate_gbps=3200, threshold=0.9), capsys)
    assert res["findings"][0]["status"] == "fail"


def test_module_skips_without_binary_or_launcher(stand_ins, capsys):
    binary, _launcher, tmp = stand_ins
    res = run_module(nccl_tests_module, {"hosts": ["gpu01"], "gpus_per_host": 8, "line_rate_gbps": 400,
                                         "binary": binary, "launcher": str(tmp / "no-mpirun")}, capsys)
    assert res["rc"] == 0 and res["skipped"] is True
    assert res["findings"][0]["status"] == "skipped" and "MPI launcher" in res["findings"][0]["message"]
    assert not (tmp / "argv").exists()


def test_module_check_mode_and_bad_host(stand_ins, capsys):
    binary, launcher, tmp = stand_ins
    args = {"hosts": ["gpu01"], "gpus_per_host": 8, "line_rate_gbps": 400, "binary": binary, "launcher": launcher}
    res = run_module(nccl_tests_module, dict(args, _ansible_check_mode=True), capsys)
    assert res["findings"][0]["status"] == "skipped" and not (tmp / "argv").exists()
    res = run_module(nccl_tests_module, dict(args, hosts=["gpu01;reboot"]), capsys)
    assert res["rc"] == 1 and "hosts: 'gpu01;reboot'" in res["msg"]
