# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GOM agent as a Kubernetes DaemonSet (docs/gom.md, docs/kubernetes.md): pure, no Kubernetes client.

One ConfigMap holds the agent script and one JSON config per GPU host (``<host>.json``, the same config role
``gom_agent`` writes); the DaemonSet runs the agent on the host network (the probes leave from the host's rail NICs
with the planned source ports) on every node labelled ``aifabric.roce/gpu-host=true``, each pod picking its config
by its node name (``spec.nodeName``, which must be the plan's host name, or ``node_names`` maps it).
"""
from __future__ import annotations

import json

DEFAULT_IMAGE = "docker.io/library/python:3.11-slim"
SHARD_BYTES = 900 * 1024


class K8sGomError(ValueError):
    pass


def agent_configs(probes_by_host, collector, rate=10.0, dscp=26, dport=4792):
    """{host: agent config} from probe_plan's ``probes_by_host``: each host answers on the addresses probed."""
    addresses = {}
    for host, probes in probes_by_host.items():
        for probe in probes:
            addresses.setdefault(probe["dst_host"], set()).add(probe["dst_address"])
    hosts = sorted(set(probes_by_host) | set(addresses))
    return dict((host, {"host": host, "collector": collector, "rate": rate, "dscp": dscp, "dport": dport,
                        "addresses": sorted(addresses.get(host, ())), "probes": probes_by_host.get(host, [])})
                for host in hosts)


def daemonset(probes_by_host, agent_source, collector, namespace="kube-system", image=DEFAULT_IMAGE, name="aifabric-gom-agent",
              rate=10.0, dscp=26, dport=4792, node_names=None):
    """[ConfigMap..., DaemonSet] running the GOM agent on every GPU host node."""
    if not collector or ":" not in collector:
        raise K8sGomError("gom_collector %r: give the collector's HOST:PORT as the nodes reach it (e.g. 10.0.0.5:9720)"
                          % (collector,))
    configs = agent_configs(probes_by_host, collector, rate, dscp, dport)
    node_names = node_names or {}
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "aifabric-roce"}
    # a ConfigMap holds at most 1 MiB: the host configs go in shards, all projected into one volume
    shards, size = [{"agent.py": agent_source}], len(agent_source)
    for host in sorted(configs):
        text = json.dumps(configs[host], sort_keys=True)
        if size + len(text) > SHARD_BYTES:
            shards.append({})
            size = 0
        shards[-1]["%s.json" % node_names.get(host, host)] = text
        size += len(text)
    maps = [{"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "%s-%d" % (name, index), "namespace": namespace, "labels": labels}, "data": data}
            for index, data in enumerate(shards)]
    container = {
        "name": "agent", "image": image,
        # $(NODE_NAME) is expanded by the kubelet from the env below
        "command": ["python3", "/gom/agent.py", "--config", "/gom/$(NODE_NAME).json"],
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "volumeMounts": [{"name": "gom", "mountPath": "/gom", "readOnly": True}],
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True},
    }
    ds = {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet",
                    "nodeSelector": {"aifabric.roce/gpu-host": "true"},
                    "tolerations": [{"operator": "Exists"}],
                    "priorityClassName": "system-node-critical",
                    "containers": [container],
                    "volumes": [{"name": "gom", "projected": {"sources": [
                        {"configMap": {"name": m["metadata"]["name"]}} for m in maps]}}],
                },
            },
        },
    }
    return maps + [ds]
