# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The routed side of one leaf/spine slice as CLI drivers (NX-OS, klish) need it, from the fields fabric/underlay.py
planned: fabric /31s, the host-facing L3 interface(s) and where the PPD policy binds. Pure."""

from __future__ import annotations


def fabric_links(intent):
    """(port, "a.b.c.d/31") of every leaf-spine link on this switch: a leaf's uplinks, a spine's
    downlinks (a spine downlink names its ``leaf``)."""
    out = [(u["port"], "%s/%d" % (u["address"], u["prefixlen"])) for u in intent.get("uplinks") or []]
    out += [(d["port"], "%s/%d" % (d["address"], d["prefixlen"])) for d in intent.get("downlinks") or [] if "leaf" in d]
    return out


def svis(intent):
    return [h for h in intent.get("host_interfaces") or [] if h["kind"] == "svi"]


def routed_host_ports(intent):
    return [h for h in intent.get("host_interfaces") or [] if h["kind"] == "routed"]


def pbr_groups(intent, svi_name):
    """[(ingress L3 interface, [bindings])]: scheme A one SVI carrying every binding (per-host source
    match), scheme B each routed host port with its own binding; a slice without ``host_interfaces``
    (older plans) keeps the binding's physical ingress port."""
    bindings = intent.get("bindings") or []
    if not bindings:
        return []
    vlans = svis(intent)
    if vlans:
        return [(svi_name(vlans[0]["vlan"]), list(bindings))]
    groups = {}
    for b in bindings:
        groups.setdefault(b["ingress"], []).append(b)
    return sorted(groups.items())
