from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.validate.probes import (
    expected_lldp, judge_lldp, judge_ping, judge_route, parse_lldp, parse_ping, parse_route_batch, parse_route_get, plan_probes,
    route_batch_input)

from ..fabric.intents import lab, small

# Output shapes of iputils ping and iproute2 `ip -j route get` (Debian 12 iputils 20221126, iproute2 6.1).
PING_OK = """PING 10.100.0.2 (10.100.0.2) from 10.100.0.1 : 8972(9000) bytes of data.

--- 10.100.0.2 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 1001ms
rtt min/avg/max/mdev = 0.051/0.062/0.074/0.011 ms
"""
PING_TOO_BIG = """PING 10.100.0.2 (10.100.0.2) from 10.100.0.1 : 8972(9000) bytes of data.
ping: local error: message too long, mtu=1500

--- 10.100.0.2 ping statistics ---
2 packets transmitted, 0 received, +2 errors, 100% packet loss, time 1002ms
"""
ROUTE_VIA = '[{"dst":"10.101.0.2","from":"10.100.0.1","gateway":"10.100.0.6","dev":"rail0","prefsrc":"10.100.0.1","flags":[],"uid":0,"cache":[]}]'
ROUTE_LINK = '[{"dst":"10.100.0.2","from":"10.100.0.1","dev":"rail0","prefsrc":"10.100.0.1","flags":[],"uid":0,"cache":[]}]'
# lldpcli json: the leaf reports its own port name (AsterNOS leaf0 Ethernet0, Cumulus leaf2 swp1)
LLDP = ('{"lldp": {"interface": [{"rail0": {"chassis": {"leaf0": {"id": {"type": "mac", "value": "aa"}}},'
        ' "port": {"id": {"type": "ifname", "value": "Ethernet0"}}}},'
        ' {"rail2": {"chassis": {"leaf2": {"id": {"type": "mac", "value": "bb"}}},'
        ' "port": {"id": {"type": "ifname", "value": "swp1"}}}}]}}')


def test_ring_probes_cover_every_rail_with_ping_and_routes():
    plan = build_plan(lab())
    probes = plan_probes(plan, "gpu04", ["gpu01", "gpu02", "gpu03", "gpu04"])
    pings = [p for p in probes if p["kind"] == "mtu_ping"]
    assert [(p["dev"], p["dst"], p["peer"], p["size"]) for p in pings] == [
        ("rail%d" % r, "10.10%d.0.1" % r, "gpu01", 8972) for r in range(4)]
    routes = [p for p in probes if p["kind"] == "route" and p["dev"] == "rail0"]
    assert [(p["dst"], p["via"]) for p in routes] == [("10.100.0.1", None), ("10.101.0.1", "10.100.0.6")]


def test_other_group_peer_goes_via_gateway():
    plan = build_plan(small(servers=8, spg=4, rails=1))
    probe = [p for p in plan_probes(plan, "h004", sorted(plan["hosts"])) if p["kind"] == "route"][0]
    assert probe["peer"] == "h005" and probe["via"] == plan["hosts"]["h004"]["nics"][0]["gateway"]


def test_single_host_has_nothing_to_probe():
    assert plan_probes(build_plan(lab()), "gpu01", ["gpu01"]) == []


def test_route_judgement():
    link = {"dev": "rail0", "via": None, "src": "10.100.0.1", "dst": "10.100.0.2"}
    assert judge_route(link, parse_route_get(ROUTE_LINK))["status"] == "ok"
    via = dict(link, dst="10.101.0.2", via="10.100.0.6")
    assert judge_route(via, parse_route_get(ROUTE_VIA))["status"] == "ok"
    wrong = judge_route(via, parse_route_get(ROUTE_VIA.replace("rail0", "eth0")))
    assert wrong["status"] == "fail" and wrong["actual"] == "dev eth0 via 10.100.0.6"
    assert judge_route(via, parse_route_get("[]"))["actual"] == "no route"
    assert parse_route_get("not json") is None


def test_ping_judgement():
    probe = {"size": 8972, "dst": "10.100.0.2", "src": "10.100.0.1", "dev": "rail0"}
    good = judge_ping(probe, parse_ping(PING_OK, 0))
    assert good["status"] == "ok" and "avg 0.062 ms" in good["actual"]
    bad = judge_ping(probe, parse_ping(PING_TOO_BIG, 1))
    assert bad["status"] == "fail" and bad["actual"].startswith("100.0% loss")


def test_lldp_against_cabling():
    expected = expected_lldp(build_plan(lab()), "gpu01")
    findings = judge_lldp(expected, parse_lldp(LLDP))
    assert [(f["probe"], f["status"]) for f in findings] == [
        ("lldp rail0", "ok"), ("lldp rail1", "fail"), ("lldp rail2", "ok"), ("lldp rail3", "fail")]
    assert findings[1]["actual"] == "no neighbour"


# `ip -j -force -batch -` over two lookups, the second refused (iproute2 6.1, Debian 12; this machine's eth0)
ROUTE_BATCH = ('[{"dst":"10.0.0.1","from":"192.0.2.2","gateway":"192.0.2.1","dev":"eth0","flags":[],"uid":0,"cache":[]}]\n'
               'RTNETLINK answers: Network is unreachable\nCommand failed -:2\n')


def test_route_batch_answers_are_matched_by_destination_and_source():
    probes = [{"dst": "10.0.0.9", "src": "10.9.9.9"}, {"dst": "10.0.0.1", "src": "192.0.2.2"}]
    assert route_batch_input(probes) == "route get 10.0.0.9 from 10.9.9.9\nroute get 10.0.0.1 from 192.0.2.2\n"
    refused, answered = parse_route_batch(ROUTE_BATCH, probes)
    assert refused is None and answered == {"dev": "eth0", "via": "192.0.2.1", "prefsrc": None}
    assert parse_route_batch("", probes) == [None, None]
