#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: rail_network
short_description: Configure a GPU host's rail NICs (MTU, addresses, policy routing, sysctls) from the plan
description:
  - Runs on the GPU host. In one invocation it reads the rail NICs, routes and rules with C(ip -j), compares
    them with the host intent computed by M(aifabric.roce.fabric_plan), applies the difference with one
    C(ip -batch), writes the per-NIC sysctls, verifies the result and the management path, and writes the
    files that make the configuration survive a reboot (netplan, NetworkManager keyfiles or a systemd unit).
  - Owns only what the plan owns - the rail NICs named in O(intent), every route in the plan's routing tables
    (and O(owned_tables)), main-table routes out of a rail NIC that the kernel did not add itself, and rules
    whose priority is one of the plan's (and O(owned_rule_priorities)). Stale entries of those are removed;
    nothing else is read for removal or changed.
  - Before any change it fails, changing nothing, if the plan names the management interface, an interface
    that does not exist, a rail NIC that carries the main table's default route, a main-table default route,
    or a route that would capture a management target. After the change the main default route and the
    route to (and ping of) each management target must be as before; otherwise the previous state is restored
    and the task fails.
  - Python standard library and iproute2 only on the host.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  intent:
    description:
      - The host intent, C(plan.hosts[inventory_hostname]) from M(aifabric.roce.fabric_plan). Keys used -
        C(mgmt_interface), C(nics) (C(netdev), C(address), C(prefixlen), C(mtu), C(table)), C(routes),
        C(rules), C(sysctls).
    type: dict
    required: true
  persistence:
    description:
      - How the configuration survives a reboot. V(auto) picks V(netplan) on Ubuntu, V(networkmanager) on
        RHEL-like systems (each only when installed), otherwise V(systemd) (a unit replaying an iproute2 batch).
      - V(none) writes no files (runtime state only).
    type: str
    choices: [auto, netplan, networkmanager, systemd, none]
    default: auto
  sysctls:
    description: Set the intent's per-NIC sysctls (arp_ignore, arp_announce, rp_filter) at runtime and in sysctl.d.
    type: bool
    default: true
  owned_tables:
    description:
      - Extra routing table ids this module owns besides the plan's (for example the whole range reserved for rails),
        so tables of rails removed from the plan are emptied.
    type: list
    elements: int
    default: []
  owned_rule_priorities:
    description: Extra rule priorities this module owns besides the plan's; rules at these priorities are removed.
    type: list
    elements: int
    default: []
  mgmt_check_targets:
    description:
      - Addresses that must stay reachable the same way (route and, if they answered before, ping) after the
        change, for example the controller's or the management gateway's address. The main table's default
        route is always checked.
    type: list
    elements: str
    default: []
  rollback:
    description:
      - Restore the previous rail state (runtime and persistence files) when anything after the first
        C(ip -batch) fails (later batches, sysctl writes, read-back, after-checks, persistence).
    type: bool
    default: true
  mgmt_interface:
    description:
      - The host's management interface as Ansible's facts see it (C(ansible_facts.default_ipv4.interface)).
        Protected like the interfaces detected from C(SSH_CONNECTION) and the main default route.
    type: str
  mgmt_interfaces:
    description:
      - Interfaces the inventory declares as this host's management path (role variable C(host_mgmt_interface)),
        always refused as rail NICs. The only detection that needs no connection detail, so set it where the
        management NIC carries no default route.
    type: list
    elements: str
    default: []
  mgmt_address:
    description:
      - The address Ansible connects to (C(ansible_host)); the interface holding it is protected. A host name
        (not an IP address) is ignored. Works under C(become), which drops C(SSH_CONNECTION).
    type: str
  allow_mgmt_change:
    description:
      - Allow the plan to touch the detected management interface and skip the controller reachability check.
        By default the management interface (from C(SSH_CONNECTION) on the host, O(mgmt_interfaces),
        O(mgmt_address), O(mgmt_interface) and the main table's default route) is refused as a rail NIC and
        the controller (the C(SSH_CONNECTION) client) is added to O(mgmt_check_targets).
      - Under C(become) the module's own environment has no C(SSH_CONNECTION) (sudo resets it); it is then read
        from the nearest ancestor process that has it (the login shell that ran sudo).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reports exactly the items that would change; writes nothing.
  diff_mode:
    support: full
    description: Before/after of the owned runtime state and of each persistence file.
notes:
  - Requires root (CAP_NET_ADMIN) and iproute2 with JSON output (C(ip -j), iproute2 4.14 or later).
  - Persistence files take effect at the next boot; the running state is already applied with iproute2, so the
    module never restarts a network service (NetworkManager only reloads the keyfiles it wrote).
seealso:
  - module: aifabric.roce.fabric_plan
"""

EXAMPLES = r"""
- name: Configure the rail NICs of this GPU host
  aifabric.roce.rail_network:
    intent: "{{ lookup('aifabric.roce.device_intent', inventory_hostname) }}"
    mgmt_check_targets: [192.168.250.1]

- name: Audit only (what would change)
  aifabric.roce.rail_network:
    intent: "{{ lookup('aifabric.roce.device_intent', inventory_hostname) }}"
  check_mode: true
  register: rail_drift
"""

RETURN = r"""
changes:
  description: One line per changed (or, in check mode, to-be-changed) item.
  returned: always
  type: list
  elements: str
  sample: ["mtu rail1 1500 -> 9000", "rule add priority 1002 from 10.102.0.1/32 table 102",
           "route delete 10.9.9.0/24 via 10.100.0.6 dev rail0 table 100"]
items:
  description: The same changes as structured items (kind, action and the fields of the kind).
  returned: always
  type: list
  elements: dict
  sample: [{"kind": "mtu", "action": "set", "dev": "rail1", "before": 1500, "after": 9000}]
batch:
  description: The C(ip -batch) lines applied (in check mode, those that would be).
  returned: always
  type: list
  elements: str
  sample: ["link set dev rail1 mtu 9000", "rule add priority 1002 from 10.102.0.1/32 table 102"]
backend:
  description: The persistence backend used.
  returned: always
  type: str
  sample: systemd
files:
  description: The persistence files (and links) this module manages with that backend.
  returned: always
  type: list
  elements: str
  sample: ["/etc/sysctl.d/60-aifabric-rails.conf", "/etc/aifabric/rail-network.batch"]
owned:
  description: What this run owned (rail NICs, routing tables, rule priorities).
  returned: always
  type: dict
  sample: {"devs": ["rail0"], "tables": [100], "rule_priorities": [1000]}
rolled_back:
  description: Whether a failed apply was rolled back and the read-back shows the previous state.
  returned: always
  type: bool
  sample: false
management:
  description: The management path detected on this host and whether it was protected.
  returned: always
  type: dict
  sample: {"interfaces": ["eth0"], "controller": "192.168.250.10", "address": "192.168.250.14",
           "sources": ["SSH_CONNECTION (192.168.250.14 on eth0)", "main default route (dev eth0)"], "protected": true}
restore_errors:
  description: After a failed apply, errors met while restoring (runtime batch, files).
  returned: when rolled back
  type: list
  elements: str
  sample: []
not_restored:
  description: After a rollback, items that could not be restored.
  returned: when rolled back
  type: list
  elements: str
  sample: []
"""

import copy

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.host_net.engine import ApplyError
from ansible_collections.aifabric.roce.plugins.module_utils.host_net.model import HostNetError
from ansible_collections.aifabric.roce.plugins.module_utils.host_net.system import ARGUMENT_SPEC, SystemHost, converge
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    module = AnsibleModule(argument_spec=copy.deepcopy(ARGUMENT_SPEC), supports_check_mode=True)  # the spec is shared: never let a run change it
    bounds.enforce(module, "rail_network")
    try:
        result = converge(SystemHost(module), module.params, module.check_mode)
    except ApplyError as exc:
        result = exc.result
        result.pop("diff", None)
        module.fail_json(msg=str(exc), **result)
    except (HostNetError, ValueError) as exc:
        module.fail_json(msg=str(exc), changed=False)
    except Exception as exc:  # noqa: BLE001 - before any change (reads): a clean message, no traceback
        module.fail_json(msg="rail_network failed before changing anything: %s: %s" % (type(exc).__name__, exc), changed=False)
    if not module._diff:
        result.pop("diff", None)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
