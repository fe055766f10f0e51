"""BGP summary show commands of the lab switch simulators (test code), printed in the formats of the real captures the
product's parsers are tested on (tests/fixtures/switches/SOURCE.md), from the running configs of the whole lab:

  EOS   show ip bgp summary vrf all | json      eos/napalm-eos-show-ip-bgp-summary-vrf-all.json
  NX-OS show bgp all summary vrf all | json     nxos/napalm-nxos-show-bgp-all-summary-vrf-all-*.json
  NVUE  nv show vrf default router bgp neighbor nvue/cl5.12-nv-show-vrf-default-router-bgp-neighbor.txt

There is no BGP speaker in the lab. The simplest honest stand-in: a session is Established when this switch has
``neighbor A remote-as R`` on an address A of a subnet one of its interfaces carries, and the switch of the lab
holding address A has AS R and the reverse neighbor (this switch's address on that subnet, with this switch's AS).
Otherwise it is Active (this switch has the subnet: it keeps trying) or Idle (no interface on A's subnet). The
switches share state through the lab's state directory: every simulator's ``<root>/<device>/state.json`` (lab.py),
which each simulator rewrites on every change; the other switches' configs are read from there at each show.
"""
import glob
import ipaddress
import json
import os
import re


def _tree(running):
    return isinstance(running, list) and all(isinstance(n, list) and len(n) == 2 for n in running)


def view(running):
    """A switch's BGP as its running config has it: {asn, router_id, neighbors {address: remote AS}, addresses
    [ip_interface]}, from a CLI tree (EOS ``neighbor A remote-as R``, NX-OS ``neighbor A`` / ``remote-as R``) or
    NVUE paths. Other stores (CONFIG_DB, AsterNOS REST) carry no BGP here: an empty view."""
    out = {"asn": None, "router_id": None, "neighbors": {}, "addresses": []}
    if isinstance(running, list) and all(isinstance(p, str) for p in running):
        for p in running:
            m = re.match(r"router bgp autonomous-system (\d+)$", p)
            if m:
                out["asn"] = int(m.group(1))
            m = re.match(r"router bgp router-id (\S+)$", p)
            if m:
                out["router_id"] = m.group(1)
            m = re.match(r"vrf default router bgp neighbor (\S+) remote-as (\d+)$", p)
            if m:
                out["neighbors"][m.group(1)] = int(m.group(2))
            m = re.match(r"interface \S+ ipv4 address (\S+/\d+)$", p)
            if m:
                out["addresses"].append(ipaddress.ip_interface(m.group(1)))
        return out
    if not _tree(running):
        return out
    for line, kids in running:
        m = re.match(r"router bgp (\d+)$", line)
        if m:
            out["asn"] = int(m.group(1))
            for kid, sub in kids:
                n = re.match(r"neighbor (\S+) remote-as (\d+)$", kid)
                if n:
                    out["neighbors"][n.group(1)] = int(n.group(2))
                n = re.match(r"neighbor (\S+)$", kid)
                for skid, _x in (sub if n else []):
                    r = re.match(r"remote-as (\d+)$", skid)
                    if r:
                        out["neighbors"][n.group(1)] = int(r.group(1))
                r = re.match(r"router-id (\S+)$", kid)
                if r:
                    out["router_id"] = r.group(1)
        if line.startswith("interface "):
            for kid, _x in kids:
                a = re.match(r"ip address (\S+/\d+)$", kid)
                if a:
                    out["addresses"].append(ipaddress.ip_interface(a.group(1)))
    return out


def lab_views(dev):
    """{device: view} of every other switch in this simulator's lab (siblings of its state directory)."""
    here = getattr(dev, "state_dir", None)
    if not here:
        return {}
    out = {}
    for path in glob.glob(os.path.join(os.path.dirname(os.path.abspath(here)), "*", "state.json")):
        name = os.path.basename(os.path.dirname(path))
        if name == dev.name:
            continue
        try:
            with open(path) as fh:
                out[name] = view(json.load(fh)["running"])
        except (OSError, ValueError, KeyError):
            continue   # a switch being reset: not there this instant
    return out


def sessions(dev):
    """[(address, remote AS, state)] of this switch's configured neighbors, in the order of their addresses."""
    me = view(dev.running)
    others = lab_views(dev)
    out = []
    for address in sorted(me["neighbors"], key=lambda a: ipaddress.ip_address(a)):
        asn = me["neighbors"][address]
        ip = ipaddress.ip_address(address)
        mine = next((a for a in me["addresses"] if ip in a.network and ip != a.ip), None)
        state = "Idle"
        if mine is not None:
            state = "Active"
            for peer in others.values():
                if (any(a.ip == ip and mine.ip in a.network for a in peer["addresses"]) and peer["asn"] == asn
                        and peer["neighbors"].get(str(mine.ip)) == me["asn"]):
                    state = "Established"
        out.append((address, asn, state))
    return me, out


def eos_summary_json(dev):
    """``show ip bgp summary vrf all | json`` with napalm's EOS capture keys; ASNs as strings, as EOS prints them."""
    me, peers = sessions(dev)
    if me["asn"] is None:
        return json.dumps({"vrfs": {}}, indent=2)
    out = {}
    for address, asn, state in peers:
        out[address] = {"version": 4, "msgReceived": 0, "msgSent": 0, "inMsgQueue": 0, "outMsgQueue": 0, "asn": str(asn),
                        "prefixAccepted": 0, "prefixReceived": 0, "upDownTime": 1721080527.052693,
                        "underMaintenance": False, "peerState": state}
    return json.dumps({"vrfs": {"default": {"vrf": "default", "routerId": me["router_id"] or "0.0.0.0", "asn": str(me["asn"]),
                                            "peers": out}}}, indent=2)


def _row(rows):
    return rows[0] if len(rows) == 1 else rows   # NX-OS prints a table of one row as the row itself


def nxos_summary_json(dev):
    """``show bgp all summary vrf all | json`` as in napalm's NX-OS captures (a VRF's header row, then its row with
    the address families); None when the switch has no ``router bgp`` (NX-OS: no such command without feature bgp)."""
    me, peers = sessions(dev)
    if me["asn"] is None:
        return None
    head = {"vrf-name-out": "default", "vrf-router-id": me["router_id"] or "0.0.0.0", "vrf-local-as": str(me["asn"])}
    rows = [{"neighborid": a, "neighborversion": "4", "msgrecvd": 0, "msgsent": 0, "neighbortableversion": "0", "inq": "0",
             "outq": "0", "neighboras": str(asn), "time": "never" if state != "Established" else "P1D", "state": state,
             "prefixreceived": "0"} for a, asn, state in peers]
    saf = {"safi": 1, "af-name": "IPv4 Unicast", "tableversion": "1", "configuredpeers": str(len(rows)),
           "capablepeers": str(sum(1 for r in rows if r["state"] == "Established"))}
    if rows:
        saf["TABLE_neighbor"] = {"ROW_neighbor": _row(rows)}
    vrf = dict(head, TABLE_af={"ROW_af": {"af-id": "1", "TABLE_saf": {"ROW_saf": saf}}})
    return json.dumps({"TABLE_vrf": {"ROW_vrf": [head, vrf]}}, indent=2)


NVUE_LEGEND = ["", "AS - Remote Autonomous System, PeerEstablishedTime - Peer established time in",
               "UTC format, UpTime - Uptime in milliseconds, Afi-Safi - Address family, PfxSent",
               "- Transmitted prefix counter, PfxRcvd - Recieved prefix counter", ""]
NVUE_HEAD = ["Neighbor", "AS", "State", "PeerEstablishedTime", "UpTime", "MsgRcvd", "MsgSent", "Afi-Safi", "PfxSent",
             "PfxRcvd"]


def nvue_neighbor_table(dev):
    """``nv show vrf default router bgp neighbor`` in the Cumulus Linux 5.12 layout: columns as wide as their widest
    cell, lower-case states, the AS and established time blank while a session is down (one ipv4-unicast line each)."""
    _me, peers = sessions(dev)
    if not peers:
        return ""
    rows = []
    for address, asn, state in peers:
        up = state == "Established"
        rows.append([address, str(asn) if up else "", state.lower(), "2025-01-26T15:28:11Z" if up else "", "27073000",
                     "0", "0", "ipv4-unicast", "0" if up else "", "0" if up else ""])
    widths = [max(len(r[i]) for r in rows + [NVUE_HEAD]) for i in range(len(NVUE_HEAD))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(NVUE_HEAD, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(NVUE_LEGEND + lines)
