"""A rollout over every switch of the twin while traffic flows (issue 18 item 5): site.yml rolls a BGP timers
change (an underlay change: `auto` drains the spines) out to every router, one per batch, while probes run
between every pair of hosts on every rail and across rails (tools/bench_rollout.py measures; this asserts):
no rail loses a probe while its own leaf is not being changed, every spine was drained and undrained, every leaf
was left undrained (its hosts are single-homed), and the timers are back at the plan's afterwards."""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, HERE)
import bench_rollout  # noqa: E402
from test_twin import PREFIX, converge  # noqa: E402

STATE = os.environ.get("AIFABRIC_TWIN_STATE")


@pytest.fixture(scope="module")
def twin():
    """The twin Molecule built and converged with site.yml (extensions/molecule/twin, `make test-twin`): a rollout
    needs the fabric as site.yml left it, hosts included."""
    if not STATE:
        pytest.skip("runs on the Molecule twin scenario's twin (AIFABRIC_TWIN_STATE): make test-twin")
    with open(os.path.join(STATE, "plan", "plan.json")) as handle:
        return {"plan": json.load(handle), "state": STATE}


def test_rollout_over_every_switch_loses_nothing_outside_the_changed_leaf(twin):
    import yaml
    state, plan = twin["state"], twin["plan"]
    with open(os.path.join(state, "inventory.yml")) as handle:
        fabric = yaml.safe_load(handle)["all"]["vars"]["fabric"]
    under = fabric.get("underlay") or {}
    planned = (under.get("keepalive_seconds", 3), under.get("hold_seconds", 9))
    try:
        figures = bench_rollout.rollout(state, plan, fabric, (planned[0] + 1, planned[1] + 3), "auto", 0.05,
                                        prefix=PREFIX)
    finally:
        # back to the plan (other engine tests on this twin compare with it): site.yml re-plans from the inventory's
        # intent, then every router is reconciled at once (converge.yml, no probes, no batches: the rollout's
        # batches and probes are what the first rollout measured; `make bench-rollout` rolls back and forth)
        bench_rollout.site_yml(state, "--tags", "plan", "--skip-tags", "switches,hosts,validate")
        back = converge(state)
        assert bench_rollout.wait_established(plan, prefix=PREFIX)
    print("ROLLOUT", json.dumps(figures, sort_keys=True))
    assert figures["switches_changed"] == sorted(list(plan["leafs"]) + list(plan["spines"])), figures
    assert sorted(name for name, r in back.items() if r["changed"] == 1 and r["failed"] == 0) == \
        figures["switches_changed"], back
    assert bench_rollout.verdict(figures) == [], figures
    for name in plan["spines"]:
        assert figures["drained"][name].startswith("drained (underlay changes)"), figures["drained"]
    for name in plan["leafs"]:
        assert "single-homed" in figures["drained"][name], figures["drained"]
    assert figures["probes_sent"] > 1000, figures


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
