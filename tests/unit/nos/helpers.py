"""Shared by the NOS driver tests: a shipped inventory's plan (as shipped, or with every leaf and spine on one
platform), and the lab's switch simulators run in process on a fake device."""
import copy
import os
import sys
import time

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def plan_on_platform(inventory, platform, scheme=None, **extra):
    """Plan of inventories/<inventory> with every switch on ``platform`` (its own port names), optionally
    with another addressing scheme and other fabric keys (``extra``). A fresh plan each call: callers may cache it."""
    with open(os.path.join(ROOT, "inventories", inventory, "group_vars", "all", "fabric.yml")) as handle:
        fabric = yaml.safe_load(handle)["fabric"]
    fabric["leafs"].pop("platform_overrides", None)
    fabric["leafs"]["platform"] = fabric["spines"]["platform"] = platform
    if scheme:
        fabric["addressing"]["scheme"] = scheme
    fabric.update(extra)
    return build_plan(fabric)


def lab_plan():
    """Plan of inventories/lab as shipped (each leaf on its own NOS)."""
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as handle:
        return build_plan(yaml.safe_load(handle)["fabric"])


# --- the lab's switch simulators (tests/lab/switches/simulator.py) in process, without SSH -------------------------
class FakeDevice(object):
    """The part of simulator.Device a session uses, with nothing on disk (persist and save keep state in memory)."""

    def __init__(self, nos):
        self.name, self.nos = "sw", nos
        self.running, self.checkpoints, self.pending, self.revision, self.startup = [], {}, None, 1, []
        self.indent = {"eos": 3, "nxos": 2}.get(nos, 1)
        self.acct, self.acct_seq = [], 0

    def now(self):
        return time.time()

    def record(self, text):
        self.acct_seq += 1
        self.acct.append([self.now(), text, self.acct_seq])

    def persist(self):
        pass

    def save(self):
        self.startup = copy.deepcopy(self.running)

    def entered(self):
        pass

    def faults(self):
        return {}


def simulator_module():
    """tests/lab/switches/simulator.py, or the calling test skipped where it cannot load (paramiko missing)."""
    path = os.path.join(ROOT, "tests", "lab", "switches")
    if path not in sys.path:
        sys.path.insert(0, path)
    return pytest.importorskip("simulator")


def simulator_session(nos, device=None):
    """A simulator session of ``nos`` on a FakeDevice (or ``device``), at the NOS's CLI (klish: past `sonic-cli`)."""
    simulator = simulator_module()
    sess = simulator.SESSIONS[nos](device or FakeDevice(nos), None)
    if isinstance(sess, simulator.KlishSession):
        sess.shell = False
    return sess


def push(sess, cmds):
    """Type ``cmds`` into a simulator session as the driver would, each taken without a word: NVUE `nv set` lines
    then `nv config apply -y` (applied), a CLI between `configure terminal` and `end`."""
    if sess.dev.nos == "nvue":
        for cmd in cmds:
            assert not sess.handle(cmd), cmd
        assert "applied" in sess.handle("nv config apply -y")
        return
    sess.handle("configure terminal")
    for cmd in cmds:
        out = sess.handle(cmd.strip())
        assert not out, (cmd, out)
    sess.handle("end")
