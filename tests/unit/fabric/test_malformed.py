"""The malformed-fabric corpus: every case is refused with a FabricError naming its key path, fast.

tools/measure_malformed.py runs the same corpus against any checkout and prints the figures.
"""
import signal

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

from .intents import lab
from .malformed import CASES, apply_edits

TIME_LIMIT_S = 15


def _alarm(_signum, _frame):
    raise AssertionError("planning did not finish within %d s" % TIME_LIMIT_S)


@pytest.mark.parametrize("name, edits, path", CASES, ids=[case[0] for case in CASES])
def test_malformed_fabric_is_refused_with_its_key_path(name, edits, path):
    fabric = apply_edits(lab(), edits)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT_S)
    try:
        with pytest.raises(FabricError) as err:
            build_plan(fabric)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert path in err.value.paths(), err.value.render()
    assert all(problem.fix for problem in err.value.problems)


def test_the_corpus_is_large_and_every_case_distinct():
    assert len(CASES) >= 60
    assert len(set(case[0] for case in CASES)) == len(CASES)


def test_the_corpus_starts_from_a_valid_fabric():
    assert build_plan(apply_edits(lab(), []))["fabric"] == "lab"
