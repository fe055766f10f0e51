"""The toy NOS of test_toy_nos.py over SSH (issue 35 step 5): the same flows (plan, check, diff, apply with verify,
undo, drain, audit, validation), each session a real netmiko login (nos/connection.py, the toy driver's own
``device_type``) to the lab's SSH switch simulator (tests/lab/switches/simulator.py: its paramiko server and its
session loop: echo, prompt, line handling), which serves the toy device from this test. No product file and no
simulator file names the toy: it is registered and served from here."""
import os
import socket
import sys
import threading

import paramiko
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import registry
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import netmiko_factory

from . import test_toy_nos
from .helpers import ROOT

# the toy's flows and fixture, collected again here to run over SSH
toy = test_toy_nos.toy
test_plan_check_diff_apply_verify_and_idempotent = test_toy_nos.test_plan_check_diff_apply_verify_and_idempotent
test_a_change_the_switch_does_not_hold_is_undone_and_the_undo_proven = \
    test_toy_nos.test_a_change_the_switch_does_not_hold_is_undone_and_the_undo_proven
test_the_drain_wraps_a_disturbing_change_and_only_the_drain_setting_moves = \
    test_toy_nos.test_the_drain_wraps_a_disturbing_change_and_only_the_drain_setting_moves
test_the_audit_finds_a_port_below_the_host_mtu_through_the_driver = \
    test_toy_nos.test_the_audit_finds_a_port_below_the_host_mtu_through_the_driver
test_validation_reads_the_declared_bgp_summary_and_names_what_the_toy_lacks = \
    test_toy_nos.test_validation_reads_the_declared_bgp_summary_and_names_what_the_toy_lacks
test_the_counters_read_is_the_declared_one = test_toy_nos.test_the_counters_read_is_the_declared_one

sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
import simulator  # noqa: E402


class ToyShell(simulator.Session):
    """The simulator's session loop (echo, prompt, one answer per line) in front of a toy device."""

    def prompt(self):
        return "toy$ "

    def handle(self, line):
        if line in ("exit", "logout"):
            return None
        return self.dev.toy.answer(line) if line else ""


class Served(object):
    """What the simulator's session needs of a device (its lock, no faults), around the toy device."""

    def __init__(self, toy):
        self.toy, self.lock, self.state_dir = toy, threading.Lock(), None

    def faults(self):
        return {}


@pytest.fixture(scope="module")
def host_key():
    return paramiko.RSAKey.generate(2048)


@pytest.fixture(autouse=True)
def over_ssh(monkeypatch, host_key):
    """Every toy device of these tests is served by the simulator on a port of its own; its ``session`` (what the
    Applier, switch_check and validation connect with) is a netmiko login there."""
    listeners, logins = [], []

    def serve(device):
        served, ls = Served(device), socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.bind(("127.0.0.1", 0))
        ls.listen(16)
        listeners.append(ls)

        def one(sock):
            transport = paramiko.Transport(sock)
            transport.add_server_key(host_key)
            server = simulator.Server()
            try:
                transport.start_server(server=server)
                chan = transport.accept(20)
                if chan is not None and server.shell.wait(10):
                    ToyShell(served, chan).run()
            except Exception:  # noqa: BLE001 - a client that goes away is normal
                pass
            finally:
                transport.close()

        def loop():
            while True:
                try:
                    sock = ls.accept()[0]
                except OSError:
                    return
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                threading.Thread(target=one, args=(sock,), daemon=True).start()
        threading.Thread(target=loop, daemon=True).start()
        return ls.getsockname()[1]

    def session(device):
        if getattr(device, "port", None) is None:
            device.port = serve(device)
        params = dict(host="127.0.0.1", port=device.port, username=simulator.USER, password=simulator.PASSWORD,
                      secret=None, device_type=None, host_key_checking=False, known_hosts=None, timeout=10)
        conn = netmiko_factory(params, registry.get_driver("toynos"))()
        logins.append(conn)
        return conn
    monkeypatch.setattr(test_toy_nos.ToyDevice, "session", session)
    yield logins
    for ls in listeners:
        ls.close()


def test_the_toy_is_reached_over_ssh(toy, over_ssh):
    device = test_toy_nos.seeded(toy)
    conn = device.session()
    assert type(conn).__name__ == "LinuxSSH" and conn.send_command("show json").startswith('{"config": ')
    conn.disconnect()
