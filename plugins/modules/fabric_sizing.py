#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_sizing
short_description: How many switches, optics and GPUs a fabric design needs (no inventory required)
description:
  - Answers "how many switches, optics and GPUs for this design" before any inventory exists,
    for the two designs of docs/sizing.md - the two-tier rail-optimized leaf/spine and the
    classic non-blocking fat tree (two or three tiers).
  - Reproduces the figures of the source articles (32,768 GPUs on a 3-tier fat tree of 128-port
    switches - 1,280 switches and 196,608 optics; 512 GPUs rail-optimized - 8 leafs and 2 spines;
    28,672 GPUs at 7:1 - 256 leafs and 32 spines).
  - Warns when the GPUs of a server outnumber its rail NICs (for example 8 GPUs and 2 NICs).
  - For a fabric already described in inventory, the plan report of C(playbooks/plan.yml) gives
    the same figures for the concrete layout.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  design:
    description: The fabric design to size.
    type: str
    choices: [rail_optimized, fat_tree]
    default: rail_optimized
  gpus:
    description: GPUs in the whole fabric.
    type: int
    required: true
  gpus_per_server:
    description: GPUs per server.
    type: int
    default: 8
  nics_per_server:
    description:
      - Rail NICs (fabric ports) per server; default one per GPU.
      - Fewer NICs than GPUs gives a warning and sizes the fabric for the NICs.
    type: int
  nic_gbps:
    description: NIC port speed in Gb/s (rail_optimized).
    type: int
    default: 400
  leaf_ports:
    description: Ports per leaf switch (rail_optimized).
    type: int
    default: 64
  leaf_port_gbps:
    description: Leaf port speed in Gb/s (rail_optimized); a faster port than the NIC is broken out.
    type: int
    default: 400
  spine_ports:
    description: Ports per spine switch (rail_optimized).
    type: int
    default: 64
  spine_port_gbps:
    description: Spine port speed in Gb/s (rail_optimized); a faster port than the leaf's is broken out.
    type: int
    default: 800
  oversubscription:
    description: Leaf downlink:uplink bandwidth as C(n:1) (rail_optimized).
    type: str
    default: "1:1"
  radix:
    description: Ports per switch, even (fat_tree).
    type: int
    default: 64
  tiers:
    description: Switch tiers, 2 or more (fat_tree).
    type: int
    default: 3
attributes:
  check_mode:
    support: full
    description: Computes figures only; the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to diff.
notes:
  - Pure computation on the controller; contacts nothing and writes nothing (C(changed) is always false).
"""

EXAMPLES = r"""
- name: Size the 512-GPU rail-optimized design of the source article
  aifabric.roce.fabric_sizing:
    design: rail_optimized
    gpus: 512
    nic_gbps: 200
    leaf_ports: 64
    leaf_port_gbps: 400
    spine_ports: 64
    spine_port_gbps: 800
  register: rail

- name: Size a classic 3-tier fat tree of 128-port switches
  aifabric.roce.fabric_sizing:
    design: fat_tree
    gpus: 32768
    radix: 128
    tiers: 3
  register: fat_tree

- name: Show the answer
  ansible.builtin.debug:
    msg: "{{ rail.summary }}"
"""

RETURN = r"""
sizing:
  description:
    - The figures. Both designs - C(design), C(gpus), C(switches), C(optics) (one transceiver per cable
      end; a breakout cable has one at the broken-out end), C(warnings).
    - rail_optimized - C(servers), C(rails), C(servers_per_group), C(groups), C(leafs), C(spines),
      C(uplinks_per_leaf), C(host_links), C(fabric_links), C(oversubscription), C(hops).
    - fat_tree - C(nic_ports), C(switches_per_tier) (bottom tier first), C(links), C(max_switch_hops).
  returned: success
  type: dict
  sample: {"design": "rail_optimized", "gpus": 512, "leafs": 8, "spines": 2, "switches": 10, "optics": 1152}
summary:
  description: The answer in a few lines of text.
  returned: success
  type: list
  elements: str
  sample: ["rail_optimized, 512 GPUs (64 servers x 8 GPUs, 8 rails): 10 switches (8 leafs + 2 spines), 1152 optics"]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.sizing import size_fat_tree, size_rail_optimized
from ansible_collections.aifabric.roce.plugins.module_utils import bounds

RAIL_ONLY = ("nic_gbps", "leaf_ports", "leaf_port_gbps", "spine_ports", "spine_port_gbps", "oversubscription")


def _ratio(text):
    head, sep, tail = str(text).partition(":")
    try:
        value = int(head)
    except ValueError:
        value = 0
    if value < 1 or (sep and tail.strip() != "1"):
        return None
    return value


def _count(number, word, plural=None):
    """'1 spine', '2 spines': the summary is read by people."""
    return "%d %s" % (number, word if number == 1 else (plural or word + "s"))


def summarise(sizing):
    """The few lines a user reads."""
    if sizing["design"] == "fat_tree":
        lines = ["fat_tree, %s on %s, %s of %d-port switches: %s (%s, bottom tier first), "
                 "%s, at most %s"
                 % (_count(sizing["gpus"], "GPU"), _count(sizing["nic_ports"], "NIC port"),
                    _count(sizing["tiers"], "tier"), sizing["radix"], _count(sizing["switches"], "switch", "switches"),
                    " + ".join(str(n) for n in sizing["switches_per_tier"]), _count(sizing["optics"], "optic"),
                    _count(sizing["max_switch_hops"], "switch hop"))]
    else:
        lines = ["rail_optimized, %s (%s, %s): %s (%s + %s), %s"
                 % (_count(sizing["gpus"], "GPU"), _count(sizing["servers"], "server"), _count(sizing["rails"], "rail"),
                    _count(sizing["switches"], "switch", "switches"), _count(sizing["leafs"], "leaf"),
                    _count(sizing["spines"], "spine"), _count(sizing["optics"], "optic")),
                 "%s of %s, %s per leaf at %s, %s + %s"
                 % (_count(sizing["groups"], "server group"), _count(sizing["servers_per_group"], "server"),
                    _count(sizing["uplinks_per_leaf"], "uplink"), sizing["oversubscription"],
                    _count(sizing["host_links"], "host link"), _count(sizing["fabric_links"], "fabric link"))]
    return lines + ["WARNING: %s" % warning for warning in sizing["warnings"]]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            design=dict(type="str", choices=["rail_optimized", "fat_tree"], default="rail_optimized"),
            gpus=dict(type="int", required=True),
            gpus_per_server=dict(type="int", default=8),
            nics_per_server=dict(type="int"),
            nic_gbps=dict(type="int", default=400),
            leaf_ports=dict(type="int", default=64),
            leaf_port_gbps=dict(type="int", default=400),
            spine_ports=dict(type="int", default=64),
            spine_port_gbps=dict(type="int", default=800),
            oversubscription=dict(type="str", default="1:1"),
            radix=dict(type="int", default=64),
            tiers=dict(type="int", default=3),
        ),
        supports_check_mode=True,
    )
    bounds.enforce(module, "fabric_sizing")
    p = module.params
    oversubscription = _ratio(p["oversubscription"])
    if oversubscription is None:
        module.fail_json(msg="oversubscription %r is not a ratio n:1 with n >= 1. Fix: write it like 1:1 or 7:1"
                         % p["oversubscription"])
    try:
        if p["design"] == "fat_tree":
            sizing = size_fat_tree(p["gpus"], p["radix"], p["tiers"], gpus_per_server=p["gpus_per_server"],
                                   nics_per_server=p["nics_per_server"] or p["gpus_per_server"])
        else:
            sizing = size_rail_optimized(p["gpus"], p["gpus_per_server"], p["nic_gbps"], p["leaf_ports"],
                                         p["leaf_port_gbps"], p["spine_ports"], p["spine_port_gbps"],
                                         oversubscription=oversubscription, nics_per_server=p["nics_per_server"])
    except ValueError as exc:
        fix = ("use an even radix and tiers >= 2" if p["design"] == "fat_tree"
               else "use a leaf with more or faster ports, or a lower oversubscription")
        if "Fix:" in str(exc):
            module.fail_json(msg="%s: %s" % (p["design"], exc))
        module.fail_json(msg="%s: %s. Fix: %s" % (p["design"], exc, fix))
    for warning in sizing["warnings"]:
        module.warn(warning)
    module.exit_json(changed=False, sizing=sizing, summary=summarise(sizing))


if __name__ == "__main__":
    main()
