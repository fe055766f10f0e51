"""CONFIG_DB tables -> SONiC YANG instance data (XML), checked with Debian's ``yanglint`` against SONiC's own
models (../shared/oracles/sonic-yang-models): the test oracle for the community_sonic driver and the check the
lab's ``config apply-patch`` runs, as SONiC's Generic Config Updater validates a patched config with the models.

CONFIG_DB keeps every value as a string; libyang 2 types JSON strictly (RFC 7951), so the data is written as XML,
whose values carry no JSON type. The table -> list mapping follows the models (sonic-yang-mgmt's
sonic_yang_ext does the same translation in SONiC, picking a table's list by the number of key parts).
Test code: never imported by the product.
"""
import os
import re
import subprocess
import tempfile
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODELS = os.path.normpath(os.path.join(ROOT, "..", "shared", "oracles", "sonic-yang-models"))
YANG_DIR = os.path.join(MODELS, "yang-models")

# TABLE -> (module, {number of key parts: (list name, [key leaf names])}) for key/field tables;
# ("map", module, inner list, key leaf, value leaf) for {name: {code: value}} tables;
# ("container", module) for tables whose keys are containers (DEVICE_METADATA|localhost, BGP_BBR|all)
SPEC = {
    "PORT": ("sonic-port", {1: ("PORT_LIST", ["name"])}),
    "PORT_QOS_MAP": ("sonic-port-qos-map", {1: ("PORT_QOS_MAP_LIST", ["ifname"])}),
    "WRED_PROFILE": ("sonic-wred-profile", {1: ("WRED_PROFILE_LIST", ["name"])}),
    "SCHEDULER": ("sonic-scheduler", {1: ("SCHEDULER_LIST", ["name"])}),
    "QUEUE": ("sonic-queue", {2: ("QUEUE_LIST", ["ifname", "qindex"])}),
    "PFC_WD": ("sonic-pfcwd", {1: ("PFC_WD_LIST", ["ifname"])}),
    "BUFFER_PG": ("sonic-buffer-pg", {2: ("BUFFER_PG_LIST", ["port", "pg_num"])}),
    "BUFFER_POOL": ("sonic-buffer-pool", {1: ("BUFFER_POOL_LIST", ["name"])}),
    "BUFFER_PROFILE": ("sonic-buffer-profile", {1: ("BUFFER_PROFILE_LIST", ["name"])}),
    "ACL_TABLE": ("sonic-acl", {1: ("ACL_TABLE_LIST", ["ACL_TABLE_NAME"])}),
    "ACL_RULE": ("sonic-acl", {2: ("ACL_RULE_LIST", ["ACL_TABLE_NAME", "RULE_NAME"])}),
    "INTERFACE": ("sonic-interface", {1: ("INTERFACE_LIST", ["name"]), 2: ("INTERFACE_IPPREFIX_LIST", ["name", "ip-prefix"])}),
    "LOOPBACK_INTERFACE": ("sonic-loopback-interface", {1: ("LOOPBACK_INTERFACE_LIST", ["name"]),
                                                        2: ("LOOPBACK_INTERFACE_IPPREFIX_LIST", ["name", "ip-prefix"])}),
    "VLAN": ("sonic-vlan", {1: ("VLAN_LIST", ["name"])}),
    "VLAN_MEMBER": ("sonic-vlan", {2: ("VLAN_MEMBER_LIST", ["name", "port"])}),
    "VLAN_INTERFACE": ("sonic-vlan", {1: ("VLAN_INTERFACE_LIST", ["name"]), 2: ("VLAN_INTERFACE_IPPREFIX_LIST", ["name", "ip-prefix"])}),
    "BGP_NEIGHBOR": ("sonic-bgp-neighbor", {1: ("BGP_NEIGHBOR_TEMPLATE_LIST", ["neighbor"]),
                                            2: ("BGP_NEIGHBOR_LIST", ["vrf_name", "neighbor"])}),
    "DSCP_TO_TC_MAP": ("map", "sonic-dscp-tc-map", "DSCP_TO_TC_MAP", "dscp", "tc"),
    "TC_TO_QUEUE_MAP": ("map", "sonic-tc-queue-map", "TC_TO_QUEUE_MAP", "tc", "qindex"),
    "TC_TO_PRIORITY_GROUP_MAP": ("map", "sonic-tc-priority-group-map", "TC_TO_PRIORITY_GROUP_MAP", "tc", "pg"),
    "MAP_PFC_PRIORITY_TO_QUEUE": ("map", "sonic-pfc-priority-queue-map", "MAP_PFC_PRIORITY_TO_QUEUE", "pfc_priority", "qindex"),
    "CABLE_LENGTH": ("map", "sonic-cable-length", "CABLE_LENGTH", "port", "length"),
    "DEVICE_METADATA": ("container", "sonic-device_metadata"),
    "BGP_BBR": ("container", "sonic-bgp-bbr"),
}


def available():
    """None when the oracle can run, else why not (a clear skip reason)."""
    if not os.path.isdir(YANG_DIR):
        return "SONiC's YANG models are not here (%s): ../shared/oracles is absent in this checkout" % YANG_DIR
    if subprocess.call(["sh", "-c", "command -v yanglint >/dev/null"]) != 0:
        return "yanglint is not installed (Debian libyang-tools; tools/setup-system.sh installs it)"
    return None


def module_of(table):
    spec = SPEC[table]
    return spec[1] if spec[0] in ("map", "container") else spec[0]


def _namespace(module):
    with open(os.path.join(YANG_DIR, module + ".yang")) as handle:
        return re.search(r'namespace\s+"([^"]+)"', handle.read()).group(1)


def _leaf(name, value):
    values = value if isinstance(value, list) else [value]
    return "".join("<%s>%s</%s>" % (name, escape(str(v)), name) for v in values)


def _table_xml(table, rows):
    spec = SPEC[table]
    if spec[0] == "map":
        _kind, _module, inner, key_leaf, value_leaf = spec
        out = []
        for name in sorted(rows):
            entries = "".join("<%s>%s%s</%s>" % (inner, _leaf(key_leaf, k), _leaf(value_leaf, v), inner)
                              for k, v in sorted(rows[name].items()))
            out.append("<%s_LIST>%s%s</%s_LIST>" % (table, _leaf("name", name), entries, table))
        return "".join(out)
    if spec[0] == "container":
        return "".join("<%s>%s</%s>" % (key, "".join(_leaf(f, v) for f, v in sorted(fields.items())), key)
                       for key, fields in sorted(rows.items()))
    lists = spec[1]
    out = []
    for key in sorted(rows):
        parts = key.split("|")
        if len(parts) not in lists:
            raise ValueError("%s|%s: SONiC's model has no list with %d key parts" % (table, key, len(parts)))
        list_name, key_leaves = lists[len(parts)]
        body = "".join(_leaf(k, v) for k, v in zip(key_leaves, parts))
        body += "".join(_leaf(f, v) for f, v in sorted(rows[key].items()) if f not in key_leaves)
        out.append("<%s>%s</%s>" % (list_name, body, list_name))
    return "".join(out)


def to_xml(config):
    """A CONFIG_DB (tables this module knows) as YANG instance XML, one top container per module."""
    by_module = {}
    for table in sorted(config):
        if table not in SPEC:
            raise ValueError("no YANG mapping for table %s in this converter" % table)
        by_module.setdefault(module_of(table), []).append(
            "<%s>%s</%s>" % (table, _table_xml(table, config[table]), table))
    return "<config>%s</config>" % "".join(
        '<%s xmlns="%s">%s</%s>' % (module, _namespace(module), "".join(parts), module)
        for module, parts in sorted(by_module.items()))


# modules other models reference in `must`/`when`: loaded first, so those checks are compiled as
# implemented (libyang skips a check whose module was only imported when the referencing model compiled)
FIRST = ("sonic-device_metadata", "sonic-system-tacacs", "sonic-mgmt_vrf")


def _modules():
    names = sorted(f[:-5] for f in os.listdir(YANG_DIR) if f.endswith(".yang"))
    return list(FIRST) + [n for n in names if n not in FIRST]


def _documents(config):
    """One XML document per module container (yanglint takes one top element per file)."""
    body = to_xml(config)[len("<config>"):-len("</config>")]
    return [doc for doc, _module in re.findall(r'(<(sonic-[\w-]+) xmlns=.*?</\2>)', body)]


def validate_many(configs):
    """yanglint each CONFIG_DB against every SONiC model in one yanglint session (the models load once,
    ~0.4 s) -> [(ok, message)]. ok: yanglint reported no error for that config."""
    with tempfile.TemporaryDirectory(prefix="aif-yang-") as tmp:
        lines = ["searchpath %s" % YANG_DIR] + ["add %s" % os.path.join(YANG_DIR, m + ".yang") for m in _modules()]
        for i, config in enumerate(configs):
            files = []
            for j, doc in enumerate(_documents(config)):
                path = os.path.join(tmp, "c%d-%d.xml" % (i, j))
                with open(path, "w") as handle:
                    handle.write(doc)
                files.append(path)
            if files:
                lines.append("data -t config -m %s" % " ".join(files))
            # a file that does not exist: its error line closes this config's answers
            lines.append("data -t config %s" % os.path.join(tmp, "END-%d.xml" % i))
        proc = subprocess.run(["yanglint"], input="\n".join(lines) + "\n", stdout=subprocess.PIPE, check=False,
                              stderr=subprocess.STDOUT, universal_newlines=True, cwd=tmp,
                              env=dict(os.environ, HOME=tmp))
    out, current, results = proc.stdout.splitlines(), [], []
    loaded = False
    for line in out:
        marker = re.search(r"END-(\d+)\.xml", line)
        if marker:
            errors = [x for x in current if x.startswith(("libyang[0]", "YANGLINT[E]"))]
            results.append((not errors, "\n".join(errors)))
            current = []
            continue
        if "not freed from the dictionary" in line:
            continue
        current.append(line)
        loaded = True
    if len(results) != len(configs):
        raise RuntimeError("yanglint answered %d of %d configs (rc %s): %s" % (
            len(results), len(configs), proc.returncode, "\n".join(out[-20:]) if loaded else proc.stdout[-2000:]))
    return results


def validate(config):
    """yanglint one CONFIG_DB -> (ok, message)."""
    return validate_many([config])[0]


def _plain(name):
    return name.split(":", 1)[-1]


def _cdb(value):
    """A YANG JSON value as CONFIG_DB stores it: strings; booleans as ``true``/``false``; lists kept."""
    if isinstance(value, list):
        return [_cdb(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def from_yang_json(doc):
    """YANG-shaped JSON (SONiC's own samples in tests/tests_config) -> CONFIG_DB tables, for the tables this
    module maps; raises KeyError naming a table it does not map. The inverse of ``to_xml``'s shaping."""
    config = {}
    for _module, containers in doc.items():
        for table_name, body in containers.items():
            table = _plain(table_name)
            spec = SPEC[table]
            rows = config.setdefault(table, {})
            if spec[0] == "container":
                for key, fields in body.items():
                    rows[_plain(key)] = dict((_plain(f), _cdb(v)) for f, v in fields.items())
                continue
            if spec[0] == "map":
                _kind, _m, inner, key_leaf, value_leaf = spec
                for entry in body.get("%s_LIST" % table, []):
                    rows[entry["name"]] = dict((str(e[key_leaf]), str(e[value_leaf])) for e in entry.get(inner, []))
                continue
            lists = dict((name, keys) for name, keys in spec[1].values())
            for list_name, entries in body.items():
                keys = lists[_plain(list_name)]
                for entry in entries:
                    entry = dict((_plain(f), v) for f, v in entry.items())
                    key = "|".join(str(entry.get(k, "")) for k in keys)
                    rows[key] = dict((f, _cdb(v)) for f, v in entry.items() if f not in keys)
    return config
