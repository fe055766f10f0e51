"""Rendered persistence files for each backend, and backend auto-detection."""
import configparser

import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.host_net import model, persist
from tests.unit.host_net.helpers import lab_intent


def rendered(backend, host="gpu02"):
    intent = lab_intent(host)
    return persist.render(backend, intent, model.desired_model(intent))


def test_netplan_file_has_addresses_mtu_table_routes_and_policy():
    files, links, stale = rendered("netplan")
    assert not links and not stale
    content, mode = files[persist.NETPLAN_FILE]
    assert mode == 0o600
    doc = yaml.safe_load(content)
    rail0 = doc["network"]["ethernets"]["rail0"]
    assert doc["network"]["version"] == 2
    assert rail0["mtu"] == 9000 and rail0["addresses"] == ["10.100.0.2/29"]
    assert rail0["dhcp4"] is False
    assert {"to": "10.100.0.0/29", "from": "10.100.0.2", "scope": "link", "table": 100} in rail0["routes"]
    assert {"to": "default", "via": "10.100.0.6", "table": 100} in rail0["routes"]
    assert {"to": "10.100.0.0/16", "via": "10.100.0.6"} in rail0["routes"]
    assert rail0["routing-policy"] == [{"from": "10.100.0.2/32", "table": 100, "priority": 1000}]
    assert sorted(doc["network"]["ethernets"]) == ["rail0", "rail1", "rail2", "rail3"]
    assert "eth0" not in content


def test_networkmanager_keyfiles():
    files, links, stale = rendered("networkmanager")
    assert stale == [persist.NM_DIR + "/aifabric-*.nmconnection"] and not links
    content, mode = files[persist.NM_DIR + "/aifabric-rail1.nmconnection"]
    assert mode == 0o600
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(content)
    assert parser["connection"]["interface-name"] == "rail1"
    assert parser["connection"]["type"] == "ethernet"
    assert parser["ethernet"]["mtu"] == "9000"
    ipv4 = parser["ipv4"]
    assert ipv4["method"] == "manual" and ipv4["address1"] == "10.101.0.2/29"
    assert ipv4["never-default"] == "true"
    routes = {ipv4["route%d" % i]: ipv4["route%d_options" % i] for i in (1, 2, 3)}
    assert routes == {"10.101.0.0/29": "table=101,src=10.101.0.2",
                      "0.0.0.0/0,10.101.0.6": "table=101",
                      "10.101.0.0/16,10.101.0.6": "table=254"}
    assert ipv4["routing-rule1"] == "priority 1001 from 10.101.0.2/32 table 101"
    # Deterministic UUID per connection name: re-rendering is a no-op.
    again = rendered("networkmanager")[0][persist.NM_DIR + "/aifabric-rail1.nmconnection"][0]
    assert again == content


def test_systemd_fallback_batch_and_unit():
    files, links, _stale = rendered("systemd")
    batch = files[persist.BATCH_FILE][0].splitlines()
    assert "link set dev rail0 mtu 9000 up" in batch
    assert "address replace 10.100.0.2/29 dev rail0" in batch
    assert "route replace default via 10.100.0.6 dev rail0 table 100" in batch
    assert batch.index("rule del priority 1000 from 10.100.0.2/32 table 100") + 1 == \
        batch.index("rule add priority 1000 from 10.100.0.2/32 table 100")
    unit = files[persist.UNIT_FILE][0]
    assert "ExecStart=/sbin/ip -force -batch " + persist.BATCH_FILE in unit
    assert "WantedBy=multi-user.target" in unit
    assert links == {persist.UNIT_LINK: persist.UNIT_FILE}


def test_every_backend_but_none_writes_the_sysctl_file():
    for backend in ("netplan", "networkmanager", "systemd"):
        content = rendered(backend)[0][persist.SYSCTL_FILE][0]
        assert "net.ipv4.conf.rail3.rp_filter = 2" in content
        assert "net.ipv4.conf.rail0.arp_ignore = 1" in content
        assert "net.ipv4.conf.rail0.arp_announce = 2" in content
    assert persist.render("none", lab_intent(), model.desired_model(lab_intent())) == ({}, {}, [])


def test_sysctl_file_uses_slashes_for_dotted_interface_names():
    desired = {"sysctls": {"net.ipv4.conf.rail0.100.rp_filter": "2"}}
    assert "net/ipv4/conf/rail0.100/rp_filter = 2" in persist.render_sysctl(desired)[persist.SYSCTL_FILE][0]


def test_detect_backend():
    def exists_of(*paths):
        return lambda path: path in paths
    ubuntu = persist.parse_os_release('NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n')
    rocky = persist.parse_os_release('ID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\n')
    debian = persist.parse_os_release("ID=debian\n")
    assert persist.detect_backend(ubuntu, exists_of("/usr/sbin/netplan")) == "netplan"
    assert persist.detect_backend(rocky, exists_of("/usr/sbin/NetworkManager")) == "networkmanager"
    assert persist.detect_backend(rocky, exists_of()) == "systemd"
    assert persist.detect_backend(debian, exists_of()) == "systemd"
    assert persist.detect_backend(debian, exists_of("/usr/sbin/NetworkManager", "/etc/NetworkManager/system-connections")) == \
        "networkmanager"
