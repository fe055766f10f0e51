# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: capture_path
short_description: A capture kit path confined to the capture directory
version_added: "1.1.0"
author:
  - aifabric.roce developers (@aifabric)
description:
  - Takes the capture directory and returns C(<capture_dir>/<host>) (absolute, symlinks resolved), or with O(names)
    the list of files C(<capture_dir>/<host>/<name>.txt), as C(playbooks/capture.yml) writes them.
  - Refuses, naming the argument, an empty capture directory, the filesystem root, a host or output name that is not
    a plain file name (a C(/), a C(..), a leading C(.)), and any path that resolves outside the capture directory. All
    names are checked before any path is returned, so a refused host writes nothing.
options:
  _input:
    description: The capture directory (C(capture_dir)).
    type: str
    required: true
  host:
    description: The switch's inventory name.
    type: str
    required: true
  names:
    description: Output names (C(capture_commands[].name)); when given, the list of file paths is returned.
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: The files of this switch's capture
  ansible.builtin.set_fact:
    capture_files: "{{ capture_dir | aifabric.roce.capture_path(inventory_hostname, ['show-version']) }}"
"""

RETURN = r"""
_value:
  description: The host's capture directory, or with O(names) the list of its files, in the order of O(names).
  type: raw
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.aifabric.roce.plugins.module_utils.capture import CapturePathError, capture_path as _path


def capture_path(root, host, names=None):
    try:
        if names is None:
            return _path(root, host)
        return [_path(root, host, name) for name in names]
    except CapturePathError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {"capture_path": capture_path}
