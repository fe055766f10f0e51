# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The fabric intent option shared by every controller-side planning module.
    DOCUMENTATION = r"""
options:
  fabric:
    description:
      - The fabric intent, normally the inventory variable C(fabric) (docs/fabric-schema.md).
      - It is validated as a whole first; bad input fails with one line per problem in C(msg) and the
        list C(problems) (C(path), C(message), C(fix)), and nothing else runs.
    type: dict
    required: true
"""
