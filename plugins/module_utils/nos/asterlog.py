# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who changed an AsterNOS switch while this run's Easy RoCE REST calls were in flight: the records its SONiC lineage
keeps, read from the switch's Linux shell (where an AsterNOS SSH login lands).

Why a record is needed: a REST PATCH replaces the leaves it carries; an engineer's value of one of them, set after the
run's last read and before its call lands, is overwritten and the read-back then equals this run's intent. Two records
exist on AsterNOS's lineage (a sonic-buildimage fork whose ``sonic-cli`` is sonic-mgmt-framework's klish; sudo exists):

* klish's command log: sonic-mgmt-framework's klish hook (``CLI/klish/patches/klish-2.1.4/plugins/clish/hook_log.c.diff``,
  added upstream 2021-01-04, 5730d3c4) logs each command to syslog local4 -> ``/var/log/audit.log`` as
  ``User "<u>" command "<line>" status - success``. Asterfusion's public fork (asterfusion/asternos-mgmt-framework
  @7986046e, 2020-05-08) predates that hook: whether today's AsterNOS (v3.1 / v6.1) logs klish commands, and where, is
  unverified.
* sudo's syslog records (nos/sudolog.py): each ``sudo config ...`` with user, terminal and time.

Read: the files that exist (``ls``), then every klish-log and sudo line in them. A switch with neither file, a read
that fails (``sudo -n`` asking for a password) or records holding no klish line and not even the read's own sudo
record (sudo logs a command before running it): the check did NOT run (said so). What counts as an edit this run
may have overwritten, from someone else (this run types no klish line and runs no sudo command that writes
configuration in its window):

* a klish configuration line naming Easy RoCE (``roce``): ``qos roce profile <name> <leaf> <value>`` for the profile's
  single-value leaves ``mode`` and ``cable-length`` is mapped to the REST leaf (``roce-profiles <name> <leaf> <value>``,
  nos/asternos.py's canonical line) and judged by whether the switch holds it; that klish form is the simulator's and
  unverified (Easy RoCE's guide shows no command line in its readable part), so any other such line is named as
  possibly overwritten with who, when and the line;
* a CONFIG_DB-writing sudo command (sudolog.writes_config_db) except the two sudolog maps to settings Easy RoCE never
  writes (``config interface mtu``, ``config hostname``): named as possibly overwritten (Easy RoCE regenerates the QoS
  tables it owns).

What it cannot see: another controller's REST call (no AsterNOS REST server log is witnessed), a root login's
writes, a switch whose klish and sudo logging are off."""

from __future__ import annotations

import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import sudolog
from ansible_collections.aifabric.roce.plugins.module_utils.nos.edits import Edit

FILES = ("/var/log/audit.log", "/var/log/auth.log", "/var/log/syslog")
AUDIT = FILES[0]
RECORD = "klish's command log (%s) and sudo's syslog records (%s)" % (AUDIT, ", ".join(FILES[1:]))
LIST = "ls -1 %s" % " ".join(FILES)   # a missing file: ls names it in an error line, never alone
ROCE_LINE = re.compile(r"^qos roce profile (?P<name>\S+) (?P<leaf>mode|cable-length) (?P<value>\S+)$")
KLISH_NOT_CONFIG = ("configure", "end", "exit", "system bash", "write", "terminal ")


def read_command(present):
    """The shell command reading the klish-log and sudo lines of the record files that exist (``present``)."""
    return "sudo -n grep -h -s -F -e ' sudo: ' -e ' command \"' %s" % " ".join(present)


def present(listing):
    """``ls`` of FILES -> those that exist, in FILES' order; ValueError when none does (the check cannot run)."""
    names = set(line.strip() for line in (listing or "").splitlines())
    out = [f for f in FILES if f in names]
    if not out:
        raise ValueError("none of %s exists on the switch" % ", ".join(FILES))
    return out


def klish_edit(at, user, line):
    """A klish command someone typed -> the Edit it may be, or None (not a configuration line naming Easy RoCE)."""
    if "roce" not in line or line.startswith(KLISH_NOT_CONFIG + ("show ", "clear ", "do ")):
        return None
    m = ROCE_LINE.match(line)
    path = ("roce-profiles %s %s %s" % m.group("name", "leaf", "value") if m else
            "`%s` (an Easy RoCE klish line this collection does not map, typed while this run's REST calls were in "
            "flight: possibly overwritten)" % line)
    return Edit(at, user, "klish", path)


def sudo_edit(at, user, tty, argv):
    """A sudo record -> the Edit it may be, or None (writes no CONFIG_DB, or only a setting Easy RoCE never writes)."""
    if not sudolog.writes_config_db(argv) or sudolog.mapped(argv):
        return None
    return Edit(at, user, tty, "`%s` (a CONFIG_DB write run while this run's Easy RoCE REST calls were in flight; Easy "
                               "RoCE regenerates the QoS tables it owns: possibly overwritten)" % " ".join(argv))


def checked(status, out, klish, sudo, since):
    """The answer of ``read_command`` (exit status, text) and its parsed records (``edits``' arguments) -> (the edits,
    a note or None). ValueError when it proves nothing: grep's error (2), sudo's refusal (status 1 with text: grep
    finding nothing prints nothing), or no klish line and no sudo record of this read itself (logging off)."""
    if status not in (0, 1) or (status == 1 and (out or "").strip()):
        raise ValueError("the read failed (exit status %d): %s" % (status, (out or "").strip()[:200]))
    own = any(rec[3][:1] == ["grep"] and rec[0] >= since for rec in sudo)
    if not own and not klish:
        raise ValueError("they hold no klish line and not even this read's own sudo record (logging off?)")
    note = None if own else ("sudo's records hold not even this read's own sudo command: only klish's command log "
                             "was read for concurrent edits")
    return edits(klish, sudo, since), note


def edits(klish, sudo, since):
    """``klish``: (device time, user, line) of each klish command that succeeded; ``sudo``: sudolog.records' tuples
    -> [Edit] of those at or after ``since`` (device epoch) that may have been overwritten, in time order."""
    out = [klish_edit(at, user, line.strip()) for at, user, line in klish if at >= since]
    out += [sudo_edit(*rec) for rec in sudo if rec[0] >= since]
    return sorted((e for e in out if e is not None), key=lambda e: e.at)
