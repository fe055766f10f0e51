# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch intent as SONiC's CONFIG_DB tables (``TABLE`` -> ``key`` -> ``{field: string}``, composite keys joined
by ``|``): the render shared by every driver that writes CONFIG_DB (the CONFIG_DB driver family and AsterNOS's
``asternos_config: config_db`` opt-in), so neither imports the other. Each table written is declared once as a
``Table`` naming its section, which keys and fields are ours, and the source of every field; the line-source audit
(nos/sources.py) and docs/switch-commands-sources.md read those declarations.

Pure: no driver, no transaction, no session.
"""

from __future__ import annotations

import re
from collections import namedtuple

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, host_of, local_destinations, ports_of
from ansible_collections.aifabric.roce.plugins.module_utils.nos.l3plan import fabric_links, routed_host_ports, svis

# --- sources (full citations: docs/switch-commands-sources.md#community-sonic-config_db) --------------
YANG = "sonic-net/sonic-buildimage src/sonic-yang-models/yang-models/%s.yang (yanglint oracle test)"
CONF = "sonic-buildimage src/sonic-yang-models/doc/Configuration.md %s"
QOS_J2 = "sonic-buildimage files/build_templates/qos_config.j2"
BGPCFGD = ("sonic-buildimage dockers/docker-fpm-frr/frr/bgpd/templates/general/instance.conf.j2 and "
           "bgpd.main.conf.j2 (bgpcfgd renders FRR from CONFIG_DB in docker_routing_config_mode "
           "separated/unified, sonic-device_metadata.yang)")
ACLORCH = ("sonic-net/sonic-swss orchagent/aclorch.cpp `REDIRECT:<next hop>` (PR #235); CONFIG_DB form in "
           "sonic-buildimage issue #4457 (`\"PACKET_ACTION\": \"REDIRECT:100.32.0.2\"`)")

VERIFIED = "verified"
UNVERIFIED = "unverified"


# One CONFIG_DB table the render writes: the ``section`` it belongs to, ``fields`` {name: (status, source)} of the
# fields it owns, ``key_source`` the source of the key form
Table = namedtuple("Table", "name section fields key_source")


def _v(source):
    return (VERIFIED, source)


def _map(table, model):
    """A {name: {code: value}} map table: every field of an owned (AIF-) map is ours."""
    return Table(table, "qos", {}, _v(YANG % model + "; " + QOS_J2))


_WRED_FIELDS = (["ecn"] + ["%s_%s" % (c, k) for c in ("green", "yellow", "red")
                           for k in ("min_threshold", "max_threshold", "drop_probability")]
                + ["wred_%s_enable" % c for c in ("green", "yellow", "red")])
TABLES = [
    Table("PORT", "mtu", {"mtu": _v(YANG % "sonic-port" + " (mtu 1..9216); " + CONF % "Port")},
          _v(YANG % "sonic-port")),
    _map("DSCP_TO_TC_MAP", "sonic-dscp-tc-map"),
    _map("TC_TO_QUEUE_MAP", "sonic-tc-queue-map"),
    _map("TC_TO_PRIORITY_GROUP_MAP", "sonic-tc-priority-group-map"),
    _map("MAP_PFC_PRIORITY_TO_QUEUE", "sonic-pfc-priority-queue-map"),
    Table("PORT_QOS_MAP", "qos",
          dict((f, _v(YANG % "sonic-port-qos-map" + "; " + QOS_J2)) for f in (
              "dscp_to_tc_map", "tc_to_queue_map", "tc_to_pg_map", "pfc_to_queue_map", "pfc_enable", "pfcwd_sw_enable")),
          _v(YANG % "sonic-port-qos-map")),
    Table("WRED_PROFILE", "qos",
          dict((f, _v(YANG % "sonic-wred-profile" + "; " + QOS_J2 + " AZURE_LOSSLESS")) for f in _WRED_FIELDS),
          _v(YANG % "sonic-wred-profile")),
    Table("SCHEDULER", "qos", {"type": _v(YANG % "sonic-scheduler" + " (DWRR/STRICT); " + QOS_J2),
                               "weight": _v(YANG % "sonic-scheduler" + "; " + QOS_J2)},
          _v(YANG % "sonic-scheduler")),
    Table("QUEUE", "qos", {"scheduler": _v(YANG % "sonic-queue" + "; " + QOS_J2),
                           "wred_profile": _v(YANG % "sonic-queue" + "; " + QOS_J2)},
          _v(YANG % "sonic-queue" + " (`<port>|<queue>`)")),
    Table("PFC_WD", "qos", {"action": _v(YANG % "sonic-pfcwd" + "; " + CONF % "PFC_WD"),
                            "detection_time": _v(YANG % "sonic-pfcwd"), "restoration_time": _v(YANG % "sonic-pfcwd"),
                            "POLL_INTERVAL": _v(YANG % "sonic-pfcwd" + " (GLOBAL)")},
          _v(YANG % "sonic-pfcwd")),
    # lossless headroom: the dynamic buffer model sizes a "NULL" lossless PG from the port's speed and its
    # CABLE_LENGTH (Configuration.md BUFFER_PG); no xon/xoff is invented here
    Table("CABLE_LENGTH", "qos", {}, _v(YANG % "sonic-cable-length" + "; " + CONF % "Cable length")),
    Table("BUFFER_PG", "qos", {"profile": _v(YANG % "sonic-buffer-pg" + " (profile NULL); " + CONF % "BUFFER_PG " +
                                             "(dynamic buffer model: NULL = headroom calculated)")},
          _v(YANG % "sonic-buffer-pg" + " (`<port>|<pg>`)")),
    Table("ACL_TABLE", "pbr", {"type": _v(YANG % "sonic-acl" + " (L3); " + CONF % "ACL and Mirroring"),
                               "stage": _v(YANG % "sonic-acl"), "ports": _v(YANG % "sonic-acl" + " (leaf-list ports)")},
          _v(YANG % "sonic-acl")),
    Table("ACL_RULE", "pbr", {"PRIORITY": _v(YANG % "sonic-acl"), "SRC_IP": _v(YANG % "sonic-acl"),
                              "DST_IP": _v(YANG % "sonic-acl"),
                              "PACKET_ACTION": (UNVERIFIED, ACLORCH + "; FORWARD is in sonic-acl.yang, but its "
                                                "packet_action enumeration refuses `REDIRECT:<ip>`, so GCU's YANG "
                                                "check refuses the redirect rule (oracle test) unless ACL_RULE is left "
                                                "out of it (the platform's pbr opt-in, docs/platforms.md)")},
          _v(YANG % "sonic-acl" + " (`<table>|<rule>`)")),
    Table("LOOPBACK_INTERFACE", "underlay", {}, _v(YANG % "sonic-loopback-interface" + "; " + CONF % "Loopback Interface")),
    Table("INTERFACE", "underlay", {}, _v(YANG % "sonic-interface" + "; " + CONF % "Interface")),
    Table("VLAN", "underlay", {"vlanid": _v(YANG % "sonic-vlan" + "; " + CONF % "VLAN")}, _v(YANG % "sonic-vlan")),
    Table("VLAN_MEMBER", "underlay", {"tagging_mode": _v(YANG % "sonic-vlan" + "; " + CONF % "VLAN_MEMBER")},
          _v(YANG % "sonic-vlan")),
    Table("VLAN_INTERFACE", "underlay", {}, _v(YANG % "sonic-vlan" + "; " + CONF % "VLAN_INTERFACE")),
    Table("BGP_NEIGHBOR", "underlay", dict((f, _v(YANG % "sonic-bgp-neighbor" + " BGP_NEIGHBOR_TEMPLATE_LIST (\"handled "
                                                  "by bgpcfgd\"); " + BGPCFGD)) for f in
                                           ("asn", "name", "local_addr", "keepalive", "holdtime")),
          _v(YANG % "sonic-bgp-neighbor" + "; " + CONF % "BGP Sessions")),
    Table("DEVICE_METADATA", "underlay", {"bgp_asn": _v(YANG % "sonic-device_metadata" + "; " + BGPCFGD +
                                                        " (`router bgp {{ bgp_asn }}`)")},
          _v(YANG % "sonic-device_metadata" + " (localhost)")),
    Table("BGP_BBR", "underlay", {"status": (UNVERIFIED, YANG % "sonic-bgp-bbr" + "; general/peer-group.conf.j2 gives "
                                             "`neighbor PEER_V4 allowas-in 1` when BGP_BBR is enabled only on a "
                                             "DEVICE_METADATA type LeafRouter (the type is the switch's, not ours)")},
          _v(YANG % "sonic-bgp-bbr" + "; " + CONF % "BGP BBR")),
]
TABLE = dict((t.name, t) for t in TABLES)
# the map tables hold {code: value}: every field of an owned (AIF-) map is ours
MAP_TABLES = ("DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE")


# the object names we create (SONiC map names allow ``[A-Za-z0-9][-A-Za-z0-9_]{0,31}``)
DSCP_TC, TC_QUEUE, TC_PG, PFC_QUEUE = (PREFIX + n for n in ("DSCP-TC", "TC-QUEUE", "TC-PG", "PFC-QUEUE"))
ECN, SCHED_ROCE, SCHED_DEFAULT = (PREFIX + n for n in ("ECN", "ETS-ROCE", "ETS-DEFAULT"))
SCHED_STRICT, PBR = PREFIX + "STRICT", PREFIX + "PBR"


def _key(*parts):
    return "|".join(str(p) for p in parts)


# --- render ------------------------------------------------------------------------------------------
def _qos(intent, qos, port, mtu):
    ports = [port(p) for p in ports_of(intent)]
    lossless = [int(p) for p in qos["lossless_priorities"]]
    pfc = ",".join(str(p) for p in lossless)
    t = {
        "DSCP_TO_TC_MAP": {DSCP_TC: dict((str(d), str(p)) for d, p in complete_dscp_map(qos))},
        # queue = traffic class, PG = the lossless class itself or 0 (qos_config.j2 AZURE maps)
        "TC_TO_QUEUE_MAP": {TC_QUEUE: dict((str(tc), str(tc)) for tc in range(8))},
        "TC_TO_PRIORITY_GROUP_MAP": {TC_PG: dict((str(tc), str(tc if tc in lossless else 0)) for tc in range(8))},
        "MAP_PFC_PRIORITY_TO_QUEUE": {PFC_QUEUE: dict((str(p), str(p)) for p in range(8))},
    }
    colours = {}
    for colour in ("green", "yellow", "red"):
        colours.update({"%s_min_threshold" % colour: str(qos["ecn_min_kbytes"] * 1000),
                        "%s_max_threshold" % colour: str(qos["ecn_max_kbytes"] * 1000),
                        "%s_drop_probability" % colour: str(qos["ecn_probability_percent"]),
                        "wred_%s_enable" % colour: "true"})
    t["WRED_PROFILE"] = {ECN: dict(colours, ecn="ecn_all")}
    t["SCHEDULER"] = {SCHED_ROCE: {"type": "DWRR", "weight": str(qos["ets_roce_percent"])},
                      SCHED_DEFAULT: {"type": "DWRR", "weight": str(qos["ets_default_percent"])}}
    queues = {str(qos["ecn_queue"]): {"scheduler": SCHED_ROCE, "wred_profile": ECN}, "0": {"scheduler": SCHED_DEFAULT}}
    if qos.get("cnp_strict_priority"):
        t["SCHEDULER"][SCHED_STRICT] = {"type": "STRICT"}
        queues[str(qos["cnp_priority"])] = {"scheduler": SCHED_STRICT}
    binding = {"dscp_to_tc_map": DSCP_TC, "tc_to_queue_map": TC_QUEUE, "tc_to_pg_map": TC_PG,
               "pfc_to_queue_map": PFC_QUEUE, "pfc_enable": pfc}
    if qos.get("pfc_watchdog"):
        binding["pfcwd_sw_enable"] = pfc
    t["PORT_QOS_MAP"] = dict((p, dict(binding)) for p in ports)
    t["QUEUE"] = dict((_key(p, q), dict(v)) for p in ports for q, v in queues.items())
    if qos.get("pfc_watchdog"):
        t["PFC_WD"] = dict((p, {"action": "drop", "detection_time": str(qos["pfc_watchdog_detect_ms"]),
                                "restoration_time": str(qos["pfc_watchdog_restore_ms"])}) for p in ports)
        t["PFC_WD"]["GLOBAL"] = {"POLL_INTERVAL": str(qos["pfc_watchdog_poll_ms"])}
    t["CABLE_LENGTH"] = {"AZURE": dict((p, "%dm" % qos["cable_length_m"]) for p in ports)}
    t["BUFFER_PG"] = dict((_key(p, prio), {"profile": "NULL"}) for p in ports for prio in lossless)
    return t


def _mtu(intent, qos, port, mtu):
    return {"PORT": dict((port(p), {"mtu": str(mtu)}) for p in ports_of(intent))}


def pbr_rule(binding):
    """The ACL rule that redirects one binding's host source (a SONiC rule name: letters, digits, ``_``, ``-``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", "BIND-%s" % binding["server"])


def _pbr(intent, qos, port, mtu):
    """One L3 ACL table on the host ports; per binding (one host source) a FORWARD rule per local
    destination above a redirect of everything else to the binding's uplink next hop."""
    bindings = intent.get("bindings") or []
    if not bindings:
        return {}
    ingress = list(dict.fromkeys(port(b["ingress"]) for b in bindings))   # each port once, in the bindings' order
    rules = {}
    local = local_destinations(intent)
    for i, b in enumerate(bindings):
        src = "%s/32" % host_of(b["source"])
        base = 1000 + 10 * (len(bindings) - i)   # stable, unique per binding; local rules above the redirect
        rule = pbr_rule(b)
        for j, dst in enumerate(local):
            rules[_key(PBR, "%s-LOCAL%d" % (rule, j))] = {"PRIORITY": str(base + 5000), "SRC_IP": src, "DST_IP": dst,
                                                          "PACKET_ACTION": "FORWARD"}
        rules[_key(PBR, rule)] = {"PRIORITY": str(base), "SRC_IP": src, "PACKET_ACTION": "REDIRECT:%s" % b["next_hop"]}
    return {"ACL_TABLE": {PBR: {"type": "L3", "stage": "ingress", "ports": ingress}},
            "ACL_RULE": rules}


def _underlay(intent, qos, port, mtu):
    if not intent.get("bgp"):
        return {}
    bgp = intent["bgp"]
    t = {"LOOPBACK_INTERFACE": {"Loopback0": {}, _key("Loopback0", "%s/32" % intent["loopback"]): {}},
         "DEVICE_METADATA": {"localhost": {"bgp_asn": str(bgp["asn"])}}}
    intf = {}
    for p, address in fabric_links(intent):
        intf[port(p)] = {}
        intf[_key(port(p), address)] = {}
    for host in routed_host_ports(intent):
        intf[port(host["port"])] = {}
        intf[_key(port(host["port"]), host["address"])] = {}
    if intf:
        t["INTERFACE"] = intf
    for svi in svis(intent):
        vlan = "Vlan%d" % svi["vlan"]
        t.setdefault("VLAN", {})[vlan] = {"vlanid": str(svi["vlan"])}
        t.setdefault("VLAN_INTERFACE", {}).update({vlan: {}, _key(vlan, svi["address"]): {}})
        for member in svi["members"]:
            t.setdefault("VLAN_MEMBER", {})[_key(vlan, port(member))] = {"tagging_mode": "untagged"}
    local = dict((n["port"], a.split("/")[0]) for n in bgp["neighbors"] for p, a in fabric_links(intent) if p == n["port"])
    t["BGP_NEIGHBOR"] = dict((n["address"], {"asn": str(n["remote_as"]), "name": n["peer"],
                                             "local_addr": local.get(n["port"], ""),
                                             "keepalive": str(bgp["keepalive_seconds"]),
                                             "holdtime": str(bgp["hold_seconds"])}) for n in bgp["neighbors"])
    for entry in t["BGP_NEIGHBOR"].values():
        if not entry["local_addr"]:
            del entry["local_addr"]
    if bgp.get("allowas_in"):
        t["BGP_BBR"] = {"all": {"status": "enabled"}}
    return t


SECTION_RENDER = {"qos": _qos, "mtu": _mtu, "pbr": _pbr, "underlay": _underlay}


def render(intent, qos, sections, port=lambda p: p, mtu=None):
    """The switch intent as CONFIG_DB tables ({TABLE: {key: {field: str}}}; list fields as lists of
    str): the managed part only, for the wanted ``sections``. ``port`` names a plan port on the device."""
    mtu = intent["mtu"] if mtu is None else mtu
    out = {}
    for section in sections:
        for table, rows in SECTION_RENDER[section](intent, qos, port, mtu).items():
            out.setdefault(table, {}).update(rows)
    return out
