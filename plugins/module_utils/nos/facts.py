# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shapes of the per-NOS facts a driver declares (nos/base.py Driver): a show command and its parser
(``Read``), and a capability the NOS does not have here, said in words (``Unsupported``, false in a test).
Pure data: imported by the drivers and by the shared readers (counters, BGP state), which import no driver."""

from __future__ import annotations


class Read(object):
    """One show command and the parser of its output. ``where``: ``cli`` the session's home, ``shell`` the Linux
    shell under the NOS's CLI (klish), ``port`` once per plan port (``{port}`` in the command, the parser is given
    the port too)."""

    def __init__(self, command, parser, where="cli"):
        self.command, self.parser, self.where = command, parser, where

    def __repr__(self):
        return "Read(%r)" % self.command


class Unsupported(object):
    """What a driver lacks, with the reason (``why``) the docs and the reports show; false in a test."""

    def __init__(self, why):
        self.why = why

    def __bool__(self):
        return False

    def __repr__(self):
        return "Unsupported(%r)" % self.why
