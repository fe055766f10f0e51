# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: build_dir
author: aifabric.roce developers (@aifabric)
version_added: "1.2.0"
short_description: Where the collection writes plans and reports on the controller
description:
  - Returns a directory under the build directory, the one place every playbook and role of the
    collection writes its files on the controller (plan and device slices, artifacts, drift,
    preflight and validation reports).
  - The build directory is the variable C(aifabric_build_dir) when set (inventory, C(-e), AWX
    survey), otherwise C(build/) under the working directory of C(ansible-playbook) - the
    checkout when you run from it, the project directory in AWX. It is never inside the installed
    collection.
options:
  _terms:
    description: Path parts joined under the build directory (none returns the build directory).
    required: false
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Write the drift report under <build dir>/audit
  aifabric.roce.drift_report:
    entries: []
    dest: "{{ lookup('aifabric.roce.build_dir', 'audit') }}"
"""

RETURN = r"""
_raw:
  description: One absolute path.
  type: list
  elements: path
"""

import os

from ansible.plugins.lookup import LookupBase


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        base = (variables or {}).get("aifabric_build_dir")
        base = self._templar.template(base) if base else os.path.join(os.getcwd(), "build")
        return [os.path.abspath(os.path.join(os.path.expanduser(str(base)), *[str(t) for t in terms]))]
