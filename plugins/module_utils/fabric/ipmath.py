# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Integer IPv4 helpers for the hot path.

`ipaddress` validates every input and is used for that; planning 100K+ NICs formats integers
instead, because building an IPv4Address per value costs ~10x more.
"""

from __future__ import annotations

import ipaddress


def ip(value):
    """Integer -> dotted quad."""
    return "%d.%d.%d.%d" % (value >> 24, (value >> 16) & 255, (value >> 8) & 255, value & 255)


def cidrs_for_range(first, last):
    """Smallest list of prefixes covering the integer range [first, last]."""
    networks = ipaddress.summarize_address_range(ipaddress.IPv4Address(first), ipaddress.IPv4Address(last))
    return [str(net) for net in networks]
