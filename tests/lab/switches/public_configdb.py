"""Public community SONiC CONFIG_DBs for tests (test code): SONiC's own template output for two real switches, composed
into the CONFIG_DB such a switch holds after `config load_minigraph` (tests/fixtures/switches/sonic/configdb/SOURCE.md
says where each file comes from and how the parts are put together).

* ``mellanox-sn4600c-dynamic``: Mellanox SN4600C (Spectrum-3), SKU Mellanox-SN4600C-C64, T1 minigraph, the DYNAMIC
  buffer model (platform/mellanox/rules.mk sets SONIC_BUFFER_MODEL=dynamic): lossless PGs ``<port>|3-4`` with profile
  ``NULL`` (headroom computed by buffermgrd) beside the lossy ``<port>|0``;
* ``arista-7260cx3-traditional``: Arista 7260CX3 (Broadcom Tomahawk 2), SKU Arista-7260CX3-C64, T1 minigraph, the
  TRADITIONAL buffer model (the default of every other image): only the lossy ``<port>|0`` in BUFFER_PG; buffermgrd
  writes the lossless PGs and their ``pg_lossless_<speed>_<cable>_profile`` from PORT_QOS_MAP ``pfc_enable``.

``remap(intent, config)`` puts a plan's leaf intent on the switch's own active ports (in order), as an operator would
when bringing such a switch under the collection.
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures", "switches", "sonic", "configdb")

SWITCHES = {
    "mellanox-sn4600c-dynamic": {
        "qos": "qos-mellanox4600c-c64.json", "buffers": "buffers-mellanox4600c-t1-dynamic.json",
        "ports": "port_config-ACS-MSN4600C.ini", "speed": "100000",   # hwsku.json default_brkout_mode 1x100G
        "metadata": {"hostname": "r-tigon-11", "hwsku": "Mellanox-SN4600C-C64", "platform": "x86_64-mlnx_msn4600c-r0",
                     "type": "LeafRouter", "buffer_model": "dynamic"},
    },
    "arista-7260cx3-traditional": {
        "qos": "qos-arista7260-t1.json", "buffers": "buffer-arista7260-t1.json",
        "ports": "port_config-Arista-7260CX3-C64.ini", "speed": None,   # the ini's speed column
        "metadata": {"hostname": "str-7260cx3-acs-7", "hwsku": "Arista-7260CX3-C64", "platform": "x86_64-arista_7260cx3_64",
                     "type": "LeafRouter", "buffer_model": "traditional"},
        "pg_profile_lookup": "pg_profile_lookup-th2-7260-BALANCED.ini",
    },
}


def _json(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return json.load(handle)


def port_config(name):
    """port_config.ini -> [{name, lanes, alias, index, speed?}] (its `# name lanes alias index speed` header)."""
    rows, header = [], None
    with open(os.path.join(FIXTURES, name)) as handle:
        for line in handle:
            words = line.split()
            if line.startswith("#"):
                if len(words) > 1 and words[1] == "name":
                    header = words[1:]
                continue
            if words:
                rows.append(dict(zip(header, words)))
    return rows


def pg_profile_lookup(name):
    """pg_profile_lookup.ini -> {"<speed>|<cable>": {size, xon, xoff, threshold, xon_offset}} (buffermgrd's lookup)."""
    out = {}
    with open(os.path.join(FIXTURES, name)) as handle:
        for line in handle:
            words = line.split()
            if words and not line.lstrip().startswith("#"):
                out["%s|%s" % (words[0], words[1])] = dict(zip(("size", "xon", "xoff", "threshold", "xon_offset"), words[2:]))
    return out


def load(name):
    """The composed CONFIG_DB of one public switch (a fresh copy)."""
    spec = SWITCHES[name]
    config = copy.deepcopy(_json(spec["qos"]))
    config.update(copy.deepcopy(_json(spec["buffers"])))
    active = set(k.split("|")[0] for k in config["BUFFER_PG"])
    config["PORT"] = {}
    for row in port_config(spec["ports"]):
        port = {"lanes": row["lanes"], "alias": row["alias"], "index": row["index"],
                "speed": spec["speed"] or row["speed"]}
        if row["name"] in active:   # minigraph's linked ports: admin up, the minigraph's default MTU
            port.update(admin_status="up", mtu="9100")
        config["PORT"][row["name"]] = port
    config["DEVICE_METADATA"] = {"localhost": dict(spec["metadata"], default_pfcwd_status="disable",
                                                   default_bgp_status="up", timezone="UTC")}
    config["BGP_DEVICE_GLOBAL"] = {"STATE": {"tsa_enabled": "false"}}   # init_cfg.json.j2
    return config


def state(name):
    """A configdb_sim switch state for one public switch: its CONFIG_DB, saved, and buffermgrd's lookup where the
    switch runs the traditional model."""
    config = load(name)
    spec = SWITCHES[name]
    out = {"running": config, "startup": copy.deepcopy(config)}
    if spec.get("pg_profile_lookup"):
        out["pg_profile_lookup"] = pg_profile_lookup(spec["pg_profile_lookup"])
    return out


def active_ports(config):
    """The switch's linked ports (admin up), in port order."""
    ports = [p for p, f in config["PORT"].items() if f.get("admin_status") == "up"]
    return sorted(ports, key=lambda p: int(p[len("Ethernet"):]))


def remap(intent, config, ports_of):
    """``intent`` (a plan leaf's) with its ports renamed onto ``config``'s active ports, in order."""
    mine = list(ports_of(intent))
    theirs = active_ports(config)
    names = dict(zip(mine, theirs[:len(mine)]))

    def walk(value):
        if isinstance(value, dict):
            return dict((k, walk(v)) for k, v in value.items())
        if isinstance(value, list):
            return [walk(v) for v in value]
        return names.get(value, value) if isinstance(value, str) else value
    return walk(copy.deepcopy(intent))
