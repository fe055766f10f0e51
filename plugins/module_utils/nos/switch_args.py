# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The arguments of module switch_config, in one place: switch_config takes them, and switch_state validates each
switch it reads with the same spec (the role passes both modules the same values)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import CONNECTION_ARGS
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS


def argument_spec():
    spec = dict(
        platform=dict(type="str", required=True, choices=sorted(DRIVERS)),
        intent=dict(type="dict", required=True),
        qos=dict(type="dict", required=True),
        sections=dict(type="list", elements="str", choices=["qos", "mtu", "pbr", "underlay"], default=["qos", "mtu", "pbr"]),
        save=dict(type="bool", default=True),
        commit_timer=dict(type="int", default=0),
        expected_config_digest=dict(type="str"),
        read_timeout=dict(type="int", default=120),
        reconnect_timeout=dict(type="int", default=30),
        lock_dir=dict(type="path"),
        lock_timeout=dict(type="int", default=300),
        takeover=dict(type="bool", default=False),
        lock_ttl=dict(type="int", default=1800),
        drain=dict(type="str", choices=["auto", "always", "never"], default="auto"),
        drain_wait=dict(type="int", default=5),
    )
    spec.update(CONNECTION_ARGS)
    return spec
