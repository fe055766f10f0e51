"""The allowlists admit the names real fabrics use and nothing a shell, CLI or path would act on."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import names as allow
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import PLATFORM_DEVICE_TYPE_CHOICES


@pytest.mark.parametrize("name", ["Ethernet1", "Ethernet1/1", "Ethernet1/1/1", "Eth1/1:1", "swp1", "swp1s0",
                                  "et-0/0/1", "Ethernet0", "hundredGigE1/0/1"])
def test_real_port_names_pass(name):
    assert allow.port_name_problem("p", name) is None


@pytest.mark.parametrize("name", ["swp1", "swp32s3", "Ethernet1", "eth1.100"])
def test_linux_port_names_pass_on_nvue(name):
    assert allow.port_name_problem("p", name, "nvue") is None


@pytest.mark.parametrize("name", ["Ethernet1/1", "Eth1/1:1", "swp1-with-a-long-name"])
def test_non_linux_port_names_fail_on_nvue(name):
    assert allow.port_name_problem("p", name, "nvue") is not None


@pytest.mark.parametrize("name", ["Ethernet 1", "swp1;id", "swp$(id)", "-swp1", "swp1\n", "swp`id`", "Ethernet1'",
                                  "swp\u200b1", "", "a" * 64])
def test_hostile_port_names_fail(name):
    assert allow.port_name_problem("p", name) is not None


@pytest.mark.parametrize("name", ["rail0", "ens1np0", "enp65s0f0np0", "eth0", "bond0.100", "ib0"])
def test_real_netdevs_pass(name):
    assert allow.netdev_problem("n", name) is None


@pytest.mark.parametrize("name", ["enp65s0f0np0-long", "eth0:1", "../eth0", "eth 0", "eth0;", ".eth0", 7])
def test_bad_netdevs_fail(name):
    assert allow.netdev_problem("n", name) is not None


@pytest.mark.parametrize("name", ["gpu001", "gpu-a01", "gpu001.cluster.example.com", "node_7"])
def test_real_server_names_pass(name):
    assert allow.object_name_problem("s", name, maximum=allow.SERVER_NAME_MAX) is None


@pytest.mark.parametrize("value", ["eno1", "^docker,lo", "=eth0", "eth,ib"])
def test_nccl_socket_ifname_forms_pass(value):
    assert allow.socket_ifname_problem("x", value) is None


@pytest.mark.parametrize("pattern, fields", [("gpu{index:03d}", ("index",)), ("Ethernet{port}/{lane}", ("port", "lane", "index")),
                                             ("su{group}-rail{rail}", ("group", "rail")), ("spine-p{plane}-{index:>2}", ("index", "plane")),
                                             ("leaf{{x}}{rail:x}", ("group", "rail"))])
def test_usual_patterns_pass(pattern, fields):
    assert allow.pattern_problem("p", pattern, fields) is None


def test_device_type_choices_are_netmiko_ssh_device_types():
    from netmiko.ssh_dispatcher import CLASS_MAPPER
    for platform, choices in PLATFORM_DEVICE_TYPE_CHOICES.items():
        assert choices and all(choice in CLASS_MAPPER for choice in choices), platform
        assert not any("telnet" in choice for choice in choices)
