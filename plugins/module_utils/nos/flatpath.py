# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flat-path driver family: a NOS whose whole config is one ``<set prefix><path> <value>`` per line
(NVUE's ``nv set``), read back line by line, with no parents to carry. The family implements the Driver
hooks (nos/base.py) once; a NOS of it says which paths are its own (``managed_path``), which paths the NOS
prints for objects it creates (``created_paths``) and how a range-compressed key expands (``expand``).
"""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import Driver, SECTIONS
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command


class FlatPathDriver(Driver):
    set_prefix = None      # e.g. "nv set "
    unset_prefix = None    # e.g. "nv unset "

    def expand(self, path):
        """One path as the NOS prints it -> the paths it stands for (range-compressed keys); identity here."""
        return [path]

    def managed_path(self, path, intent, sections):
        """Whether one expanded path belongs to a managed section of this switch."""
        raise self._missing("managed_path")

    def created_paths(self, intent):
        """Paths the NOS prints for objects it creates when ours are first configured: not changes of ours."""
        return set()

    # --- family hooks -------------------------------------------------------------------
    def paths(self, managed):
        """Every expanded path of a config text: a flat config has no parents, each setting's path is the line
        without the set prefix (lines without it are not settings)."""
        out = []
        for line in managed.splitlines():
            line = line.strip()
            if line.startswith(self.set_prefix):
                out += self.expand(line[len(self.set_prefix):])
        return out

    def outside(self, running, intent, sections=SECTIONS):
        created = self.created_paths(intent)
        return sorted(set(p for p in self.paths(running)
                          if p not in created and not self.managed_path(p, intent, sections)))

    def protected(self, command):
        """``unset interface X``: a whole interface is never ours to remove."""
        return bool(re.match(r"^%sinterface \S+\s*$" % re.escape(self.unset_prefix), command.strip()))

    def commands(self, ops):
        """``<set prefix>path`` sets the path (its value its last word), ``<unset prefix>path`` unsets it (and all
        under it)."""
        return [Command((self.unset_prefix if op.kind == "unset" else self.set_prefix) + op.path[-1], op) for op in ops]

    safe_reverse = Driver.checked_reverse
