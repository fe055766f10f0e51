"""rail_validate's RDMA bandwidth phases, run in-process the way AnsiballZ runs them.

A stand-in ib_write_bw (a small Python script first on PATH) records its arguments; as a client it
prints the sourced sample, as a server it listens on its -p port like perftest's server does.
"""
import os
import shutil
import signal
import socket
import stat
import sys
import time

import pytest

from ansible_collections.aifabric.roce.plugins.modules import rail_validate, validation_probes

from ..fabric.intents import lab
from ..module_runner import run_module
from .helpers import FIXTURES

NOT_REQUESTED = {"probe": "rdma bandwidth", "status": "skipped", "expected": "", "required": False,
                 "actual": "RDMA bandwidth mesh not requested (validate_rdma_bw=false)"}

FAKE = """#!%s
import os, socket, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_ARGV_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
if "." in args[-1]:  # client: the server address comes last
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    with open(os.environ["FAKE_OUTPUT"]) as out:
        sys.stdout.write(out.read())
    sys.exit(int(os.environ.get("FAKE_RC", "0")))
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(args[args.index("-p") + 1])))
server.listen(1)
server.settimeout(30)
try:
    server.accept()
except socket.timeout:
    pass
"""


run = run_module


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    """A directory holding a stand-in ib_write_bw; PATH is set to it alone unless the test adds more."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    path = bindir / "ib_write_bw"
    path.write_text(FAKE % sys.executable)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("FAKE_ARGV_LOG", str(tmp_path / "argv.log"))
    monkeypatch.setenv("FAKE_OUTPUT", os.path.join(FIXTURES, "ib_write_bw_client_roce.txt"))
    return bindir


def _argv(tmp_path):
    with open(str(tmp_path / "argv.log")) as handle:
        return handle.read().splitlines()


def _probe(role="client", **changes):
    probe = {"kind": "rdma_bw", "role": role, "rail": 0, "rdma": "mlx5_0", "dev": "rail0", "address": "10.100.0.1",
             "peer": "gpu02", "peer_address": "10.100.0.2", "port": 18515, "duration": 5, "qps": 1, "threshold": 0.9,
             "line_rate_gbps": 100}
    probe.update(changes)
    return probe


def _free_port():
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def test_not_requested_is_one_skipped_finding_and_starts_nothing(capsys, fake_bin, tmp_path):
    probes = [_probe(), _probe(role="server")]
    result = run(rail_validate, {"probes": probes}, capsys)
    assert result["rc"] == 0 and result["findings"] == [NOT_REQUESTED] and result["failed_probes"] == 0
    assert run(rail_validate, {"probes": probes, "phase": "client"}, capsys)["findings"] == [NOT_REQUESTED]
    server = run(rail_validate, {"probes": probes, "phase": "server"}, capsys)
    assert server["findings"] == [] and server["servers"] == []
    assert not os.path.exists(str(tmp_path / "argv.log"))  # ib_write_bw never ran


def test_requested_probes_phase_leaves_the_mesh_to_the_other_phases(capsys):
    result = run(rail_validate, {"probes": [_probe()], "rdma_bw": True}, capsys)
    assert result["rc"] == 0 and result["findings"] == []


def test_missing_perftest_is_skipped_not_an_error(capsys, tmp_path, monkeypatch, fixture_root):
    empty = tmp_path / "nothing"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for phase in ("server", "client"):
        result = run(rail_validate, {"probes": [_probe(role=phase)], "phase": phase, "rdma_bw": True,
                                     "root": fixture_root}, capsys)
        assert result["rc"] == 0 and not result.get("failed")
        assert result["findings"] == [{"probe": "rdma bandwidth", "status": "skipped", "expected": "",
                                       "actual": "perftest (ib_write_bw) not installed"}]


def test_server_phase_needs_timeout(capsys, fake_bin, fixture_root):
    result = run(rail_validate, {"probes": [_probe(role="server")], "phase": "server", "rdma_bw": True,
                                 "root": fixture_root}, capsys)
    assert [f["actual"] for f in result["findings"]] == [
        "coreutils 'timeout' not installed: a server without a client would never exit"]


def test_no_rdma_devices_or_no_peer_is_skipped(capsys, fake_bin, tmp_path, fixture_root):
    result = run(rail_validate, {"probes": [_probe()], "phase": "client", "rdma_bw": True, "root": str(tmp_path)}, capsys)
    assert [f["actual"] for f in result["findings"]] == ["no RDMA devices (/sys/class/infiniband is empty)"]
    result = run(rail_validate, {"probes": [], "phase": "client", "rdma_bw": True, "root": fixture_root}, capsys)
    assert [f["actual"] for f in result["findings"]] == [
        "no peer: the RDMA bandwidth mesh needs two or more GPU hosts in play"]


def test_client_phase_measures_and_judges_each_rail(capsys, fake_bin, tmp_path, fixture_root):
    probes = [_probe(),                                                            # 92.57 of 100: ok
              _probe(rail=1, rdma="mlx5_1", dev="rail1", address="10.100.4.1", peer_address="10.100.4.2",
                     port=18516, line_rate_gbps=400),                                # 92.57 of 400: fail
              _probe(rail=2, rdma="mlx5_2", dev="rail2", address="10.102.0.1", port=18517),  # no GID for it
              _probe(rail=3, rdma="mlx5_9", dev="rail3", port=18518),                # no such device
              _probe(role="server", peer="gpu04")]                                   # not this phase
    result = run(rail_validate, {"probes": probes, "phase": "client", "rdma_bw": True, "root": fixture_root}, capsys)
    assert result["rc"] == 0 and result["failed_probes"] == 1
    by_probe = dict((f["probe"], f) for f in result["findings"])
    assert by_probe["rdma_bw mlx5_0 (rail0) 10.100.0.1 -> gpu02 10.100.0.2:18515"]["status"] == "ok"
    slow = by_probe["rdma_bw mlx5_1 (rail1) 10.100.4.1 -> gpu02 10.100.4.2:18516"]
    assert slow["status"] == "fail" and slow["expected"] == ">= 360 Gb/s (0.9 x 400 Gb/s line rate)"
    no_gid = by_probe["rdma_bw mlx5_2 (rail2) 10.102.0.1 -> gpu02 10.100.0.2:18517"]
    assert no_gid["status"] == "skipped" and no_gid["actual"].startswith("no RoCE v2 GID for 10.102.0.1 on mlx5_2")
    assert by_probe["rdma_bw mlx5_9 (rail3) 10.100.0.1 -> gpu02 10.100.0.2:18518"]["actual"] == "RDMA device mlx5_9 not present"
    assert len(result["findings"]) == 4
    assert sorted(_argv(tmp_path)) == [
        "-d mlx5_0 -x 3 -p 18515 --report_gbits -D 5 -F 10.100.0.2",
        "-d mlx5_1 -x 3 -p 18516 --report_gbits -D 5 -F 10.100.4.2"]
    assert result["measurements"][0] == {"rail": 0, "rdma": "mlx5_0", "peer": "gpu02", "average_gbps": 92.57,
                                         "line_rate_gbps": 100}


def test_client_without_result_fails_with_the_tool_message(capsys, fake_bin, tmp_path, fixture_root, monkeypatch):
    failed = tmp_path / "refused.txt"
    failed.write_text(" Couldn't connect to 10.100.0.2:18515\n")
    monkeypatch.setenv("FAKE_OUTPUT", str(failed))
    monkeypatch.setenv("FAKE_RC", "1")
    result = run(rail_validate, {"probes": [_probe()], "phase": "client", "rdma_bw": True, "root": fixture_root}, capsys)
    assert result["failed_probes"] == 1
    assert result["findings"][0]["actual"] == "no result: Couldn't connect to 10.100.0.2:18515"
    assert result["measurements"][0]["average_gbps"] is None


def test_client_that_hangs_is_stopped_and_fails(capsys, fake_bin, fixture_root, monkeypatch):
    monkeypatch.setenv("FAKE_SLEEP", "30")
    monkeypatch.setattr(rail_validate, "CLIENT_MARGIN", 1)
    started = time.time()
    result = run(rail_validate, {"probes": [_probe(duration=1)], "phase": "client", "rdma_bw": True,
                                 "root": fixture_root}, capsys)
    assert time.time() - started < 10
    assert result["failed_probes"] == 1 and result["findings"][0]["actual"] == "no result: still running after 2s, stopped"


def test_server_phase_starts_detached_servers_that_listen(capsys, fake_bin, tmp_path, fixture_root, monkeypatch):
    if not os.path.exists("/proc/net/tcp") or not os.path.exists("/usr/bin/timeout"):
        pytest.skip("needs /proc/net/tcp and coreutils timeout")
    monkeypatch.setenv("PATH", "%s:/usr/bin:/bin" % fake_bin)
    port = _free_port()
    result = run(rail_validate, {"probes": [_probe(role="server", peer="gpu04", port=port)], "phase": "server",
                                 "rdma_bw": True, "rdma_bw_server_timeout": 20, "root": fixture_root}, capsys)
    try:
        assert result["rc"] == 0 and result["failed_probes"] == 0
        finding = result["findings"][0]
        assert finding["probe"] == "rdma_bw server mlx5_0 (rail0) port %d for gpu04" % port
        assert finding["status"] == "ok" and finding["actual"].startswith("listening (pid ")
        assert _argv(tmp_path) == ["-d mlx5_0 -x 3 -p %d --report_gbits -D 5 -F" % port]
        # a second run while that server still waits: the port is taken, nothing is started
        again = run(rail_validate, {"probes": [_probe(role="server", peer="gpu04", port=port)], "phase": "server",
                                    "rdma_bw": True, "root": fixture_root}, capsys)
        assert again["servers"] == [] and again["findings"][0]["status"] == "skipped"
        assert "already in use" in again["findings"][0]["actual"]
    finally:
        for server in result.get("servers", []):
            try:
                os.killpg(server["pid"], signal.SIGTERM)  # the timeout wrapper leads the server's session
            except OSError:
                pass
            if os.path.exists(server["log"]):
                os.remove(server["log"])


def test_server_that_exits_at_once_fails(capsys, fake_bin, tmp_path, fixture_root, monkeypatch):
    if not os.path.exists("/usr/bin/timeout"):
        pytest.skip("needs coreutils timeout")
    monkeypatch.setenv("PATH", "%s:/usr/bin:/bin" % fake_bin)
    (fake_bin / "ib_write_bw").write_text("#!/bin/sh\necho ' Couldn'\"'\"'t bind the socket'\nexit 1\n")
    started = time.time()
    result = run(rail_validate, {"probes": [_probe(role="server", port=_free_port())], "phase": "server",
                                 "rdma_bw": True, "root": fixture_root}, capsys)
    assert time.time() - started < 5
    finding = result["findings"][0]
    assert finding["status"] == "fail" and finding["actual"].startswith("exited with 1: Couldn't bind the socket (")
    os.remove(result["servers"][0]["log"])


def test_validation_probes_plans_the_mesh_with_the_ping_ring(capsys):
    result = run(validation_probes, {"fabric": lab(), "hosts": ["gpu01", "gpu02", "gpu03"], "rdma_bw_threshold": 0.8,
                                     "rdma_bw_duration": 10}, capsys)
    mesh = [p for p in result["probes"]["gpu03"] if p["kind"] == "rdma_bw"]
    assert sorted((p["role"], p["peer"], p["rail"]) for p in mesh) == sorted(
        [("client", "gpu01", r) for r in range(4)] + [("server", "gpu02", r) for r in range(4)])
    assert {(p["threshold"], p["duration"], p["line_rate_gbps"]) for p in mesh} == {(0.8, 10, 100)}
    bad = run(validation_probes, {"fabric": lab(), "hosts": ["gpu01"], "rdma_bw_threshold": 1.5}, capsys)
    assert bad["failed"] and "rdma_bw_threshold" in bad["msg"]


def test_lldp_without_a_daemon_is_not_run_not_a_missing_neighbour(capsys, tmp_path, monkeypatch):
    """lldpctl installed but lldpd not running: the neighbours were not compared (not run, required), which is not
    the same as a neighbour that is missing (failed)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    lldpctl = bindir / "lldpctl"
    lldpctl.write_text("#!/bin/sh\necho 'cannot find lldpd control socket' >&2\nexit 1\n")
    lldpctl.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    result = run(rail_validate, {"probes": [], "lldp": {"rail0": ["leaf0", "Ethernet1"]}}, capsys)
    lldp = [f for f in result["findings"] if f["probe"] == "lldp"]
    assert lldp == [{"probe": "lldp", "status": "skipped", "expected": "",
                     "actual": "lldpctl failed (is lldpd running?): cannot find lldpd control socket"}]


FAKE_PING = """#!%s
import os, sys, time
args = sys.argv[1:]
dst = args[-1]
with open(os.environ["FAKE_PING_LOG"], "a") as log:
    log.write("start %%s %%f\\n" %% (dst, time.time()))
time.sleep(0.5)
with open(os.environ["FAKE_PING_LOG"], "a") as log:
    log.write("end %%s %%f %%s\\n" %% (dst, time.time(), " ".join(args)))
lost = dst.endswith(".99")
print("PING %%s (%%s) from %%s : 8972(9000) bytes of data." %% (dst, dst, args[args.index("-I") + 1]))
print("")
print("--- %%s ping statistics ---" %% dst)
print("2 packets transmitted, %%d received, %%d%%%% packet loss, time 201ms" %% ((0, 100) if lost else (2, 0)))
if not lost:
    print("rtt min/avg/max/mdev = 0.051/0.063/0.075/0.012 ms")
sys.exit(1 if lost else 0)
"""


def test_pings_of_all_nics_run_at_once_and_are_judged_in_probe_order(capsys, tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    ping = bindir / "ping"
    ping.write_text(FAKE_PING % sys.executable)
    ping.chmod(ping.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("FAKE_PING_LOG", str(tmp_path / "ping.log"))
    probes = [{"kind": "mtu_ping", "rail": n, "dev": "rail%d" % n, "src": "10.%d.0.1" % n,
               "dst": "10.%d.0.%s" % (n, "99" if n == 2 else "2"), "peer": "gpu02", "size": 8972} for n in range(4)]
    result = run_module(rail_validate, {"probes": probes}, capsys)
    pings = [f for f in result["findings"] if f["probe"].startswith("ping ")]
    assert [f["probe"].split()[5] for f in pings] == ["10.0.0.2", "10.1.0.2", "10.2.0.99", "10.3.0.2"]
    assert [f["status"] for f in pings] == ["ok", "ok", "fail", "ok"]
    log = (tmp_path / "ping.log").read_text().splitlines()
    starts = [float(line.split()[2]) for line in log if line.startswith("start ")]
    ends = [float(line.split()[2]) for line in log if line.startswith("end ")]
    assert len(starts) == 4 and max(starts) < min(ends), "the pings ran one after another"
    assert all("-M do -s 8972 -c 2 -W 1 -I 10." in line for line in log if line.startswith("end "))


FAKE_IP = """#!/bin/sh
# logs each call, then runs the real iproute2 (the lookups below hold on any Linux host: 127/8 is local on lo)
echo "$@" >> "$FAKE_IP_LOG"
exec %s "$@"
"""


def test_route_lookups_of_a_host_run_in_one_iproute2_batch(capsys, tmp_path, monkeypatch):
    real = shutil.which("ip") or pytest.skip("iproute2 'ip' not installed")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    ip = bindir / "ip"
    ip.write_text(FAKE_IP % real)
    ip.chmod(ip.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("FAKE_IP_LOG", str(tmp_path / "ip.log"))
    probes = [{"kind": "route", "rail": 0, "dev": "lo", "src": "127.0.0.1", "dst": "127.0.0.1", "peer": "gpu02", "via": None},
              {"kind": "route", "rail": 1, "dev": "rail1", "src": "127.0.0.1", "dst": "127.0.0.5", "peer": "gpu02", "via": None},
              {"kind": "route", "rail": 2, "dev": "lo", "src": "127.0.0.1", "dst": "127.0.0.9", "peer": "gpu02",
               "via": "127.0.0.254"}]
    result = run_module(rail_validate, {"probes": probes}, capsys)
    routes = [f for f in result["findings"] if f["probe"].startswith("route ")]
    assert [f["probe"] for f in routes] == ["route 127.0.0.1 from 127.0.0.1", "route 127.0.0.5 from 127.0.0.1",
                                            "route 127.0.0.9 from 127.0.0.1"]
    assert [f["status"] for f in routes] == ["ok", "fail", "fail"], routes
    assert routes[1]["actual"] == "dev lo (on-link)" and routes[2]["expected"] == "dev lo via 127.0.0.254"
    assert (tmp_path / "ip.log").read_text().splitlines() == ["-j -force -batch -"]
