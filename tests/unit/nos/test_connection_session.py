"""The session facts are the driver's (issue 35): after a netmiko login, nos/connection.py calls the driver's own
``after_login`` (klish: prompt reads for config-mode checks; AsterNOS: prompt reads, then the hop to the Linux shell),
only when the session is the driver's own netmiko class; no branch on a device type names a NOS there."""
import netmiko
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver


class FakeConn(object):
    def __init__(self, **kwargs):
        self.kwargs, self.calls = kwargs, []
        self.check_config_mode = self.save_config = self._orig = lambda *a, **k: None

    def read_channel(self):
        return "x"

    def set_base_prompt(self, **kwargs):
        self.calls.append(("set_base_prompt", kwargs))

    def _enter_bash_cli(self):
        self.calls.append(("bash", {}))

    def enable(self):
        self.calls.append(("enable", {}))


@pytest.fixture
def login(monkeypatch):
    monkeypatch.setattr(netmiko, "ConnectHandler", FakeConn)

    def run(platform, device_type=None):
        params = dict(host="192.0.2.1", port=22, username="admin", password="x", timeout=5, host_key_checking=False,
                      device_type=device_type)
        return netmiko_factory(params, get_driver(platform))()
    return run


def test_each_driver_prepares_its_own_session(login):
    eos = login("eos")
    assert eos.calls == [] and eos.kwargs["device_type"] == "arista_eos" and eos.check_config_mode is eos._orig
    klish = login("dell_sonic")
    assert klish.calls == [] and klish.check_config_mode is not klish._orig   # reads up to the klish prompt
    aster = login("asternos")
    assert [c[0] for c in aster.calls] == ["set_base_prompt", "bash", "set_base_prompt"]
    assert aster.calls[2][1] == {"alt_prompt_terminator": "$"} and aster.save_config is not aster._orig


def test_another_netmiko_class_gets_none_of_the_drivers_session_facts(login):
    other = login("asternos", device_type="linux")
    assert other.calls == [] and other.kwargs["device_type"] == "linux" and other.check_config_mode is other._orig
