# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Maintenance drain: before a change that can disturb forwarding, the switch announces its routes with the BGP
GRACEFUL_SHUTDOWN community (RFC 8326), so its neighbours move traffic away; the change is applied and verified; then
the drain is taken back (nos/drainstep.py runs the steps). Each driver declares its drain (``DrainLine``,
``FlatDrainLine``, ``DrainSetting`` or ``NoDrain(why)``) with its source beside it.

The drain line is a maintenance state, not intent: drivers leave it out of the managed view (a switch someone else
drained stays drained and is never drift), so it shows in the Image's ``outside`` part, where the drain step checks
that the drain added exactly that line (or CONFIG_DB field) and the undrain took exactly it back.
``auto`` drains spines, not host-facing leafs (single-homed: nothing to move, ``single_homed_leaf``); ``always`` both.
"""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos.configdb import PatchOp
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Unsupported
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command, Op

BGP_HEADER = re.compile(r"^router bgp \d+\s*$")

# Managed sections whose change can disturb forwarding: the underlay (BGP sessions, p2p addresses) and the
# port MTU (a link flap on many ASICs); QoS only when it is first applied (lossless buffers are carved
# then); PBR changes are applied undrained (the binding moves one host port at a time).
DISTURBING = ("underlay", "mtu")


# --- how a NOS drains: each driver declares one of these as its ``drain`` (nos/base.py Driver) ----------------
class NoDrain(Unsupported):
    """No drain on this NOS (the default): the run goes on undrained and says ``why`` (false in a test)."""
    line = None

    def row(self):
        return "none: %s" % self.why

    def paths(self, driver, outside):
        return []

    def is_setting(self, driver, path):
        return False

    def is_child(self, parent, child):
        return False


class DrainLine(NoDrain):
    """One line inside the default-VRF ``router bgp``; ``close`` ends the NOS's block (FRR's ``exit``)."""

    def __init__(self, line, close=None):
        NoDrain.__init__(self, None)
        self.line, self.close = line, close

    def __bool__(self):
        return True

    def row(self):
        return "`%s`" % self.line

    def paths(self, driver, outside):
        return [p for p in outside if p.endswith(" > " + self.line) and BGP_HEADER.match(p.split(" > ")[0])]

    def is_setting(self, driver, path):
        return bool(self.paths(driver, [path]))

    def is_child(self, parent, child):
        return child.strip() == self.line and bool(BGP_HEADER.match(parent))

    def commands(self, driver, managed, on):
        heads = [ln for ln in managed.splitlines() if BGP_HEADER.match(ln)]
        if not heads:
            return None
        head, pad = heads[0].strip(), " " * driver.indent
        body = [Command(head, Op("set", (head,))),
                Command(pad + (self.line if on else "no " + self.line), Op("set" if on else "unset", (head, self.line)))]
        return body + ([Command(self.close)] if self.close else [])

    def blocked(self, driver, managed, outside):
        return "no router bgp of this plan on the switch yet" if self.commands(driver, managed, True) is None else None


class FlatDrainLine(DrainLine):
    """A flat NOS's drain line, set by ``line`` and taken back by ``off`` once the managed view has ``within``."""

    def __init__(self, line, off, within):
        DrainLine.__init__(self, line)
        self.off, self.within = off, within

    def paths(self, driver, outside):
        return [p for p in outside if p in driver.paths(self.line)]

    def commands(self, driver, managed, on):
        if not any(ln.startswith(self.within) for ln in managed.splitlines()):
            return None
        return driver.commands([Op("set", (self.line[len(driver.set_prefix):],)) if on
                                else Op("unset", (self.off[len(driver.unset_prefix):],))])


class DrainSetting(NoDrain):
    """A setting (a CONFIG_DB field, JSON pointer ``pointer``) turned ``on`` / ``off`` by one JSON Patch op once the
    managed view holds ``ours`` (BGP of the plan)."""

    def __init__(self, setting, on, off, pointer, ours):
        NoDrain.__init__(self, None)
        self.setting, self.on, self.off, self.pointer, self.ours = setting, on, off, pointer, ours
        self.line = "%s %s" % (setting, on)

    def __bool__(self):
        return True

    def row(self):
        return "`%s` %s / %s" % (self.setting, self.on, self.off)

    def paths(self, driver, outside):
        return [p for p in outside if p == self.line]

    def is_setting(self, driver, path):
        return path.startswith(self.setting + " ")

    def commands(self, driver, managed, on):
        if not any(line.startswith(self.ours) for line in managed.splitlines()):
            return None
        return driver.commands([PatchOp.of({"op": "replace", "path": self.pointer, "value": self.on if on else self.off})])

    def blocked(self, driver, managed, outside):
        if not any(line.startswith(self.ours) for line in managed.splitlines()):
            return "no BGP of this plan on the switch yet (%s)" % self.ours.strip().replace("|localhost", "")
        if not any(self.is_setting(driver, p) for p in outside):
            return ("the switch shows no %s (a SONiC whose TSA is not kept in CONFIG_DB): drain it by hand with sudo TSA "
                    "/ TSB" % self.setting.replace(" > ", "|", 1).replace(" > ", " "))
        return None


def drained_by_anyone(driver, outside):
    """Every drain the running config shows: our drain line, or the NOS's maintenance mode (``maintenance_drain``)."""
    rx = driver.maintenance_drain
    return driver.drain.paths(driver, outside) + ([p for p in outside if rx.match(p)] if rx else [])


def single_homed_leaf(intent):
    """A leaf whose downlinks are hosts: in a rail-optimized fabric each host NIC has this one leaf, so a drain
    has no other path to move that traffic to; it only makes the leaf re-install its routes (measured on the
    twin: a timers rollout lost 2 cross-rail probes per leaf with the drain, none without; docs/benchmarks.md)."""
    if intent.get("kind"):
        return intent["kind"] == "leaf"
    return any(d.get("server") for d in intent.get("downlinks") or [])


def reasons(driver, before, intent, qos, sections):
    """Why this change needs a drain: the disturbing sections it changes (empty: no drain needed)."""
    out = []
    for sec in sections:
        if sec not in DISTURBING and sec != "qos":
            continue
        have = driver.parse(before, intent, (sec,))
        want = driver.render(intent, qos, (sec,))
        if sec == "qos":
            if not have.strip() and want.strip():
                out.append("first QoS/lossless buffer init")
        elif driver.diff(have, want):
            out.append("%s changes" % sec)
    return out
