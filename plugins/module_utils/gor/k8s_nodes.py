# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes side of GOR: node labels per rail group, and cordon + taint for a fabric fault.

Pure functions (no cluster access); docs/scheduler.md documents them. No Kubernetes cluster runs
here: the rendered labels, taints and annotations are checked against the syntax Kubernetes
documents (labels: "Labels and Selectors"; taints: ``kubectl taint``'s reference page: key up to
253 characters with an optional DNS-subdomain prefix, value up to 63, effect NoSchedule,
PreferNoSchedule or NoExecute), not against a live API server.

* Labels: ``aifabric.io/fabric``, ``aifabric.io/group`` (the server group: hosts that reach each
  other through one leaf per rail) and ``aifabric.io/rail<r>-leaf`` per rail. A scheduler's
  topology-aware placement (a nodeAffinity or Kueue's topology levels) keys on the group label.
* A fault: ``kubectl cordon``, the taint ``aifabric.io/fabric-fault=<netdev>:NoSchedule`` and the
  annotation ``aifabric.io/drain-reason: "aifabric: <link> <event id>"`` (the reason: a label or
  taint value cannot hold ``:`` or ``>``). Uncordon only when that annotation is ours and names no
  other fault: a node cordoned by someone else is never uncordoned.
"""
from __future__ import annotations

import re
import shlex

from ansible_collections.aifabric.roce.plugins.module_utils.gor.slurm import owned_hold

DOMAIN = "aifabric.io"
FAULT_TAINT = DOMAIN + "/fabric-fault"
REASON_ANNOTATION = DOMAIN + "/drain-reason"
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_NAME63 = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class K8sNodeError(ValueError):
    """A label, taint or annotation Kubernetes would refuse (the message names it and the fix)."""


def check_key(key):
    """A qualified key: optional DNS subdomain prefix (<= 253) and '/', name <= 63 (Kubernetes label syntax)."""
    prefix, _slash, name = key.rpartition("/")
    if (prefix and (len(prefix) > 253 or not _DNS1123.match(prefix))) or not _NAME63.match(name):
        raise K8sNodeError("key %r is not a Kubernetes qualified name ([prefix/]name, name up to 63 characters of "
                           "letters, digits, '-', '_', '.', starting and ending alphanumeric). Fix: a shorter or "
                           "plainer name" % key)
    return key


def check_value(key, value):
    if value != "" and not _NAME63.match(value):
        raise K8sNodeError("value %r of %s is not a Kubernetes label/taint value (up to 63 characters of letters, "
                           "digits, '-', '_', '.', starting and ending alphanumeric). Fix: rename it in the fabric"
                           % (value, key))
    return value


def node_labels(plan, node_names=None):
    """{node: {label: value}} for every host of the plan (sorted), each key and value checked."""
    node_names = node_names or {}
    fabric = plan.get("fabric") or "fabric"
    out = {}
    for host_name in sorted(plan["hosts"]):
        host = plan["hosts"][host_name]
        labels = {DOMAIN + "/fabric": fabric, DOMAIN + "/group": str(host["group"])}
        for nic in host["nics"]:
            labels["%s/rail%d-leaf" % (DOMAIN, nic["rail"])] = nic["leaf"]
        for key, value in labels.items():
            check_value(check_key(key), value)
        out[node_names.get(host_name, host_name)] = labels
    return out


def label_commands(labels):
    """One ``kubectl label node`` command per node (``--overwrite``: the plan is the source of truth)."""
    return ["kubectl label node %s %s --overwrite" % (
        shlex.quote(node), " ".join(shlex.quote("%s=%s" % kv) for kv in sorted(values.items())))
        for node, values in sorted(labels.items())]


def fault_netdev(link, node):
    """The host NIC a GOM link name names on ``node`` (``gpu01:rail0>leaf0:Ethernet0`` -> rail0), else 'link'."""
    for end in link.split(">"):
        host, _colon, port = end.partition(":")
        if host == node and port:
            return port
    return "link"


def _annotations(node_object):
    return ((node_object or {}).get("metadata") or {}).get("annotations") or {}


K8S_WORDS = {"hold": "cordon", "held": "cordoned", "release": "uncordon", "released": "uncordoned"}


def decide(node_object, want, link, event=None, effect="NoSchedule"):
    """Commands for a fault on ``link`` of the Node ``node_object`` (``kubectl get node -o json``), by the same
    ownership rule as a Slurm drain (slurm.owned_hold; the reason is the drain-reason annotation).

    Returns {'action': 'cordon'|'update_reason'|'uncordon'|None, 'commands': [...], 'why': text, 'reason': ...}.
    """
    if effect not in EFFECTS:
        raise K8sNodeError("taint effect %r: use one of %s" % (effect, ", ".join(EFFECTS)))
    name = node_object["metadata"]["name"]
    cordoned = bool((node_object.get("spec") or {}).get("unschedulable"))
    reason = _annotations(node_object).get(REASON_ANNOTATION)
    out = owned_hold(cordoned, reason, "someone else (no %s of this collection)" % REASON_ANNOTATION if reason is None
                     else None, want, link, event, K8S_WORDS)
    node = shlex.quote(name)
    annotate = "kubectl annotate node %s %s --overwrite" % (node, shlex.quote("%s=%s" % (REASON_ANNOTATION, out["reason"])))
    if out["action"] == "hold":
        taint = "%s=%s:%s" % (FAULT_TAINT, check_value(FAULT_TAINT, fault_netdev(link, name)), effect)
        out.update(action="cordon", commands=["kubectl cordon %s" % node,
                                              "kubectl taint nodes %s %s --overwrite" % (node, shlex.quote(taint)),
                                              annotate])
    elif out["action"] == "update_reason":
        out["commands"] = [annotate]
    elif out["action"] == "release":
        out.update(action="uncordon", commands=["kubectl taint nodes %s %s-" % (node, FAULT_TAINT),
                                                "kubectl annotate node %s %s-" % (node, REASON_ANNOTATION),
                                                "kubectl uncordon %s" % node])
    else:
        out["commands"] = []
    return out
