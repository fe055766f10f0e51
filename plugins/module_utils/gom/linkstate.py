# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GOM's link-state feed: which ports a switch reports down, from iproute2's JSON (``ip -j link show``).

A leaf-spine cable that goes down loses no probe for long: the kernel (or the ASIC) drops the routes through a
port without carrier and BGP withdraws them, so the probes take a sibling link at once. What still tells the
operator is the switch's own port state. On a Linux-based NOS (SONiC, Cumulus/NVUE, FRR on Linux; the twin's
routers) ``ip -j link show`` prints one object per netdev: ``ifname``, ``flags`` (``UP`` administratively up,
``LOWER_UP`` carrier, ``NO-CARRIER``) and ``operstate`` (RFC 2863 names as iproute2 prints them: ``UNKNOWN``,
``NOTPRESENT``, ``DOWN``, ``LOWERLAYERDOWN``, ``TESTING``, ``DORMANT``, ``UP``; iproute2 ip/ipaddress.c
``oper_states``). Witnesses: iproute2's own output on the twin's routers (tests/integration/twin) and the captured
shape in a public mock of ``ip --json`` (docs/gom.md names it). Pure: no Ansible, no subprocess.
"""
from __future__ import annotations

import json

DOWN_STATES = ("DOWN", "LOWERLAYERDOWN", "NOTPRESENT")


class LinkStateError(ValueError):
    """Output that is not ``ip -j link show`` (the message says what was expected)."""


def ports_down(text, ports=None):
    """The set of netdevs ``text`` (``ip -j link show`` JSON) shows down: administratively down (no ``UP``
    flag), without carrier (``NO-CARRIER``, or no ``LOWER_UP``), or an operstate of DOWN, LOWERLAYERDOWN or
    NOTPRESENT. ``ports``: only those names (a planned port the output does not list is not judged: a name
    the switch spells otherwise must not read as a cable down)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LinkStateError("not JSON (expected the output of `ip -j link show`): %s" % exc)
    if not isinstance(data, list):
        raise LinkStateError("expected a JSON list of links (`ip -j link show`), got %s" % type(data).__name__)
    down = set()
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("ifname"), str):
            continue
        name = entry["ifname"]
        flags = entry.get("flags") if isinstance(entry.get("flags"), list) else []
        state = str(entry.get("operstate") or "UNKNOWN").upper()
        if "UP" not in flags or "NO-CARRIER" in flags or "LOWER_UP" not in flags or state in DOWN_STATES:
            down.add(name)
    if ports is None:
        return down
    return down & set(ports)
