#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: host_state
short_description: Read a GPU host's whole managed state once and say which host roles drifted
description:
  - Runs on the GPU host. In one invocation it runs, in check mode, the comparison of each host module it is given
    arguments for - M(aifabric.roce.rail_network) (rail NIC MTU, addresses, per-NIC routing tables and rules,
    sysctls, persistence files), M(aifabric.roce.rdma_qos) (trust/PFC/DSCP map, ECN, RoCE ToS, replay files),
    M(aifabric.roce.irq_affinity) (completion IRQ pinning, irqbalance ban, replay files) and
    M(aifabric.roce.nccl_config) (NCCL files) - with the same arguments, readers and comparison those modules
    apply, and reads the systemd units the roles enable or stop with C(systemctl is-enabled) / C(is-active).
  - Returns per role (host_network, host_rdma_qos, host_irq_affinity, host_nccl) whether it drifted and what
    differs. C(playbooks/site.yml) registers the result as C(aifabric_host_state); each role then runs its apply
    tasks only when its part drifted, or when the read is absent (the roles stay usable alone).
  - A role is judged drifted when its check reports a change, when its check fails (its own module then fails
    with its own message, as without the read), when a unit it manages is not in the wanted state, and when
    this module was not given its arguments.
  - Changes nothing on the host, in check mode or not.
  - Python standard library, iproute2 and systemctl only on the host.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  rail_network:
    description:
      - The arguments of M(aifabric.roce.rail_network) (the role aifabric.roce.host_network passes them), validated
        by that module's argument spec. Omitted - role host_network is reported drifted (not read).
    type: dict
  rdma_qos:
    description:
      - The arguments of M(aifabric.roce.rdma_qos) (role aifabric.roce.host_rdma_qos). Omitted - that role is reported
        drifted (not read). Its non-required gaps are returned as warnings when the role is in sync (its own
        module is then not run to warn about them).
    type: dict
  irq_affinity:
    description: The arguments of M(aifabric.roce.irq_affinity) (role aifabric.roce.host_irq_affinity).
    type: dict
  nccl_config:
    description: The arguments of M(aifabric.roce.nccl_config) (role aifabric.roce.host_nccl).
    type: dict
  rdma_facts:
    description:
      - The arguments of M(aifabric.roce.rdma_facts) (role aifabric.roce.host_preflight). Given, the same facts are
        gathered here and returned as C(ansible_facts.aifabric_rdma), with the arguments in RV(rdma_facts_args); role
        host_preflight then does not gather them again on a host where no role drifted (nothing changed them since)
        and the arguments are its own.
    type: dict
  services:
    description:
      - systemd units a role enables or stops, each with the C(role) it belongs to, the unit C(name), and the wanted
        C(enabled) (true, false) and optionally C(active) (true, false) state. A unit not in that state makes its
        role drifted; without C(systemctl) the state is unknown and the role drifted.
    type: list
    elements: dict
    default: []
attributes:
  check_mode:
    support: full
    description: The read is the same in check mode; it never writes.
  diff_mode:
    support: none
    description: The roles that run on drift show their own diff.
notes:
  - The roles' apply tasks are skipped only for the parts read here; role host_preflight (facts and readiness
    checks that produce a report every run) always runs.
seealso:
  - module: aifabric.roce.rail_network
  - module: aifabric.roce.rdma_qos
  - module: aifabric.roce.irq_affinity
  - module: aifabric.roce.nccl_config
"""

EXAMPLES = r"""
- name: Read the host once and judge each role's drift
  aifabric.roce.host_state:
    rail_network:
      intent: "{{ lookup('aifabric.roce.device_intent', inventory_hostname) }}"
    nccl_config:
      nccl: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).nccl }}"
    services:
      - {role: host_rdma_qos, name: aifabric-rdma-qos.service, enabled: true}
  register: aifabric_host_state

- name: Show what drifted
  ansible.builtin.debug:
    msg: "{{ aifabric_host_state.drifted }}"
"""

RETURN = r"""
roles:
  description: Per role, whether its part of the host drifted, what differs and why it was judged so.
  returned: always
  type: dict
  sample: {"host_network": {"drifted": true, "changes": ["mtu rail1 1500 -> 9000"], "reason": "drift"},
           "host_rdma_qos": {"drifted": false, "changes": [], "reason": "in sync"},
           "host_irq_affinity": {"drifted": false, "changes": [], "reason": "in sync"},
           "host_nccl": {"drifted": true, "changes": [], "reason": "not read"}}
rdma_facts_args:
  description: The validated arguments the RDMA facts were gathered with (O(rdma_facts) given).
  returned: when O(rdma_facts) is given
  type: dict
  sample: {"root": "/", "tool_output_dir": null, "netdevs": ["rail0", "rail1"]}
rdma_facts_error:
  description: Why the RDMA facts were not gathered (bad O(rdma_facts) arguments, a read that failed); role host_preflight then gathers them itself.
  returned: when O(rdma_facts) is given and the facts could not be gathered
  type: str
  sample: "rdma_facts: bogus. Supported parameters include: netdevs, root, tool_output_dir."
ansible_facts:
  description: C(aifabric_rdma), as M(aifabric.roce.rdma_facts) returns it (O(rdma_facts) given).
  returned: when O(rdma_facts) is given
  type: dict
  sample: {"aifabric_rdma": {"live": true, "rdma_devices": {}}}
drifted:
  description: The roles judged drifted (their apply tasks run).
  returned: always
  type: list
  elements: str
  sample: ["host_network", "host_nccl"]
"""

import copy
import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.aifabric.roce.plugins.module_utils.host import apply_irq, apply_nccl, apply_qos, facts, state
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError
from ansible_collections.aifabric.roce.plugins.module_utils.host_net import system as rail_system
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def check(module, name, args):
    """One role's check-mode run -> ("ok", result) or ("error", message)."""
    spec = {"rail_network": rail_system.ARGUMENT_SPEC, "rdma_qos": apply_qos.ARGUMENT_SPEC,
            "irq_affinity": apply_irq.ARGUMENT_SPEC, "nccl_config": apply_nccl.ARGUMENT_SPEC}[name]
    checked = ArgumentSpecValidator(copy.deepcopy(spec)).validate(args)
    if checked.error_messages:
        return "error", "%s: %s" % (name, "; ".join(checked.error_messages))
    params = checked.validated_parameters
    try:
        if name == "rail_network":
            return "ok", rail_system.converge(rail_system.SystemHost(module), params, True)
        if name == "rdma_qos":
            return "ok", apply_qos.run(params, True, module.run_command)
        if name == "irq_affinity":
            return "ok", apply_irq.run(params, True)
        return "ok", apply_nccl.run(params, True)
    except RunError as exc:
        return "error", str(exc)
    except Exception as exc:  # noqa: BLE001 - any failure is the role's to report: judged drifted, the role runs
        module.debug(traceback.format_exc())
        return "error", "%s: %s" % (type(exc).__name__, exc)


def unit_state(module, systemctl, service):
    if not systemctl:
        return None, None
    enabled = module.run_command([systemctl, "is-enabled", service["name"]])[1].strip() or None
    active = None
    if service.get("active") is not None:
        active = module.run_command([systemctl, "is-active", service["name"]])[1].strip() or None
    return enabled, active


def main():
    module = AnsibleModule(
        argument_spec=dict(rail_network=dict(type="dict"), rdma_qos=dict(type="dict"), irq_affinity=dict(type="dict"),
                           nccl_config=dict(type="dict"), rdma_facts=dict(type="dict"),
                           services=dict(type="list", elements="dict", default=[])),
        supports_check_mode=True,
    )
    bounds.enforce(module, "host_state")
    checks, warnings = {}, []
    for role, name in state.ROLES:
        if module.params[name] is not None:
            checks[role] = check(module, name, module.params[name])
            if checks[role][0] == "ok":
                warnings += checks[role][1].pop("warnings", [])
    services = []
    systemctl = module.get_bin_path("systemctl") if module.params["services"] else None
    for service in module.params["services"]:
        if service.get("role") not in state.MODULE_OF or not service.get("name"):
            module.fail_json(msg="services: each item needs role (one of %s) and name; got %r" % (
                ", ".join(sorted(state.MODULE_OF)), service))
        enabled, active = unit_state(module, systemctl, service)
        services.append((service, state.unit_problems(service, enabled, active)))
    roles = state.judge(checks, services)
    if not roles["host_rdma_qos"]["drifted"]:
        for gap in warnings:   # the role's module, which warns about them, does not run
            module.warn(gap)
    result = dict(changed=False, roles=roles, drifted=sorted(r for r, v in roles.items() if v["drifted"]))
    if module.params["rdma_facts"] is not None:
        checked = ArgumentSpecValidator(copy.deepcopy(facts.ARGUMENT_SPEC)).validate(module.params["rdma_facts"])
        if checked.error_messages:   # host_preflight gathers them itself and fails there as without the read
            result["rdma_facts_error"] = "rdma_facts: %s" % "; ".join(checked.error_messages)
            module.warn(result["rdma_facts_error"])
        else:
            args = checked.validated_parameters
            try:
                gathered = facts.gather(args["root"], args["tool_output_dir"], args["netdevs"])
            except Exception as exc:  # noqa: BLE001 - host_preflight gathers them itself and reports there
                result["rdma_facts_error"] = "rdma_facts: %s: %s" % (type(exc).__name__, exc)
                module.warn(result["rdma_facts_error"])
            else:
                result.update(rdma_facts_args=args, ansible_facts={"aifabric_rdma": gathered})
    module.exit_json(**result)


if __name__ == "__main__":
    main()
