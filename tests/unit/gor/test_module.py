"""rank_order module."""


from ansible_collections.aifabric.roce.plugins.modules import rank_order

from ..fabric.intents import small
from ..module_runner import run_module


def run(args, capsys):
    return run_module(rank_order, args, capsys)


def test_rank_order_module(capsys):
    hosts = ["h005", "h001", "h006", "h002"]
    result = run({"fabric": small(servers=8, rails=2, spg=4), "hosts": hosts, "slots": 2}, capsys)
    assert result["changed"] is False
    assert result["order"] == ["h001", "h002", "h005", "h006"]
    assert result["hostfile"] == "h001 slots=2\nh002 slots=2\nh005 slots=2\nh006 slots=2\n"
    assert result["traffic"]["ring"]["ours_spine_bytes"] < result["traffic"]["ring"]["native_spine_bytes"]
    assert len(result["ranks"]) == 8


def test_rank_order_unknown_host(capsys):
    result = run({"fabric": small(), "hosts": ["zz"]}, capsys)
    assert result["failed"] and "zz" in result["msg"]
