# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who wrote CONFIG_DB on a community SONiC switch while this run's ``config apply-patch`` ran: sudo's syslog records.

Why a record is needed: GCU reads CONFIG_DB once when apply-patch starts (generic_updater.py PatchApplier.apply,
``old_config``) and applies every change to that image, writing each key it changes whole (change_applier.py
ChangeApplier.apply/_upd_data, ``set_entry``); it re-reads CONFIG_DB only for the final comparison. An edit someone
makes after that first read to any field of a key a later change writes is reverted, and the final comparison still
passes: nothing in CONFIG_DB tells. SONiC keeps no record of who wrote CONFIG_DB (no lock, ``ConfigLock`` is a TODO;
auditd's execve rules are a proposal, sonic-net/SONiC pull request 1713). What every SONiC image does record: each
command run through sudo, and every ``config`` command needs root ("Root privileges are required for this
operation"), so an engineer's ``sudo config ...`` is in sudo's syslog record with user, terminal and time, e.g.
``Jan 22 17:34:44.534159 <host> NOTICE sudo:    admin : TTY=pts/2 ; PWD=/home/admin ; USER=root ; COMMAND=/usr/bin/docker
ps`` (SONiC's rsyslog file format, rsyslog.conf.j2 ``SONiCFileFormat``; the line as a SONiC user quoted it in
sonic-net/sonic-buildimage pull request 17874; SONiC's sudoers turns the logging off only for password commands, pull
request 1450).

What it cannot see (docs/switches.md#concurrent-edits): a write made without sudo (a root login, a process such as a
controller writing redis, sonic-db-cli run by root), a switch whose sudo logging is off, and what a command it does not
map changed (only ``config interface mtu`` (scripts/portconfig ``set_mtu``: PORT|<port> mtu) and ``config hostname``
(DEVICE_METADATA|localhost hostname) are mapped to their CONFIG_DB field; any other CONFIG_DB-writing command in the
window is named as possibly overwritten). Which file rsyslog writes sudo's authpriv records to on SONiC
(/var/log/auth.log or /var/log/syslog) is unverified: both are read."""

from __future__ import annotations

import calendar
import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos.edits import Edit, stamped

RECORD = "sudo's syslog records (/var/log/auth.log, /var/log/syslog)"
READ = "sudo -n grep -h -s -F ' sudo: ' /var/log/auth.log /var/log/syslog"
THIS_RUN = "this run"
LINE = re.compile(r"^(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<hms>\d\d:\d\d:\d\d)(?:\.\d+)? \S+ (?:[A-Z]+ )?"
                  r"sudo(?:\[\d+\])?: +(?P<user>\S+) : (?P<fields>(?:[A-Z]+=[^;\n]*; )*)COMMAND=(?P<cmd>.+?)[ \t\r]*$", re.M)
# commands that write CONFIG_DB (sonic-utilities' CLI and scripts, the redis clients, sonic-cfggen's -w/-a/--write-to-db)
WRITERS = ("config", "portconfig", "pfcwd", "acl-loader", "TSA", "TSB", "sonic-db-cli", "redis-cli", "sonic-cfggen")
READ_ONLY_CONFIG = ("save", "list-checkpoints")


def clock(text):
    """``date +%Y-%m-%dT%H:%M:%S``'s answer (transactions.WALL_CLOCK) -> the device's wall clock read as UTC (as
    syslog stamps its lines)."""
    m = re.search(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)", text or "")
    if not m:
        raise ValueError("the device did not tell its clock: %r" % (text or "")[:80])
    return calendar.timegm(tuple(int(x) for x in m.groups()) + (0, 0, 0))


def records(text, near):
    """(device time, user, terminal, argv) of each sudo record that ran a command."""
    for m in LINE.finditer(text or ""):
        at = stamped(m.group("mon"), m.group("day"), m.group("hms"), near)
        if at is None:
            continue
        fields = dict(f.strip().partition("=")[::2] for f in m.group("fields").split(";") if "=" in f)
        argv = m.group("cmd").split()
        yield at, m.group("user"), fields.get("TTY"), [argv[0].rpartition("/")[2]] + argv[1:]


def writes_config_db(argv):
    name, args = argv[0], argv[1:]
    if name not in WRITERS:
        return False
    if name == "config":
        return bool(args) and args[0] not in READ_ONLY_CONFIG
    if name in ("sonic-db-cli", "redis-cli"):
        return "CONFIG_DB" in args or "4" in args
    if name == "sonic-cfggen":
        return any(a in ("-w", "--write-to-db", "-a") for a in args)
    return True


def mapped(argv):
    """The CONFIG_DB setting a command writes, as the driver names it (``TABLE > key > field value``), or None."""
    if argv[:3] == ["config", "interface", "mtu"] and len(argv) == 5:
        return "PORT > %s > mtu %s" % (argv[3], argv[4])
    if argv[:2] == ["config", "hostname"] and len(argv) == 3:
        return "DEVICE_METADATA > localhost > hostname %s" % argv[2]
    return None


def edits(text, near, tag, own_paths):
    """sudo's records -> [edits.Edit]: this run's own ``config apply-patch`` of its patch file (the file's name carries
    the run's tag) as the paths it sent (``own_paths``, where ``THIS_RUN``), then every CONFIG_DB-writing command
    recorded after it from another terminal until this run's next command (its terminal's next record: GCU's window,
    which opens when apply-patch starts and closes when it answers), as the setting it writes (``mapped``) or,
    unmapped, as the command itself (held by no config: named as possibly overwritten). A command before that window
    is in the config GCU read (kept, or GCU's own test ops refused the patch); one after it is not overwritten."""
    out, ours = [], None
    for at, user, tty, argv in records(text, near):
        if ours is not None and tty == ours:
            ours = None   # this run's next command: GCU answered
        if tag and argv[1:2] == ["apply-patch"] and any(tag in a for a in argv):
            out.extend(Edit(at, user, THIS_RUN, path) for path in own_paths)
            ours = tty
            continue
        if ours is None or not writes_config_db(argv):
            continue
        path = mapped(argv) or ("`%s` (a CONFIG_DB write this collection does not map, run while GCU applied this run's "
                                "patch: GCU writes each key it changes whole, from the config it read when apply-patch "
                                "started)" % " ".join(argv))
        out.append(Edit(at, user, tty, path))
    return out
