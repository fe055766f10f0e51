"""GOR's inputs: GOM events (docs/gom.md, schema aifabric.gom.event/1) and Alertmanager alerts -> link states, drains."""
import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.gor import events

FABRIC = "leaf0:Ethernet8>spine1:Ethernet1"
HOST = "gpu01:rail0>leaf0:Ethernet0"


def gom(kind, link, cls, **kw):
    base = {"schema": events.SCHEMA, "id": "r1-%d" % len(kw), "fault_id": "r1-1", "kind": kind, "link": link,
            "link_class": cls, "loss": 1.0, "first_loss": 100.0, "detected": 100.4, "localised": 100.9, "cleared": None}
    base.update(kw)
    return base


def test_gom_fabric_fault_congestion_and_recovery():
    out = events.from_gom([gom("link_fault", FABRIC, "leaf_up")])
    assert out["links"] == [{"link": FABRIC, "state": "bad", "since": 100.0, "event": "r1-1"}] and out["drains"] == []
    assert events.from_gom([gom("link_fault", FABRIC, "spine_down", loss=0.02)])["links"][0]["state"] == "congested"
    down = events.from_gom([gom("link_down", FABRIC, "leaf_up", loss=None, first_loss=None, detected=120.0)])
    assert down["links"] == [{"link": FABRIC, "state": "bad", "since": 120.0, "event": "r1-1"}]
    later = events.from_gom([gom("link_fault", FABRIC, "leaf_up"), gom("recovered", FABRIC, "leaf_up", cleared=160.0)])
    assert later["links"] == [{"link": FABRIC, "state": "healthy", "since": 160.0, "event": "r1-1"}]


def test_gom_host_faults_drain_the_host_end():
    out = events.from_gom([gom("link_fault", HOST, "host_up"),
                           gom("link_fault", "leaf1:Ethernet0>gpu02:rail1", "host_down", fault_id="r1-2")])
    assert out["drains"] == [{"id": "r1-1", "link": HOST, "node": "gpu01", "status": "firing"},
                             {"id": "r1-2", "link": "leaf1:Ethernet0>gpu02:rail1", "node": "gpu02", "status": "firing"}]
    assert events.from_gom([gom("recovered", HOST, "host_up", cleared=9.0)])["drains"][0]["status"] == "resolved"


def test_maintenance_and_unlocalised_never_act_and_switch_faults_mark_every_link():
    out = events.from_gom([gom("maintenance", FABRIC, "leaf_up"), gom("unlocalised", None, None)])
    assert out["links"] == [] and out["drains"] == [] and len(out["ignored"]) == 2
    sw = gom("switch_fault", None, None, switch="spine1", links=[FABRIC, "spine1:Ethernet1>leaf0:Ethernet8"])
    assert [x["state"] for x in events.from_gom([sw])["links"]] == ["bad", "bad"]
    with pytest.raises(events.EventError, match="schema"):
        events.from_gom([{"kind": "link_fault"}])
    with pytest.raises(events.EventError, match="link_class"):
        events.from_gom([gom("link_fault", FABRIC, "sideways")])


def test_alertmanager_payload_and_rulebook_event():
    payload = {"version": "4", "status": "firing", "alerts": [
        {"status": "firing", "labels": {"alertname": "GomLinkFault", "link": FABRIC, "link_class": "leaf_up"},
         "startsAt": "2026-11-28T20:04:23.5Z", "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "abc123"},
        {"status": "resolved", "labels": {"alertname": "GomLinkFault", "link": HOST, "link_class": "host_up",
                                          "fault_id": "r1-9"},
         "startsAt": "2026-11-28T20:00:00Z", "endsAt": "2026-11-28T20:05:00+00:00", "fingerprint": "def"},
        {"status": "firing", "labels": {"alertname": "RoceSwitchPauseStorm"}}]}
    out = events.read(payload)
    assert out["links"] == [{"link": FABRIC, "state": "bad", "since": 1795896263.5, "event": "abc123"}]
    assert out["drains"] == [{"id": "r1-9", "link": HOST, "node": "gpu01", "status": "resolved"}]
    assert len(out["ignored"]) == 1
    assert events.read({"alert": payload["alerts"][0], "meta": {}})["links"] == out["links"]
    assert events.read(gom("link_fault", HOST, "host_up"))["drains"][0]["node"] == "gpu01"
    assert events.read([]) == {"links": [], "drains": [], "ignored": []}
    # GomSwitchFault: one alert per failing link of the switch (monitoring/gom-alerts.yml), each steerable
    switch = {"version": "4", "alerts": [
        {"status": "firing", "labels": {"alertname": "GomSwitchFault", "switch": "spine1", "link": link, "link_class": cls},
         "startsAt": "2026-11-28T20:04:23.5Z", "fingerprint": "s%d" % n}
        for n, (link, cls) in enumerate(((FABRIC, "leaf_up"), ("spine1:Ethernet1>leaf0:Ethernet8", "spine_down")))]}
    assert [(x["link"], x["state"]) for x in events.read(switch)["links"]] == [
        (FABRIC, "bad"), ("spine1:Ethernet1>leaf0:Ethernet8", "bad")]
    with pytest.raises(events.EventError, match="RFC 3339"):
        events.epoch("yesterday")
