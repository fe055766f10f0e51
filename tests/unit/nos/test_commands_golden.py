"""The commands every driver sends are a view of its typed ops (issue 35): ``Driver.commands(Driver.diff(...))``,
``safe_reverse`` and the drain's commands, byte for byte as the command-string drivers sent them
(tests/unit/nos/golden/commands.json.gz, generated before ``diff`` returned ops), and what foreign-change attribution
exempts as this run's own (the ops' read-back lines) unchanged."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "golden"))
import make_commands  # noqa: E402


@pytest.fixture(scope="module")
def golden():
    return make_commands.make_golden.read(make_commands.GOLDEN)


def test_corpus_covers_every_driver(golden):
    for platform in make_commands.DRIVERS:
        assert sum(k.startswith(platform + "|") for k in golden) == 6, platform


def test_commands_match_the_command_string_drivers(golden):
    current = make_commands.corpus()
    assert sorted(current) == sorted(golden)
    for key in sorted(golden):
        assert sorted(current[key]) == sorted(golden[key]), key
        for field in sorted(golden[key]):
            assert current[key][field] == golden[key][field], (key, field)
