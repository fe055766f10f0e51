"""RoCE textfile collector on fixture counter trees."""
import json
import os
import re

from ansible_collections.aifabric.roce.plugins.module_utils.telemetry import roce_exporter

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "telemetry")
SAMPLE = re.compile(r'^([a-z_]+)\{((?:[a-z_]+="[^"]*",?)*)\} (-?\d+)$')


def config():
    with open(os.path.join(FIX, "config.json")) as handle:
        return json.load(handle)


def parse(text):
    samples = {}
    helps, types = set(), set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in helps
            helps.add(name)
            continue
        if line.startswith("# TYPE "):
            name = line.split()[2]
            assert name not in types and line.split()[3] in ("counter", "gauge")
            types.add(name)
            continue
        match = SAMPLE.match(line)
        assert match, line
        labels = tuple(sorted(re.findall(r'([a-z_]+)="([^"]*)"', match.group(2))))
        samples[(match.group(1), labels)] = int(match.group(3))
    assert helps == types == set(name for name, _l in samples)
    return samples


def value(samples, name, **want):
    hits = [v for (n, labels), v in samples.items() if n == name and set(want.items()) <= set(labels)]
    assert len(hits) == 1, (name, want, hits)
    return hits[0]


def run():
    return parse(roce_exporter.collect(config(), root=os.path.join(FIX, "root"),
                                       ethtool_dir=os.path.join(FIX, "ethtool"), now=1700000000))


def test_counters_and_labels_from_fixture_tree():
    s = run()
    assert value(s, "roce_pfc_pause_frames_total", rail="0", priority="3", direction="rx") == 20411
    assert value(s, "roce_pfc_pause_frames_total", rail="0", priority="3", direction="tx") == 517
    assert value(s, "roce_ecn_marked_packets_total", rail="0", leaf="leaf0", leaf_port="Ethernet1") == 1520
    assert value(s, "roce_cnp_sent_total", netdev="rail0") == 1498
    assert value(s, "roce_cnp_handled_total", rdma="mlx5_0") == 733
    assert value(s, "roce_out_of_sequence_total", host="gpu01", rail="0") == 4
    assert value(s, "roce_link_down_total", rail="0") == 3
    assert value(s, "roce_phy_link_down_total", rail="0") == 3
    assert value(s, "roce_discards_total", rail="0", direction="rx") == 12
    assert value(s, "roce_rdma_packets_total", rail="1", direction="tx") == 90
    assert value(s, "roce_collector_last_run_timestamp_seconds", host="gpu01") == 1700000000


def test_partial_and_missing_nics():
    s = run()
    assert value(s, "roce_collector_nic_up", rail="0") == 1
    assert value(s, "roce_collector_nic_up", rail="1") == 1
    assert value(s, "roce_collector_nic_up", rail="2") == 0
    assert not [k for k in s if k[0] == "roce_ecn_marked_packets_total" and ("rail", "1") in k[1]]
    assert not [k for k in s if k[0] != "roce_collector_nic_up" and ("rail", "2") in k[1]]


def test_script_writes_atomically(tmp_path):
    out = tmp_path / "roce.prom"
    rc = roce_exporter.main(["--config", os.path.join(FIX, "config.json"), "--root", os.path.join(FIX, "root"),
                             "--ethtool-dir", os.path.join(FIX, "ethtool"), "--output", str(out)])
    assert rc == 0
    assert os.listdir(str(tmp_path)) == ["roce.prom"]
    assert "roce_pfc_pause_frames_total" in out.read_text()


def test_parse_ethtool_and_label_escaping():
    assert roce_exporter.parse_ethtool("NIC statistics:\n     rx_prio3_pause: 7\n     bad: x\n") == {"rx_prio3_pause": 7}
    text = roce_exporter.collect({"host": 'we"ird', "nics": []}, root="/nonexistent", now=1)
    assert 'host="we\\"ird"' in text
