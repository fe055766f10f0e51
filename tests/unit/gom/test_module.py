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
    assert result["count"] == 16 and result["coverage"] == 1.0 and result["bound"] == 16
    assert sum(len(v) for v in result["probes_by_host"].values()) == 16
    args["_ansible_check_mode"] = False
    assert run(args, capsys)["changed"]
    written = json.loads(dest.read_text())
    assert len(written["probes"]) == 16 and written["probes"][0]["path"]
    assert run(args, capsys)["changed"] is False
