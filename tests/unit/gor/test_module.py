"""rank_order module."""
import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.aifabric.roce.plugins.modules import rank_order

from ..fabric.intents import small


def run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exit_info:
            rank_order.main()
    result = json.loads(capsys.readouterr().out)
    result["rc"] = exit_info.value.code
    return result


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
