# Generated GPU host fixtures (tests/fixtures/hosts/gen_fixtures.py), once per session.
import importlib.util
import os
import shutil

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "..", "fixtures", "hosts", "gen_fixtures.py")


def load_gen():
    spec = importlib.util.spec_from_file_location("gen_fixtures", GEN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def gen():
    return load_gen()


@pytest.fixture(scope="session")
def fixture_hosts(tmp_path_factory, gen):
    out = tmp_path_factory.mktemp("hosts")
    for name in gen.SPECS:
        gen.generate(name, str(out))
    return str(out)


@pytest.fixture
def host_copy(fixture_hosts, tmp_path):
    """A writable copy of one fixture host: host_copy('h100-cx7') -> dir with root/ and tools/."""
    def make(name):
        dest = str(tmp_path / name)
        shutil.copytree(os.path.join(fixture_hosts, name), dest, symlinks=True)
        return dest
    return make
