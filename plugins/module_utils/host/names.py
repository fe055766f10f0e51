# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host-side checks of the names host modules put into sysfs paths and boot scripts.

The planner already refuses such names (plugins/module_utils/fabric/names.py); host modules can also
be called by hand, so they check again before a name becomes a path or a script word.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

# Linux interface names: IFNAMSIZ (16 with the NUL) and no '/', ':' or whitespace (dev_valid_name);
# RDMA device names (IB_DEVICE_NAME_MAX 64). Same character set as the fabric schema.
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
NETDEV_MAX = 15
RDMA_MAX = 63
# irqbalance/proc IRQ action-name globs: name characters plus the glob's own * ? [ ].
_GLOB_RE = re.compile(r"^[A-Za-z0-9_.*?\[\]-]+$")


def _problem(kind, value, maximum):
    if not isinstance(value, str) or not value:
        return "%s %r is not a name" % (kind, value)
    if len(value) > maximum or not _NAME_RE.fullmatch(value) or ".." in value:
        return "%s %r is not a valid name (letters, digits, '.', '_', '-', at most %d characters)" % (kind, value, maximum)
    return None


def netdev_problem(value):
    return _problem("netdev", value, NETDEV_MAX)


def rdma_problem(value):
    return _problem("rdma device", value, RDMA_MAX)


def glob_problem(value):
    if not isinstance(value, str) or not _GLOB_RE.fullmatch(value):
        return "IRQ name glob %r may use letters, digits, '_', '.', '-' and the glob characters * ? [ ] only" % (value,)
    return None
