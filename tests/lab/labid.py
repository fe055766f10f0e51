"""Per-checkout names of the virtual lab (test plumbing): two checkouts on one machine get two labs.

`make demo` in one checkout must not tear down or reconfigure the lab of a `make test` running in
another, so the lab's podman containers, network namespaces, simulator ports and state directory
carry an id derived from the checkout: the first 6 hex digits of the SHA-1 of the checkout's real
path (AIFABRIC_LAB_ID, 6 hex digits, overrides it: one id per run). inventories/lab/group_vars/all/lab.yml
computes the same id from the inventory's own path, so `ansible-playbook -i inventories/lab` by
hand reaches this checkout's lab without any environment.
"""
import hashlib
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The switch simulators' ports: base + the device's number (leaf0 1 .. spine2 12); bases 10000..23975 in
# steps of 25, below the kernel's ephemeral range (32768-) and the test twins' ports (24000 + offset).
PORT_BASE_FIRST = 10000
PORT_BASE_SLOTS = 560
PORT_BASE_STEP = 25


def lab_id(root=ROOT):
    forced = os.environ.get("AIFABRIC_LAB_ID", "")
    if forced:
        if not re.fullmatch(r"[0-9a-f]{6}", forced):
            raise SystemExit("AIFABRIC_LAB_ID=%r: give 6 lowercase hex digits (e.g. 0a1b2c), or unset it" % forced)
        return forced
    return hashlib.sha1(os.path.realpath(root).encode("utf-8")).hexdigest()[:6]


def switch_port_base(ident=None):
    """First port of this lab's switch simulators (same formula as inventories/lab/group_vars/all/lab.yml)."""
    return PORT_BASE_FIRST + int(ident or lab_id(), 16) % PORT_BASE_SLOTS * PORT_BASE_STEP


# each lab switch's number: its port is switch_port_base() + number (inventories/lab/switches.yml)
SWITCH_NUMBERS = {"leaf0": 1, "leaf1": 2, "leaf2": 3, "leaf3": 4, "spine1": 11, "spine2": 12}


def switch_port(name, ident=None):
    return switch_port_base(ident) + SWITCH_NUMBERS[name]


def container(host, ident=None):
    return "aifabric-%s-%s" % (ident or lab_id(), host)


def switch_state_root(ident=None):
    return os.environ.get("AIFABRIC_SWITCH_LAB") or "/tmp/aifabric-lab-%s/switches" % (ident or lab_id())
