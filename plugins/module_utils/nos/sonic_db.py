# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Community SONiC over CONFIG_DB (platform ``community_sonic``): the intent as CONFIG_DB tables (nos/sonic_tables.py,
shared with AsterNOS's opt-in), read back from ``show runningconfiguration all`` (sonic-utilities show/main.py: CONFIG_DB
as JSON), changed by RFC 6902 JSON Patch (``config apply-patch``, generic_config_updater: nos/gcu.py). This module is
what community SONiC adds: which keys and fields of a read-back are ours, the fit to the switch's buffer model, the
brownfield items and the readers of its own show output. Canonical text (nos/configdb.py ``text``) is only the
comparable view; the offline artifact and the device exchange JSON.
"""

from __future__ import annotations

import json
import re

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.nos.configdb import (
    CANONICAL, commands as configdb_commands, device_patch, device_view, field_text, patch, patch_ops, tables_of, text)
from ansible_collections.aifabric.roce.plugins.module_utils.nos.gcu import GcuTxn, flapping_ports
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX, SECTIONS, Driver, ports_of
from ansible_collections.aifabric.roce.plugins.module_utils.nos.l3plan import svis
from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state, counters as roce_counters, ppd_state, sources
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drain import DrainSetting
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Read
from ansible_collections.aifabric.roce.plugins.module_utils.nos.takeover import _item
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sonic_tables import (  # noqa: F401 - TABLES: the oracle test's
    MAP_TABLES, PBR, TABLE, TABLES, pbr_rule, render)


# --- what is ours on read-back ----------------------------------------------------------------------
def _ownership(table, key, row, intent, sections, planned):
    """The fields of one CONFIG_DB row ``table|key`` that are ours ('*' = the whole key), or None. ``planned``: the
    plan's port names, computed once per read."""
    spec = TABLE.get(table)
    if spec is None or spec.section not in sections:
        return None
    first = key.split("|")[0]
    if table in MAP_TABLES or table in ("WRED_PROFILE", "SCHEDULER", "ACL_TABLE", "ACL_RULE"):
        return "*" if key.startswith(PREFIX) else None
    if table in ("PORT", "PORT_QOS_MAP"):
        return set(spec.fields) if key in planned else None
    if table == "PFC_WD":
        if key == "GLOBAL":
            return {"POLL_INTERVAL"}
        return set(spec.fields) - {"POLL_INTERVAL"} if key in planned else None
    if table == "BUFFER_PG":   # not the switch's own PG (PG 0's lossy profile, a template's `3-4`, buffermgrd's rows)
        return set(spec.fields) if first in planned and _our_pg(key, row) else None
    if table == "QUEUE":
        if not isinstance(row, dict) or first not in planned:
            return None
        # a plan port's queue: the fields that name our AIF- objects (the switch's own scheduler.N on the other queues
        # stays the switch's). Known limit: a queue we configure that held the switch's own scheduler has it replaced;
        # the GCU rollback brings it back only when this run fails (nos/gcu.py)
        return set(f for f in ("scheduler", "wred_profile") if str(row.get(f, "")).startswith(PREFIX)) or None
    if table == "CABLE_LENGTH":
        return planned if key == "AZURE" else None
    if table == "INTERFACE":
        return "*" if first in planned else None
    if table == "LOOPBACK_INTERFACE":
        return "*" if first == "Loopback0" else None
    if table in ("VLAN", "VLAN_INTERFACE", "VLAN_MEMBER"):
        return "*" if first in set("Vlan%d" % s["vlan"] for s in svis(intent)) else None
    if table == "BGP_NEIGHBOR":
        return "*" if first == key else None   # the default-VRF sessions are the plan's whole
    # DEVICE_METADATA|localhost bgp_asn, BGP_BBR|all status
    return set(spec.fields) if key == {"DEVICE_METADATA": "localhost", "BGP_BBR": "all"}.get(table) else None


def _our_pg(key, row):
    """A BUFFER_PG row this driver writes: one PG (``<port>|3``, never a range) with the dynamic model's ``NULL``."""
    return isinstance(row, dict) and row.get("profile") == "NULL" and re.match(r"^[^|]+\|\d+$", key) is not None


# --- the switch's buffer model -------------------------------------------------------------------------------------
# DEVICE_METADATA|localhost buffer_model (sonic-buildimage files/build_templates/init_cfg.json.j2: "dynamic" only where
# the build sets SONIC_BUFFER_MODEL=dynamic, platform/mellanox/rules.mk and platform/barefoot/rules.mk; buffermgrd.sh
# starts the traditional buffermgrd otherwise)
TRADITIONAL = "traditional"   # the other model is "dynamic"
# what the traditional buffermgrd writes into CONFIG_DB from PORT_QOS_MAP pfc_enable, CABLE_LENGTH and the port speed
# (sonic-swss cfgmgr/buffermgr.cpp BufferMgr::doSpeedUpdateTask: `pg_lossless_<speed>_<cable>_profile` and
# BUFFER_PG|<port>|<pfc_enable PGs>): derived state, neither ours nor the operator's
DERIVED_PROFILE = re.compile(r"^pg_lossless_\S+_profile$")


def buffer_model(config):
    return ((config.get("DEVICE_METADATA") or {}).get("localhost") or {}).get("buffer_model") or TRADITIONAL


def derived(config, table, key, row):
    """A row buffermgrd writes itself in the traditional model (not compared: it follows pfc_enable)."""
    if buffer_model(config) != TRADITIONAL:
        return False
    if table == "BUFFER_PROFILE":
        return bool(DERIVED_PROFILE.match(key))
    return table == "BUFFER_PG" and isinstance(row, dict) and bool(DERIVED_PROFILE.match(str(row.get("profile", ""))))


def _pg_range(key):
    """``<port>|3-4`` -> (port, {3, 4}); ``<port>|0`` -> (port, {0})."""
    port, _bar, pgs = key.partition("|")
    low, _dash, high = pgs.partition("-")
    if not low.isdigit() or (high and not high.isdigit()):
        return port, set()
    return port, set(range(int(low), int(high or low) + 1))


# the tables of the switch's CONFIG_DB that ``fit`` reads (besides DEVICE_METADATA's buffer_model)
FIT_TABLES = ("BUFFER_PG", "BUFFER_PROFILE", "BUFFER_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PORT_QOS_MAP", "PFC_WD")


def fit(after, config):
    """The rendered managed tables fitted to what this switch's own machinery does (``after`` tables, ``config`` the
    switch's whole CONFIG_DB) -> (tables, notes):

    * traditional buffer model: no BUFFER_PG row of ours; buffermgrd writes the lossless PGs and their
      pg_lossless profile from the plan's pfc_enable (a NULL profile would be overwritten within milliseconds);
    * dynamic model: no row of ours for a lossless PG the switch already gives a NULL (computed) profile through a
      range of its own (a template's ``<port>|3-4``): an overlapping ``<port>|3`` is never added beside it;
    * no PFC_WD table on the switch: GCU refuses to create it on every ASIC (generic_config_updater
      field_operation_validators.py rdma_config_update_validator: ``add /PFC_WD`` names no listed field), so the
      watchdog is not managed and the note says how to start it."""
    tables = json.loads(json.dumps(after))
    notes = []
    pgs = tables.get("BUFFER_PG")
    if pgs and buffer_model(config) == TRADITIONAL:
        del tables["BUFFER_PG"]
        notes.append("community_sonic: the switch runs SONiC's traditional buffer model (DEVICE_METADATA buffer_model): "
                     "buffermgrd writes the lossless PGs (BUFFER_PG <port>|<pfc_enable PGs>) and their "
                     "pg_lossless_<speed>_<cable>_profile from PORT_QOS_MAP pfc_enable and CABLE_LENGTH itself; this run "
                     "writes no BUFFER_PG row")
    elif pgs:
        theirs = {}
        for key, row in (config.get("BUFFER_PG") or {}).items():
            if isinstance(row, dict) and row.get("profile") == "NULL" and not _our_pg(key, row):
                port, ids = _pg_range(key)
                theirs.setdefault(port, set()).update(ids)
        kept = dict((k, v) for k, v in pgs.items() if not _pg_range(k)[1] <= theirs.get(k.split("|")[0], set()))
        if len(kept) != len(pgs):
            notes.append("community_sonic: %d lossless PG row(s) left to the switch's own NULL-profile ranges (dynamic "
                         "buffer model: the headroom is computed for them already)" % (len(pgs) - len(kept)))
        if kept:
            tables["BUFFER_PG"] = kept
        else:
            del tables["BUFFER_PG"]
    notes += _lossless_queue_notes(tables, config)
    if tables.get("PFC_WD") and not config.get("PFC_WD"):
        del tables["PFC_WD"]
        notes.append("community_sonic: the switch has no PFC_WD table and SONiC's GCU refuses to create one "
                     "(field_operation_validators: `add /PFC_WD` is illegal on every ASIC), so the PFC watchdog is left "
                     "out of this run; start it on the switch once (`sudo pfcwd start_default` with DEVICE_METADATA "
                     "default_pfcwd_status enable, or `sudo pfcwd interval <ms>` to create PFC_WD|GLOBAL) and the next "
                     "run manages it, or set qos.pfc_watchdog: false")
    return tables, notes


def _lossless_queue_notes(tables, config):
    """The switch's own egress buffers and PFC-to-PG map checked against the plan's lossless priorities (queue = PG =
    priority in the plan's maps): a lossless priority whose queue has a lossy egress profile (SONiC's templates give
    BUFFER_QUEUE <port>|3-4 the lossless one), or whose PFC frames the port's pfc_to_pg_map sends to another PG (Mellanox
    and Barefoot templates bind AZURE {3: 3, 4: 4}), is named: the collection does not rewrite those rows."""
    notes = []
    profiles = config.get("BUFFER_PROFILE") or {}
    pg_maps = config.get("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP") or {}
    for port, fields in sorted((tables.get("PORT_QOS_MAP") or {}).items()):
        lossless = sorted(int(p) for p in _pfc(fields.get("pfc_enable")) if p.isdigit())
        for key, row in sorted((config.get("BUFFER_QUEUE") or {}).items()):
            qport, ids = _pg_range(key)
            profile = (row or {}).get("profile", "")
            pool = (profiles.get(profile) or {}).get("pool", "")
            wrong = [p for p in lossless if qport == port and p in ids and "lossless" not in pool + profile]
            if wrong:
                notes.append("community_sonic: BUFFER_QUEUE|%s gives lossless queue %s the egress profile %s (not lossless): "
                             "PFC would run on a lossy queue; give that queue a lossless egress profile on the switch"
                             % (key, ",".join(str(p) for p in wrong), profile))
        bound = ((config.get("PORT_QOS_MAP") or {}).get(port) or {}).get("pfc_to_pg_map")
        mapping = pg_maps.get(bound) or {} if bound else {}
        off = [p for p in lossless if bound and mapping.get(str(p)) != str(p)]
        if off:
            pgs = ",".join(mapping.get(str(p), "none") for p in off)
            notes.append("community_sonic: %s's pfc_to_pg_map %s sends PFC priorit%s %s to PG %s, not the plan's lossless PG: "
                         "set the map on the switch" % (port, bound, "y" if len(off) == 1 else "ies", ",".join(map(str, off)), pgs))
    return notes


def split(config, intent, sections, port=lambda p: p):
    """A whole CONFIG_DB (``show runningconfiguration all``) -> (the owned tables, same shape as render; every
    (TABLE, key, field) that is not ours, as sorted text lines). A key of the switch's own with no field shows as
    ``TABLE|key``; a key whose fields are all ours (one we created) has no line: it comes and goes with them. A port
    keeps its own fields (lanes, speed) outside, so a patch that removed a PORT key would show as their loss (and
    configdb.device_patch never removes one)."""
    owned, out = {}, []
    planned = set(port(p) for p in ports_of(intent))
    for table in sorted(config):
        rows = config[table]
        if not isinstance(rows, dict):
            out.append("%s %s" % (table, json.dumps(rows, sort_keys=True)))
            continue
        for key in sorted(rows):
            own = _ownership(table, key, rows[key], intent, sections, planned)
            fields = rows[key] if isinstance(rows[key], dict) else {"": rows[key]}
            mine = dict(fields) if own == "*" else dict((f, v) for f, v in fields.items() if f in (own or ()))
            if own is not None and isinstance(rows[key], dict) and (own == "*" or mine):
                owned.setdefault(table, {})[key] = mine
            if own == "*" or derived(config, table, key, rows[key]):
                continue
            if own is None and not fields:
                out.append("%s|%s" % (table, key))   # a bare key of the switch's own (an address, a loopback)
            out += ["%s|%s %s %s" % (table, key, f, field_text(fields[f])) for f in sorted(fields) if f not in mine]
    return owned, out


# --- its own show output, read for switch_validate (sonic-utilities' tables; no JSON form) -----------------------
# the checks run on sonic-utilities' own test outputs (tests/fixtures/switches/sonic/SOURCE.md)
BGP_HEAD = re.compile(r"^Neighb\w*\s+V\s+AS\s.*State/PfxRcd")


def parse_bgp_summary(text):
    """``show ip bgp summary``: sonic-utilities' table (it runs ``vtysh -c 'show ip bgp vrf default summary json'`` in
    the bgp container and prints ``Neighbhor V AS ... State/PfxRcd NeighborName``, the header misspelt as SONiC prints
    it), rows up to the blank line; State/PfxRcd holds the prefix count when the session is Established, else the
    state -> {address: {state, remote_as}} (nos/bgp_state.py judges it)."""
    col, rows = bgp_state.dash_table(text, BGP_HEAD, "Neighbhor V AS ... State/PfxRcd")
    peers = {}
    for cells in rows:
        if not any(cells):
            break
        state = cells[col["State/PfxRcd"]]
        peers[cells[0]] = {"state": "Established" if state.isdigit() else state,
                           "remote_as": bgp_state.as_number(cells[col["AS"]])}
    return peers


def parse_acl_tables(text):
    """``show acl table`` (sonic-utilities acl_loader, tabulate "simple") -> {name: {type, bindings, stage, status}};
    a binding per continuation row."""
    out, current = {}, None
    for name, kind, binding, _desc, stage, status in bgp_state.dash_table(text, re.compile("^Name "), "Name")[1]:
        if name:
            current = out[name] = {"type": kind, "bindings": [], "stage": stage, "status": status}
        if current is not None and binding:
            current["bindings"].append(binding)
    return out


def parse_acl_rules(text):
    """``show acl rule`` -> {(table, rule): {priority, action, matches {field: value}, status}}: per rule its match
    (``SRC_IP: ...``, a match per continuation row), action (``REDIRECT:<ip>`` from PACKET_ACTION) and the STATE_DB
    status orchagent wrote (``Active``; ``N/A`` when it wrote none: the rule was not created, e.g. no ARP entry for
    the next hop, sonic-buildimage #4457)."""
    out, current = {}, None
    for table, rule, priority, action, match, status in bgp_state.dash_table(text, re.compile("^Table "), "Table")[1]:
        if table:
            current = out[(table, rule)] = {"priority": priority, "action": action, "matches": {}, "status": status}
        if current is not None and ": " in match:
            field, value = match.split(": ", 1)
            current["matches"][field] = value
    return out


def redirect_hops(action):
    """Next hops of a SONiC redirect action: ``REDIRECT:10.0.0.1`` (PACKET_ACTION) or ``REDIRECT: 10.0.0.1``
    (REDIRECT_ACTION as acl-loader prints it), a next-hop group ``a,b`` and ``ip@port`` forms (aclorch); [] for
    any other action."""
    m = re.match(r"^REDIRECT:\s*(\S+)$", action or "")
    return [hop.split("@")[0] for hop in m.group(1).split(",")] if m else []


class AclRead(ppd_state.PpdRead):
    """The PPD state as ``show acl table <t>`` and ``show acl rule <t>`` show it: the table bound to the host port,
    per host source a redirect rule that orchagent made ``Active``."""
    missing = "ACL table %s rule %s"

    def commands(self, pins):
        return [cmd % t for t in sorted(set(p["policy"] for p in pins)) for cmd in ("show acl table %s", "show acl rule %s")]

    def state(self, cmds, outputs):
        state = {}
        for cmd, text in zip(cmds, outputs):
            if cmd.startswith("show acl table "):
                state.setdefault("tables", {}).update(parse_acl_tables(text))
            else:
                state.update(parse_acl_rules(text))
        return state

    def pin(self, intent, pin, entry, state, group_hops, want, probe):
        b, table, finding = pin["binding"], state.get("tables", {}).get(pin["policy"]), ppd_state.finding
        src = "%s/32" % b["source"].split("/")[0]
        detail = "ACL %s rule %s %s, %s" % (pin["policy"], pin["match"], entry["action"] or "no action",
                                            entry["status"] or "no status")
        if table is None or pin["ingress"] not in table["bindings"]:
            bound = ",".join(table["bindings"]) if table else "no such table"
            return finding(probe, "fail", want, "ACL table %s bound to %s" % (pin["policy"], bound or "no port"),
                           "host port %s: ACL table %s is not bound to %s" % (b["ingress"], pin["policy"], pin["ingress"]))
        if entry["matches"].get("SRC_IP") != src:
            return finding(probe, "fail", want, "%s matching %s" % (detail, entry["matches"].get("SRC_IP") or "any source"),
                           "host port %s: rule %s does not match the host source %s" % (b["ingress"], pin["match"], src))
        if entry["status"] != "Active":
            return finding(probe, "fail", want, detail, "host port %s: rule %s is not active on the switch (status %s: "
                           "orchagent did not create it, e.g. no ARP entry for its next hop)" % (
                               b["ingress"], pin["match"], entry["status"] or "none"))
        shown = "ACL %s rule %s %s, %s" % (pin["policy"], pin["match"], entry["action"], entry["status"])
        return redirect_hops(entry["action"]), shown


class SonicDbDriver(Driver):
    name = "community_sonic"
    device_type = device_type_for(name)
    # sonic-utilities show/main.py `runningconfiguration all`: CONFIG_DB as JSON
    show_running = "show runningconfiguration all"
    # the Linux shell answers of sonic-utilities' click commands (`Error: ...`, a usage line, a Python traceback)
    error_pattern = r"^Error: |^Usage: |^Traceback \(most recent call last\)|command not found"
    save_command = "config save -y"
    offline_format = "json"
    sections = SECTIONS + ("underlay",)
    # nos/gcu.py: checkpoint, one `config apply-patch`, read-back, `config save -y`, `config rollback` while the switch
    # holds only this run's change
    transaction = GcuTxn
    config_tables = frozenset(TABLE)   # the tables render writes (configdb.device_patch passes others as they are)
    # drain: a CONFIG_DB setting, not a line: SONiC's traffic shift away (TSA) is BGP_DEVICE_GLOBAL|STATE tsa_enabled
    # (sonic-yang-models sonic-bgp-device-global.yang, boolean, default false; doc/Configuration.md "BGP Device
    # Global": "When tsa_enabled is set to true, the device is isolated using traffic-shift-away (TSA) route-maps in
    # BGP"; sonic-buildimage dockers/docker-fpm-frr/base_image_files/TSA writes it, bgpcfgd applies it), set by a
    # GCU patch like every change (the GCU design's own example patches /BGP_DEVICE_GLOBAL/STATE/tsa_enabled)
    drain = DrainSetting("BGP_DEVICE_GLOBAL > STATE > tsa_enabled", on="true", off="false",
                         pointer="/BGP_DEVICE_GLOBAL/STATE/tsa_enabled", ours="DEVICE_METADATA|localhost bgp_asn ")
    # sonic-utilities' tables; the SSH login lands in the Linux shell already (netmiko LinuxSSH), so no klish hop. The
    # parsers are checked on sonic-utilities' own test outputs (tests/fixtures/switches/sonic/)
    line_sources = sources.config_db_rows(TABLES)   # from the Table declarations: no table without its source
    counters = [Read(read.command, read.parser) for read in roce_counters.SONIC]
    counter_evidence = roce_counters.ALL_VERIFIED
    checks = ("bgp_sessions", "ppd_paths")
    # nos/gcu.py preflight refuses the redirect rules without it
    opt_ins = {"pbr": ("community_sonic_pbr", "gcu_ignore_acl_rule",
                       "SONiC's sonic-acl.yang has no redirect PACKET_ACTION, so GCU refuses the rule")}
    bgp_summary = Read("show ip bgp summary", parse_bgp_summary)
    ppd_read = AclRead("`show acl table <t>` / `show acl rule <t>`: table bound to the host port, redirect rule "
                       "per host source (`SRC_IP`, `REDIRECT:<next hop>`), status `Active` (the rules are pushed "
                       "only under `fabric.community_sonic_pbr: gcu_ignore_acl_rule`: sonic-acl.yang refuses the "
                       "redirect)")

    def tables(self, intent, qos, sections=SECTIONS):
        return render(intent, qos, sections, port=self.port, mtu=self.mtu(intent))

    def render(self, intent, qos, sections=SECTIONS):
        return text(self.tables(intent, qos, sections))

    def ppd_pins(self, intent):
        """[{binding, ingress, policy, match}] as _pbr names them: the L3 ACL table on the host port and the redirect
        rule of each host source (nos/ppd_state.py reads them back from ``show acl table`` / ``show acl rule``)."""
        return [{"binding": b, "ingress": self.port(b["ingress"]), "policy": PBR, "match": pbr_rule(b)}
                for b in intent.get("bindings") or []]

    def config(self, running):
        """The device's whole CONFIG_DB from ``show runningconfiguration all`` (JSON, possibly after a prompt
        echo), or from canonical lines (what ``render`` returns: rendered config reads back as itself).
        Anything else is refused: an error page must never read as an empty switch."""
        start = running.find("{")
        if start >= 0:
            config = json.loads(running[start:running.rfind("}") + 1])
            # `bgpraw` is FRR's own running config, appended by show/main.py `runningconfiguration all`: not a CONFIG_DB
            # table (bgpcfgd renders it from BGP_NEIGHBOR/DEVICE_METADATA, asynchronously), so not compared
            config.pop("bgpraw", None)
            return config
        rows = [line for line in running.splitlines() if line.strip()]
        if rows and all(CANONICAL.match(line) for line in rows):
            return tables_of(running)
        raise ValueError("not a CONFIG_DB JSON document: %s" % " | ".join(running.strip().splitlines()[-3:]))

    def fit_view(self, before_image):
        """The CONFIG_DB tables ``fit`` reads (its buffer model, buffers, PFC maps, watchdog), from the switch's Image."""
        config = device_view(before_image.managed, before_image.outside)[0]
        view = dict((t, config[t]) for t in FIT_TABLES if t in config)
        view["DEVICE_METADATA"] = {"localhost": {"buffer_model": buffer_model(config)}}
        return view

    def fit_to(self, after, view):
        tables, notes = fit(tables_of(after), view or {})
        return text(tables), notes

    def intended_image(self, base, after):
        """``base`` with ``after`` as its managed view, less the switch's own values of the fields ``after`` sets (a
        QUEUE row of the switch's whose scheduler/wred_profile become ours: one field, one value)."""
        mine = set(self.value(path)[0] for path in self.paths(after) if path.count(" > ") == 2)
        want = base.with_managed(after)
        want.outside = [p for p in base.outside if self.value(p)[0] not in mine]
        return want

    def disruptions(self, before_image, ops):
        """GCU's port admin-down moves (nos/gcu.py flapping_ports) for the patch this switch would be given."""
        if not ops:
            return []
        config, owned, foreign = device_view(before_image.managed, before_image.outside)
        ops = device_patch([op.patch() for op in ops], config, owned, foreign, managed=self.config_tables)
        ports = flapping_ports(ops, config)
        if not ports:
            return []
        return [{"kind": "port flap", "ports": ports,
                 "message": "GCU takes %d port(s) admin down and up again to apply this change (its patch sorter's "
                            "port-critical rule: BUFFER_PG, BUFFER_QUEUE, BUFFER_PORT_*_PROFILE_LIST, PORT_QOS_MAP, QUEUE): "
                            "%s; their links, BGP sessions and hosts flap" % (len(ports), ", ".join(ports))}]

    def parse(self, running, intent, sections=SECTIONS):
        return text(split(self.config(running), intent, sections, port=self.port)[0])

    # --- family hooks: CONFIG_DB is its own driver family (nos/base.py Driver) -------------------------
    @staticmethod
    def path(line):
        """A canonical line -> its path: ``TABLE|key field value`` -> ``TABLE > key > field value``."""
        head, _sp, rest = line.strip().partition(" ")
        table, _bar, key = head.partition("|")
        return "%s > %s" % (table, key) + (" > " + rest if rest else "")

    def paths(self, managed):
        return [self.path(line) for line in managed.splitlines() if line.strip()]

    def outside(self, running, intent, sections=SECTIONS):
        return sorted(self.path(line) for line in split(self.config(running), intent, sections, port=self.port)[1])

    def takeover_items(self, before_image, after, intent, sections=SECTIONS):
        return takeover_items(tables_of(before_image.managed), tables_of(after),
                              device_view(before_image.managed, before_image.outside)[0])

    def protected(self, command):
        """A JSON Patch op that removes or replaces a whole table, or removes a whole PORT key: never ours."""
        try:
            op = json.loads(command)
        except ValueError:
            return False
        parts = op.get("path", "").split("/")[1:]
        return len(parts) <= 1 or (op.get("op") == "remove" and len(parts) == 2 and parts[0] == "PORT")

    safe_reverse = Driver.checked_reverse

    def diff(self, current, intended):
        """JSON Patch ops (typed: configdb.PatchOp) from the current managed view to the intended one."""
        return patch_ops(patch(tables_of(current), tables_of(intended)))

    commands = staticmethod(configdb_commands)   # one JSON string per op: the GCU transaction's patch is built from them

    def state(self, managed):
        return {"tables": tables_of(managed)}

    def port_mtus(self, managed):
        """PORT|<port> mtu of the managed tables."""
        return dict((port, int(fields["mtu"])) for port, fields in tables_of(managed).get("PORT", {}).items()
                    if "mtu" in fields)


_MAP_FIELDS = ("dscp_to_tc_map", "tc_to_queue_map", "tc_to_pg_map", "pfc_to_queue_map")
_ADDRESS_TABLES = ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE")


def _pfc(value):
    return set(p for p in str(value or "").split(",") if p.strip())


def takeover_items(before, after, config=None):
    """What a first apply would replace or remove that this collection did not put there (nos/takeover.py's kinds),
    from the owned tables ``before`` (the switch's) and ``after`` (the plan's) and the switch's whole CONFIG_DB
    ``config`` (for what sits outside the managed view):

    * ``bgp``: the switch's BGP ASN (DEVICE_METADATA bgp_asn: bgpcfgd's ``router bgp``) other than the plan's; BGP
      kept by SONiC's FRR management framework (BGP_GLOBALS, BGP_NEIGHBOR ``<vrf>|<peer>``) beside the plan's BGP;
      a field of the switch's on an interface the plan owns that the patch removes (``ipv6_use_link_local_only``:
      unnumbered BGP on that link);
    * ``address``: an address key on an interface the plan owns that the plan does not put there;
    * ``policy``: a QoS map bound on a plan port that is not ours (not ``AIF-``) and that the plan replaces;
    * ``classification``: PFC priorities in use on a port (PORT_QOS_MAP pfc_enable / pfcwd_sw_enable) that the plan
      drops; a port classifying by 802.1p (dot1p_to_tc_map, no DSCP map) that the plan moves to DSCP;
    * ``qos``: a queue's scheduler / WRED profile of the switch's replaced; a port's CABLE_LENGTH (its lossless
      headroom) replaced; the switch's PFC watchdog settings (PFC_WD) replaced;
    * ``vlan``: a port the plan puts in a VLAN that is already an untagged member of another;
    * ``mtu``: an MTU change on a port routed by someone else (an address the plan does not put there)."""
    config = config or {}
    items = _bgp_items(before, after, config) + _interface_items(before, after)
    items += _port_qos_items(before, after, config) + _queue_items(before, after, config)
    for key, fields in sorted(before.get("PFC_WD", {}).items()):
        for field, value in sorted(fields.items()):
            planned = after.get("PFC_WD", {}).get(key, {}).get(field)
            if planned != value:
                items.append(_item("qos", "PFC_WD|%s %s" % (key, field), value, planned,
                                   "PFC watchdog %s %s %s (the switch's) would become %s" % (key, field, value, planned or "none")))
    for port, cable in sorted(before.get("CABLE_LENGTH", {}).get("AZURE", {}).items()):
        planned = after.get("CABLE_LENGTH", {}).get("AZURE", {}).get(port)
        if planned != cable:
            items.append(_item("qos", "CABLE_LENGTH|AZURE %s" % port, cable, planned,
                               "cable length %s of %s would become %s: its lossless headroom is recomputed" % (
                                   cable, port, planned or "none")))
    return items + _vlan_items(after, config) + _mtu_items(before, after, config)


def _bgp_items(before, after, config):
    items = []
    have = before.get("DEVICE_METADATA", {}).get("localhost", {}).get("bgp_asn")
    want = after.get("DEVICE_METADATA", {}).get("localhost", {}).get("bgp_asn")
    if have and have != want:
        items.append(_item("bgp", "DEVICE_METADATA|localhost bgp_asn", have, want,
                           "BGP ASN %s (DEVICE_METADATA bgp_asn) would become %s, replacing every session "
                           "under it" % (have, want or "none")))
    if after.get("BGP_NEIGHBOR") or want:
        mgmt = sorted("BGP_GLOBALS|%s" % k for k in (config.get("BGP_GLOBALS") or {})) + \
            sorted("BGP_NEIGHBOR|%s" % k for k in (config.get("BGP_NEIGHBOR") or {}) if "|" in k)
        if mgmt:
            items.append(_item("bgp", "BGP_GLOBALS", ", ".join(mgmt), None,
                               "the switch runs BGP through SONiC's FRR management framework (%s); the plan's BGP "
                               "(DEVICE_METADATA bgp_asn, BGP_NEIGHBOR) would run beside and against it" % ", ".join(mgmt[:6])))
    return items


def _interface_items(before, after):
    items = []
    for table in _ADDRESS_TABLES:
        for key in sorted(before.get(table, {})):
            if "|" in key and key not in after.get(table, {}):
                name, _bar, address = key.partition("|")
                items.append(_item("address", "%s|%s" % (table, name), address, None,
                                   "address %s on %s is not the plan's and would be removed" % (address, name)))
            elif "|" not in key:
                for field, value in sorted((before[table][key] or {}).items()):
                    if field not in (after.get(table, {}).get(key) or {}):
                        unnumbered = "link_local" in field
                        items.append(_item("bgp" if unnumbered else "address", "%s|%s %s" % (table, key, field),
                                           "%s %s" % (field, value), None, "%s %s on %s (the switch's) would be removed%s" % (
                                               field, value, key, ": unnumbered BGP on that link stops" if unnumbered else "")))
    return items


def _port_qos_items(before, after, config):
    items = []
    for port, fields in sorted(before.get("PORT_QOS_MAP", {}).items()):
        planned = after.get("PORT_QOS_MAP", {}).get(port, {})
        for field in _MAP_FIELDS:
            value = fields.get(field)
            if value and not value.startswith(PREFIX) and planned.get(field) != value:
                items.append(_item("policy", "PORT_QOS_MAP|%s %s" % (port, field), value, planned.get(field),
                                   "%s %s on %s is not ours and would be replaced" % (field, value, port)))
        for field in ("pfc_enable", "pfcwd_sw_enable"):
            dropped = sorted(_pfc(fields.get(field)) - _pfc(planned.get(field)))
            if dropped:
                items.append(_item("classification", "PORT_QOS_MAP|%s %s" % (port, field), fields[field], planned.get(field),
                                   "%s %s on %s would become %s: priorit%s %s in use there would lose %s" % (
                                       field, fields[field], port, planned.get(field) or "none",
                                       "y" if len(dropped) == 1 else "ies", ",".join(dropped),
                                       "PFC" if field == "pfc_enable" else "the PFC watchdog")))
    for port, planned in sorted(after.get("PORT_QOS_MAP", {}).items()):
        theirs = (config.get("PORT_QOS_MAP") or {}).get(port) or {}
        if theirs.get("dot1p_to_tc_map") and not theirs.get("dscp_to_tc_map") and planned.get("dscp_to_tc_map"):
            items.append(_item("classification", "PORT_QOS_MAP|%s dot1p_to_tc_map" % port, theirs["dot1p_to_tc_map"],
                               planned["dscp_to_tc_map"], "%s classifies by 802.1p (dot1p_to_tc_map %s); the plan adds DSCP "
                               "classification (%s): traffic marked in 802.1p only would change class"
                               % (port, theirs["dot1p_to_tc_map"], planned["dscp_to_tc_map"])))
    return items


def _queue_items(before, after, config):
    """A queue's scheduler / WRED profile of the switch's that the plan replaces: in the managed view (a field of
    ours now) or outside it (the switch's own QUEUE row of a queue the plan configures)."""
    items, seen = [], set()
    for source in (before.get("QUEUE", {}), config.get("QUEUE") or {}):
        for key, fields in sorted(source.items()):
            for field in ("scheduler", "wred_profile"):
                value = (fields or {}).get(field)
                planned = after.get("QUEUE", {}).get(key, {}).get(field)
                if value and not value.startswith(PREFIX) and planned != value and (key, field) not in seen \
                        and (source is before.get("QUEUE", {}) or planned):
                    seen.add((key, field))
                    items.append(_item("qos", "QUEUE|%s %s" % (key, field), value, planned,
                                       "queue %s %s %s (the switch's) would be replaced by %s" % (
                                           key, field, value, planned or "none")))
    return items


def _vlan_items(after, config):
    members, items = {}, []
    for key, fields in (config.get("VLAN_MEMBER") or {}).items():
        vlan, _bar, port = key.partition("|")
        if (fields or {}).get("tagging_mode") == "untagged":
            members.setdefault(port, set()).add(vlan)
    for key in sorted(after.get("VLAN_MEMBER", {})):
        vlan, _bar, port = key.partition("|")
        other = sorted(members.get(port, set()) - {vlan})
        if other:
            items.append(_item("vlan", "VLAN_MEMBER|%s" % key, ", ".join(other), vlan,
                               "%s is an untagged member of %s; the plan adds it untagged to %s" % (port, ", ".join(other), vlan)))
    return items


def _mtu_items(before, after, config):
    """A routed port's address outside the managed view (the underlay section not run): someone else routes it (an
    address the plan replaces in the managed view is an ``address`` item already)."""
    routed, items = {}, []
    for key in (config.get("INTERFACE") or {}):
        name, _bar, address = key.partition("|")
        if address and key not in after.get("INTERFACE", {}) and key not in before.get("INTERFACE", {}):
            routed.setdefault(name, []).append(address)
    for port, fields in sorted(after.get("PORT", {}).items()):
        old = before.get("PORT", {}).get(port, {}).get("mtu")
        if "mtu" in fields and old != fields["mtu"] and routed.get(port):
            items.append(_item("mtu", "PORT|%s mtu" % port, "mtu %s" % (old or "default"), "mtu %s" % fields["mtu"],
                               "interface %s is routed by someone else (address %s) and its MTU would change from %s to %s: "
                               "its peers keep theirs" % (port, ", ".join(sorted(routed[port])), old or "the default",
                                                          fields["mtu"])))
    return items
