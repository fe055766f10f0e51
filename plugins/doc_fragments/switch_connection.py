# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The netmiko SSH session of every switch module (argument spec: module_utils/nos/connection.py CONNECTION_ARGS).
    DOCUMENTATION = r"""
options:
  host:
    description: Switch address (usually C(ansible_host)).
    type: str
    required: true
  port:
    description: SSH port.
    type: int
    default: 22
  username:
    description: SSH user (usually C(ansible_user)).
    type: str
    required: true
  password:
    description: SSH password (usually C(ansible_password)).
    type: str
  secret:
    description:
      - Enable secret (netmiko C(secret)). When set, the session enters privileged exec with C(enable)
        before anything else (for users that land in unprivileged exec, e.g. EOS or NX-OS C(>)).
    type: str
  device_type:
    description: netmiko device_type; defaults to the driver's.
    type: str
  host_key_checking:
    description: Verify the switch's SSH host key (against O(known_hosts) or the system known_hosts).
    type: bool
    default: true
  known_hosts:
    description: known_hosts file to verify host keys against.
    type: path
  timeout:
    description: Connection and authentication timeout in seconds.
    type: int
    default: 30
"""
