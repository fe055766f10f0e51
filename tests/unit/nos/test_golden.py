"""The NOS drivers against their golden corpus (tests/unit/nos/golden/): render, parse, diff and the
full-config image of every driver x plan (lab, rail512, lab p2p) x section x device, and the parse of every
real capture, byte for byte. A refactor of the drivers must leave all of it unchanged; an intended output
change regenerates the corpus (golden/make_golden.py) in the same commit."""
import gzip
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "golden"))
import make_golden  # noqa: E402


@pytest.fixture(scope="module")
def golden():
    with gzip.open(make_golden.GOLDEN, "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


@pytest.fixture(scope="module")
def current():
    return make_golden.corpus()


def test_corpus_covers_every_driver_plan_and_capture(golden):
    assert len(golden) >= 450   # AsterNOS renders one section (Easy RoCE REST) since issue 25
    for platform in make_golden.DRIVERS:
        for inventory, scheme in make_golden.PLANS:
            assert any(k.startswith("%s|%s|%s|" % (platform, inventory, scheme or "-")) for k in golden), platform
        assert any(k.startswith("capture|%s|" % platform) for k in golden), platform


def test_drivers_match_golden_corpus(golden, current):
    assert sorted(current) == sorted(golden)
    for key in sorted(golden):
        for field in sorted(golden[key]):
            assert current[key][field] == golden[key][field], (key, field)
