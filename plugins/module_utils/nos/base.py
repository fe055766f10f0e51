# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NOS driver base classes: render intent -> managed config, parse running -> managed config, diff.

Pure Python: no Ansible, no network. The switch_config module drives the session; drivers only
say what to send and how to read the answers.

The shared *shape* for render() and parse() is the canonical text of the managed sections of a
device's configuration (CLI NOSes: indented hierarchical text; NVUE: one ``nv set`` per line).
Render the intent and parse the running config, and the two strings are comparable byte for byte.
"""

from __future__ import annotations

import ipaddress
import re

PREFIX = "AIF-"          # every object we own on a switch carries this name prefix
SECTIONS = ("qos", "mtu", "pbr")


class DriverError(Exception):
    pass


def ports_of(intent):
    """Ports of one leaf/spine intent (plan entry), downlinks first, in plan order."""
    ports = [d["port"] for d in intent.get("downlinks") or []]
    ports += [u["port"] for u in intent.get("uplinks") or [] if u["port"] not in ports]
    return ports


def safe_name(text):
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)


def host_of(source):
    return str(ipaddress.ip_interface(source).ip)


class Driver(object):
    """Interface every NOS driver implements."""

    name = None              # platform name (plugins/module_utils/fabric/platforms.py)
    device_type = None       # netmiko device_type
    show_running = "show running-config"
    # regexes that mark a device answer as an error (netmiko's error_pattern is empty by default)
    error_pattern = None
    transaction = None       # 'session', 'checkpoint', 'revision', 'reverse'

    def port(self, plan_port):
        """Map a plan port name to the NOS's native name (identity unless overridden)."""
        return plan_port

    # --- pure functions --------------------------------------------------------------
    def render(self, intent, qos, sections=SECTIONS):
        raise NotImplementedError

    def parse(self, running, intent, sections=SECTIONS):
        raise NotImplementedError

    def diff(self, current, intended):
        """Commands that take the managed config from ``current`` to ``intended`` (both canonical)."""
        raise NotImplementedError

    def state(self, managed):
        """Structured view of canonical managed config (for facts)."""
        return {"lines": managed.splitlines()}
