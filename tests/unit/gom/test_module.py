"""probe_plan module: figures, agent list, file write and check mode."""
import json


from ansible_collections.aifabric.roce.plugins.modules import probe_plan

from ..fabric.intents import lab
from ..module_runner import run_module


def run(args, capsys):
    return run_module(probe_plan, args, capsys)


def test_probe_plan_module(tmp_path, capsys):
    dest = tmp_path / "probes.json"
    args = {"fabric": lab(), "dest": str(dest), "_ansible_check_mode": True}
    result = run(args, capsys)
    assert result["changed"] and not dest.exists()
    # identifiable by default: 16 covering probes and the ones that tell every link's failure apart
    assert result["cover_count"] == 16 and result["count"] == 43 and result["identifiable"] == 1.0
    assert result["coverage"] == 1.0 and result["bound"] == 16 and result["ambiguous"] == []
    assert sum(len(v) for v in result["probes_by_host"].values()) == 43
    assert set(p["udp_dport"] for v in result["probes_by_host"].values() for p in v) == {4792}
    args["_ansible_check_mode"] = False
    assert run(args, capsys)["changed"]
    written = json.loads(dest.read_text())
    assert len(written["probes"]) == 43 and written["probes"][0]["path"]
    assert run(args, capsys)["changed"] is False


def test_probe_plan_module_covering_only_and_port(capsys):
    result = run({"fabric": lab(), "identifiable": False, "udp_dport": 4791}, capsys)
    assert result["count"] == 16 and "identifiable" not in result
    assert set(p["udp_dport"] for v in result["probes_by_host"].values() for p in v) == {4791}
    result = run({"fabric": lab(), "udp_dport": 70000}, capsys)
    assert result["failed"] and "udp_dport" in result["msg"]
