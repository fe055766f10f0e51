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

from ansible_collections.aifabric.roce.plugins.module_utils.nos.errors import StepError


class Image(object):
    """``managed``: the driver's canonical managed text; ``outside``: sorted paths of every other setting;
    ``flatten``: the driver's ``paths`` (nos/base.py), the one flattener of the managed text into paths of
    the same shape as ``outside``."""

    def __init__(self, managed, outside, flatten=None):
        self.managed, self.outside = managed, outside
        self.flatten = flatten

    def with_managed(self, managed):
        """The same device image with another managed view (this run's intent over the base's outside)."""
        return Image(managed, self.outside, self.flatten)

    def paths(self):
        """Every setting of the image as a path ("interface X > mtu 9216"; NVUE: the path after ``nv set``), managed
        and outside: the unit in which this run's change and anyone else's are told apart."""
        if self.flatten is None and self.managed.strip():
            raise ValueError("an Image with managed lines needs its driver's paths() to be compared")
        return set(self.flatten(self.managed) if self.managed.strip() else ()) | set(self.outside)

    def digest(self):
        blob = json.dumps([self.managed, self.outside], sort_keys=True).encode("utf-8")
        return "sha256:" + hashlib.sha256(blob).hexdigest()

    def __eq__(self, other):
        return isinstance(other, Image) and (self.managed, self.outside) == (other.managed, other.outside)


def read(io, driver, intent, sections, step):
    """The switch's whole running config read now through ``io`` (nos/session.py DeviceIO), as an Image; an answer that
    is not a config: StepError naming the step."""
    out = io.run(step, driver.show_running)
    try:
        return image(driver, out, intent, sections)
    except ValueError as exc:
        raise StepError(step, driver.show_running, out, str(exc))


def image(driver, running, intent, sections):
    """Full running text -> Image. Raises ValueError when the text is not a config at all (an error page
    parsed as an empty config would otherwise look like a clean device)."""
    if re.search(driver.error_pattern or r"(?!x)x", running, re.M) or not running.strip():
        raise ValueError("the device did not return a config: %s" % " | ".join(running.strip().splitlines()[-3:]))
    managed = driver.parse(running, intent, sections)
    return Image(managed, driver.outside(driver.normalize_running(running), intent, sections), driver.paths)


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


class Changes(object):
    """What moved on the device, split by who moved it. ``base``: the image this run started from;
    ``want``: base plus this run's change; ``got``: what the device holds now.

    * ``ours``: lines this run adds or removes (want vs base);
    * ``foreign``: lines nobody in this run wrote: present now but in neither base nor want, or kept
      by both base and want but gone now.
    A line of ours that is missing or still present is a partial change, not a foreign one; so is a line
    this run itself sent (``sent``: the ops of its commands, nos/ops.py ``sent_ops``), even where the device holds it
    beyond ``want`` (a refused batch applied up to the refused line). ``transient``: paths the NOS's own mechanism
    moves while it applies this run's change and moves back at its end (GCU's port admin-down around port-critical
    changes): never someone else's."""

    def __init__(self, base, want, got, sent=(), transient=()):
        b, w, g = base.paths(), want.paths(), got.paths()
        self.added, self.removed = w - b, b - w
        adds = set(line for op in sent if op.kind == "set" for line in op.lines())
        dels = [line for op in sent if op.kind == "unset" for line in op.lines()]
        transient = set(transient)

        def last(path):
            return path.rpartition(" > ")[2].strip()
        self.foreign_added = sorted(p for p in g - b - w if last(p) not in adds and p not in transient)
        self.foreign_removed = sorted(p for p in (b & w) - g if p not in transient and
                                      not any(last(p) == d or last(p).startswith(d + " ") for d in dels))
        self.got = g
        self.base = b

    @property
    def foreign(self):
        return bool(self.foreign_added or self.foreign_removed)

    def ours_only_undo_target(self):
        """The lines the device should hold once this run's change alone is taken back."""
        return (self.got - self.added) | self.removed

    def conflicts(self):
        """Foreign lines that undoing this run's change could touch: the same setting under the same
        parent (they edited a line we also changed), or anything inside a block this run created or
        removed whole (taking ours back takes the block)."""
        ours = self.added | self.removed
        keys = set(_setting(p) for p in ours)
        blocks = set(p for p in ours if " > " not in p)
        return sorted(p for p in self.foreign_added + self.foreign_removed
                      if _setting(p) in keys or p.split(" > ")[0] in blocks)

    def describe(self, limit=8):
        parts = []
        if self.foreign_added:
            parts.append("appeared: %s" % "; ".join(self.foreign_added[:limit]))
        if self.foreign_removed:
            parts.append("disappeared: %s" % "; ".join(self.foreign_removed[:limit]))
        return ", ".join(parts) or "none"


def _setting(path):
    """``parent > ... > mtu 9216`` -> (``parent > ...``, ``mtu``): what a line sets, whatever its value
    (the line without its last word; ``no`` and NVUE's ``nv set`` dropped)."""
    parent, _sep, line = path.rpartition(" > ")
    toks = line.split()
    if toks[:2] in (["nv", "set"], ["nv", "unset"]):
        toks = toks[2:]
    if toks and toks[0] == "no":
        toks = toks[1:]
    return parent, " ".join(toks[:-1] if len(toks) > 1 else toks)
