# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switch platforms the planner accepts, and the netmiko device_type each defaults to.

The NOS driver registry (plugins/module_utils/nos/) must offer a driver for every name here;
a unit test checks both lists agree.
"""

from __future__ import annotations

# platform name -> netmiko device_type (netmiko 4.8 SSH_MAPPER_BASE keys)
PLATFORM_DEVICE_TYPES = {
    "asternos": "asterfusion_asternos",  # Asterfusion AsterNOS (enterprise SONiC, klish CLI)
    "sonic": "dell_sonic",               # Enterprise SONiC klish (Dell / Broadcom distribution)
    "eos": "arista_eos",                 # Arista EOS
    "nvue": "cumulus_linux",             # NVIDIA Cumulus Linux 5.x, configured with NVUE `nv`
    "nxos": "cisco_nxos",                # Cisco NX-OS
    "frr": "linux",                      # FRR 8.4 on a Linux whitebox: a shell running vtysh
}


def device_type_for(platform):
    return PLATFORM_DEVICE_TYPES.get(platform)


# platform -> the netmiko device types (netmiko 4.8 CLASS_MAPPER keys) whose session handling fits
# the platform's driver: the default and its explicit `_ssh` alias. Telnet variants are left out on
# purpose (clear-text credentials); any other string would reach ConnectHandler unchecked.
PLATFORM_DEVICE_TYPE_CHOICES = dict(
    (platform, (device_type, device_type + "_ssh")) for platform, device_type in PLATFORM_DEVICE_TYPES.items())


def device_type_choices(platform):
    return PLATFORM_DEVICE_TYPE_CHOICES.get(platform, ())
