"""Spiderpool's real CRDs (tests/fixtures/spiderpool-crds, v1.2.1) as JSON Schemas.

Kubernetes prunes every field a structural CRD schema does not declare, without an error (only
``x-kubernetes-preserve-unknown-fields`` keeps unknown keys). To see what a cluster would keep,
each object schema with ``properties`` and no ``additionalProperties`` becomes closed here, so a
pruned key is a validation error naming its path.
"""
import copy
import os

import yaml

CRD_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "spiderpool-crds")
FILES = {
    "SpiderIPPool": "spiderpool.spidernet.io_spiderippools.yaml",
    "SpiderMultusConfig": "spiderpool.spidernet.io_spidermultusconfigs.yaml",
    "NetworkAttachmentDefinition": "k8s.cni.cncf.io_networkattachmentdefinitions_crd.yaml",
}


def _close(node):
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node and "additionalProperties" not in node \
                and not node.get("x-kubernetes-preserve-unknown-fields"):
            node["additionalProperties"] = False
        for value in node.values():
            _close(value)
    elif isinstance(node, list):
        for value in node:
            _close(value)
    return node


def crd_schema(kind, version):
    """The closed openAPIV3Schema of ``kind`` at API ``version`` (e.g. v2beta1)."""
    with open(os.path.join(CRD_DIR, FILES[kind])) as handle:
        crd = yaml.safe_load(handle)
    assert crd["spec"]["names"]["kind"] == kind
    for entry in crd["spec"]["versions"]:
        if entry["name"] == version:
            assert entry["served"], "%s %s is not served by this CRD" % (kind, version)
            schema = copy.deepcopy(entry["schema"]["openAPIV3Schema"])
            # metadata is the API server's ObjectMeta, not part of the CRD's schema
            schema["properties"]["metadata"] = {"type": "object"}
            return _close(schema)
    raise AssertionError("%s has no version %s" % (kind, version))


def crd_errors(doc):
    """Every violation of the real CRD by one manifest, as 'path: message' strings."""
    import jsonschema
    group, _sep, version = doc["apiVersion"].rpartition("/")
    schema = crd_schema(doc["kind"], version)
    with open(os.path.join(CRD_DIR, FILES[doc["kind"]])) as handle:
        assert yaml.safe_load(handle)["spec"]["group"] == group
    validator = jsonschema.Draft7Validator(schema)
    return sorted("%s: %s" % ("/".join(str(p) for p in err.absolute_path), err.message)
                  for err in validator.iter_errors(doc))
