# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""JSON Schemas (draft 7) for the manifests we render, written from the published CRDs.

Field names, types, enums and required keys are taken from the CRDs Spiderpool publishes in its
Helm chart (github.com/spidernet-io/spiderpool, charts/spiderpool/crds/
spiderpool.spidernet.io_spiderippools.yaml and spiderpool.spidernet.io_spidermultusconfigs.yaml,
version v2beta1) and from the Multus NetworkAttachmentDefinition CRD (k8s.cni.cncf.io/v1,
spec.config is a JSON string). They cover the subset of the schema this collection emits and
are stricter than the CRDs in one way: unknown keys are rejected (``additionalProperties:
false``) so a misspelt field fails here instead of being pruned silently by the API server.
The tests also validate every document against Spiderpool's own CRDs (v1.2.1, vendored under
tests/fixtures/spiderpool-crds/): these schemas must never accept a key the CRD would prune.
"""
from __future__ import annotations

_STRINGS = {"type": "array", "items": {"type": "string"}}
_POOLS = {"type": "object", "additionalProperties": False,
          "properties": {"ipv4": _STRINGS, "ipv6": _STRINGS}}
_META_NS = {"type": "object", "required": ["name", "namespace"],
            "properties": {"name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 253},
                           "namespace": {"type": "string"},
                           "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                           "annotations": {"type": "object", "additionalProperties": {"type": "string"}}}}
_META = {"type": "object", "required": ["name"],
         "properties": {"name": _META_NS["properties"]["name"],
                        "labels": _META_NS["properties"]["labels"]}}

SPIDER_IPPOOL = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "spiderpool.spidernet.io/v2beta1"},
        "kind": {"const": "SpiderIPPool"},
        "metadata": _META,
        "spec": {
            "type": "object",
            "required": ["subnet"],
            "additionalProperties": False,
            "properties": {
                "default": {"type": "boolean"},
                "disable": {"type": "boolean"},
                "excludeIPs": _STRINGS,
                "gateway": {"type": "string"},
                "ipVersion": {"enum": [4, 6]},
                "ips": _STRINGS,
                "multusName": _STRINGS,
                "nodeName": _STRINGS,
                "namespaceName": _STRINGS,
                "routes": {"type": "array", "items": {
                    "type": "object", "required": ["dst", "gw"], "additionalProperties": False,
                    "properties": {"dst": {"type": "string"}, "gw": {"type": "string"}}}},
                "subnet": {"type": "string"},
            },
        },
    },
}

_CNI_BODY = {
    "macvlan": {"type": "object", "required": ["master"], "additionalProperties": False,
                "properties": {"master": _STRINGS, "vlanID": {"type": "integer", "minimum": 0, "maximum": 4094},
                               "rdmaResourceName": {"type": "string"},
                               "ippools": _POOLS}},
    "sriov": {"type": "object", "required": ["resourceName"], "additionalProperties": False,
              "properties": {"resourceName": {"type": "string"}, "rdmaIsolation": {"type": "boolean"},
                             "vlanID": {"type": "integer", "minimum": 0, "maximum": 4094},
                             "ippools": _POOLS}},
}

SPIDER_MULTUS_CONFIG = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "spiderpool.spidernet.io/v2beta1"},
        "kind": {"const": "SpiderMultusConfig"},
        "metadata": _META_NS,
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "cniType": {"enum": ["macvlan", "ipvlan", "sriov", "ovs", "ib-sriov", "ipoib", "custom"]},
                "enableCoordinator": {"type": "boolean"},
                "disableIPAM": {"type": "boolean"},
                "macvlan": _CNI_BODY["macvlan"],
                "sriov": _CNI_BODY["sriov"],
            },
        },
    },
}

NETWORK_ATTACHMENT_DEFINITION = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "k8s.cni.cncf.io/v1"},
        "kind": {"const": "NetworkAttachmentDefinition"},
        "metadata": _META_NS,
        "spec": {"type": "object", "required": ["config"], "additionalProperties": False,
                 "properties": {"config": {"type": "string"}}},
    },
}

# the CNI configuration inside spec.config (macvlan / sriov CNI + whereabouts IPAM fields we set)
CNI_CONFIG = {
    "type": "object",
    "required": ["cniVersion", "name", "type", "ipam"],
    "properties": {
        "cniVersion": {"type": "string"},
        "name": {"type": "string"},
        "type": {"enum": ["macvlan", "sriov"]},
        "master": {"type": "string"},
        "mode": {"enum": ["bridge", "private", "vepa", "passthru"]},
        "ipam": {"type": "object", "required": ["type", "range"], "additionalProperties": False,
                 "properties": {"type": {"const": "whereabouts"}, "range": {"type": "string"},
                                "range_start": {"type": "string"}, "range_end": {"type": "string"},
                                "exclude": _STRINGS, "gateway": {"type": "string"},
                                "routes": {"type": "array", "items": {
                                    "type": "object", "required": ["dst"],
                                    "properties": {"dst": {"type": "string"}, "gw": {"type": "string"}}}}}},
    },
}

BY_KIND = {
    "SpiderIPPool": SPIDER_IPPOOL,
    "SpiderMultusConfig": SPIDER_MULTUS_CONFIG,
    "NetworkAttachmentDefinition": NETWORK_ATTACHMENT_DEFINITION,
}
