# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One atomic write-if-changed for every file the collection writes on the controller.

Stdlib only and no Ansible imports, so action plugins, modules and plain scripts share it.
A reader never sees a half-written file: the data goes to a temporary file in the same
directory, then is renamed over the target (rename is atomic on POSIX). ``durable=True`` also
fsyncs it first (a few ms per file: worth it for single files on hosts, not for thousands of plan
slices that are recomputed on every run anyway).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import tempfile


def read_bytes(path):
    """The file's bytes, or None when it does not exist or cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def _current_mode(path):
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return None


def write_if_changed(path, data, mode=0o644, check_mode=False, before=None, durable=False):
    """Make ``path`` hold ``data`` (bytes or text, UTF-8) with ``mode``.

    Returns True when the content or mode differed (and, unless ``check_mode``, was written).
    ``before`` may pass the current bytes when the caller has already read them.
    """
    if not isinstance(data, bytes):
        data = data.encode("utf-8")
    if before is None:
        before = read_bytes(path)
    if before == data and _current_mode(path) == mode:
        return False
    if check_mode:
        return True
    replace_with(path, (data,), mode, durable)
    return True


def replace_with(path, chunks, mode=0o644, durable=False):
    """Write the byte ``chunks`` to a temporary file beside ``path`` and rename it over ``path`` (readers see
    the old file or the new one, never a half-written one); the temporary file is removed on any failure."""
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        os.makedirs(directory)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".%s." % os.path.basename(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def inside(root, relative):
    """The absolute path of ``relative`` under ``root``; ValueError if it would resolve outside
    (``..``, an absolute name, a symlink pointing elsewhere) or to ``root`` itself."""
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, relative))
    if not target.startswith(base + os.sep):  # the directory itself is no file either
        raise ValueError("%r resolves outside %s" % (relative, root))
    return target
