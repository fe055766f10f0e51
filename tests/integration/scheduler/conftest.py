"""One real Slurm (munged, slurmctld, a slurmd per plan host) for the scheduler tests of this session."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import slurm_cluster  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.gor import slurm  # noqa: E402
from unit.fabric.intents import small  # noqa: E402


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    if slurm_cluster.missing():
        pytest.fail("Slurm/munge binaries missing: %s. Fix: bash tools/setup-system.sh" % slurm_cluster.missing())
    plan = build_plan(small(servers=6, rails=2, spg=3))    # 2 server groups of 3 hosts
    root = str(tmp_path_factory.mktemp("slurm"))
    env = slurm_cluster.up(root, sorted(plan["hosts"]), topology_conf=slurm.topology_conf(plan))

    def node(name):
        out = slurm_cluster.scontrol(root, "-o", "show", "node", name)
        assert out.returncode == 0, out.stderr
        return slurm.parse_node(out.stdout)
    yield {"root": root, "env": env, "plan": plan, "conf": os.path.join(root, "slurm.conf"), "node": node}
    slurm_cluster.down(root)
