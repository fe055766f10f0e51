"""Diffing the plan against captured `ip -j` state and building the `ip -batch` text."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host_net import model
from tests.unit.host_net.helpers import fixture, lab_intent


def current(state, intent, sysctls=None):
    scope = model.owned_scope(intent)
    return model.current_model(fixture(state, "addr"), fixture(state, "route"), fixture(state, "rule"), scope, sysctls or {})


def test_fresh_host_needs_everything_in_a_safe_order():
    intent = lab_intent("gpu04")
    desired = model.desired_model(intent, manage_sysctls=False)
    items = model.diff(desired, current("fresh", intent))
    texts = [model.item_text(i) for i in items]
    assert texts[:4] == ["mtu rail%d 1500 -> 9000" % r for r in range(4)]
    assert "address add 10.100.0.4/29 rail0" in texts
    assert sum(1 for i in items if i["kind"] == "route") == 12
    assert sum(1 for i in items if i["kind"] == "rule") == 4
    lines = model.batch_lines(items)
    assert lines[0] == "link set dev rail0 mtu 9000"
    kinds = [line.split()[0] for line in lines]
    # links, then addresses, then routes, then rules
    assert kinds == sorted(kinds, key=["link", "address", "route", "rule"].index)
    assert "route replace default via 10.100.0.6 dev rail0 table 100" in lines
    assert "route replace 10.100.0.0/29 dev rail0 table 100 src 10.100.0.4" in lines
    assert "route replace 10.100.0.0/16 via 10.100.0.6 dev rail0 table main" in lines
    assert "rule add priority 1000 from 10.100.0.4/32 table 100" in lines


def test_drifted_host_reports_exactly_the_drift_and_leaves_foreign_entries_alone():
    intent = lab_intent("gpu04")
    desired = model.desired_model(intent, manage_sysctls=False)
    have = current("drifted", intent)
    texts = [model.item_text(i) for i in model.diff(desired, have)]
    assert texts == [
        "mtu rail3 1500 -> 9000",
        "address delete 10.100.0.5/29 rail0",
        "route delete 10.9.9.0/24 via 10.100.0.6 dev rail0 table 100",
        "route delete blackhole 10.77.0.0/16 table 101 metric 5",
        "rule add priority 1002 from 10.102.0.4/32 table 102",
    ]
    # The foreign rule (priority 500, table 200) and table 200's route are not even read as ours.
    assert all(rule[0] != 500 for rule in have["rules"])
    assert all(route[0] != 200 for route in have["routes"])


def test_kernel_routes_and_mgmt_routes_are_not_owned():
    intent = lab_intent("gpu04")
    have = current("drifted", intent)
    main = [r for r in have["routes"] if r[0] == model.MAIN]
    assert sorted(r[2] for r in main) == ["10.100.0.0/16", "10.101.0.0/16", "10.102.0.0/16", "10.103.0.0/16"]


def test_stale_secondary_addresses_go_before_primaries():
    have = {"addrs": {"rail0": ["10.100.0.4/29", "10.100.0.5/29"]}}
    items = [{"kind": "address", "action": "delete", "dev": "rail0", "address": a} for a in ("10.100.0.4/29", "10.100.0.5/29")]
    items.insert(0, {"kind": "address", "action": "add", "dev": "rail0", "address": "10.100.0.1/29"})
    assert model.batch_lines(items, have) == [
        "address add 10.100.0.1/29 dev rail0",
        "address del 10.100.0.5/29 dev rail0",
        "address del 10.100.0.4/29 dev rail0",
    ]


def test_sysctl_drift_and_paths():
    intent = lab_intent("gpu01")
    desired = model.desired_model(intent)
    values = dict(desired["sysctls"])
    values["net.ipv4.conf.rail2.rp_filter"] = "1"
    items = model.diff(desired, current("fresh", intent, values))
    sysctl_items = [model.item_text(i) for i in items if i["kind"] == "sysctl"]
    assert sysctl_items == ["sysctl net.ipv4.conf.rail2.rp_filter 1 -> 2"]
    assert model.sysctl_path("net.ipv4.conf.rail0.100.rp_filter") == "/proc/sys/net/ipv4/conf/rail0.100/rp_filter"
    assert model.sysctl_path("net.ipv4.ip_forward") == "/proc/sys/net/ipv4/ip_forward"


def test_rule_parsing_and_named_tables():
    names = model.parse_rt_tables(["# comment\n100\trail0   # ours\n"])
    assert model.parse_rule({"priority": 1000, "src": "10.100.0.4", "table": "rail0"}, names) == \
        (1000, "10.100.0.4/32", "all", 100, ())
    assert model.parse_rule({"priority": 500, "src": "10.200.0.0", "srclen": 16, "table": "200"})[1] == "10.200.0.0/16"
    with pytest.raises(model.HostNetError):
        model.table_id("nosuchtable")


def test_owned_scope_refuses_kernel_tables_and_priorities():
    intent = lab_intent()
    with pytest.raises(model.HostNetError, match="kernel"):
        model.owned_scope(intent, owned_tables=[254])
    with pytest.raises(model.HostNetError, match="kernel"):
        model.owned_scope(intent, owned_priorities=[32766])
    scope = model.owned_scope(intent, owned_tables=range(100, 108), owned_priorities=range(1000, 1008))
    assert scope["tables"] == list(range(100, 108))
    assert scope["devs"] == ["rail0", "rail1", "rail2", "rail3"]


def test_model_round_trips_through_routes_text():
    intent = lab_intent()
    desired = model.desired_model(intent)
    text = model.model_text(desired)
    assert "link rail0 mtu 9000 up" in text
    assert "route default via 10.100.0.6 dev rail0 table 100" in text
    assert "rule priority 1003 from 10.103.0.4/32 table 103" in text
