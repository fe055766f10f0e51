"""Management-NIC protection under become, where sudo drops SSH_CONNECTION (issue 18 item 6).

The host: management NIC eth0 (192.168.250.14), no main default route, the plan naming eth0 as a rail NIC
while calling the management NIC eno9. Without SSH_CONNECTION nothing used to give eth0 away."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host_net import engine
from ansible_collections.aifabric.roce.plugins.module_utils.host_net.model import HostNetError
from ansible_collections.aifabric.roce.plugins.module_utils.host_net import system
from ansible_collections.aifabric.roce.plugins.modules import rail_network
from tests.unit.host_net.helpers import lab_intent
from tests.unit.host_net.test_engine import FakeHost, no_default_route_state
from tests.unit.module_runner import run_module

SSH = "192.168.250.10 50514 192.168.250.14 22"


def mgmt_as_rail_intent():
    intent = lab_intent("gpu04")
    intent["mgmt_interface"] = "eno9"
    intent["nics"][0]["netdev"] = "eth0"
    return intent


def test_without_any_management_hint_the_plan_is_not_refused():
    """The gap itself: with no SSH_CONNECTION (become) and no default route nothing names eth0."""
    result = engine.run(FakeHost(no_default_route_state()), mgmt_as_rail_intent(), check_mode=True, persistence="systemd")
    assert result["management"]["interfaces"] == []


@pytest.mark.parametrize("hint, source", [
    ({"mgmt_interfaces": ["eth0"]}, r"host_mgmt_interface \(eth0\)"),
    ({"mgmt_address": "192.168.250.14"}, r"ansible_host \(192.168.250.14 on eth0\)"),
])
def test_management_nic_as_rail_nic_is_refused_without_ssh_connection(hint, source):
    host = FakeHost(no_default_route_state())
    with pytest.raises(HostNetError, match=r"names eth0 as a rail NIC, but it is this host's management interface "
                                           r"\(detected from .*%s.*fix servers.nics" % source):
        engine.run(host, mgmt_as_rail_intent(), persistence="systemd", ssh_connection=None, **hint)
    assert host.batches == [] and host.writes == []


def test_a_host_name_as_connection_address_protects_nothing_and_breaks_nothing():
    result = engine.run(FakeHost(no_default_route_state()), lab_intent("gpu04"), check_mode=True, persistence="systemd",
                        mgmt_address="gpu04.example.net")
    assert result["management"]["interfaces"] == []


def fake_proc(tree):
    """{pid: (ppid, environ dict)} as /proc/<pid>/status and /proc/<pid>/environ bytes."""
    files = {}
    for pid, (ppid, env) in tree.items():
        files["/proc/%d/status" % pid] = ("Name:\tx\nPid:\t%d\nPPid:\t%d\n" % (pid, ppid)).encode()
        files["/proc/%d/environ" % pid] = b"".join(("%s=%s\0" % kv).encode() for kv in env.items())
    return files.get


def test_ssh_connection_is_found_in_the_shell_that_ran_sudo():
    # python (root, env reset by sudo) <- sudo <- sh (the SSH login's shell) <- sshd
    read = fake_proc({40: (30, {"PATH": "/usr/bin"}), 30: (20, {"SUDO_USER": "ops"}),
                      20: (10, {"SSH_CONNECTION": SSH, "USER": "ops"}), 10: (1, {})})
    assert engine.ssh_connection_of_ancestors(read, 40) == SSH
    assert engine.ssh_connection_of_ancestors(fake_proc({40: (1, {})}), 40) is None
    loop = fake_proc({40: (41, {}), 41: (40, {})})  # a cycle cannot hang the walk
    assert engine.ssh_connection_of_ancestors(loop, 40) is None


def test_the_module_hands_the_ancestor_ssh_connection_and_the_inventory_hints_to_the_engine(monkeypatch, capsys):
    seen = {}

    def fake_run(host, intent, **kwargs):
        seen.update(kwargs)
        return {"changed": False}

    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    monkeypatch.setattr(rail_network, "SystemHost", lambda module: None)
    monkeypatch.setattr(system, "run", fake_run)   # the module's engine call (module_utils host_net.system)
    monkeypatch.setattr(system.os, "getpid", lambda: 40)
    monkeypatch.setattr(system, "read_bytes", fake_proc({40: (20, {}), 20: (1, {"SSH_CONNECTION": SSH})}))
    result = run_module(rail_network, {"intent": {}, "mgmt_interfaces": "eth0", "mgmt_address": "192.168.250.14"}, capsys)
    assert result["rc"] == 0
    assert seen["ssh_connection"] == SSH
    assert seen["mgmt_interfaces"] == ["eth0"] and seen["mgmt_address"] == "192.168.250.14"


def test_a_misspelt_host_mgmt_interface_is_refused_before_anything_is_sent():
    """Issue 26 item 5: `host_mgmt_interface: eht0` (not on the host) used to protect nothing, silently."""
    host = FakeHost(no_default_route_state())
    with pytest.raises(HostNetError, match=r"host_mgmt_interface names eht0, which does not exist on this host "
                                           r"\(present: .*eth0.*\): fix host_mgmt_interface"):
        engine.run(host, lab_intent("gpu04"), check_mode=True, persistence="systemd", mgmt_interfaces=["eht0"])
    assert host.batches == [] and host.writes == []
