# A GPU host sysfs tree (tests/fixtures/hosts/gen_fixtures.py, host h100-cx7) for the RDMA bandwidth probes.
import importlib.util
import os
import shutil

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "..", "fixtures", "hosts", "gen_fixtures.py")


@pytest.fixture(scope="session")
def h100_tree(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("gen_fixtures", GEN)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen.generate("h100-cx7", str(tmp_path_factory.mktemp("validate_hosts")))


@pytest.fixture
def fixture_root(h100_tree, tmp_path):
    """A writable copy of the h100-cx7 root: mlx5_k holds 10.100.(4k).1 at GID 2 (RoCE v1) and 3 (RoCE v2)."""
    dest = str(tmp_path / "root")
    shutil.copytree(os.path.join(h100_tree, "root"), dest, symlinks=True)
    return dest
