# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Platform name -> NOS driver. Adding a NOS = one driver module + an entry here + its tests."""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.nos.eos import EosDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.frr import FrrDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.asternos import AsterNosDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.klish import KlishDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.nvue import NvueDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.nxos import NxosDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sonic_db import SonicDbDriver

DRIVERS = {cls.name: cls for cls in (AsterNosDriver, KlishDriver, EosDriver, NvueDriver, NxosDriver, FrrDriver,
                                     SonicDbDriver)}


def get_driver(platform):
    try:
        return DRIVERS[platform]()
    except KeyError:
        raise KeyError("no NOS driver for platform %r; known: %s" % (platform, ", ".join(sorted(DRIVERS))))
