#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: nic_firmware
short_description: Upgrade rail NIC firmware with NVIDIA mlxfwmanager from a given image directory, on explicit request
description:
  - Queries each rail NIC with C(mlxfwmanager --query -d <bdf> -D <image dir>) (or C(-i <image file>)) and upgrades
    the ones whose C(Status) is C(Update required) with C(mlxfwmanager -u -y -d <bdf> -D <image dir>), one device
    after the other.
  - Refuses to flash anything unless O(allow_upgrade=true); in check mode reports what would be upgraded (from the
    query) and never flashes.
  - The new firmware runs after a reset (C(mlxfwreset)) or reboot; RV(reset_required) says so. Nothing is reset here.
  - Two functions of one adapter (dual-port) are one device - queried once.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  netdevs:
    description: Rail netdevs; their PCI addresses (from C(/sys/class/net/<netdev>/device)) select the devices.
    type: list
    elements: str
    default: []
  devices:
    description: PCI addresses (C(0000:65:00.0)) to handle in addition to O(netdevs).
    type: list
    elements: str
    default: []
  image_dir:
    description: Directory holding the firmware images (C(mlxfwmanager -D)).
    type: path
  image_file:
    description: One firmware image file (C(mlxfwmanager -i)).
    type: path
  allow_upgrade:
    description: Flash the devices that need it. Without it the module fails when an upgrade is due (outside check mode).
    type: bool
    default: false
  tool:
    description: Path or name of C(mlxfwmanager).
    type: str
    default: mlxfwmanager
  root:
    description: Filesystem root for the netdev -> PCI lookup (C(/) on a host; a fixture tree in tests).
    type: path
    default: /
attributes:
  check_mode:
    support: full
    description: Runs the query only and reports the upgrades that would be made.
  diff_mode:
    support: full
    description: Firmware version before/after per device.
notes:
  - Run it serially (the role sets C(throttle 1)); a host whose flash fails stops the run before the next host.
"""

EXAMPLES = r"""
- name: Show which rail NICs would be upgraded (check mode)
  aifabric.roce.nic_firmware:
    netdevs: [rail0, rail1]
    image_dir: /srv/firmware/cx7
  check_mode: true

- name: Upgrade them
  aifabric.roce.nic_firmware:
    netdevs: [rail0, rail1]
    image_dir: /srv/firmware/cx7
    allow_upgrade: true
  throttle: 1
"""

RETURN = r"""
devices:
  description:
    - Per device - bdf, psid, part_number, current and running (the firmware that runs now, the same version the host facts
      report), flashed (the image in flash), pending (the flashed image while it waits for a reset, else null),
      pending_reset (bool), available, status, update (bool).
  returned: always
  type: list
  elements: dict
upgrades:
  description: Devices upgraded (or, in check mode, that would be) with from/to versions.
  returned: always
  type: list
  elements: dict
commands:
  description: Update commands run (or, in check mode, that would run).
  returned: always
  type: list
  elements: list
reset_required:
  description: True when firmware was flashed; it runs after mlxfwreset or a reboot.
  returned: always
  type: bool
"""

import shutil

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.host import names, nic_firmware
from ansible_collections.aifabric.roce.plugins.module_utils.host.facts import pci_function_of
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def resolve_devices(module, sysroot):
    found, seen = [], set()
    for netdev in module.params["netdevs"]:
        problem = names.netdev_problem(netdev)
        if problem:
            module.fail_json(msg="netdevs: %s" % problem)
        bdf = pci_function_of(sysroot, "/sys/class/net/%s/device" % netdev)
        if not bdf:
            module.fail_json(msg="netdevs: %s has no PCI device under %s (not a PCI NIC, or absent)" % (netdev, sysroot.root))
        found.append(bdf)
    for bdf in module.params["devices"]:
        if nic_firmware.normalise_bdf(bdf) is None:
            module.fail_json(msg="devices: %r is not a PCI address like 0000:65:00.0" % bdf)
        found.append(bdf)
    out = []
    for bdf in found:
        norm = nic_firmware.normalise_bdf(bdf)
        adapter = norm.rsplit(".", 1)[0]  # both functions of a dual-port adapter share one firmware
        if adapter not in seen:
            seen.add(adapter)
            out.append(norm)
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(netdevs=dict(type="list", elements="str", default=[]),
                           devices=dict(type="list", elements="str", default=[]),
                           image_dir=dict(type="path"), image_file=dict(type="path"),
                           allow_upgrade=dict(type="bool", default=False),
                           tool=dict(type="str", default="mlxfwmanager"),
                           root=dict(type="path", default="/")),
        mutually_exclusive=[("image_dir", "image_file")],
        required_one_of=[("image_dir", "image_file")],
        supports_check_mode=True,
    )
    bounds.enforce(module, "nic_firmware")
    p = module.params
    tool = shutil.which(p["tool"])
    if not tool:
        module.fail_json(msg="%s not found: install NVIDIA MFT (mlxfwmanager) on the host" % p["tool"])
    bdfs = resolve_devices(module, SysRoot(p["root"]))
    if not bdfs:
        module.fail_json(msg="no device: give netdevs (the plan's rail NICs) or devices")
    states = []
    for bdf in bdfs:
        argv = [tool] + nic_firmware.query_command(bdf, p["image_dir"], p["image_file"])[1:]
        rc, out, err = module.run_command(argv)
        state = nic_firmware.device_state(out, bdf) if rc == 0 else None
        if state is None:
            module.fail_json(msg="%s: query gave no block for this device (rc=%d): %s" % (bdf, rc, (err or out).strip()[-300:]),
                             devices=states)
        states.append(state)
    due = [s for s in states if s["update"]]
    upgrades = [{"bdf": s["bdf"], "psid": s["psid"], "from": s["current"], "to": s["available"]} for s in due]
    commands = [[tool] + nic_firmware.update_command(s["bdf"], p["image_dir"], p["image_file"])[1:] for s in due]
    diff = [{"before_header": "%s firmware" % s["bdf"], "after_header": "%s firmware" % s["bdf"],
             "before": "%s\n" % s["current"], "after": "%s\n" % s["available"]} for s in due]
    result = dict(changed=bool(due), devices=states, upgrades=upgrades, commands=commands, diff=diff,
                  reset_required=False)
    if not due or module.check_mode:
        module.exit_json(**result)
    if not p["allow_upgrade"]:
        result.update(changed=False, commands=[])
        result["msg"] = ("refusing to flash NIC firmware without allow_upgrade=true (role: host_nic_firmware_upgrade: true); due: %s"
                         % ", ".join("%s %s -> %s" % (u["bdf"], u["from"], u["to"]) for u in upgrades))
        module.fail_json(**result)
    done = []
    for argv, upgrade in zip(commands, upgrades):
        rc, out, err = module.run_command(argv)
        if rc != 0:
            # devices flashed before this one stay flashed (their new firmware is valid): say so
            result.update(changed=bool(done), upgrades=done, commands=commands[:len(done) + 1], reset_required=bool(done))
            result["msg"] = "%s: %s failed (rc=%d): %s" % (upgrade["bdf"], " ".join(argv), rc, (err or out).strip()[-400:])
            module.fail_json(**result)
        done.append(upgrade)
    result["reset_required"] = True
    module.exit_json(**result)


if __name__ == "__main__":
    main()
