"""BGP summary show commands of the lab switch simulators (test code), printed in the formats of the real captures the
product's parsers are tested on (tests/fixtures/switches/SOURCE.md), from the running configs of the whole lab:

  EOS   show ip bgp summary vrf all | json      eos/napalm-eos-show-ip-bgp-summary-vrf-all.json
  NX-OS show bgp all summary vrf all | json     nxos/napalm-nxos-show-bgp-all-summary-vrf-all-*.json
  NVUE  nv show vrf default router bgp neighbor nvue/cl5.12-nv-show-vrf-default-router-bgp-neighbor.txt
  community SONiC  show ip bgp summary          sonic/sonic-utilities-show-ip-bgp-summary*.txt

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
    NVUE paths or CONFIG_DB (community SONiC: DEVICE_METADATA bgp_asn, BGP_NEIGHBOR, INTERFACE ``port|address``).
    AsterNOS's Easy RoCE store carries no BGP: an empty view."""
    out = {"asn": None, "router_id": None, "neighbors": {}, "addresses": []}
    if isinstance(running, dict):
        asn = ((running.get("DEVICE_METADATA") or {}).get("localhost") or {}).get("bgp_asn")
        out["asn"] = int(asn) if asn else None
        for key, entry in (running.get("BGP_NEIGHBOR") or {}).items():
            if entry.get("asn"):
                out["neighbors"][key.split("|")[-1]] = int(entry["asn"])
        for table in ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE"):
            for key in running.get(table) or {}:
                if "|" in key:
                    out["addresses"].append(ipaddress.ip_interface(key.split("|", 1)[1]))
        lo = next((a for a in out["addresses"] if a.network.prefixlen == 32), None)
        out["router_id"] = str(lo.ip) if lo else None
        return out
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
    for address in sorted(me["neighbors"], key=ipaddress.ip_address):
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
    if me["asn"] is None:   # no capture shows EOS without router bgp: an empty VRF table, which shows no session
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


SONIC_HEAD = ["Neighbhor", "V", "AS", "MsgRcvd", "MsgSent", "TblVer", "InQ", "OutQ", "Up/Down", "State/PfxRcd", "NeighborName"]
SONIC_RIGHT = set(["V", "AS", "MsgRcvd", "MsgSent", "TblVer", "InQ", "OutQ"])


def sonic_summary(dev):
    """sonic-utilities' ``show ip bgp summary`` as its own CLI tests print it: the FRR header lines, then a table whose
    columns are two wider than their header (wider where a cell is), numbers right-aligned, State/PfxRcd the prefix
    count when Established, else the state; NeighborName from BGP_NEIGHBOR ``name``."""
    me, peers = sessions(dev)
    names = dict((k.split("|")[-1], v.get("name", "")) for k, v in (dev.running.get("BGP_NEIGHBOR") or {}).items())
    rows = [[a, "4", str(asn), "0", "0", "0", "0", "0", "1d21h11m" if state == "Established" else "never",
             "0" if state == "Established" else state, names.get(a, "")] for a, asn, state in peers]
    widths = [max([len(h) + 2] + [len(r[i]) for r in rows]) for i, h in enumerate(SONIC_HEAD)]

    def line(cells):   # an empty table aligns every header left (the capture without neighbors)
        return "  ".join(c.rjust(w) if h in SONIC_RIGHT and rows else c.ljust(w)
                         for c, w, h in zip(cells, widths, SONIC_HEAD)).rstrip()
    out = ["", "IPv4 Unicast Summary:",
           "BGP router identifier %s, local AS number %s vrf-id 0" % (me["router_id"] or "0.0.0.0", me["asn"] or 0),
           "BGP table version 0", "RIB entries 0, using 0 bytes of memory", "Peers %d, using 0 KiB of memory" % len(rows),
           "Peer groups 0, using 0 bytes of memory", "", "", line(SONIC_HEAD), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows] + ["", "Total number of neighbors %d" % len(rows)]
    return "\n".join(out) + "\n"
