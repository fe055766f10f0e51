"""`make twin-up` from two checkouts on one machine (issue 41 item 5).

Before, every `make twin-up` built namespaces aif-<device> on SSH ports 23000+, and a second checkout's twin removed
the first's namespaces as "left by a run that was killed". Now twin.py's defaults are the checkout's own
(tests/lab/labid.py twin_up_names: prefix aif<lab id>-, ports from 61000 + 100 * slot). Two checkouts are two lab ids
(AIFABRIC_LAB_ID stands for the second checkout's path): both twins come up with the command `make twin-up` runs (no
prefix, no port given), the first's namespaces and SSH endpoints survive the second's bring-up, and a third twin on
the first's ports is refused before it builds anything. Needs root and FRR."""
import json
import os
import socket
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TWIN = os.path.join(ROOT, "tests", "lab", "twin", "twin.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import labid  # noqa: E402  (tests/lab)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/lib/frr/bgpd"),
                                reason="the twin needs root and FRR (apt install frr; tools/setup-system.sh)")


def other_id():
    """A lab id whose twin slot is not this checkout's (the second checkout)."""
    mine = labid.twin_up_names()[1]
    return next(i for i in ("%06x" % n for n in range(1, 1000)) if labid.twin_up_names(i)[1] != mine)


def twin(action, state, lab_id=None, *extra):
    env = dict(os.environ)
    env.pop("AIFABRIC_TEST_PORT_OFFSET", None)
    if lab_id:
        env["AIFABRIC_LAB_ID"] = lab_id
    else:
        env.pop("AIFABRIC_LAB_ID", None)
    # what `make twin-up` runs (mk/twin.mk): no --ns-prefix, no --base-port (the lab inventory's twin)
    return subprocess.run([sys.executable, TWIN, action, "--state", state] + list(extra), env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def listening(port):
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_two_checkouts_twins_side_by_side(tmp_path):
    first, second, third = (str(tmp_path / n) for n in ("first", "second", "third"))
    ids = (None, other_id())
    try:
        for state, ident in zip((first, second), ids):
            out = twin("up", state, ident, "--host-config")
            assert out.returncode == 0, out.stderr[-3000:]
            # every router runs frr in the twin: it says what the inventory's own AsterNOS leaf will not get
            assert ("twin: every router runs frr here; on your gear, platform asternos (leaf0): will not configure port "
                    "MTU, PPD port binding") in out.stderr, out.stderr[-2000:]
        records = []
        for state in (first, second):
            with open(os.path.join(state, "twin.json")) as handle:
                records.append(json.load(handle))
        names = [labid.twin_up_names(i) for i in ids]
        assert [r["prefix"] for r in records] == [n[0] for n in names] and names[0][0] != names[1][0]
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
        existing = set(line.split()[0] for line in listed.splitlines() if line.strip())
        for record, (prefix, base) in zip(records, names):
            assert set(record["namespaces"]) <= existing, sorted(set(record["namespaces"]) - existing)
            assert all(n.startswith(prefix) for n in record["namespaces"])
            ports = sorted(r["port"] for r in record["routers"].values())
            assert ports[0] == base and all(listening(p) for p in ports), (ports, base)
        # a third twin on the first checkout's ports: refused by name, nothing built
        out = twin("up", third, "%06x" % 0xabcdef, "--host-config", "--base-port", str(names[0][1]))
        assert out.returncode != 0 and "in use on 127.0.0.1" in out.stderr and "TWIN_BASE_PORT=" in out.stderr, out.stderr
        assert not os.path.exists(os.path.join(third, "twin.json"))
        assert all(listening(r["port"]) for r in records[0]["routers"].values())
    finally:
        for state, ident in zip((first, second), ids):
            twin("down", state, ident)
