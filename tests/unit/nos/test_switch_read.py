"""One read of every switch (nos/switch_read.py, module switch_state): a switch is in sync only when switch_config's
own first step finds nothing to do; everything else (commands, a drain, a digest to verify, refused arguments, a read
that failed) is drifted with the reason, so switch_config runs for it. The reads go to the lab's EOS and NVUE
simulators in process (their printed formats are checked against real captures in test_simulator_formats.py)."""
import os
import threading

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.nos import connection, switch_args, switch_read
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

from .helpers import ROOT, push, simulator_session


class Conn(object):
    """A netmiko-like session on an in-process simulator; counts the sessions open at once."""
    open_now = 0
    most = 0
    lock = threading.Lock()

    def __init__(self, sess):
        self.sess = sess
        with Conn.lock:
            Conn.open_now += 1
            Conn.most = max(Conn.most, Conn.open_now)

    def send_command(self, cmd, **_kw):
        return self.sess.handle(cmd)

    def disconnect(self):
        with Conn.lock:
            Conn.open_now -= 1


def entry(plan, name, **extra):
    record = plan["leafs"][name]
    out = dict(name=name, platform=record["platform"], intent=record, qos=plan["qos"], sections=["qos", "mtu", "pbr"],
               host=name, username="admin")
    out.update(extra)
    return out


def configured(plan, name):
    """A simulator session holding exactly the plan of ``name`` (pushed through its own CLI)."""
    record = plan["leafs"][name]
    drv = get_driver(record["platform"])
    sess = simulator_session(record["platform"])
    push(sess, drv.commands(drv.diff("", drv.render(record, plan["qos"]))))
    return sess


def factory(sessions, fail=()):
    def connect_factory(params, _driver):
        def connect():
            if params["host"] in fail:
                raise OSError("connection refused")
            return Conn(sessions[params["host"]])   # the tests use the name as the host
        return connect
    return connect_factory


def test_a_configured_switch_is_in_sync_and_a_drifted_one_names_its_commands(plan):
    sessions = {"leaf1": configured(plan, "leaf1"), "leaf2": configured(plan, "leaf2")}
    got = switch_read.read_all([entry(plan, "leaf1"), entry(plan, "leaf2")], factory(sessions))
    assert got["leaf1"]["in_sync"] and got["leaf1"]["reason"] == "in sync" and got["leaf1"]["config_digest"]
    assert got["leaf2"]["in_sync"], got["leaf2"]
    # an engineer changes the MTU of one host port on the EOS leaf in its own CLI
    push(sessions["leaf1"], ["interface Ethernet1", "mtu 1500"])
    again = switch_read.read_all([entry(plan, "leaf1"), entry(plan, "leaf2")], factory(sessions))
    assert not again["leaf1"]["in_sync"] and again["leaf1"]["commands"] >= 1, again["leaf1"]
    assert again["leaf1"]["reason"].endswith("command(s) to send")
    assert again["leaf1"]["config_digest"] != got["leaf1"]["config_digest"]
    assert again["leaf2"]["in_sync"]


def test_anything_not_proven_in_sync_is_drifted_with_its_reason(plan):
    sessions = {"leaf1": configured(plan, "leaf1")}
    cases = {
        "unreachable": (entry(plan, "leaf1", host="192.0.2.99"),
                        "read failed: step read, command 'show running-config': cannot connect (OSError: connection refused)"),
        "digest": (entry(plan, "leaf1", expected_config_digest="abc"), "a reviewed config digest is given"),
        "bad argument": (entry(plan, "leaf1", lock_ttl=0), "arguments refused (switch_config names them): lock_ttl is 0"),
        "unknown option": (entry(plan, "leaf1", bogus=1), "arguments refused"),
        "refused section": (entry(plan, "leaf1", sections=["qos", "nonsense"]), "arguments refused"),
    }
    for why, (item, reason) in cases.items():
        got = switch_read.read_one(item, factory(sessions, fail=("192.0.2.99",)))
        assert got["in_sync"] is False and got["reason"].startswith(reason), (why, got)


def test_reads_run_side_by_side_within_the_worker_limit(plan):
    names = ["leaf1", "leaf2"] * 3
    sessions = dict(("%s-%d" % (n, i), configured(plan, n)) for i, n in enumerate(names))
    entries = [dict(entry(plan, n), name="%s-%d" % (n, i), host="%s-%d" % (n, i)) for i, n in enumerate(names)]
    Conn.most = 0
    got = switch_read.read_all(entries, factory(sessions), workers=2)
    assert all(v["in_sync"] for v in got.values()) and len(got) == 6
    assert 1 <= Conn.most <= 2 and Conn.open_now == 0


def test_names_must_be_unique_and_credentials_known(plan):
    with pytest.raises(ValueError, match="unique name"):
        switch_read.read_all([entry(plan, "leaf1"), entry(plan, "leaf1")], factory({}))
    with pytest.raises(ValueError, match="not listed in switches: leaf9"):
        connection.with_credentials([entry(plan, "leaf1")], {"leaf9": {"password": "x"}}, "name", "switches")
    with pytest.raises(ValueError, match="only password and secret"):
        connection.with_credentials([entry(plan, "leaf1")], {"leaf1": {"username": "x"}}, "name", "switches")
    merged = connection.with_credentials([entry(plan, "leaf1")], {"leaf1": {"password": "pw", "secret": None}},
                                         "name", "switches")
    assert merged[0]["password"] == "pw" and "secret" not in merged[0]


def _switch_config_args():
    with open(os.path.join(ROOT, "roles", "switch", "tasks", "main.yml")) as handle:
        task = yaml.safe_load(handle)[0]
    return task["aifabric.roce.switch_config"]


def test_the_read_passes_what_the_role_passes():
    """read_args.yml must give switch_state every value main.yml gives switch_config (password and secret apart)."""
    with open(os.path.join(ROOT, "roles", "switch", "tasks", "read_args.yml")) as handle:
        tasks = yaml.safe_load(handle)
    read = dict(tasks[0]["ansible.builtin.set_fact"]["switch_read_args"])
    read.update(tasks[0]["ansible.builtin.set_fact"]["switch_read_credentials"])
    assert read.pop("name") == "{{ inventory_hostname }}"
    passed = _switch_config_args()
    assert read == passed
    assert set(passed) <= set(switch_args.argument_spec())
