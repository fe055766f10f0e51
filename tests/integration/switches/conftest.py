"""Switch lab fixtures: simulators on private ports and state dir, one set per test session."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))

import lab  # noqa: E402
import labid  # noqa: E402

# AIFABRIC_TEST_PORT_OFFSET, or this checkout's own (tests/lab/labid.py): two checkouts' runs never share a port
PORT_OFFSET = labid.port_offset()


@pytest.fixture(scope="session")
def switch_lab(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("switchlab"))
    ports = {n: p + PORT_OFFSET for n, p in list(lab.PORTS.items()) + [(k, v[2]) for k, v in lab.EXTRA.items()]}
    lab.up(fresh=True, root=root, ports=ports, extra=True)
    yield {"root": root, "ports": ports, "devices": lab.devices(extra=True), "plan": lab.lab_plan()}
    lab.down(root)
