# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read once, change only what drifted (module aifabric.roce.host_state).

The host roles each converge one part of a GPU host: host_network (rail_network: MTU, addresses, per-NIC
tables, rules, sysctls, persistence files), host_rdma_qos (rdma_qos: trust/PFC/DSCP map, ECN, RoCE ToS,
replay script and unit), host_irq_affinity (irq_affinity: completion IRQ pinning, irqbalance ban, replay
files) and host_nccl (nccl_config: NCCL files). The host read runs each of their modules' own comparison in
check mode in one module call on the host, and says per role whether it drifted; a role whose part did not
drift skips its apply tasks. The judgement here is pure: from each check-mode result (or the error that
stopped it) and the systemd units' state read with ``systemctl`` to ``{role: {drifted, changes, reason}}``.

Judged drifted (the role runs, as without the read): a check that reports ``changed``; a check that failed
(the role's own module then fails with its own message, as today); a unit the role enables that is not
enabled (or a unit it stops that is running); and a role the read was not asked about.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# role -> the module whose check-mode run judges it (the option of host_state carrying its arguments)
ROLES = (("host_network", "rail_network"), ("host_rdma_qos", "rdma_qos"),
         ("host_irq_affinity", "irq_affinity"), ("host_nccl", "nccl_config"))
MODULE_OF = dict(ROLES)
ROLE_OF = dict((module, role) for role, module in ROLES)
# `systemctl is-enabled` answers that mean the unit starts at boot (systemctl(1), is-enabled table)
ENABLED = ("enabled", "enabled-runtime", "alias", "static", "indirect", "generated")


def network_changes(result):
    """rail_network: its own change lines (runtime items and persistence files)."""
    return list(result.get("changes") or [])


def qos_changes(result):
    """rdma_qos: tool commands it would run, sysfs/configfs values and files it would write."""
    changes = ["%s: %s" % (netdev, " ".join(argv)) for netdev, item in sorted((result.get("interfaces") or {}).items())
               for argv in item.get("commands") or []]
    for netdev, item in sorted((result.get("interfaces") or {}).items()):
        for res in item.get("sysfs") or []:
            if res.get("changed"):
                changes.append("%s %s -> %s" % (res["path"], res.get("before"), res.get("after")))
        cc = item.get("congestion") or {}
        if cc.get("status") in ("would change", "set"):
            changes.append("%s congestion control %s: %s -> %s" % (netdev, cc.get("interface"), cc.get("before"), cc.get("after")))
    changes += ["file %s" % d["before_header"] for d in result.get("diff") or []
                if d.get("before_header") in (result.get("files") or [])]
    return changes


def irq_changes(result):
    """irq_affinity: IRQs whose affinity differs, and files it would write."""
    changes = ["%s irq %d (%s): %s -> %s" % (a["netdev"], a["irq"], a["name"], a.get("before"), a["cpu"])
               for a in result.get("assignments") or [] if a.get("status") in ("would change", "changed")]
    changes += ["file %s" % d["before_header"] for d in (result.get("diff") or [])[1:]]
    return changes


def nccl_changes(result):
    """nccl_config: the NCCL variables that differ (or the files, when only the layout differs)."""
    drift = ["%s: %s -> %s" % (item["item"], item["actual"], item["expected"]) for item in result.get("drift") or []]
    return drift or ["file %s" % d["before_header"] for d in result.get("diff") or []]


CHANGES = {"host_network": network_changes, "host_rdma_qos": qos_changes, "host_irq_affinity": irq_changes,
           "host_nccl": nccl_changes}


def unit_problems(service, enabled, active):
    """What differs between a unit's wanted state and ``systemctl is-enabled`` / ``is-active`` answers
    (None: systemctl could not be asked). ``service``: {name, enabled: bool, active: bool or None}."""
    problems = []
    if enabled is None or (service.get("active") is not None and active is None):
        return ["service %s: state unknown (no systemctl)" % service["name"]]
    want = service.get("enabled")
    if want is not None and (enabled in ENABLED) != bool(want):
        problems.append("service %s is-enabled %s (want %s)" % (service["name"], enabled, "enabled" if want else "disabled"))
    if service.get("active") is not None and (active == "active") != bool(service["active"]):
        problems.append("service %s is-active %s (want %s)" % (service["name"], active, "active" if service["active"] else "inactive"))
    return problems


def judge(checks, services=()):
    """Per-role drift from the check-mode runs.

    ``checks``: {role: ("ok", result) | ("error", message)} for every role the read was asked about;
    ``services``: [(service, problems)] with service {role, name, ...} and problems from unit_problems.
    Returns {role: {"drifted": bool, "changes": [str], "reason": str}} for every known role; a role
    missing from ``checks`` is drifted (not read: it runs as without the read)."""
    out = {}
    for role, dummy in ROLES:
        if role not in checks:
            out[role] = {"drifted": True, "changes": [], "reason": "not read"}
            continue
        kind, value = checks[role]
        if kind == "error":
            out[role] = {"drifted": True, "changes": [], "reason": "check failed: %s" % value}
        elif value.get("changed"):
            out[role] = {"drifted": True, "changes": CHANGES[role](value) or ["changed"], "reason": "drift"}
        else:
            out[role] = {"drifted": False, "changes": [], "reason": "in sync"}
    for service, problems in services:
        entry = out[service["role"]]
        if problems:
            entry["changes"] = entry["changes"] + problems
            if not entry["drifted"]:
                entry.update(drifted=True, reason="service")
    return out
