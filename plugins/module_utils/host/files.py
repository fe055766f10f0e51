# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Idempotent file and sysfs writes under a SysRoot, with diffs and check mode."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import read_bytes, write_if_changed


def ensure_file(sysroot, rel, content, mode=0o644, check_mode=False, durable=True):
    """Make ``rel`` hold ``content`` (atomically). Returns (changed, diff), diff an Ansible diff dict.
    ``durable`` (default: boot scripts and units on hosts, read at the next boot) fsyncs first."""
    path = sysroot.path(rel)
    before = read_bytes(path)
    changed = write_if_changed(path, content, mode=mode, check_mode=check_mode, before=before, durable=durable)
    before_text = before.decode("utf-8", "replace") if before is not None else ""
    diff = {"before_header": rel, "after_header": rel, "before": before_text, "after": content}
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


class RunError(Exception):
    """A host module run that must fail: the message and the partial result the module returns with it."""

    def __init__(self, msg, result=None):
        Exception.__init__(self, msg)
        self.result = dict(result or {})
