"""RDMA bandwidth mesh: ring planning, GID lookup, perftest command lines, output parsing, verdicts."""
import os
import shutil
import socket

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.validate.perftest import (
    client_command, judge_rdma_bw, listening_ports, parse_ib_write_bw, rdma_devices, roce_v2_gid_index, server_command)
from ansible_collections.aifabric.roce.plugins.module_utils.validate.probes import plan_rdma_bw

from ..fabric.intents import lab, small
from .helpers import SAMPLE

HOSTS = ["gpu01", "gpu02", "gpu03", "gpu04"]


def _mesh(plan, hosts, **kwargs):
    return dict((h, plan_rdma_bw(plan, h, hosts, **kwargs)) for h in hosts)


def test_ring_every_rail_nic_is_client_once_and_server_once():
    plan = build_plan(lab())
    mesh = _mesh(plan, list(reversed(HOSTS)))  # order of the play does not matter: plan slot order does
    for rail in range(4):
        clients = [(h, p) for h in HOSTS for p in mesh[h] if p["rail"] == rail and p["role"] == "client"]
        servers = [(h, p) for h in HOSTS for p in mesh[h] if p["rail"] == rail and p["role"] == "server"]
        assert sorted(host for host, probe in clients) == HOSTS and sorted(host for host, probe in servers) == HOSTS
        assert [(h, p["peer"]) for h, p in clients] == [("gpu01", "gpu02"), ("gpu02", "gpu03"), ("gpu03", "gpu04"),
                                                        ("gpu04", "gpu01")]
        for host, client in clients:  # the peer runs exactly one matching server, on the port the client dials
            match = [p for p in mesh[client["peer"]] if p["role"] == "server" and p["rail"] == rail and p["peer"] == host]
            assert len(match) == 1
            assert (match[0]["port"], match[0]["address"], match[0]["peer_address"]) == (
                client["port"], client["peer_address"], client["address"])
    first = mesh["gpu01"][0]
    assert first == {"kind": "rdma_bw", "role": "client", "rail": 0, "rdma": "mlx5_0", "dev": "rail0",
                     "address": "10.100.0.1", "peer": "gpu02", "peer_address": "10.100.0.2", "port": 18515,
                     "duration": 5, "qps": 1, "threshold": 0.9, "line_rate_gbps": 100}


def test_server_ports_are_distinct_per_host():
    plan = build_plan(small(servers=6, rails=4))
    mesh = _mesh(plan, sorted(plan["hosts"]), base_port=20000)
    for probes in mesh.values():
        ports = [p["port"] for p in probes if p["role"] == "server"]
        assert sorted(ports) == [20000, 20001, 20002, 20003]


def test_two_hosts_serve_each_other_and_one_host_has_no_peer():
    plan = build_plan(lab())
    mesh = _mesh(plan, ["gpu01", "gpu02"])
    assert sorted((p["role"], p["peer"]) for p in mesh["gpu01"] if p["rail"] == 0) == [("client", "gpu02"), ("server", "gpu02")]
    assert plan_rdma_bw(plan, "gpu01", ["gpu01"]) == []
    assert plan_rdma_bw(plan, "gpu09", HOSTS) == []


def test_line_rate_from_plan_else_fabric_else_none():
    plan = build_plan(lab())
    assert {p["line_rate_gbps"] for p in plan_rdma_bw(plan, "gpu01", HOSTS, threshold=0.8)} == {100}
    for host in plan["hosts"].values():
        for nic in host["nics"]:
            del nic["speed_gbps"]
    fallback = dict(("rail%d" % r, 400) for r in range(4))
    assert {p["line_rate_gbps"] for p in plan_rdma_bw(plan, "gpu01", HOSTS, fallback_speeds=fallback)} == {400}
    assert {p["line_rate_gbps"] for p in plan_rdma_bw(plan, "gpu01", HOSTS)} == {None}


def test_gid_index_of_the_rail_address(fixture_root, tmp_path):
    root = fixture_root  # h100-cx7: mlx5_k has 10.100.(4k).1 at GID 2 (RoCE v1) and 3 (RoCE v2)
    assert rdma_devices(root) == ["mlx5_%d" % k for k in range(8)]
    assert roce_v2_gid_index(root, "mlx5_0", "10.100.0.1") == (3, None)
    assert roce_v2_gid_index(root, "mlx5_1", "10.100.4.1") == (3, None)
    index, reason = roce_v2_gid_index(root, "mlx5_0", "10.100.4.1")
    assert index is None and reason.startswith("no RoCE v2 GID for 10.100.4.1 on mlx5_0 port 1")
    assert roce_v2_gid_index(root, "mlx5_9", "10.100.0.1") == (None, "RDMA device mlx5_9 not present")
    assert rdma_devices(str(tmp_path / "empty")) == []


def test_gid_index_follows_the_table_not_a_fixed_index(fixture_root):
    root = fixture_root
    port = os.path.join(root, "sys", "class", "infiniband", "mlx5_0", "ports", "1")
    # a second address on the netdev: its RoCE v2 GID lands at index 5 and the rail address is not at 3 any more
    for index, gid in ((3, "0000:0000:0000:0000:0000:ffff:c0a8:0001"), (5, "0000:0000:0000:0000:0000:ffff:0a64:0001")):
        with open(os.path.join(port, "gids", str(index)), "w") as handle:
            handle.write(gid + "\n")
        with open(os.path.join(port, "gid_attrs", "types", str(index)), "w") as handle:
            handle.write("RoCE v2\n")
    assert roce_v2_gid_index(root, "mlx5_0", "10.100.0.1") == (5, None)
    # only a RoCE v1 entry for the address: not usable for RoCE v2 traffic
    os.remove(os.path.join(port, "gids", "5"))
    index, reason = roce_v2_gid_index(root, "mlx5_0", "10.100.0.1")
    assert index is None and "no RoCE v2 GID for 10.100.0.1" in reason
    shutil.rmtree(os.path.join(port, "gids"))
    assert roce_v2_gid_index(root, "mlx5_0", "10.100.0.1") == (None, "RDMA device mlx5_0 has no port 1 GID table")


def _probe(**changes):
    probe = {"kind": "rdma_bw", "role": "client", "rail": 0, "rdma": "mlx5_0", "dev": "rail0", "address": "10.100.0.1",
             "peer": "gpu02", "peer_address": "10.100.0.2", "port": 18515, "duration": 5, "qps": 1, "threshold": 0.9,
             "line_rate_gbps": 100}
    probe.update(changes)
    return probe


def test_command_lines():
    server = _probe(role="server", peer="gpu04", peer_address="10.100.0.4")
    assert server_command("/usr/bin/ib_write_bw", server, 3) == [
        "/usr/bin/ib_write_bw", "-d", "mlx5_0", "-x", "3", "-p", "18515", "--report_gbits", "-D", "5", "-F"]
    assert client_command("ib_write_bw", _probe(port=18517, duration=10), 5) == [
        "ib_write_bw", "-d", "mlx5_0", "-x", "5", "-p", "18517", "--report_gbits", "-D", "10", "-F", "10.100.0.2"]
    assert client_command("ib_write_bw", _probe(qps=4), 3)[-3:] == ["-q", "4", "10.100.0.2"]


def test_parse_the_sourced_sample():
    assert parse_ib_write_bw(SAMPLE) == 92.57
    lines = SAMPLE.splitlines()
    header = next(i for i, line in enumerate(lines) if "BW average[Gb/sec]" in line)
    one_row = "\n".join(lines[:header + 2])  # the -D shape: a single row
    assert parse_ib_write_bw(one_row) == 92.57
    last_differs = SAMPLE.replace(" 65536      882821           0.00               92.57",
                                  " 65536      882821           0.00               41.20")
    assert parse_ib_write_bw(last_differs) == 41.2
    noisy = one_row.replace(lines[header], lines[header] + "\nConflicting CPU frequency values detected: 1000.0 != 3300.0")
    assert parse_ib_write_bw(noisy) == 92.57


def test_parse_without_a_result():
    lines = SAMPLE.splitlines()
    header = next(i for i, line in enumerate(lines) if "BW average[Gb/sec]" in line)
    assert parse_ib_write_bw("\n".join(lines[:header + 1])) is None       # header, no row
    assert parse_ib_write_bw("\n".join(lines[:header] + lines[header + 1:])) is None  # rows without the header
    assert parse_ib_write_bw(SAMPLE.replace("[Gb/sec]", "[MB/sec]")) is None  # not --report_gbits: other unit
    assert parse_ib_write_bw("") is None and parse_ib_write_bw(None) is None


def test_judge_against_the_threshold():
    ok = judge_rdma_bw(_probe(), 92.57)
    assert ok == {"probe": "rdma_bw mlx5_0 (rail0) 10.100.0.1 -> gpu02 10.100.0.2:18515", "status": "ok",
                  "expected": ">= 90 Gb/s (0.9 x 100 Gb/s line rate)", "actual": "92.57 Gb/s average (92.6% of line rate)"}
    assert judge_rdma_bw(_probe(), 90.0)["status"] == "ok"  # the threshold itself passes
    slow = judge_rdma_bw(_probe(), 89.99)
    assert slow["status"] == "fail" and slow["actual"] == "89.99 Gb/s average (90% of line rate)"
    assert judge_rdma_bw(_probe(line_rate_gbps=400), 92.57)["status"] == "fail"
    assert judge_rdma_bw(_probe(threshold=0.5, line_rate_gbps=200), 100.0)["status"] == "ok"


def test_judge_without_result_or_line_rate():
    missing = judge_rdma_bw(_probe(), None, " Couldn't connect to 10.100.0.2:18515\n")
    assert missing["status"] == "fail" and missing["actual"] == "no result: Couldn't connect to 10.100.0.2:18515"
    assert judge_rdma_bw(_probe(), None, "")["actual"] == "no result"
    unjudged = judge_rdma_bw(_probe(line_rate_gbps=None), 50.0)
    assert unjudged["status"] == "skipped" and unjudged["expected"] == "no line rate in the plan"


def test_listening_ports_from_proc_net_tcp():
    if not os.path.exists("/proc/net/tcp"):
        pytest.skip("no /proc/net/tcp here")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    bound = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        bound.bind(("127.0.0.1", 0))  # bound, not listening
        with open("/proc/net/tcp") as handle:
            ports = listening_ports(handle.read())
        assert listener.getsockname()[1] in ports
        assert bound.getsockname()[1] not in ports
    finally:
        listener.close()
        bound.close()
    assert listening_ports("") == set()
