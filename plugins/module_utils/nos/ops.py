# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The typed operations of the driver contract: ``Driver.diff`` returns ``Op`` s, ``Driver.commands`` renders them as
the NOS's ``Command`` s (each knowing its op), and foreign-change attribution reads the ops of what was typed
(``sent_ops``). Pure: no driver, no session, no Ansible."""

from __future__ import annotations

from collections import namedtuple


class Op(namedtuple("Op", "kind path value")):
    """One setting a run sends, typed (``Driver.diff``): ``kind`` ``set`` or ``unset``; ``path`` the setting with its
    parents, as a tuple (``("interface Ethernet1", "mtu 9216")``, ``("PORT", "Ethernet4", "mtu")``); ``value`` the
    setting's value where the NOS keeps it apart (a CONFIG_DB field), else None (a CLI line carries its value).
    A NOS's commands are a view of its ops (``Driver.commands``)."""
    __slots__ = ()

    def __new__(cls, kind, path, value=None):
        return super(Op, cls).__new__(cls, kind, tuple(path), value)

    @property
    def line(self):
        """The last part of the path as a read-back shows it (``mtu 9216``): what foreign-change attribution matches."""
        return self.path[-1] if self.value is None else "%s %s" % (self.path[-1], self.value)

    def lines(self):
        """Every read-back line this op sets or unsets (one here; a CONFIG_DB op adding a whole key: one per field)."""
        return [self.line]


class Command(str):
    """One command as the NOS is sent it, knowing the ``Op`` it renders (``op`` None: a line of the NOS's own syntax
    that sets nothing, such as FRR's ``exit``): what the session records as attempted, so attribution reads the ops
    of what was typed (``sent_ops``) and never parses a NOS's syntax back."""

    op = None

    def __new__(cls, text, op=None):
        self = str.__new__(cls, text)
        self.op = op
        return self


def sent_ops(commands):
    """The ops of the commands a run typed (a session's ``attempted``): what ``fullconfig.Changes`` exempts."""
    return [cmd.op for cmd in commands if isinstance(cmd, Command) and cmd.op is not None]
