# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Persistence of the rail network across reboot: render files for netplan, NetworkManager or systemd.

Pure rendering, stdlib only.  ``render(backend, intent, desired)`` returns ``{path: (content, mode)}``
plus the glob patterns whose other matches are stale files of ours.  Every backend also gets a
sysctl.d file for the per-NIC sysctls.  See docs/host-networking.md for the choice of backend.

* netplan (Ubuntu 22.04/24.04): one file /etc/netplan/60-aifabric-rails.yaml with, per rail NIC,
  ``mtu``, ``addresses``, ``routes`` (``to``/``via``/``from``/``scope``/``table``) and
  ``routing-policy`` (``from``/``table``/``priority``), written by a small YAML emitter (no YAML
  library on the host; strings are double-quoted, which YAML reads as JSON strings).
* networkmanager (RHEL/Rocky 9): one keyfile per rail NIC in /etc/NetworkManager/system-connections/
  (``[ethernet] mtu``, ``[ipv4] method=manual``, ``addressN``, ``routeN`` + ``routeN_options``
  (``table=``, ``src=``), ``routing-ruleN``), mode 0600 as NetworkManager requires.
* systemd (any other distro): /etc/aifabric/rail-network.batch (an ``ip -batch`` file) replayed by
  /etc/systemd/system/aifabric-rail-network.service, enabled by its multi-user.target.wants link.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import uuid

from ansible_collections.aifabric.roce.plugins.module_utils.host_net.model import (
    MAIN, route_dict, route_text, rule_text)

BACKENDS = ("netplan", "networkmanager", "systemd", "none")
HEADER = "Managed by aifabric.roce (role host_network, module rail_network): edits are overwritten."
NETPLAN_FILE = "/etc/netplan/60-aifabric-rails.yaml"
NM_DIR = "/etc/NetworkManager/system-connections"
NM_PREFIX = "aifabric-"
SYSCTL_FILE = "/etc/sysctl.d/60-aifabric-rails.conf"
BATCH_FILE = "/etc/aifabric/rail-network.batch"
UNIT_NAME = "aifabric-rail-network.service"
UNIT_FILE = "/etc/systemd/system/" + UNIT_NAME
UNIT_LINK = "/etc/systemd/system/multi-user.target.wants/" + UNIT_NAME
NM_UUID_NAMESPACE = uuid.UUID("6f1d2c1e-5a0b-4c38-9d1e-a1f0b0c0e0de")

RHEL_LIKE = ("rhel", "centos", "rocky", "almalinux", "fedora", "ol")


def parse_os_release(text):
    values = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip().strip('"').strip("'")
    return values


def detect_backend(os_release, exists):
    """Pick the persistence backend: netplan on Ubuntu, NetworkManager on RHEL-likes, else systemd.

    ``os_release`` is the parsed /etc/os-release, ``exists(path)`` tells whether a path exists.
    A distro's usual tool is used only when it is installed; otherwise the next rule applies.
    """
    ids = [os_release.get("ID", "").lower()] + os_release.get("ID_LIKE", "").lower().split()
    has_netplan = exists("/usr/sbin/netplan") or exists("/usr/bin/netplan")
    has_nm = exists("/usr/sbin/NetworkManager")
    if "ubuntu" in ids and has_netplan:
        return "netplan"
    if any(i in RHEL_LIKE for i in ids) and has_nm:
        return "networkmanager"
    if has_netplan and exists("/etc/netplan"):
        return "netplan"
    if has_nm and exists("/etc/NetworkManager/system-connections"):
        return "networkmanager"
    return "systemd"


def _routes_of(desired, dev):
    return [route_dict(k) for k in desired["routes"] if route_dict(k)["dev"] == dev]


def _rules_of(desired, intent, dev):
    tables = set(int(n["table"]) for n in intent["nics"] if n["netdev"] == dev and "table" in n)
    return [k for k in desired["rules"] if k[3] in tables]


def render_sysctl(desired):
    if not desired["sysctls"]:
        return {}
    lines = ["# " + HEADER]
    for name, value in sorted(desired["sysctls"].items()):
        # sysctl.d(5): with '/' as separator, dots inside interface names stay literal.
        prefix = "net.ipv4.conf."
        if name.startswith(prefix) and "." in name[len(prefix):].rsplit(".", 1)[0]:
            dev, key = name[len(prefix):].rsplit(".", 1)
            name = "net/ipv4/conf/%s/%s" % (dev, key)
        lines.append("%s = %s" % (name, value))
    return {SYSCTL_FILE: ("\n".join(lines) + "\n", 0o644)}


def _yaml_scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))


def _yaml_lines(value, indent):
    """Block-style YAML for dicts/lists of scalars (enough for a netplan document)."""
    pad = " " * indent
    lines = []
    if isinstance(value, dict):
        for key in sorted(value):
            item = value[key]
            if isinstance(item, (dict, list)) and item:
                lines.append("%s%s:" % (pad, key))
                lines += _yaml_lines(item, indent + 2)
            else:
                lines.append("%s%s: %s" % (pad, key, "[]" if item == [] else "{}" if item == {} else _yaml_scalar(item)))
    else:
        for item in value:
            if isinstance(item, dict):
                sub = _yaml_lines(item, indent + 2)
                lines.append(pad + "- " + sub[0].lstrip())
                lines += sub[1:]
            else:
                lines.append(pad + "- " + _yaml_scalar(item))
    return lines


def render_netplan(intent, desired):
    ethernets = {}
    for dev in sorted(desired["links"]):
        conf = {"mtu": desired["links"][dev]["mtu"], "addresses": list(desired["addrs"].get(dev, [])),
                "dhcp4": False, "dhcp6": False}
        routes = []
        for route in _routes_of(desired, dev):
            entry = {"to": route["dst"]}
            if route["via"]:
                entry["via"] = route["via"]
            if route["src"]:
                entry["from"] = route["src"]
            if route["scope"] == "link" and not route["via"]:
                entry["scope"] = "link"
            if route["table"] != MAIN:
                entry["table"] = route["table"]
            if route["metric"]:
                entry["metric"] = route["metric"]
            routes.append(entry)
        if routes:
            conf["routes"] = routes
        policy = []
        for key in _rules_of(desired, intent, dev):
            entry = {"from": key[1], "table": key[3], "priority": key[0]}
            if key[2] != "all":
                entry["to"] = key[2]
            policy.append(entry)
        if policy:
            conf["routing-policy"] = policy
        ethernets[dev] = conf
    doc = {"network": {"version": 2, "ethernets": ethernets}}
    text = "# " + HEADER + "\n" + "\n".join(_yaml_lines(doc, 0)) + "\n"
    return {NETPLAN_FILE: (text, 0o600)}


def nm_keyfile(intent, desired, dev):
    name = NM_PREFIX + dev
    lines = ["# " + HEADER, "[connection]", "id=" + name, "uuid=" + str(uuid.uuid5(NM_UUID_NAMESPACE, name)),
             "type=ethernet", "interface-name=" + dev, "autoconnect=true", "",
             "[ethernet]", "mtu=%d" % desired["links"][dev]["mtu"], "",
             "[ipv4]", "method=manual"]
    for index, addr in enumerate(desired["addrs"].get(dev, []), start=1):
        lines.append("address%d=%s" % (index, addr))
    lines.append("never-default=true")
    index = 0
    for route in _routes_of(desired, dev):
        index += 1
        dst = "0.0.0.0/0" if route["dst"] == "default" else route["dst"]
        value = dst + ("," + route["via"] if route["via"] else "")
        if route["metric"]:
            value += ("" if route["via"] else ",") + ",%d" % route["metric"]
        lines.append("route%d=%s" % (index, value))
        options = ["table=%d" % route["table"]]
        if route["src"]:
            options.append("src=" + route["src"])
        lines.append("route%d_options=%s" % (index, ",".join(options)))
    for index, key in enumerate(_rules_of(desired, intent, dev), start=1):
        lines.append("routing-rule%d=%s" % (index, rule_text(key)))
    lines += ["", "[ipv6]", "method=link-local", ""]
    return "\n".join(lines)


def render_networkmanager(intent, desired):
    return {"%s/%s%s.nmconnection" % (NM_DIR, NM_PREFIX, dev): (nm_keyfile(intent, desired, dev), 0o600)
            for dev in sorted(desired["links"])}


def render_systemd(intent, desired):
    del intent
    lines = ["# " + HEADER, "# Replayed at boot by %s: `ip -force -batch %s`." % (UNIT_NAME, BATCH_FILE)]
    for dev in sorted(desired["links"]):
        lines.append("link set dev %s mtu %d up" % (dev, desired["links"][dev]["mtu"]))
        for addr in desired["addrs"].get(dev, []):
            lines.append("address replace %s dev %s" % (addr, dev))
    lines += ["route replace " + route_text(k) for k in desired["routes"]]
    for key in desired["rules"]:
        # `ip rule` has no replace: delete first (fails harmlessly at boot) so a replay never duplicates.
        lines.append("rule del " + rule_text(key))
        lines.append("rule add " + rule_text(key))
    unit = "\n".join([
        "# " + HEADER,
        "[Unit]",
        "Description=aifabric.roce rail NIC addresses, routes and policy rules",
        "Wants=network-pre.target",
        "After=network-pre.target systemd-udev-settle.service",
        "Before=network-online.target",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        "ExecStart=/sbin/ip -force -batch " + BATCH_FILE,
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ])
    return {BATCH_FILE: ("\n".join(lines) + "\n", 0o644), UNIT_FILE: (unit, 0o644)}


def render(backend, intent, desired):
    """Files of a backend: ``({path: (content, mode)}, {link_path: target}, [stale-glob, ...])``."""
    if backend not in BACKENDS:
        raise ValueError("unknown persistence backend %r (one of %s)" % (backend, ", ".join(BACKENDS)))
    if backend == "none":
        return {}, {}, []
    files = render_sysctl(desired)
    links, stale = {}, []
    if backend == "netplan":
        files.update(render_netplan(intent, desired))
    elif backend == "networkmanager":
        files.update(render_networkmanager(intent, desired))
        stale.append("%s/%s*.nmconnection" % (NM_DIR, NM_PREFIX))
    else:
        files.update(render_systemd(intent, desired))
        links[UNIT_LINK] = UNIT_FILE
    return files, links, stale
