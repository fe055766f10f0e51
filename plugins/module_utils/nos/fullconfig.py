# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole running config as two comparable parts: the managed view (driver.parse) and everything
outside it (every other line, with its parents, as a sorted list of paths).

Verification after a change checks ``outside`` unchanged and ``managed`` == intended; a rollback is
"restored" only when both parts equal the before-image. An interface header always stays in
``outside``: a reverse that removed a whole port would show there.
"""

from __future__ import annotations

import hashlib
import json
import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import ports_of


class Image(object):
    def __init__(self, managed, outside):
        self.managed, self.outside = managed, outside

    def digest(self):
        blob = json.dumps([self.managed, self.outside], sort_keys=True).encode("utf-8")
        return "sha256:" + hashlib.sha256(blob).hexdigest()

    def __eq__(self, other):
        return isinstance(other, Image) and (self.managed, self.outside) == (other.managed, other.outside)

    def __ne__(self, other):
        return not self == other


def image(driver, running, intent, sections):
    """Full running text -> Image. Raises ValueError when the text is not a config at all (an error page
    parsed as an empty config would otherwise look like a clean device)."""
    if re.search(driver.error_pattern or r"(?!x)x", running, re.M) or not running.strip():
        raise ValueError("the device did not return a config: %s" % " | ".join(running.strip().splitlines()[-3:]))
    managed = driver.parse(running, intent, sections)
    norm = getattr(driver.transaction, "normalize", None)
    text = norm(running) if norm else running
    if hasattr(driver, "outside"):   # a driver with its own config layout (frr)
        outside = driver.outside(text, intent, sections)
    elif hasattr(driver, "interface_re"):
        outside = _cli_outside(driver, text, intent, sections)
    else:
        outside = _nvue_outside(driver, text, intent, sections)
    return Image(managed, outside)


def _cli_outside(driver, text, intent, sections):
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import parse_tree
    ports = driver.managed_interfaces(intent, sections)
    # interfaces the underlay creates (SVI, loopback): their header is part of the managed view
    created = driver.created_interfaces(intent, sections)
    extra = [re.compile(pat) for pat in driver.intent_owned(intent, sections)]
    out = []

    def walk(nodes, prefix):
        for line, kids in nodes:
            out.append(prefix + line)
            walk(kids, prefix + line + " > ")
    # drivers that manage more than physical ports (EOS underlay: Loopback0, the host SVI, VLANs, router bgp)
    # say per line what is theirs; the others keep the port/section rule below
    child_hook = getattr(driver, "managed_child", None)
    global_hook = getattr(driver, "outside_global", None)
    own_hook = getattr(driver, "owns_interface", None)
    for line, children in parse_tree(text):
        m = re.match(driver.interface_re, line)
        if m:
            if child_hook:   # EOS: the driver says per line what is its own (underlay objects included)
                if not (own_hook and own_hook(m.group(1), intent)):
                    out.append(line)   # the interface itself is never ours to remove (unless the underlay created it)
                walk([c for c in children if not child_hook(m.group(1), c[0], intent, sections)], line + " > ")
            else:
                mine = m.group(1) in ports
                if m.group(1) not in created or not any(driver._child_managed(c[0], sections, m.group(1)) for c in children):
                    out.append(line)   # a port itself is never ours to remove; an SVI/loopback we manage is
                walk([c for c in children if not (mine and driver._child_managed(c[0], sections, m.group(1)))], line + " > ")
        elif global_hook:
            shown = global_hook(line, intent, sections)
            if shown is not None:
                walk([(shown, children)], "")
        elif not driver._owned(line, sections) and not any(rx.match(line) for rx in extra):
            walk([(line, children)], "")
    return sorted(out)


def _nvue_outside(driver, text, intent, sections):
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.nvue import expand_path
    ports = set(driver.port(p) for p in ports_of(intent))
    hook = getattr(driver, "managed_path", None)
    created = getattr(driver, "created_paths", None)
    created = created(intent) if created else ()
    out = set()
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("nv set "):
            continue
        for path in expand_path(line[7:]):
            mine = hook(path, intent, sections) if hook else driver._managed(path, ports, sections)
            # NVUE adds `interface swpN type swp` when a port is first configured: the port itself, not a change
            # (likewise the type/vlan of an interface the underlay creates: the driver's created_paths)
            if not mine and path not in created and not re.match(r"interface (%s) type swp$" % "|".join(
                    re.escape(p) for p in ports), path):
                out.add(path)
    return sorted(out)


def differences(got, want, limit=8):
    """Human summary of what differs between two Images (managed and outside)."""
    parts = []
    for label, g, w in (("managed", set(got.managed.splitlines()), set(want.managed.splitlines())),
                        ("outside the managed view", set(got.outside), set(want.outside))):
        missing, extra = sorted(w - g), sorted(g - w)
        if missing:
            parts.append("%s missing %d: %s" % (label, len(missing), "; ".join(x.strip() for x in missing[:limit])))
        if extra:
            parts.append("%s unexpected %d: %s" % (label, len(extra), "; ".join(x.strip() for x in extra[:limit])))
    return ", ".join(parts) or "no difference"
