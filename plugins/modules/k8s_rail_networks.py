#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: k8s_rail_networks
short_description: Render Kubernetes rail networks (Spiderpool or Multus NADs) from the fabric plan
description:
  - From the fabric plan, renders one SpiderIPPool per rail (and server group) and one
    SpiderMultusConfig per rail, the pod annotation that asks for every rail NIC, and the
    equivalent Multus NetworkAttachmentDefinitions with whereabouts IPAM (docs/kubernetes.md).
  - Pod addresses come from the part of each leaf subnet no host slot or gateway can take.
  - RDMA is requested the way Spiderpool v1.x does it (supported and tested against the CRDs of
    Spiderpool 1.2.1; the C(enableRdma) key of Spiderpool 0.x is gone since 1.0.0 and is not written).
    macvlan names the RDMA shared device plugin resource of each rail (C(macvlan.rdmaResourceName));
    SR-IOV names the SR-IOV device plugin resource and sets C(sriov.rdmaIsolation).
  - Optionally writes the manifests as a multi-document YAML file; C(changed) is true only when
    the file's content changes. Applying them to a cluster is left to kubernetes.core.k8s or kubectl.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
requirements:
  - PyYAML (on the controller, as for Ansible itself)
options:
  namespace:
    description: Namespace of the SpiderMultusConfigs and NetworkAttachmentDefinitions.
    type: str
    default: kube-system
  cni:
    description: CNI for the rail interfaces of the pods.
    type: str
    choices: [macvlan, sriov]
    default: macvlan
  sriov_resource:
    description: SR-IOV device plugin resource name per rail; C({rail}) is replaced by the rail number.
    type: str
    default: spidernet.io/rail{rail}
  rdma:
    description:
      - Ask for an RDMA device on every rail interface of the pod.
      - With C(cni=macvlan) this writes C(macvlan.rdmaResourceName) (the shared RDMA device plugin
        resource, see O(rdma_resource)); with C(cni=sriov) it sets C(sriov.rdmaIsolation).
    type: bool
    default: true
  rdma_resource:
    description:
      - Resource name per rail that the k8s-rdma-shared-dev-plugin reports for the rail NIC
        (C(<resourcePrefix>/<resourceName>) of its C(configList)); C({rail}) is replaced by the rail number.
      - Used with C(cni=macvlan) only; RV(rdma_shared_device_plugin) is a matching device plugin configuration.
    type: str
    default: spidernet.io/rail{rail}
  name_prefix:
    description: Prefix of every resource name.
    type: str
    default: ""
  flavour:
    description: Which manifests C(dest) receives.
    type: str
    choices: [spiderpool, nad]
    default: spiderpool
  dest:
    description: Path of the YAML file to write (documents in apply order).
    type: path
  gom_probes:
    description:
      - Path of probe_plan's JSON (its O(aifabric.roce.probe_plan#module:dest)); with it the manifests end with the
        GOM agent's ConfigMaps and DaemonSet (host network, one config per GPU host node, docs/gom.md).
    type: path
  gom_collector:
    description: The GOM collector's C(HOST:PORT) as the nodes reach it (required with O(gom_probes)).
    type: str
  gom_image:
    description: Container image of the agent (any image with python3; the agent is stdlib only).
    type: str
    default: docker.io/library/python:3.11-slim
extends_documentation_fragment:
  - aifabric.roce.fabric
attributes:
  check_mode:
    support: full
    description: Renders everything; in check mode the file is not written, C(changed) says whether it would be.
  diff_mode:
    support: full
    description: Returns the file's before and after text when it changes.
"""

EXAMPLES = r"""
- name: Render the Spiderpool rail networks
  aifabric.roce.k8s_rail_networks:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    dest: "{{ build_dir }}/k8s/spiderpool-rails.yml"
  delegate_to: localhost
  run_once: true
  register: rails

- name: Render plain Multus NADs instead
  aifabric.roce.k8s_rail_networks:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    flavour: nad
    dest: "{{ build_dir }}/k8s/nad-rails.yml"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
manifests:
  description: The documents of the chosen flavour, in apply order.
  returned: success
  type: list
  elements: dict
pod_annotations:
  description: Annotations a GPU pod carries to get every rail NIC through Spiderpool.
  returned: success
  type: dict
  sample: {"k8s.v1.cni.cncf.io/networks": "kube-system/rail0,kube-system/rail1"}
nad_pod_annotations:
  description: Per server group, the annotation that asks for the group's NetworkAttachmentDefinitions.
  returned: success
  type: dict
pod_ranges:
  description: Per rail and group, the pod address range and its capacity.
  returned: success
  type: list
  elements: dict
pod_resources:
  description: The extended resources a GPU pod requests, one unit per rail (RDMA shared devices or SR-IOV VFs).
  returned: success
  type: dict
  sample: {"spidernet.io/rail0": 1, "spidernet.io/rail1": 1}
gom_agent:
  description: The GOM agent's ConfigMaps and DaemonSet (also at the end of RV(manifests)); empty without O(gom_probes).
  returned: success
  type: list
  elements: dict
rdma_shared_device_plugin:
  description:
    - The C(config.json) of the k8s-rdma-shared-dev-plugin that reports RV(pod_resources) (one entry per
      rail, selected by the rail netdev); null unless O(cni=macvlan) and O(rdma=true).
  returned: success
  type: dict
  sample: {"configList": [{"resourcePrefix": "spidernet.io", "resourceName": "rail0", "rdmaHcaMax": 100,
                           "selectors": {"ifNames": ["ens1np0"]}}]}
"""

import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import read_bytes, write_if_changed
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils.k8s.gom import K8sGomError, daemonset
from ansible_collections.aifabric.roce.plugins.module_utils.k8s.rails import K8sRailError, manifests, render
from ansible_collections.aifabric.roce.plugins.module_utils import bounds

try:
    import yaml
    HAS_YAML = True
    YAML_ERROR = None
except ImportError:
    HAS_YAML = False
    YAML_ERROR = traceback.format_exc()


def gom_agent(module, params):
    """The GOM agent's documents from probe_plan's JSON; the agent script is the collection's own."""
    import json
    import os
    from ansible_collections.aifabric.roce.plugins.module_utils.gom import agent as agent_module
    try:
        with open(params["gom_probes"]) as handle:
            probes = json.load(handle)
        with open(os.path.splitext(agent_module.__file__)[0] + ".py") as handle:
            source = handle.read()
        return daemonset(probes["probes_by_host"], source, params["gom_collector"], namespace=params["namespace"],
                         image=params["gom_image"])
    except K8sGomError as exc:
        module.fail_json(msg=str(exc))
    except (OSError, ValueError, KeyError) as exc:
        module.fail_json(msg="gom_probes %s: %s. Fix: give the JSON probe_plan writes (its dest)" % (
            params["gom_probes"], exc if not isinstance(exc, KeyError) else "no %s in it" % exc))
    return []


def main():
    module = AnsibleModule(
        argument_spec=dict(
            PLAN_ARGUMENTS,
            namespace=dict(type="str", default="kube-system"),
            cni=dict(type="str", choices=["macvlan", "sriov"], default="macvlan"),
            sriov_resource=dict(type="str", default="spidernet.io/rail{rail}"),
            rdma=dict(type="bool", default=True),
            rdma_resource=dict(type="str", default="spidernet.io/rail{rail}"),
            name_prefix=dict(type="str", default=""),
            flavour=dict(type="str", choices=["spiderpool", "nad"], default="spiderpool"),
            dest=dict(type="path"),
            gom_probes=dict(type="path"),
            gom_collector=dict(type="str"),
            gom_image=dict(type="str", default="docker.io/library/python:3.11-slim"),
        ),
        supports_check_mode=True,
        **PLAN_CONSTRAINTS)
    bounds.enforce(module, "k8s_rail_networks")
    # after the bounds, so a malformed gom_probes is named as such first (not as a missing partner)
    if module.params["gom_probes"] is not None and not module.params["gom_collector"]:
        module.fail_json(msg="gom_collector is required with gom_probes. Fix: give the collector's HOST:PORT as the "
                             "nodes reach it (docs/gom.md)")
    if not HAS_YAML:
        module.fail_json(msg=missing_required_lib("PyYAML"), exception=YAML_ERROR)
    params = module.params
    plan = plan_or_fail(module)
    try:
        rendered = render(plan, namespace=params["namespace"], cni=params["cni"], prefix=params["name_prefix"],
                          sriov_resource=params["sriov_resource"], enable_rdma=params["rdma"],
                          rdma_resource=params["rdma_resource"])
    except K8sRailError as exc:
        module.fail_json(msg=str(exc))
    docs = manifests(rendered, params["flavour"])
    gom_docs = []
    if params["gom_probes"]:
        gom_docs = gom_agent(module, params)
        docs = docs + gom_docs
    result = dict(changed=False, manifests=docs, pod_annotations=rendered["pod_annotations"],
                  nad_pod_annotations=rendered["nad_pod_annotations"], pod_ranges=rendered["pod_ranges"],
                  pod_resources=rendered["pod_resources"],
                  rdma_shared_device_plugin=rendered["rdma_shared_device_plugin"], gom_agent=gom_docs)
    dest = params["dest"]
    if dest:
        content = yaml.safe_dump_all(docs, default_flow_style=False, sort_keys=True, explicit_start=True)
        before = read_bytes(dest)
        if write_if_changed(dest, content, check_mode=module.check_mode, before=before):
            result["changed"] = True
            result["diff"] = dict(before=(before or b"").decode("utf-8", "replace"), after=content,
                                  before_header=dest, after_header=dest)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
