"""GOM agent and collector service (issue 38 steps 2-3) over real sockets on this machine's loopback: probes sent
with the planned source port and DSCP, answered and echoed, batched to the collector every 100 ms; bounded queue
that drops the oldest batches (and counts them) while the collector is away; the collector's metrics and events."""
import json
import socket
import threading
import time
import urllib.request

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.gom import agent as gom_agent
from ansible_collections.aifabric.roce.plugins.module_utils.gom.collector import (
    Service, read_markers, read_silences)
from ansible_collections.aifabric.roce.plugins.module_utils.gom.localise import Localiser, Topology
from ansible_collections.aifabric.roce.plugins.module_utils.nos.devicelock import new_tag


def free_port(kind=socket.SOCK_DGRAM):
    sock = socket.socket(socket.AF_INET, kind)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def two_hosts(collector, dport, sport):
    """Host a (127.0.0.2) probes host b (127.0.0.3): probe 0 a->b, probe 1 b->a."""
    probes = [{"id": 0, "src_address": "127.0.0.2", "dst_address": "127.0.0.3", "udp_sport": sport, "udp_dport": dport,
               "src_rdma": "mlx5_0"},
              {"id": 1, "src_address": "127.0.0.3", "dst_address": "127.0.0.2", "udp_sport": sport + 1, "udp_dport": dport}]
    base = {"collector": collector, "rate": 20, "dport": dport}
    return (dict(base, host="a", addresses=["127.0.0.2"], probes=[probes[0]]),
            dict(base, host="b", addresses=["127.0.0.3"], probes=[probes[1]]))


def tiny_topology():
    plan = {"hosts": {"a": {"nics": [{"netdev": "n0", "rail": 0, "address": "127.0.0.2", "leaf": "l0", "leaf_port": "p1"}]},
                      "b": {"nics": [{"netdev": "n0", "rail": 0, "address": "127.0.0.3", "leaf": "l0", "leaf_port": "p2"}]}},
            "leafs": {"l0": {"bindings": []}}}
    probes = [{"id": 0, "src_host": "a", "dst_host": "b", "path": ["a:n0>l0:p1", "l0:p2>b:n0"]},
              {"id": 1, "src_host": "b", "dst_host": "a", "path": ["b:n0>l0:p2", "l0:p1>a:n0"]}]
    return Topology(plan, probes)


def test_config_errors_name_the_key():
    for bad, key in (({"host": "", "collector": "x:1"}, "host"), ({"host": "h", "collector": "x:1", "dport": 0}, "dport"),
                     ({"host": "h", "collector": "x:1", "rate": 0}, "rate"),
                     ({"host": "h", "collector": "x:1", "transport": "rdma_ud"}, "transport"),
                     ({"host": "h", "collector": "x:1", "probes": [{"id": 1}]}, "probes[0].src_address")):
        with pytest.raises(ValueError, match=key.replace("[", r"\[").replace("]", r"\]")):
            gom_agent.check_config(bad)
    assert gom_agent.check_config({"host": "h", "collector": "x:1"})["dport"] == 4792


def test_boost_requests_are_bounded_by_the_agents_own_limits():
    agent = gom_agent.Agent({"host": "a", "collector": "unix:/nonexistent", "rate": 10, "boost_max_probes": 2,
                             "boost_seconds": 3, "boost_rate": 50})
    for pid in range(4):
        agent.probes.append({"id": pid, "next": 10.0, "seq": 0, "boost_until": 0.0, "boost_interval": 0.1})
        agent.by_id[pid] = agent.probes[-1]
    applied = agent.boost({"boost": [[0, 1000, 60], [1, 20, 1], [2, 100, 5], [9, 100, 5], ["x"]]}, now=1.0)
    assert applied == 2 and agent.errors["boost_refused"] == 1 and agent.errors["bad_command"] == 1
    # capped at boost_rate and boost_seconds; the first boosted send is due at once
    assert agent.probes[0]["boost_interval"] == 1 / 50.0 and agent.probes[0]["boost_until"] == 4.0
    assert agent.probes[1]["boost_interval"] == 1 / 20.0 and agent.probes[1]["next"] == 1.05
    assert agent.probes[2]["boost_until"] == 0.0          # a third probe at once: refused (boost_max_probes)
    with pytest.raises(ValueError, match="boost_rate"):
        gom_agent.check_config({"host": "h", "collector": "x:1", "rate": 20, "boost_rate": 10})
    assert gom_agent.check_config({"host": "h", "collector": "x:1", "rate": 200})["boost_rate"] == 200


def test_a_packet_the_host_could_not_send_is_not_reported_sent():
    class Full(object):
        calls = 0

        def sendto(self, data, dst):
            Full.calls += 1
            if Full.calls == 2:
                raise BlockingIOError(11, "Resource temporarily unavailable")
    agent = gom_agent.Agent({"host": "a", "collector": "unix:/nonexistent", "rate": 10})
    agent.probes.append({"id": 3, "sock": Full(), "dst": ("127.0.0.1", 9), "seq": 0, "next": 0.0, "boost_until": 0.0,
                         "boost_interval": 0.1})
    for step in range(3):
        agent.send_due(step * 0.1)
    # three tries, the second refused by the kernel: two packets sent, numbered 1 and 2, and the error counted
    assert agent.tx == {3: 2} and agent.probes[0]["seq"] == 2 and agent.errors["send_EAGAIN"] == 1


def test_packet_and_ranges():
    data = gom_agent.pack(gom_agent.REQUEST, 7, 9, 123)
    assert len(data) == gom_agent.PAYLOAD and gom_agent.unpack(data) == (1, 7, 9, 123)
    assert gom_agent.unpack(b"XXXX" + data[4:]) is None
    assert gom_agent.ranges({5, 1, 2, 3, 7}) == [[1, 3], [5, 5], [7, 7]]


def test_outbox_drops_oldest_and_counts():
    box = gom_agent.Outbox(3)
    for n in range(5):
        box.put(b"%d\n" % n)
    assert list(box.queue) == [b"2\n", b"3\n", b"4\n"] and box.dropped == 2


def test_rdma_ud_is_detected_on_a_fake_pyverbs_and_udp_is_used():
    class Dev(object):
        def __init__(self, name):
            self.name = name

    class Verbs(object):
        @staticmethod
        def get_device_list():
            return [Dev(b"mlx5_0")]
    assert gom_agent.rdma_ud_available({"src_rdma": "mlx5_0"}, lambda: Verbs)
    assert not gom_agent.rdma_ud_available({"src_rdma": "mlx5_9"}, lambda: Verbs)

    def missing():
        raise ImportError("no pyverbs")
    assert not gom_agent.rdma_ud_available({"src_rdma": "mlx5_0"}, missing)


def test_agents_probe_answer_and_report_to_the_collector(tmp_path):
    sock_path = str(tmp_path / "ingest.sock")
    dport, sport = free_port(), free_port()
    loc = Localiser(tiny_topology(), rate=20)
    service = Service(loc, events_path=str(tmp_path / "events.jsonl"))
    service.listen("unix:" + sock_path)
    http_port = free_port(socket.SOCK_STREAM)
    server = service.serve_http("127.0.0.1:%d" % http_port)
    a_conf, b_conf = two_hosts("unix:" + sock_path, dport, sport)

    def no_pyverbs():
        raise ImportError("no pyverbs here")
    agents = [gom_agent.Agent(a_conf, verbs_loader=no_pyverbs), gom_agent.Agent(b_conf)]
    done = threading.Event()
    threads = [threading.Thread(target=a.run, kwargs={"stop": done.is_set}) for a in agents]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.3)
        # the planned source port and the RoCE DSCP on the probe socket
        probe_sock = agents[0].probes[0]["sock"]
        assert probe_sock.getsockname() == ("127.0.0.2", sport)
        assert probe_sock.getsockopt(socket.IPPROTO_IP, socket.IP_TOS) == 26 << 2
        service.run(seconds=1.5)
        assert loc.counters["received"] >= 15 and loc.counters["lost"] == 0 and loc.counters["batches"] >= 20
        assert loc.link_rtt("a:n0>l0:p1")["p50"] < 100
        metrics = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % http_port, timeout=5).read().decode()
        assert 'gom_link_state{from="a",gpus="a:n0",link="a:n0>l0:p1",link_class="host_up",to="l0"} 0.0' in metrics
        assert "gom_probe_packets_total{result=\"lost\"} 0.0" in metrics
        # host b stops answering: probe 0's packets are lost, b's link named
        agents[1].selector.unregister(agents[1].sockets[0])
        service.run(seconds=1.5)
        assert loc.counters["lost"] >= 5
        # adaptive confirmation: the collector asked a, on its own connection, to send probe 0 faster
        assert service.boost_sent >= 1 and agents[0].boosts >= 1 and agents[0].probes[0]["boost_interval"] == 0.01
        events = [json.loads(line) for line in open(str(tmp_path / "events.jsonl"))]
        # this two-host plan cannot tell a's host link from b's (one probe crosses both): the event says so
        assert [e["kind"] for e in events] == ["unlocalised"] and events[0]["candidates"] == [["a:n0>l0:p1"], ["l0:p2>b:n0"]]
        body = urllib.request.urlopen("http://127.0.0.1:%d/events" % http_port, timeout=5).read().decode()
        assert json.loads(body.splitlines()[0])["id"] == events[0]["id"]
    finally:
        done.set()
        for thread in threads:
            thread.join(5)
        server.shutdown()
    assert agents[0].transports == {"udp": 1}


def test_agent_survives_a_collector_outage_and_reports_its_drops(tmp_path):
    sock_path = str(tmp_path / "late.sock")
    dport, sport = free_port(), free_port()
    a_conf, _b = two_hosts("unix:" + sock_path, dport, sport)
    a_conf["max_batches"] = 5
    agent = gom_agent.Agent(a_conf)
    agent.run(seconds=1.2)                      # no collector: ~12 batches made, 5 kept
    assert agent.outbox.dropped >= 6 and len(agent.outbox.queue) <= 5
    loc = Localiser(tiny_topology(), rate=20)
    service = Service(loc)
    service.listen("unix:" + sock_path)
    thread = threading.Thread(target=agent.run, kwargs={"seconds": 1.5})
    agent.link.next_try = 0.0
    thread.start()
    service.run(seconds=1.5)
    thread.join(5)
    assert loc.dropped["a"] >= 6
    assert loc.counters["batches"] >= 10


def test_maintenance_from_lock_markers_drain_records_and_silences(tmp_path):
    now = time.time()
    assert read_markers(str(tmp_path), now) is None
    tag = new_tag(now)
    (tmp_path / ("aifabric-lock." + tag)).write_text("controller=c machine=m user=u\n")
    found = read_markers(str(tmp_path), now)
    assert found["by"] == "lock" and tag in found["holder"]
    assert read_markers(str(tmp_path), now + 3600, ttl=1800) is None      # stale: not renewed within the TTL
    (tmp_path / ("aifabric-lock." + tag + "-d")).write_text("")
    assert read_markers(str(tmp_path), now + 3600)["by"] == "drain"       # a drain record holds until undone
    silences = tmp_path / "silences.json"
    silences.write_text(json.dumps([{"switch": "leaf0", "until": now + 60, "reason": "cable swap"},
                                    {"switch": "leaf1", "until": now - 1}]))
    assert read_silences(str(silences), now) == {"leaf0": {"by": "silence", "holder": "cable swap", "since": None}}
    assert read_silences(str(tmp_path / "none.json"), now) == {}
    # the service holds a switch under maintenance while its records live, then until its probes are clean for a
    # second since they ended (routes settled), at most ``linger`` seconds
    markers = tmp_path / "l0"
    markers.mkdir()
    (markers / ("aifabric-lock." + tag)).write_text("")
    loc = Localiser(tiny_topology(), rate=10)
    service = Service(loc, markers={"l0": str(markers)}, linger=10.0)
    service.refresh_maintenance(now)
    assert loc.maintenance["l0"]["by"] == "lock"
    (markers / ("aifabric-lock." + tag)).unlink()
    sent = 0
    for step in range(1, 80):       # probe 0 (a -> b, through l0) loses everything until now + 3, then is clean
        t = now + step * 0.1
        sent += 1
        loc.ingest({"host": "a", "tx": [[0, sent]]}, t)
        loc.ingest({"host": "b", "rx": [[0, [[sent, sent]]]] if t > now + 3 else []}, t)
        loc.tick(t)
        service.refresh_maintenance(t)
        if t < now + 3.5:
            assert loc.maintenance["l0"]["ended"] == now, t      # lossy since the record went: not settled
        if t > now + 5:
            assert "l0" not in loc.maintenance, t                 # clean for a second: settled (< linger)
    (markers / ("aifabric-lock." + tag)).write_text("")
    service.refresh_maintenance(now + 20)
    (markers / ("aifabric-lock." + tag)).unlink()
    loc.ingest({"host": "a", "tx": [[0, sent + 200]]}, now + 21)   # every packet from now on lost
    for step in range(1, 130):
        t = now + 20 + step * 0.1
        loc.ingest({"host": "b"}, t)
        service.refresh_maintenance(t)
        loc.tick(t)
    assert "l0" not in loc.maintenance                            # never settled: released at linger
