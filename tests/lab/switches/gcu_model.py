"""What SONiC's Generic Config Updater and buffermgrd do with a patch beyond YANG (test code, the lab's community SONiC
switch, configdb_sim.py), each from sonic-net/sonic-utilities @ 691b1bbc (../shared/oracles/sonic-utilities-gcu) and
sonic-net/sonic-swss @ e6b0c5b5:

* ``field_refusal``: ``ConfigWrapper.validate_field_operation`` (gu_common.py:184-236), run on
  ``jsonpatch.JsonPatch.from_diff(old, target)`` before anything else: removing PFC_WD GLOBAL, its POLL_INTERVAL or
  Loopback0 is illegal; a data ACL table whose type changes with its rules is illegal (``illegal_dataacl_check``);
  every op on PFC_WD / BUFFER_POOL / BUFFER_PROFILE goes through field_operation_validators.py with the data of
  gcu_field_operation_validators.conf.json (the ASIC from the HWSKU lists, the image's build date). With the oracle
  present, upstream's own code runs (``sonic_py_common``/``swsscommon`` stubbed, the ASIC type, HWSKU and build
  version given); without it, ``subset_field_refusal`` (the PFC_WD, BUFFER_POOL, BUFFER_PROFILE rules, data below).
* ``sort``: the patch sorter's port-critical moves (patch_sorter.py:593-625 RequiredValueIdentifier, 1992-2040
  RequiredValueMoveExtender): a change under BUFFER_PG, BUFFER_QUEUE, BUFFER_PORT_{IN,E}GRESS_PROFILE_LIST,
  PORT_QOS_MAP or QUEUE of a port needs the port admin down: the port is taken down in its own change, the patch
  applied, and the port brought back up. Other dependency ordering (YANG leafrefs, create-only fields, splitting a
  table add) is not modelled: tests/unit/nos/test_gcu_model.py names the upstream cases it reproduces.
* ``BACKEND_TABLES``: the final check leaves BUFFER_PG, BUFFER_PROFILE and FLEX_COUNTER_TABLE out
  (change_applier.py:82-86, generic_updater.py:152-158).
* ``apply_change``: ChangeApplier.apply (change_applier.py:127-135, 141-179): each change is applied to GCU's own
  image of CONFIG_DB (the config PatchApplier.apply read ONCE at its start, generic_updater.py:111-113, 147-150, then
  carried from change to change), and every key whose data differs between that image before and after the change
  is written whole with ``set_entry`` (swsscommon ConfigDBConnector: the entry holds exactly the new data, a field it
  lacks is deleted; None deletes the key). CONFIG_DB itself is never re-read between changes, so an edit someone
  makes after GCU's first read to any field of a key a later change writes is reverted, and an edit to any other key
  stays and fails the final comparison (generic_updater.py:152-158). ``oracle_apply_change`` runs upstream's own
  ChangeApplier on the same change (tests/unit/nos/test_gcu_model.py holds the model to it and to upstream's
  change_applier_test.py data).
* ``buffermgrd``: the traditional buffer model (sonic-swss cfgmgr/buffermgr.cpp ``doSpeedUpdateTask``): for a port with
  a cable length (CABLE_LENGTH|AZURE), a speed and PORT_QOS_MAP ``pfc_enable``, buffermgrd writes CONFIG_DB
  ``BUFFER_PROFILE|pg_lossless_<speed>_<cable>_profile`` (from pg_profile_lookup.ini, pool ingress_lossless_pool) unless
  it exists, and ``BUFFER_PG|<port>|<pfc_enable PGs as ranges>`` = that profile unless it holds it already; it never
  removes an old range (only on a Mellanox/Barefoot port going admin down); cable ``0m`` or no lookup row: nothing.
"""
import copy
import json
import os
import re
import sys
import types

ORACLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "shared", "oracles",
                      "sonic-utilities-gcu")

PORT_CRITICAL = ("BUFFER_PG", "BUFFER_PORT_EGRESS_PROFILE_LIST", "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_QUEUE",
                 "PORT_QOS_MAP", "QUEUE")
BACKEND_TABLES = ("BUFFER_PG", "BUFFER_PROFILE", "FLEX_COUNTER_TABLE")
ILLEGAL_REMOVE = ("/PFC_WD/GLOBAL/POLL_INTERVAL", "/PFC_WD/GLOBAL", "/LOOPBACK_INTERFACE/Loopback0")

# gcu_field_operation_validators.conf.json @691b1bbc: the rules of the tables this collection's patches touch
# (the HWSKU lists of the two public switches' ASICs only; any other HWSKU is "unknown" here, which refuses)
HWSKU_ASIC = {"Mellanox-SN4600C-C64": "spc3", "Arista-7260CX3-C64": "th2", "Force10-S6000": "td2"}
_RELEASES = {"spc1": "20181100", "spc2": "20191100", "spc3": "20220500", "td2": "20181100", "th2": "20181100"}
SCENARIOS = {
    "PFC_WD": [{"fields": ["restoration_time", "detection_time", "action", "global/poll_interval", "pfc_stat_history", ""],
                "operations": ["remove", "add", "replace"], "platforms": dict(_RELEASES)}],
    "BUFFER_POOL": [{"fields": [], "operations": [], "platforms": {}}],
    "BUFFER_PROFILE": [{"fields": ["dynamic_th"], "operations": ["replace"], "platforms": dict(_RELEASES)},
                       {"fields": ["xoff"], "operations": ["replace"],
                        "platforms": dict(_RELEASES, spc1="20191100", td2="", th2="20221100")}],
}
_VALIDATOR = {"PFC_WD": "rdma_config_update_validator", "BUFFER_POOL": "rdma_config_update_validator",
              "BUFFER_PROFILE": "buffer_profile_config_update_validator"}


def oracle_available():
    return os.path.isfile(os.path.join(ORACLE, "generic_config_updater", "field_operation_validators.py"))


class IllegalPatch(Exception):
    pass


def _pointer_parts(path):
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def _branch(build_version):
    found = None
    for part in str(build_version or "").split("."):
        if part.isdigit() and re.match(r"^\d{8}$", part):
            found = part
    return found


def _rdma_ok(table, element, asic, build_version, exact, remove_port, scenarios=None):
    """field_operation_validators.rdma_config_update_validator_common, on the data above."""
    if asic == "unknown":
        return False
    parts = _pointer_parts(element["path"])[1:]
    if remove_port:
        parts = [p for p in parts if not any(c.isdigit() for c in p)]
    field = "/".join(parts).lower()
    value = element.get("value")
    fields = ([(field + "/" + k) if field else k for k in value] if isinstance(value, dict) else [field])
    branch = _branch(build_version)
    for cleaned in fields:
        scenario = None
        for candidate in (scenarios or SCENARIOS)[table]:
            for gcu_field in candidate["fields"]:
                if (cleaned == gcu_field) if exact else (cleaned.split("/")[-1] == gcu_field):
                    scenario = candidate
                    break
            if scenario:
                break
        if scenario is None or not scenario["platforms"].get(asic) or element["op"] not in scenario["operations"]:
            return False
        if branch is not None and branch < scenario["platforms"][asic]:
            return False
    return True


def conf_tables(conf):
    """gcu_field_operation_validators.conf.json's ``tables`` -> {table: (validator names, scenarios)}."""
    out = {}
    for table, spec in (conf.get("tables") or {}).items():
        names = [v.split(".")[-1] for v in spec.get("field_operation_validators", [])]
        scenarios = list(((spec.get("validator_data") or {}).get("rdma_config_update_validator") or {}).values())
        out[table] = (names, scenarios)
    return out


DEFAULT_TABLES = dict((t, ([_VALIDATOR[t]], SCENARIOS[t])) for t in _VALIDATOR)


def element_allowed(validator, element, asic, build_version, scenarios):
    """One field_operation_validators function on one patch element (rdma_config_update_validator or
    buffer_profile_config_update_validator)."""
    table = _pointer_parts(element["path"])[0]
    table_scenarios = {table: scenarios}
    if validator == "buffer_profile_config_update_validator":
        if len(_pointer_parts(element["path"])) == 2:
            return element["op"] in ("add", "remove", "replace")
        return _rdma_ok(table, element, asic, build_version, exact=False, remove_port=False, scenarios=table_scenarios)
    if validator == "rdma_config_update_validator":
        return _rdma_ok(table, element, asic, build_version, exact=True, remove_port=True, scenarios=table_scenarios)
    raise ValueError("validator %s is not modelled" % validator)


def subset_field_refusal(old, target, asic, build_version, tables=None):
    """validate_field_operation's answer from the data above (or ``tables``, conf_tables of another conf): None
    (allowed) or GCU's message."""
    import jsonpatch
    tables = DEFAULT_TABLES if tables is None else tables
    patch = list(jsonpatch.JsonPatch.from_diff(old, target))
    for op in patch:
        if op["op"] == "remove" and op["path"] in ILLEGAL_REMOVE:
            return "Given patch operation is invalid. Operation: remove is illegal on field: %s" % op["path"]
    message = _dataacl(old, target)
    if message:
        return message
    for op in patch:
        table = _pointer_parts(op["path"])[0]
        names, scenarios = tables.get(table, ([], []))
        for name in names:
            if not element_allowed(name, op, asic, build_version, scenarios):
                return ("Modification of %s table is illegal- validating function "
                        "generic_config_updater.field_operation_validators.%s returned False" % (table, name))
    return None


def _dataacl(old, new):
    """gu_common.illegal_dataacl_check."""
    old_t, new_t = old.get("ACL_TABLE", {}), new.get("ACL_TABLE", {})
    common = set(t for t, f in old_t.items() if f.get("type") and f["type"] != "CTRLPLANE") & \
        set(t for t, f in new_t.items() if f.get("type") and f["type"] != "CTRLPLANE")
    changed = [t for t in common if old_t[t]["type"] != new_t[t]["type"]]
    old_r, new_r = old.get("ACL_RULE", {}), new.get("ACL_RULE", {})
    for key in set(r for r in list(old_r) + list(new_r) if r.split("|")[0] in changed):
        if old_r.get(key, {}) != new_r.get(key, {}):
            return "Modification of dataacl rule %s is illegal: acl table type changed in %s" % (key, changed)
    return None


# --- ChangeApplier: how a change reaches CONFIG_DB ------------------------------------------------------------------
def set_entry(db, table, key, data):
    """swsscommon ConfigDBConnector.set_entry, as change_applier.py:46-47 (set_config) calls it: ``data`` None deletes
    the key; else the key holds exactly ``data`` (the fields it lacks are deleted: change_applier_test.py's set_entry
    mock replaces the whole entry). A table left without keys is gone (redis has no empty hash:
    prune_empty_table's comment, change_applier.py:50-60)."""
    if data is None:
        db.get(table, {}).pop(key, None)
        if table in db and not db[table]:
            db.pop(table)
        return
    db.setdefault(table, {})[key] = copy.deepcopy(data)


def prune_empty_table(data):
    """change_applier.py:50-60."""
    for table in [t for t in data if not data[t]]:
        data.pop(table)
    return data


def apply_change(db, image, change, on_write=None):
    """ChangeApplier.apply (change_applier.py:141-147 with _upd_data l.127-135): ``change`` (a JSON patch) applied to
    ``image`` (GCU's config, not ``db``), each differing key written to ``db`` whole, tables in sorted order; returns
    the new image (upd_data), which the next change is applied to (generic_updater.py:147-150). ``on_write(table,
    key)`` after each key is written."""
    import jsonpatch
    upd = prune_empty_table(jsonpatch.apply_patch(image, change))
    for table in sorted(set(image) | set(upd)):
        run_tbl, upd_tbl = image.get(table, {}), upd.get(table, {})
        for key in sorted(set(run_tbl) | set(upd_tbl)):
            if run_tbl.get(key) != upd_tbl.get(key):
                set_entry(db, table, key, upd_tbl.get(key))
                if on_write is not None:
                    on_write(table, key)
    return upd


def oracle_apply_change(db, image, change):
    """Upstream's ChangeApplier.apply (change_applier.py) on ``change`` with its set_config writing into ``db`` (its
    services validators off, its 1 s sleep skipped); returns (upd_data, the (table, key, data) it wrote)."""
    _oracle_modules()
    import generic_config_updater.change_applier as ca
    import generic_config_updater.gu_common as gu
    import jsonpatch
    from unittest import mock
    written = []

    def set_config(_db, table, key, data):
        written.append((table, key, copy.deepcopy(data)))
        set_entry(db, table, key, data)
    with mock.patch.object(ca, "get_config_db", return_value="config_db"), \
            mock.patch.object(ca, "set_config", side_effect=set_config), mock.patch.object(ca.time, "sleep"), \
            mock.patch.object(ca.ChangeApplier, "updater_conf", {"tables": {}, "services": {}}):
        upd = ca.ChangeApplier().apply(copy.deepcopy(image), gu.JsonChange(jsonpatch.JsonPatch(change)))
    return upd, written


# --- upstream's own code as the oracle -------------------------------------------------------------------------------
_LOADED = {}


def _oracle_modules():
    """generic_config_updater.field_operation_validators and gu_common as they are, with the SONiC-only modules they
    import stubbed (sonic_py_common, swsscommon, sonic_yang, sonic_yang_ext): only validate_field_operation runs."""
    if "fov" in _LOADED:
        return _LOADED["fov"], _LOADED["gu"]
    stubs = {}
    for name in ("sonic_py_common", "sonic_py_common.device_info", "sonic_py_common.logger",
                 "sonic_py_common.multi_asic", "swsscommon", "swsscommon.swsscommon", "sonic_yang", "sonic_yang_ext",
                 "jsondiff"):
        if name not in sys.modules:
            stubs[name] = sys.modules[name] = types.ModuleType(name)
    common = sys.modules["sonic_py_common"]
    for sub in ("device_info", "logger", "multi_asic"):
        setattr(common, sub, sys.modules["sonic_py_common." + sub])
    sys.modules["sonic_py_common.multi_asic"].DEFAULT_NAMESPACE = ""
    sys.modules["sonic_py_common.multi_asic"].is_multi_asic = lambda: False
    sys.modules["sonic_py_common.logger"].Logger = type("Logger", (), dict(
        (name, lambda self, *a, **k: None) for name in ("__init__", "log", "log_notice", "log_info", "log_debug",
                                                        "log_error", "log_warning", "set_min_log_priority_debug",
                                                        "set_min_log_priority_notice")))
    for level in ("DEBUG", "INFO", "NOTICE", "WARNING", "ERROR"):
        setattr(sys.modules["sonic_py_common.logger"].Logger, "LOG_PRIORITY_" + level, level)
    sys.modules["swsscommon"].swsscommon = sys.modules["swsscommon.swsscommon"]
    if not hasattr(sys.modules["swsscommon.swsscommon"], "ConfigDBConnector"):
        sys.modules["swsscommon.swsscommon"].ConfigDBConnector = object   # change_applier.py imports it (mocked away)
    if ORACLE not in sys.path:
        sys.path.insert(0, ORACLE)
    import generic_config_updater.field_operation_validators as fov
    import generic_config_updater.gu_common as gu
    _LOADED.update(fov=fov, gu=gu)
    return fov, gu


def oracle_field_refusal(old, target, asic_type, hwsku, build_version):
    """Upstream's validate_field_operation on (old, target): None or its message. ``asic_type`` as
    /etc/sonic/sonic_version.yml gives it (mellanox, broadcom, ...), ``hwsku`` as DEVICE_METADATA holds it."""
    fov, gu = _oracle_modules()
    from unittest import mock
    device_info = sys.modules["sonic_py_common.device_info"]
    version = {"asic_type": asic_type, "build_version": build_version}
    popen = mock.Mock()
    popen.return_value.communicate.return_value = (hwsku + "\n", None)
    with mock.patch.object(device_info, "get_sonic_version_info", create=True, return_value=version), \
            mock.patch.object(fov.subprocess, "Popen", popen):
        wrapper = gu.ConfigWrapper.__new__(gu.ConfigWrapper)
        wrapper.scope = ""
        try:
            wrapper.validate_field_operation(copy.deepcopy(old), copy.deepcopy(target))
        except (gu.IllegalPatchOperationError, gu.GenericConfigUpdaterError) as exc:
            return str(exc)
    return None


def asic_type(config):
    """/etc/sonic/sonic_version.yml asic_type of the modelled switch, from its platform string."""
    platform = config.get("DEVICE_METADATA", {}).get("localhost", {}).get("platform", "")
    return "mellanox" if "mlnx" in platform else "broadcom"


def field_refusal(old, target, build_version="20240510.1"):
    """validate_field_operation for the modelled switch (its HWSKU and platform in DEVICE_METADATA): the oracle when
    ../shared/oracles is here, else the subset."""
    hwsku = old.get("DEVICE_METADATA", {}).get("localhost", {}).get("hwsku", "")
    if oracle_available():
        return oracle_field_refusal(old, target, asic_type(old), hwsku, build_version)
    return subset_field_refusal(old, target, HWSKU_ASIC.get(hwsku, "unknown"), build_version)


# --- the patch sorter's port-critical moves --------------------------------------------------------------------------
def _rows(config, port):
    return dict((t, dict((k, v) for k, v in config.get(t, {}).items() if k == port or k.startswith(port + "|")))
                for t in PORT_CRITICAL)


def critical_ports(old, target):
    """Ports whose port-critical rows differ between two configs, in port order."""
    ports = set(old.get("PORT", {})) | set(target.get("PORT", {}))
    return sorted((p for p in ports if _rows(old, p) != _rows(target, p)),
                  key=lambda p: (len(p), p))


def _pointer(*parts):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _low_level(old, target, op):
    """One patch op as the sorter's low-level moves state it: an op inside a list replaces the whole list (a leaf-list
    is one value to GCU), removing a whole table removes its keys first, then the table."""
    parts = _pointer_parts(op["path"])
    for depth in range(1, len(parts)):
        node = _get(target if op["op"] != "remove" else old, parts[:depth])
        if isinstance(node, list) or isinstance(_get(old, parts[:depth]), list):
            return [{"op": "replace", "path": _pointer(*parts[:depth]), "value": _get(target, parts[:depth])}]
    if op["op"] == "remove" and len(parts) == 1 and isinstance(old.get(parts[0]), dict):
        return [{"op": "remove", "path": _pointer(parts[0], k)} for k in old[parts[0]]] + [op]
    return [op]


def _get(config, parts):
    node = config
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def sort(old, patch):
    """The changes GCU applies for ``patch`` on ``old`` (a list of JSON patches), port-critical moves included: each
    admin-up port whose port-critical rows change goes down in a change of its own, the patch's other ops are applied
    (a port the patch adds admin up is added admin down), then its port-critical ops, and each port goes back up in a
    change of its own."""
    import jsonpatch
    target = jsonpatch.apply_patch(old, patch)
    flap = [p for p in critical_ports(old, target) if target.get("PORT", {}).get(p, {}).get("admin_status") == "up"]
    downs = [[{"op": "replace", "path": _pointer("PORT", p, "admin_status"), "value": "down"}]
             for p in flap if old.get("PORT", {}).get(p, {}).get("admin_status") == "up"]
    other, critical = [], []
    for op in patch:
        if op["op"] == "test":   # the sorter moves from the diff of current and target: a test op moves nothing
            continue
        op = copy.deepcopy(op)
        parts = _pointer_parts(op["path"])
        if op["op"] == "add" and parts[0] == "PORT" and isinstance(op.get("value"), dict):
            rows = {parts[1]: op["value"]} if len(parts) == 2 else op["value"] if len(parts) == 1 else {}
            for port, fields in rows.items():
                if port in flap and isinstance(fields, dict) and fields.get("admin_status") == "up":
                    fields["admin_status"] = "down"
        moves = _low_level(old, target, op)
        (critical if flap and parts[0] in PORT_CRITICAL else other).extend(m for m in moves if m not in other + critical)
    ups = [[{"op": "replace", "path": _pointer("PORT", p, "admin_status"), "value": "up"}] for p in flap]
    return downs + [c for c in (other, critical) if c] + ups


# --- buffermgrd, traditional model -----------------------------------------------------------------------------------
def _ranges(pgs):
    """buffermgr.cpp generateIdListFromMap: contiguous PG ids as ``a-b``, single ones as ``a``."""
    out, run = [], []
    for pg in sorted(set(pgs)) + [None]:
        if run and (pg is None or pg != run[-1] + 1):
            out.append(str(run[0]) if len(run) == 1 else "%d-%d" % (run[0], run[-1]))
            run = []
        if pg is not None:
            run.append(pg)
    return out


def buffermgrd(config, lookup):
    """The traditional buffermgrd's writes for the CONFIG_DB ``config`` (changed in place; ``lookup``: pg_profile_lookup.ini
    as {"<speed>|<cable>": {size, xon, xoff, threshold, xon_offset}}); returns the keys written."""
    if config.get("DEVICE_METADATA", {}).get("localhost", {}).get("buffer_model", "traditional") != "traditional":
        return []
    written = []
    cables = config.get("CABLE_LENGTH", {}).get("AZURE", {})
    for port, fields in sorted(config.get("PORT_QOS_MAP", {}).items()):
        cable, speed = cables.get(port), config.get("PORT", {}).get(port, {}).get("speed")
        pfc = fields.get("pfc_enable")
        if not cable or cable == "0m" or not speed or pfc is None or "%s|%s" % (speed, cable) not in lookup:
            continue
        row = lookup["%s|%s" % (speed, cable)]
        name = "pg_lossless_%s_%s_profile" % (speed, cable)
        profiles = config.setdefault("BUFFER_PROFILE", {})
        if name not in profiles:
            mode = config.get("BUFFER_POOL", {}).get("ingress_lossless_pool", {}).get("mode", "dynamic")
            profiles[name] = {"pool": "ingress_lossless_pool", "xon": row["xon"], "xoff": row["xoff"], "size": row["size"],
                              mode + "_th": row["threshold"]}
            if row.get("xon_offset"):
                profiles[name]["xon_offset"] = row["xon_offset"]
            written.append("BUFFER_PROFILE|%s" % name)
        pgs = [int(p) for p in pfc.split(",") if p.strip().isdigit()]
        for pg in _ranges(pgs):
            key = "%s|%s" % (port, pg)
            if config.setdefault("BUFFER_PG", {}).get(key, {}).get("profile") != name:
                config["BUFFER_PG"][key] = {"profile": name}
                written.append("BUFFER_PG|%s" % key)
    return written


def without_backend(config):
    return dict((t, rows) for t, rows in config.items() if t not in BACKEND_TABLES)


def same(a, b):
    return json.dumps(without_backend(a), sort_keys=True) == json.dumps(without_backend(b), sort_keys=True)
