# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What GOR acts on, from GOM's events (docs/gom.md, schema ``aifabric.gom.event/1``) or Alertmanager's alerts.

Pure functions; docs/gor.md documents the mapping.

* A ``link_fault`` of class ``leaf_up`` or ``spine_down`` is a fabric link for steering: state ``bad`` when the
  link lost everything (loss 1.0), else ``congested``; since ``first_loss`` (GOM's send time of the first lost
  probe packet: the steer time is measured from it). A ``switch_fault`` makes each of its links bad.
* A ``link_fault`` of class ``host_up`` or ``host_down`` drains the host's scheduler node (the host end of the
  link); its ``recovered`` event resumes it.
* A ``link_down`` (a leaf-spine port its switch reports down) makes the link bad since ``detected``.
* ``recovered`` makes the link healthy since ``cleared``. ``maintenance`` and ``unlocalised`` never act: GOM
  reports this collection's own changes as maintenance, and an unlocalised fault names no link to act on.
* Alertmanager (webhook JSON, version 4): each alert's labels carry ``link`` and ``link_class`` (GOM's
  ``gom_link_state`` series); ``firing`` is a fault since ``startsAt``, ``resolved`` healthy since ``endsAt``;
  the event id is the alert's ``fault_id`` label when present, else its fingerprint.
"""
from __future__ import annotations

import datetime
import re

SCHEMA = "aifabric.gom.event/1"
FABRIC_CLASSES = ("leaf_up", "spine_down")
HOST_CLASSES = ("host_up", "host_down")
_RFC3339 = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$")


class EventError(ValueError):
    """An event GOR cannot read (the message names it and the fix)."""


def _host_end(link, link_class):
    """The host of a host link: the source end of host_up (host->leaf), the destination end of host_down."""
    ends = link.split(">")
    if len(ends) != 2:
        raise EventError("link %r is not <device>:<port>><device>:<port>" % link)
    return ends[0 if link_class == "host_up" else 1].split(":", 1)[0]


def from_gom(events):
    """{'links': [steer link states], 'drains': [{id, link, node, status}], 'ignored': [why]} from GOM events.

    A later event about the same link overrides an earlier one (events in stream order)."""
    links = {}
    drains = {}
    ignored = []
    for index, event in enumerate(events):
        if not isinstance(event, dict) or event.get("schema") != SCHEMA:
            raise EventError("events[%d]: not a GOM event (schema %s). Fix: pass the collector's events.jsonl lines"
                             % (index, SCHEMA))
        kind, link, cls = event.get("kind"), event.get("link"), event.get("link_class")
        ident = event.get("fault_id") or event.get("id")
        if kind in ("maintenance", "unlocalised"):
            ignored.append("%s %s: %s, not acted on" % (event.get("id"), kind, link or event.get("switch") or ""))
            continue
        if kind == "switch_fault":
            for name in event.get("links") or []:
                links[name] = {"link": name, "state": "bad", "since": _since(event), "event": ident}
            continue
        if kind not in ("link_fault", "link_down", "recovered"):
            raise EventError("events[%d].kind %r: one of link_fault, link_down, switch_fault, maintenance, unlocalised, "
                             "recovered" % (index, kind))
        if cls in FABRIC_CLASSES:
            if kind == "recovered":
                links[link] = {"link": link, "state": "healthy", "since": float(event["cleared"]), "event": ident}
            else:
                state = "bad" if kind == "link_down" or float(event.get("loss") or 0) >= 1.0 else "congested"
                links[link] = {"link": link, "state": state, "since": _since(event), "event": ident}
        elif cls in HOST_CLASSES:
            drains[link] = {"id": ident, "link": link, "node": _host_end(link, cls),
                            "status": "resolved" if kind == "recovered" else "firing"}
        else:
            raise EventError("events[%d].link_class %r: one of %s" % (index, cls, ", ".join(FABRIC_CLASSES + HOST_CLASSES)))
    return {"links": [links[k] for k in sorted(links)], "drains": [drains[k] for k in sorted(drains)],
            "ignored": ignored}


def _since(event):
    value = event.get("first_loss") or event.get("detected")
    if value is None:
        raise EventError("event %s has neither first_loss nor detected" % event.get("id"))
    return float(value)


def epoch(text):
    """RFC 3339 time (Alertmanager's startsAt/endsAt) -> epoch seconds."""
    match = _RFC3339.match(text or "")
    if not match:
        raise EventError("time %r is not RFC 3339 (e.g. 2026-11-28T20:04:23.5Z)" % text)
    zone = "+00:00" if match.group(3) == "Z" else match.group(3)
    stamp = datetime.datetime.fromisoformat(match.group(1) + zone)
    return stamp.timestamp() + (float(match.group(2)) if match.group(2) else 0.0)


def from_alertmanager(payload):
    """The same as from_gom, from an Alertmanager webhook payload (or one alert of it)."""
    alerts = payload.get("alerts") if "alerts" in payload else [payload]
    links = {}
    drains = {}
    ignored = []
    for alert in alerts:
        labels = alert.get("labels") or {}
        link, cls = labels.get("link"), labels.get("link_class")
        ident = labels.get("fault_id") or alert.get("fingerprint") or labels.get("alertname", "alert")
        firing = alert.get("status") == "firing"
        if not link or cls not in FABRIC_CLASSES + HOST_CLASSES:
            ignored.append("%s: no link/link_class label GOR acts on" % labels.get("alertname"))
            continue
        if cls in HOST_CLASSES:
            drains[link] = {"id": ident, "link": link, "node": _host_end(link, cls),
                            "status": "firing" if firing else "resolved"}
            continue
        if firing:
            state = labels.get("gor_state") if labels.get("gor_state") in ("bad", "congested") else "bad"
            links[link] = {"link": link, "state": state, "since": epoch(alert.get("startsAt")), "event": ident}
        else:
            links[link] = {"link": link, "state": "healthy", "since": epoch(alert.get("endsAt")), "event": ident}
    return {"links": [links[k] for k in sorted(links)], "drains": [drains[k] for k in sorted(drains)],
            "ignored": ignored}


def read(data):
    """from_gom or from_alertmanager, by shape: a list of GOM events, one GOM event, an Alertmanager payload
    (``alerts``), one alert (``labels``), or an ansible-rulebook event from the alertmanager source (``alert``)."""
    if isinstance(data, dict) and isinstance(data.get("alert"), dict):
        return from_alertmanager({"alerts": [data["alert"]]})
    if isinstance(data, dict) and ("alerts" in data or "labels" in data):
        return from_alertmanager(data)
    if isinstance(data, dict):
        return from_gom([data])
    if isinstance(data, list) and data and all(isinstance(d, dict) and "labels" in d for d in data):
        return from_alertmanager({"alerts": data})
    if isinstance(data, list):
        return from_gom(data)
    raise EventError("GOR reads GOM events (a list or one), an Alertmanager payload or alert, or a rulebook event; "
                     "got %s" % type(data).__name__)
