import contextlib
import json
import os
import threading

import lab
from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state
from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier, ApplyError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import lock_key, netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver


def params(switch_lab, name):
    return dict(host="127.0.0.1", port=switch_lab["ports"][name], username="admin", password="admin", device_type=None,
                host_key_checking=True, known_hosts=os.path.join(switch_lab["root"], "known_hosts"), timeout=10)


# what the switch role plans: AsterNOS (Easy RoCE REST) carries QoS only; community_sonic no pbr (the PPD redirect rule
# is outside SONiC's sonic-acl.yang, so GCU, and the transaction before it sends anything, refuses it there:
# tests/integration/switches/test_community_sonic.py shows it)
DEFAULT_SECTIONS = {"asternos": ("qos",), "community_sonic": ("qos", "mtu")}


def bgp_findings(switch_lab, name):
    """switch_validate's BGP reading of one switch (nos/bgp_state.py: the NOS's own summary command), by probe."""
    dev = switch_lab["devices"][name]
    conn = netmiko_factory(params(switch_lab, name), get_driver(dev["platform"]))()
    try:
        text = conn.send_command(get_driver(dev["platform"]).bgp_summary.command, read_timeout=30)
    finally:
        conn.disconnect()
    return dict((f["probe"], f) for f in bgp_state.findings(get_driver(dev["platform"]), dev["intent"], text))


def applier(switch_lab, name, sections=None, platform=None, **kw):
    dev = switch_lab["devices"][name]
    drv = get_driver(platform or dev["platform"])
    if sections is None:
        sections = DEFAULT_SECTIONS.get(drv.name, ("qos", "mtu", "pbr"))
    p = params(switch_lab, name)
    kw.setdefault("read_timeout", 20)
    kw.setdefault("reconnect_timeout", 5)
    kw.setdefault("lock_dir", os.path.join(switch_lab["root"], "locks"))
    return Applier(drv, netmiko_factory(p, drv), dev["intent"], switch_lab["plan"]["qos"], sections,
                   lock_key=lock_key(p), **kw)


def reset(switch_lab, name):
    dev = switch_lab["devices"][name]
    lab.reset(name, dev["platform"], dev["intent"], switch_lab["root"])


def canon(value):
    """Order-free form of a simulator config (trees or NVUE path lists)."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], list):
        return [value[0], canon(value[1])]   # a tree node: [line, children]
    if isinstance(value, list):
        return sorted((canon(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def full_state(name, root):
    st = lab.read_state(name, root)
    return {"running": json.dumps(canon(st["running"]), sort_keys=True), "startup": json.dumps(canon(st["startup"]), sort_keys=True),
            "checkpoints": sorted(st.get("checkpoints") or {}), "pending": st.get("pending"),
            "sessions": {k: v for k, v in (st.get("sessions") or {}).items() if v.startswith("pending")}}


def claim_of(run, planned):
    """``run.apply(*planned)`` -> "success", or the ApplyError it raised (what the run claims)."""
    try:
        run.apply(*planned)
        return "success"
    except ApplyError as exc:
        return exc


class Background(threading.Thread):
    """``run.apply(*planned)`` in a thread; after ``join()``, ``claim`` is "success" or the ApplyError."""

    def __init__(self, run, planned):
        threading.Thread.__init__(self, daemon=True)
        self.run_, self.planned, self.claim = run, planned, None
        self.start()

    def run(self):
        self.claim = claim_of(self.run_, self.planned)


@contextlib.contextmanager
def cli_session(switch_lab, name):
    """A second SSH session on the switch, as an engineer at its CLI (netmiko connection)."""
    op = applier(switch_lab, name)
    try:
        yield op._conn()
    finally:
        op.close()


def nothing_left(switch_lab, name, sections, **intent):
    """No command left for this change (the intent with ``intent`` over it): it is whole on the device."""
    dev = switch_lab["devices"][name]
    saved = dev["intent"]
    dev["intent"] = dict(saved, **intent)
    try:
        run = applier(switch_lab, name, sections=sections)
        left = run.plan()[2]
        run.close()
    finally:
        dev["intent"] = saved
    return not left
