# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes rail networks from the plan: Spiderpool resources and plain Multus NADs.

Pure functions (no Ansible, no cluster access); docs/kubernetes.md documents the mapping.

* One ``SpiderIPPool`` per rail and server group (a single-group fabric: one per rail). Its
  ``subnet`` is the leaf subnet of that rail in that group (the L2 segment the pod's macvlan sits
  on), ``gateway`` the leaf gateway, ``ips`` the part of the leaf subnet no host can ever take,
  ``routes`` the rail pool via the gateway (the pod-side twin of the host IRM main-table route),
  ``nodeName`` the group's servers.
* One ``SpiderMultusConfig`` per rail: macvlan (or SR-IOV) on the rail netdev, default pools =
  that rail's pools of every group (Spiderpool picks the one whose ``nodeName`` matches).
  RDMA is asked for the way Spiderpool v1.x does it (the ``enableRdma`` key of v0.x was removed
  from the CRD in v1.0.0 and is pruned silently by today's API server): macvlan names the RDMA
  shared device plugin resource of the rail NIC (``macvlan.rdmaResourceName``), SR-IOV names
  the sriov-device-plugin resource and chains the RDMA CNI (``sriov.rdmaIsolation``).
* The pod requests one unit of each rail's RDMA resource (``pod_resources``), and
  ``rdma_shared_device_plugin`` is the k8s-rdma-shared-dev-plugin ``configList`` that reports
  those resources (one per rail, selected by the rail netdev).
* The pod annotation ``k8s.v1.cni.cncf.io/networks`` lists every rail network in rail order.
* Without Spiderpool: one ``NetworkAttachmentDefinition`` per rail (and group) with whereabouts
  IPAM over the same range; pods in a multi-group fabric need their group's annotation.
"""
from __future__ import annotations

import ipaddress
import json
import re
import string

SPIDER_API = "spiderpool.spidernet.io/v2beta1"
NAD_API = "k8s.cni.cncf.io/v1"
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"


class K8sRailError(ValueError):
    """The plan cannot be mapped onto pod rail networks (message names the fix)."""


def _segments(plan):
    """(rail, group) -> leaf subnet facts, from the leafs' gateways and the hosts on them."""
    segments = {}
    for leaf_name in sorted(plan["leafs"], key=lambda n: plan["leafs"][n]["slot"]):
        leaf = plan["leafs"][leaf_name]
        if not leaf.get("downlinks"):
            continue
        gateway = leaf.get("gateway")
        if not gateway:
            raise K8sRailError(
                "leaf %s has no subnet gateway (addressing scheme %s): pods on macvlan need an L2 rail subnet "
                "with free addresses. Fix: use addressing.scheme subnet_per_leaf for Kubernetes rail networks"
                % (leaf_name, plan.get("addressing_scheme")))
        segments[(leaf["rail"], leaf["group"])] = {
            "leaf": leaf_name,
            "subnet": ipaddress.ip_network(gateway["subnet"]),
            "gateway": ipaddress.ip_address(gateway["address"]),
            "hosts": [ipaddress.ip_address(d["host_address"]) for d in leaf["downlinks"]],
            "servers": [d["server"] for d in leaf["downlinks"]],
        }
    return segments


def pod_range(plan, segment):
    """First and last free address of a leaf subnet, with every host slot reserved.

    Hosts take the block after the network address (gateway ``last``) or after the gateway
    (gateway ``first``), one address per ``servers_per_group`` slot (docs/planner.md); reserving
    the whole block keeps pod addresses clear of servers added to the group later.
    """
    subnet = segment["subnet"]
    spg = plan["sizing"]["servers_per_group"]
    first_host = min(segment["hosts"]) if segment["hosts"] else subnet.network_address + 1
    lowest_slot = subnet.network_address + (2 if segment["gateway"] == subnet.network_address + 1 else 1)
    start_block = min(first_host, lowest_slot)
    reserved = set([segment["gateway"], subnet.network_address, subnet.broadcast_address])
    reserved.update(segment["hosts"])
    reserved.update(start_block + i for i in range(spg))
    free = [a for a in subnet.hosts() if a not in reserved and a > start_block]
    if not free:
        raise K8sRailError(
            "leaf subnet %s (%s) has no address left for pods after %d host slots and the gateway. "
            "Fix: give the rail pools room (a larger servers_per_group block) or use host-network pods"
            % (subnet, segment["leaf"], spg))
    # keep one contiguous run (the top of the subnet below/above the gateway)
    run = [free[0]]
    for addr in free[1:]:
        if addr == run[-1] + 1:
            run.append(addr)
        else:
            break
    return run[0], run[-1]


def _names(prefix, rail, group, groups):
    base = "%srail%d" % (prefix, rail)
    return _object_name(base if groups == 1 else "%s-g%d" % (base, group), prefix)


# kubernetes/apimachinery pkg/util/validation/validation.go: dns1123LabelFmt (at most 63, a namespace), a DNS-1123
# subdomain (labels joined by '.', at most 253: object names), and a qualified name's name part (at most 63,
# [A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]: the part after '/' of an extended resource name)
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_RAIL_SPEC = re.compile(r"^0?[1-9]?d?$")  # {rail}, {rail:d}, {rail:02d}: a width of at most 9


def check_namespace(namespace):
    """A Kubernetes namespace is a DNS-1123 label; raise K8sRailError naming ``namespace`` otherwise."""
    if not isinstance(namespace, str) or len(namespace) > 63 or not _DNS1123_LABEL.match(namespace):
        raise K8sRailError("namespace %r is not a DNS-1123 label (lower-case letters, digits and '-', starting and "
                           "ending with a letter or digit, at most 63 characters), which Kubernetes requires of a "
                           "namespace. Fix: use a name such as kube-system or rdma-net" % (namespace,))


def _object_name(name, prefix):
    if len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
        raise K8sRailError("name_prefix %r gives the object name %r, not a DNS-1123 subdomain (lower-case letters, "
                           "digits, '-' and '.', at most 253 characters), which Kubernetes requires. Fix: use a "
                           "prefix such as 'roce-'" % (prefix, name))
    return name


def _format(template, rail, option):
    """template.format(rail=rail) for a template whose only field is {rail} (no positional field, attribute,
    index, conversion or width over 9): a user's template never crashes the module or fills memory."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise K8sRailError("%s %r is not a format string (%s). Fix: write it like spidernet.io/rail{rail}"
                           % (option, template, exc))
    for _text, field, spec, conversion in fields:
        if field is None:
            continue
        if field != "rail" or conversion or not _RAIL_SPEC.match(spec or ""):
            used = field + ("!" + conversion if conversion else "") + (":" + spec if spec else "")
            raise K8sRailError("%s %r uses the field {%s}: only {rail} (optionally {rail:02d}) is allowed. Fix: "
                               "write it like spidernet.io/rail{rail}" % (option, template, used))
    return template.format(rail=rail)


def _resource(template, rail, option):
    name = _format(template, rail, option)
    prefix, sep, short = name.partition("/")
    if (not sep or not prefix or not short or "/" in short or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)
            or len(short) > 63 or not _QUALIFIED_NAME.match(short)):
        raise K8sRailError(
            "%s %r gives %r for rail %d, not an extended resource name <prefix>/<name>. "
            "(a DNS-1123 subdomain, '/', a name of at most 63 letters, digits, '-', '_', '.'). "
            "Fix: use a name such as spidernet.io/rail{rail}" % (option, template, name, rail))
    return name


def render(plan, namespace="kube-system", cni="macvlan", prefix="", sriov_resource="spidernet.io/rail{rail}",
           enable_rdma=True, rdma_resource="spidernet.io/rail{rail}"):
    """All manifests and annotations for the plan's rail networks (a dict of lists)."""
    if cni not in ("macvlan", "sriov"):
        raise K8sRailError("cni %r is not supported. Fix: use macvlan or sriov" % cni)
    check_namespace(namespace)
    for option, template in (("sriov_resource", sriov_resource), ("rdma_resource", rdma_resource)):
        _resource(template, 0, option)
    segments = _segments(plan)
    groups = sorted(set(g for (_r, g) in segments))
    rails = sorted(set(r for (r, _g) in segments))
    host_nic = {}
    rail_pool = {}
    for host in plan["hosts"].values():
        for nic in host["nics"]:
            host_nic.setdefault(nic["rail"], nic["netdev"])
            rail_pool.setdefault(nic["rail"], nic["rail_pool"])
    pools, configs, nads, ranges = [], [], [], []
    pod_resources, device_plugin = {}, []
    for rail in rails:
        pool_names = []
        for group in groups:
            segment = segments.get((rail, group))
            if segment is None:
                continue
            name = _names(prefix, rail, group, len(groups))
            first, last = pod_range(plan, segment)
            route = {"dst": rail_pool[rail], "gw": str(segment["gateway"])}
            pools.append({
                "apiVersion": SPIDER_API, "kind": "SpiderIPPool",
                "metadata": {"name": name, "labels": {"aifabric.roce/rail": str(rail), "aifabric.roce/group": str(group)}},
                "spec": {
                    "ipVersion": 4,
                    "subnet": str(segment["subnet"]),
                    "gateway": str(segment["gateway"]),
                    "ips": [str(first) if first == last else "%s-%s" % (first, last)],
                    "routes": [route],
                    "nodeName": list(segment["servers"]),
                },
            })
            ranges.append({"rail": rail, "group": group, "pool": name, "leaf": segment["leaf"],
                           "subnet": str(segment["subnet"]), "first": str(first), "last": str(last),
                           "capacity": int(last) - int(first) + 1})
            pool_names.append(name)
            ipam = {"type": "whereabouts", "range": str(segment["subnet"]), "range_start": str(first),
                    "range_end": str(last), "gateway": str(segment["gateway"]), "routes": [route]}
            if cni == "macvlan":
                config = {"cniVersion": "0.3.1", "name": name, "type": "macvlan", "master": host_nic[rail],
                          "mode": "bridge", "ipam": ipam}
                # Multus asks the device plugin for the NAD's resource when a pod uses it
                resource = ({"k8s.v1.cni.cncf.io/resourceName": _resource(rdma_resource, rail, "rdma_resource")}
                            if enable_rdma else {})
            else:
                config = {"cniVersion": "0.3.1", "name": name, "type": "sriov", "ipam": ipam}
                resource = {"k8s.v1.cni.cncf.io/resourceName": _resource(sriov_resource, rail, "sriov_resource")}
            nads.append({
                "apiVersion": NAD_API, "kind": "NetworkAttachmentDefinition",
                "metadata": dict({"name": name, "namespace": namespace}, **({"annotations": resource} if resource else {})),
                "spec": {"config": json.dumps(config, sort_keys=True)},
            })
        name = "%srail%d" % (prefix, rail)
        if cni == "macvlan":
            body = {"master": [host_nic[rail]], "ippools": {"ipv4": pool_names}}
            if enable_rdma:
                resource_name = _resource(rdma_resource, rail, "rdma_resource")
                body["rdmaResourceName"] = resource_name
                pod_resources[resource_name] = 1
                resource_prefix, _sep, short = resource_name.partition("/")
                device_plugin.append({"resourcePrefix": resource_prefix, "resourceName": short,
                                      "rdmaHcaMax": 100, "selectors": {"ifNames": [host_nic[rail]]}})
        else:
            resource_name = _resource(sriov_resource, rail, "sriov_resource")
            body = {"resourceName": resource_name, "rdmaIsolation": bool(enable_rdma),
                    "ippools": {"ipv4": pool_names}}
            pod_resources[resource_name] = 1
        configs.append({
            "apiVersion": SPIDER_API, "kind": "SpiderMultusConfig",
            "metadata": {"name": name, "namespace": namespace, "labels": {"aifabric.roce/rail": str(rail)}},
            "spec": {"cniType": cni, "enableCoordinator": True, cni: body},
        })
    spider_networks = ",".join("%s/%s" % (namespace, c["metadata"]["name"]) for c in configs)
    nad_annotations = {}
    for group in groups:
        nad_annotations[str(group)] = {NETWORKS_ANNOTATION: ",".join(
            "%s/%s" % (namespace, _names(prefix, rail, group, len(groups))) for rail in rails
            if (rail, group) in segments)}
    return {
        "spiderippools": pools,
        "spidermultusconfigs": configs,
        "pod_annotations": {NETWORKS_ANNOTATION: spider_networks},
        "networkattachmentdefinitions": nads,
        "nad_pod_annotations": nad_annotations,
        "pod_ranges": ranges,
        "pod_resources": pod_resources,
        "rdma_shared_device_plugin": {"configList": device_plugin} if device_plugin else None,
    }


def manifests(rendered, flavour="spiderpool"):
    """The documents to apply, in apply order (pools before the configs that name them)."""
    if flavour == "spiderpool":
        return rendered["spiderippools"] + rendered["spidermultusconfigs"]
    return list(rendered["networkattachmentdefinitions"])
