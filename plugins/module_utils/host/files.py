# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Idempotent file and sysfs writes under a SysRoot, with diffs and check mode."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os


def ensure_file(sysroot, rel, content, mode=0o644, check_mode=False):
    """Make ``rel`` hold ``content``. Returns (changed, diff) where diff is an Ansible diff dict."""
    path = sysroot.path(rel)
    before = None
    if os.path.exists(path):
        with open(path, "r") as handle:
            before = handle.read()
    current_mode = os.stat(path).st_mode & 0o7777 if before is not None else None
    changed = before != content or current_mode != mode
    diff = {"before_header": rel, "after_header": rel, "before": before or "", "after": content}
    if changed and not check_mode:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".aifabric-tmp"
        with open(tmp, "w") as handle:
            handle.write(content)
        os.chmod(tmp, mode)
        os.rename(tmp, path)
    return changed, diff


def ensure_value(sysroot, rel, value, check_mode=False):
    """Write a sysfs/procfs/configfs attribute when its value differs.

    Returns {'path', 'before', 'after', 'changed', 'status'}; status is ok, changed, would change,
    missing (attribute absent: feature or device not there) or failed: <error>.
    """
    before = sysroot.read(rel)
    item = {"path": rel, "before": before, "after": str(value), "changed": False}
    if before is None:
        item["status"] = "missing"
        return item
    if before == str(value):
        item["status"] = "ok"
        return item
    item["changed"] = True
    if check_mode:
        item["status"] = "would change"
        return item
    try:
        sysroot.write(rel, str(value))
    except (IOError, OSError) as exc:
        item["changed"] = False
        item["status"] = "failed: %s" % exc
        return item
    item["status"] = "changed"
    return item


def systemd_oneshot_unit(description, exec_start, after="network.target"):
    return ("# Rendered by aifabric.roce; re-applies host RDMA settings at boot. Do not edit.\n"
            "[Unit]\nDescription=%s\nAfter=%s\nWants=%s\n\n"
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=%s\n\n"
            "[Install]\nWantedBy=multi-user.target\n" % (description, after, after, exec_start))
