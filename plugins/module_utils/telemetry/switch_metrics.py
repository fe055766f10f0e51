# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switch RoCE counters and PPD paths as Prometheus text, next to the host collector (roce_exporter.py).

Pure (no Ansible, no network). ``playbooks/audit.yml`` reads every switch with switch_facts (``counters``) and every
leaf's PPD paths with switch_validate (``ppd_paths``), then the module ``aifabric.roce.roce_metrics`` writes
:func:`render`'s text into a file for node_exporter's textfile collector (on the controller or wherever the build
dir is shared). The values change once per audit; docs/telemetry.md lists every series, and
``monitoring/roce-alerts.yml`` / ``monitoring/roce-dashboard.json`` read them.

Labels: ``switch``, ``role`` (leaf/spine), ``port``, ``facing`` (host, spine or leaf: what the port's plan link
reaches), ``rail`` (a leaf's rail; empty on spines), ``host`` and ``netdev`` (the server NIC behind a leaf downlink:
the same ``host``/``rail`` the host collector uses, so a rule can join ECN marks on a leaf port to the CNPs of the
NIC behind it), ``peer`` (the switch at the other end of a fabric link), ``priority`` (``0``..``7`` or ``all``) and
``lossless`` (``true`` on the plan's lossless priorities, ``false`` on the others, ``port`` for per-port counters).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import time

from ansible_collections.aifabric.roce.plugins.module_utils.telemetry.roce_exporter import Exposition
from ansible_collections.aifabric.roce.plugins.module_utils.nos.validation import parse_route_get

# switch_facts counter -> (metric, HELP, extra labels)
COUNTER_METRICS = (
    ("pfc_rx", "switch_pfc_pause_frames_total", "PFC pause frames per port, priority and direction (switch_facts pfc_rx/pfc_tx).",
     {"direction": "rx"}),
    ("pfc_tx", "switch_pfc_pause_frames_total", "PFC pause frames per port, priority and direction (switch_facts pfc_rx/pfc_tx).",
     {"direction": "tx"}),
    ("ecn_marked", "switch_ecn_marked_packets_total", "Packets ECN-marked (CE) by the switch queue (switch_facts ecn_marked).", {}),
    ("drops", "switch_queue_drops_total", "Packets dropped by the queue (switch_facts drops).", {}),
    ("drop_bytes", "switch_queue_drop_bytes_total", "Bytes dropped by the queue (switch_facts drop_bytes).", {}),
    ("wd_storms", "switch_pfcwd_storms_total", "PFC watchdog storms detected on the queue (switch_facts wd_storms).", {}),
    ("wd_restores", "switch_pfcwd_restores_total", "PFC watchdog restorations of the queue (switch_facts wd_restores).", {}),
)
STORMED = ("stormed", "DEADLOCK")


class _Series(object):
    """Exposition that leaves out empty labels (Prometheus reads an empty label as an absent one)."""

    def __init__(self):
        self.out = Exposition()

    def add(self, name, kind, help_text, labels, value):
        self.out.add(name, kind, help_text, dict((k, v) for k, v in labels.items() if v != ""), value)

    def render(self):
        return self.out.render()


def port_labels(plan):
    """{(switch, port): labels} for every plan port that carries RoCE: leaf downlinks (host side), leaf uplinks and
    spine downlinks."""
    out = {}
    nic_at = {}
    for host, rec in sorted((plan.get("hosts") or {}).items()):
        for nic in rec.get("nics") or []:
            nic_at[(nic.get("leaf"), nic.get("leaf_port"))] = (host, nic)
    for leaf, rec in sorted((plan.get("leafs") or {}).items()):
        rail = "" if rec.get("rail") is None else str(rec["rail"])
        base = {"switch": leaf, "role": "leaf", "rail": rail, "host": "", "netdev": "", "peer": ""}
        for down in rec.get("downlinks") or []:
            host, nic = nic_at.get((leaf, down["port"]), (down.get("server") or "", {}))
            out[(leaf, down["port"])] = dict(base, port=down["port"], facing="host", host=host,
                                             netdev=nic.get("netdev") or down.get("netdev") or "")
        for up in rec.get("uplinks") or []:
            out[(leaf, up["port"])] = dict(base, port=up["port"], facing="spine", peer=up.get("spine") or "")
    for spine, rec in sorted((plan.get("spines") or {}).items()):
        for down in rec.get("downlinks") or []:
            out[(spine, down["port"])] = {"switch": spine, "role": "spine", "rail": "", "host": "", "netdev": "",
                                          "peer": down.get("leaf") or "", "port": down["port"], "facing": "leaf"}
    return out


def lossless_priorities(plan):
    qos = plan.get("qos") or {}
    return set(str(p) for p in qos.get("lossless_priorities") or [qos.get("roce_priority", 3)])


def _role(plan, switch):
    return "leaf" if switch in (plan.get("leafs") or {}) else "spine" if switch in (plan.get("spines") or {}) else ""


def add_counters(out, plan, switches):
    """Samples of every switch's ``counters`` (switch_facts); ``switch_counters_up`` 1 for a switch read, 0 for one
    that failed or returned no counters."""
    labels_of = port_labels(plan)
    lossless = lossless_priorities(plan)
    for switch, facts in sorted((switches or {}).items()):
        role = _role(plan, switch)
        if not role:
            continue
        table = facts.get("counters") if isinstance(facts, dict) and not facts.get("failed") else None
        out.add("switch_counters_up", "gauge", "1 when switch_facts read this switch's RoCE counters at the last audit.",
                {"switch": switch, "role": role}, 1 if table is not None else 0)
        for port, prios in sorted((table or {}).items()):
            base = labels_of.get((switch, port)) or {"switch": switch, "role": role, "rail": "", "host": "", "netdev": "",
                                                     "peer": "", "port": port, "facing": ""}
            for prio, values in sorted(prios.items()):
                labels = dict(base, priority=prio, lossless="port" if prio == "all" else str(prio in lossless).lower())
                for key, metric, help_text, extra in COUNTER_METRICS:
                    if isinstance(values.get(key), int):
                        out.add(metric, "counter", help_text, dict(labels, **extra), values[key])
                if values.get("wd_state"):
                    out.add("switch_pfcwd_stormed", "gauge",
                            "1 while the PFC watchdog holds the queue stormed (SONiC stormed, NVUE DEADLOCK), else 0.",
                            labels, 1 if values["wd_state"] in STORMED else 0)


PINNED = re.compile(r"^pinned (\S+) -> ")


def add_ppd(out, plan, ppd):
    """PPD per leaf host port: the planned uplink against the live path that switch_validate's ``ppd_paths`` check
    read (``ip route get DST from SRC iif INGRESS`` on the leaf). ``ppd_binding_info`` for every planned binding
    (``status`` on_plan, moved, no_route or unverified); ``ppd_on_planned_uplink`` 1/0 only where the path was read."""
    for leaf, rec in sorted((plan.get("leafs") or {}).items()):
        result = (ppd or {}).get(leaf)
        found = {}
        for f in (result.get("findings") or []) if isinstance(result, dict) else []:
            m = PINNED.match(f.get("probe") or "")
            if m:
                found[m.group(1)] = f
        rail = "" if rec.get("rail") is None else str(rec["rail"])
        for b in rec.get("bindings") or []:
            source = b["source"].split("/")[0]
            labels = {"leaf": leaf, "rail": rail, "port": b["ingress"], "host": b.get("server") or "", "source": source,
                      "planned_uplink": b["uplink"], "planned_spine": b.get("spine") or "",
                      "planned_via": b.get("next_hop") or ""}
            f = found.get(source)
            live = {"live_uplink": "", "live_via": ""}
            if f is None or f.get("status") not in ("ok", "fail"):
                status = "unverified"
            else:
                got = parse_route_get(f.get("actual") or "")
                if "error" in got:
                    status = "no_route"
                else:
                    live = {"live_uplink": got.get("dev") or "", "live_via": got.get("via") or ""}
                    status = "on_plan" if f["status"] == "ok" else "moved"
                out.add("ppd_on_planned_uplink", "gauge",
                        "1 when the leaf forwards this host port's traffic to other leafs via its planned (PPD) uplink, "
                        "0 when the path left it (switch_validate ppd_paths).", labels, 1 if status == "on_plan" else 0)
            out.add("ppd_binding_info", "gauge",
                    "A PPD binding: host port, planned uplink/spine/next hop and the live path (status on_plan, moved, "
                    "no_route or unverified where the live path cannot be read).",
                    dict(labels, status=status, **live), 1)


def render(plan, switches=None, ppd=None, now=None):
    """Prometheus text: the switches' RoCE counters, the PPD bindings and the time of this audit."""
    out = _Series()
    add_counters(out, plan, switches)
    add_ppd(out, plan, ppd)
    out.add("switch_audit_timestamp_seconds", "gauge", "When the audit that wrote these switch series ran.",
            {"collector": "aifabric_audit"}, int(now if now is not None else time.time()))
    return out.render()
