# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan on disk: ``plan.json`` plus one small slice per device under ``devices/``.

Written once per run on the controller; every later step reads plan.json (controller-wide steps)
or its own device's slice (roles), never re-plans. Files are written only when their bytes
change, each atomically, and slices of devices that left the plan are removed.
No Ansible imports.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import json
import os
import stat
from json.encoder import encode_basestring_ascii

from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import inside, replace_with, write_if_changed
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.rollout import switch_batches
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.slices import device_slices

PLAN_FILE = "plan.json"
DEVICES_DIR = "devices"
HANDLE_FILE = "plan-handle.json"
# sha256 of every slice, in `sha256sum` format (`cd <plan dir> && sha256sum -c devices.sha256`); the handle
# carries the manifest's own sha256, so a slice is checked by its content, not by the label it carries.
SLICES_FILE = "devices.sha256"


def intent_digest(fabric_intent):
    """Digest of the fabric intent as given (before defaults): same intent, same digest."""
    text = json.dumps(fabric_intent, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan_bytes(plan):
    # Compact separators keep json on its C encoder (indent forces the pure-Python one: ~3x slower).
    return json.dumps(plan, sort_keys=True, separators=(",", ":")).encode("utf-8") + b"\n"


def slice_bytes(record):
    # Compact like plan.json: indent would put thousands of slices on the pure-Python encoder (~10x slower).
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8") + b"\n"


# json.dumps(value, sort_keys=True, separators=(",", ":")) without building an encoder per call
_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
SECTIONS = ("hosts", "leafs", "spines")  # the device records the slices are cut from


def _str_keys(record):
    return isinstance(record, dict) and all(isinstance(key, str) for key in record)


class _Members(object):
    """Each value of the plan encoded once, reused by plan.json and by every slice that holds it.

    A slice is a shallow copy of its device's record plus a few fabric-wide values, so encoding the
    slices again would repeat almost all of plan.json. Values are keyed by identity (and kept alive
    here, so an id is never reused while cached); keys must be str, as json.dumps sorts them, else the
    caller falls back to json.dumps of the whole dict. The bytes are exactly those of ``plan_bytes``
    and ``slice_bytes`` (tests/unit/fabric/test_planstore_bytes.py compares them).
    """

    def __init__(self):
        self.values = {}
        self.keys = {}
        self.layouts = {}  # a dict's keys in insertion order -> [(b'"key":', key)] in sorted order, or None

    def key(self, key):
        out = self.keys.get(key)
        if out is None:
            out = self.keys[key] = encode_basestring_ascii(key).encode("utf-8") + b":"
        return out

    def layout(self, record):
        """The sorted (encoded key, key) pairs of a dict, worked out once per key order; None unless every key is a str."""
        order = tuple(record)
        layout = self.layouts.get(order, False)
        if layout is False:
            layout = self.layouts[order] = [(self.key(name), name) for name in sorted(order)] if _str_keys(record) else None
        return layout

    def record(self, record, out):
        """Append to ``out`` the pieces of the compact sorted JSON of a dict whose values are cached."""
        layout = self.layout(record) if isinstance(record, dict) and record else None
        if layout is None:
            out.append(_ENCODE(record).encode("utf-8"))
            return
        values, cached, extend = self.values, self.values.get, out.extend
        out.append(b"{")
        for key, name in layout:
            value = record[name]
            entry = cached(id(value))
            if entry is None:
                entry = values[id(value)] = (value, _ENCODE(value).encode("utf-8"))
            extend((key, entry[1], b","))
        out[-1] = b"}"  # the last comma

    def slice(self, record):
        """slice_bytes(record)."""
        out = []
        self.record(record, out)
        out.append(b"\n")
        return b"".join(out)

    def plan(self, plan):
        """plan_bytes(plan) as a list of pieces (b"".join of it), the device records' values cached for the slices."""
        if not (_str_keys(plan) and plan):
            return [plan_bytes(plan)]
        out = [b"{"]
        for top in sorted(plan):
            section = plan[top]
            out.append(self.key(top))
            if top in SECTIONS and _str_keys(section) and section:
                out.append(b"{")
                for name in sorted(section):
                    out.append(encode_basestring_ascii(name).encode("utf-8") + b":")
                    self.record(section[name], out)
                    out.append(b",")
                out[-1] = b"}"
            else:
                out.append(_ENCODE(section).encode("utf-8"))
            out.append(b",")
        out[-1] = b"}\n"
        return out


def not_a_symlink(path):
    """``path`` itself, refused when it is a symlink: a planted link would send the plan's writes (and the
    removal of stale slices) to wherever it points, outside the build directory."""
    if os.path.islink(path):
        raise ValueError("%s is a symlink (to %s): the plan writes only real files and directories inside its build "
                         "directory; remove the link (rm %s) and run again" % (path, os.readlink(path), path))
    return path


def device_path(plan_dir, name):
    return inside(not_a_symlink(os.path.join(plan_dir, DEVICES_DIR)), name + ".json")


_AT_DIR = os.rename in os.supports_dir_fd and os.open in os.supports_dir_fd and os.unlink in os.supports_dir_fd
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_SEPARATORS = tuple(sep for sep in (os.sep, os.altsep, "\0") if sep)


class _SliceWriter(object):
    """Writes devices/<name>.json as write_if_changed(device_path(...)) did (only changed bytes or mode; mode
    0644), with fewer system calls per slice.

    Every call is relative to one descriptor of the directory, opened without following a symlink: nothing
    can be redirected outside it, and no path is resolved again per slice. A name with a separator, a slice
    that is a symlink, or a system without *at() calls take the general path (device_path, which refuses
    what resolves outside devices/).

    No reader sees a half-written slice: an existing slice is replaced by a temporary file renamed over it;
    when devices/ does not exist yet, the slices are written into a new temporary directory beside it, renamed
    to devices/ once complete (one rename instead of one per slice).
    """

    def __init__(self, plan_dir, check_mode):
        self.plan_dir, self.check_mode, self.fd, self.pid, self.missing = plan_dir, check_mode, None, os.getpid(), False
        self.path = not_a_symlink(os.path.join(plan_dir, DEVICES_DIR))
        self.staging, self.staged = None, []  # the temporary directory of a new devices/, and what it holds
        if not _AT_DIR:
            return
        if not check_mode and not os.path.lexists(self.path):
            self.staging = self._new_directory()
        try:
            self.fd = os.open(self.staging or self.path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):  # a link planted since the check above
                not_a_symlink(self.path)
                raise ValueError("%s is not a directory: remove it and run again" % self.path)
            if not (check_mode and exc.errno == errno.ENOENT):
                raise
            self.missing = True  # check mode, no devices/ yet: every slice would be written

    def _new_directory(self):
        attempt = 0
        while True:
            path = os.path.join(self.plan_dir, ".%s.%d.%d.tmp" % (DEVICES_DIR, self.pid, attempt))
            try:
                os.mkdir(path)  # mode 0777 less the umask, as os.makedirs made devices/
                return path
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise
                attempt += 1

    def commit(self):
        """Give a new devices/ its slices: the temporary directory renamed to devices/ (or, when devices/ appeared
        meanwhile, each slice renamed into it)."""
        if self.staging is None:
            return
        self._release()
        try:
            os.rename(self.staging, self.path)
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                raise
            not_a_symlink(self.path)
            for filename in self.staged:
                os.replace(os.path.join(self.staging, filename), inside(self.path, filename))
            os.rmdir(self.staging)
        self.staging = None

    def _release(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def close(self):
        """Release the directory; a temporary directory not committed (a failed write) is removed with what it holds."""
        self._release()
        if self.staging is not None:
            for filename in self.staged:
                try:
                    os.unlink(os.path.join(self.staging, filename))
                except OSError:
                    pass
            try:
                os.rmdir(self.staging)
            except OSError:
                pass
            self.staging = None

    def _general(self, name, data):
        return write_if_changed(device_path(self.plan_dir, name), data, check_mode=self.check_mode)

    def write(self, name, data):
        """True when devices/<name>.json did not hold ``data`` with mode 0644 (and, unless check mode, now does)."""
        if self.missing:
            return True
        if self.fd is None or any(sep in name for sep in _SEPARATORS):
            return self._general(name, data)
        filename = name + ".json"
        if self.staging is not None:  # a new devices/: nothing to read or replace
            if not self._create(filename, data):
                raise ValueError("%s was written twice" % filename)
            self.staged.append(filename)
            return True
        try:
            fd = os.open(filename, os.O_RDONLY | _NOFOLLOW, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # the slice is a symlink
                return self._general(name, data)
            if exc.errno != errno.ENOENT:
                raise
        else:
            try:
                info = os.fstat(fd)
                same = (stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o644 and info.st_size == len(data)
                        and _read_fd(fd, len(data)) == data)
            finally:
                os.close(fd)
            if same:
                return False
        if not self.check_mode:
            self._replace(filename, data)
        return True

    def _create(self, filename, data):
        """Create a file that does not exist yet (in the temporary directory); False when it exists."""
        try:
            fd = os.open(filename, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                return False
            raise
        self._fill(fd, data, filename)
        return True

    def _fill(self, fd, data, filename):
        """Write ``data`` to the new file ``fd`` (mode 0644 whatever the umask); remove it on failure."""
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fchmod(fd, 0o644)
            finally:
                os.close(fd)
        except BaseException:
            try:
                os.unlink(filename, dir_fd=self.fd)
            except OSError:
                pass
            raise

    def _replace(self, filename, data):
        attempt = 0
        while True:
            tmp = ".%s.%d.%d.tmp" % (filename, self.pid, attempt)
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=self.fd)
                break
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise
                attempt += 1
        self._fill(fd, data, tmp)
        try:
            os.replace(tmp, filename, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=self.fd)
            except OSError:
                pass
            raise


def _read_fd(fd, size):
    """Up to size + 1 bytes (one more than expected shows a file that grew)."""
    chunks, left = [], size + 1
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


EMPTY_DEST = ("dest (role variable plan_dir) is empty, which would mean the current directory: set plan_dir to the "
              "plan's own directory (the default is lookup('aifabric.roce.build_dir', <fabric name>))")
SHA256_HEX = frozenset("0123456789abcdef")


def read_regular(path):
    """The bytes of the regular file ``path``, or None when it is missing or unreadable. Anything else there
    (a FIFO, whose read would block forever, a device, a directory) is refused with ValueError; the open does
    not block (O_NONBLOCK) and does not follow a symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("%s is not a regular file (mode %o: a FIFO, device or directory): the plan writes only "
                             "regular files; remove it and run role aifabric.roce.plan again" % (path, info.st_mode))
        return _read_fd(fd, info.st_size)
    finally:
        os.close(fd)


def _check_handle_values(plan_dir, expect_digest, expect_slices):
    """The plan directory and the handle's digests as the plan role sets them, each refused by name otherwise."""
    if not isinstance(plan_dir, str) or not plan_dir.strip():
        raise ValueError("plan_dir is empty (%r), which would mean the current directory: pass the plan's directory "
                         "or leave plan_dir out (hostvars['localhost'].aifabric_plan.dir)" % (plan_dir,))
    for key, value in (("digest", expect_digest), ("slices_digest", expect_slices)):
        if value is None or value == "":
            continue
        if not isinstance(value, str) or len(value) != 64 or not set(value) <= SHA256_HEX:
            raise ValueError("the plan handle's %s must be a sha256 (64 lowercase hex digits), not %s %r: use the handle "
                             "role aifabric.roce.plan sets (hostvars['localhost'].aifabric_plan)"
                             % (key, type(value).__name__, value))


def write_plan(plan, plan_dir, input_digest="", check_mode=False):
    """Write the plan and its device slices; return the handle (small dict) roles are given.

    The handle names the files and carries what is small and fabric-wide (sizing, QoS profile,
    digests, device counts); ``written``/``removed`` list what changed on disk.
    """
    if not isinstance(plan_dir, str) or not plan_dir.strip():
        raise ValueError(EMPTY_DEST)
    for name in (PLAN_FILE, HANDLE_FILE, SLICES_FILE, DEVICES_DIR):  # refused before anything is written
        not_a_symlink(os.path.join(plan_dir, name))
    # The plan and its encodings are acyclic and large: the cyclic GC would only rescan them (as in build_plan).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _write_plan(plan, plan_dir, input_digest, check_mode)
    finally:
        if was_enabled:
            gc.enable()


def _chunks(pieces, count=4096):
    for start in range(0, len(pieces), count):
        yield b"".join(pieces[start:start + count])


def _write_pieces(path, pieces, check_mode):
    """write_if_changed(path, b"".join(pieces)) without the joined copy (40 MB at 32K GPUs); returns (changed,
    sha256 of the bytes). The file is left alone when it holds these bytes (same sha256) with mode 0644."""
    size = sum(map(len, pieces))
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.EMLINK):  # a link is replaced below, never followed
            raise
    else:
        try:
            info = os.fstat(fd)
            before = (_read_fd(fd, size) if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o644
                      and info.st_size == size else None)
        finally:
            os.close(fd)
        if before is not None:
            digest = hashlib.sha256()
            for chunk in _chunks(pieces):
                digest.update(chunk)
            digest = digest.hexdigest()
            if hashlib.sha256(before).hexdigest() == digest:
                return False, digest
            del before
    digest = hashlib.sha256()
    if check_mode:
        for chunk in _chunks(pieces):
            digest.update(chunk)
        return True, digest.hexdigest()
    replace_with(path, _hashed(pieces, digest))
    return True, digest.hexdigest()


def _hashed(pieces, digest):
    """The chunks of ``pieces``, each added to ``digest`` as it is written (one pass over plan.json)."""
    for chunk in _chunks(pieces):
        digest.update(chunk)
        yield chunk


def _write_plan(plan, plan_dir, input_digest, check_mode):
    members = _Members()
    changed, digest = _write_pieces(os.path.join(plan_dir, PLAN_FILE), members.plan(plan), check_mode)
    written, removed = [], []
    if changed:
        written.append(PLAN_FILE)
    devices_dir = os.path.join(plan_dir, DEVICES_DIR)
    present, sums = set(), []
    slices = _SliceWriter(plan_dir, check_mode)
    try:
        for name, record in device_slices(plan, digest):
            if name + ".json" in present:
                raise ValueError("two devices of the plan are named %r: device names must be unique "
                                 "across servers, leafs and spines" % name)
            present.add(name + ".json")
            record_bytes = members.slice(record)  # == slice_bytes(record)
            sums.append("%s  %s/%s.json\n" % (hashlib.sha256(record_bytes).hexdigest(), DEVICES_DIR, name))
            if slices.write(name, record_bytes):
                written.append("%s/%s.json" % (DEVICES_DIR, name))
        slices.commit()
    finally:
        slices.close()
    del members
    manifest = "".join(sorted(sums)).encode("utf-8")
    if write_if_changed(os.path.join(plan_dir, SLICES_FILE), manifest, check_mode=check_mode):
        written.append(SLICES_FILE)
    if os.path.isdir(devices_dir):
        for entry in sorted(os.listdir(devices_dir)):
            if entry.endswith(".json") and entry not in present:
                removed.append("%s/%s" % (DEVICES_DIR, entry))
                if not check_mode:
                    os.unlink(os.path.join(devices_dir, entry))
    handle = {
        "fabric": plan["fabric"], "schema_version": plan["schema_version"],
        "dir": os.path.abspath(plan_dir), "path": os.path.abspath(os.path.join(plan_dir, PLAN_FILE)),
        "devices_dir": os.path.abspath(devices_dir), "digest": digest, "input_digest": input_digest,
        "slices_digest": hashlib.sha256(manifest).hexdigest(),
        "sizing": plan["sizing"], "qos": plan["qos"], "addressing_scheme": plan["addressing_scheme"],
        "counts": {"hosts": len(plan["hosts"]), "leafs": len(plan["leafs"]), "spines": len(plan["spines"])},
    }
    if write_if_changed(os.path.join(plan_dir, HANDLE_FILE), slice_bytes(handle), check_mode=check_mode):
        written.append(HANDLE_FILE)
    return handle, switch_batches(plan), written, removed


def load_plan(path):
    """The plan dict from a plan.json path (or the directory holding it)."""
    if os.path.isdir(path):
        path = os.path.join(path, PLAN_FILE)
    data = read_regular(path)
    if data is None:
        raise IOError("no plan at %s: run role aifabric.roce.plan (or playbooks/plan.yml) first" % path)
    return json.loads(data)


def _disk_handle(plan_dir):
    """The handle the plan wrote beside its slices (the reference when no run's handle is given)."""
    data = read_regular(os.path.join(plan_dir, HANDLE_FILE))
    try:
        handle = json.loads(data) if data else {}
    except ValueError:
        handle = {}
    return handle if isinstance(handle, dict) else {}


# (path, expected digest) -> [file identity, manifest bytes, table or None, lines found]: one check per process while unchanged
_SUMS = {}
_FINDS = 16  # devices looked up one by one in a process before the whole table is parsed


def _identity(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _checked_manifest(plan_dir, expect_slices):
    """The cache entry of devices.sha256, once its own sha256 is the one expected."""
    path = os.path.join(plan_dir, SLICES_FILE)
    identity = _identity(not_a_symlink(path))
    cached = _SUMS.get((path, expect_slices))
    if identity and cached and cached[0] == identity:
        return cached
    data = read_regular(path)
    if not expect_slices or data is None:
        raise ValueError("%s has no digest of its slices (%s or the handle's slices_digest is missing: written by an "
                         "older version or removed): run role aifabric.roce.plan again" % (plan_dir, path))
    if hashlib.sha256(data).hexdigest() != expect_slices:
        raise ValueError("%s was changed after the plan wrote it (sha256 %s, the plan's slices_digest %s): do not edit "
                         "the plan directory %s; change the fabric intent and run role aifabric.roce.plan again"
                         % (path, hashlib.sha256(data).hexdigest()[:12], expect_slices[:12], plan_dir))
    entry = _SUMS[(path, expect_slices)] = [identity, data, None, {}]
    return entry


def _parse_sums(data):
    sums = {}
    for line in data.decode("utf-8").splitlines():
        digest, _sep, name = line.partition("  ")
        sums[name] = digest
    return sums


def slice_sums(plan_dir, expect_slices):
    """{"devices/<name>.json": sha256} from devices.sha256, once its own sha256 is the one expected."""
    entry = _checked_manifest(plan_dir, expect_slices)
    if entry[2] is None:
        entry[2] = _parse_sums(entry[1])
    return entry[2]


def slice_sum(plan_dir, expect_slices, relative):
    """The sha256 devices.sha256 lists for ``relative`` ("devices/<name>.json"), or None.

    A look-up finds its one line in the checked manifest (a search of its bytes: at 32K GPUs the first one in
    a process costs about 1 ms with the manifest's own sha256, where parsing its ~4,600 lines took 4-6 ms);
    a process that looks up more than _FINDS devices parses the table once and reads it from then on.
    """
    entry = _checked_manifest(plan_dir, expect_slices)
    if entry[2] is not None:
        return entry[2].get(relative)
    if relative not in entry[3] and len(entry[3]) < _FINDS:
        data, line = entry[1], relative.encode("utf-8")
        found = data.find(b"  " + line + b"\n")
        if b"\n" in line or found < 64 or (found > 64 and data[found - 65:found - 64] != b"\n"):
            return slice_sums(plan_dir, expect_slices).get(relative)
        entry[3][relative] = data[found - 64:found].decode("ascii")
    if relative in entry[3]:
        return entry[3][relative]
    return slice_sums(plan_dir, expect_slices).get(relative)  # many devices in one process: parse the table once


def load_slice(plan_dir, name, expect_digest=None, expect_slices=None):
    """One device's slice, checked by the sha256 of its bytes against the plan's devices.sha256 (itself checked
    against ``expect_slices``, this run's handle, or else the plan-handle.json written beside it, e.g. with
    ``plan_dir``). IOError names what is missing, ValueError a slice from another plan or changed on disk."""
    _check_handle_values(plan_dir, expect_digest, expect_slices)
    path = device_path(plan_dir, name)
    data = read_regular(path)
    if data is None:
        raise IOError("%s is not a device of the plan in %s (no %s): add it to the fabric intent "
                      "(servers, leafs, spines) or remove it from this inventory group" % (name, plan_dir, path))
    if not (expect_digest and expect_slices):
        disk = _disk_handle(plan_dir)
        expect_digest, expect_slices = expect_digest or disk.get("digest"), expect_slices or disk.get("slices_digest")
    record = json.loads(data)
    if expect_digest and record.get("plan_digest") != expect_digest:
        raise ValueError("%s belongs to another plan (digest %s, expected %s): the plan directory %s was rewritten "
                         "by another run; run role aifabric.roce.plan again" % (
                             path, str(record.get("plan_digest", ""))[:12], expect_digest[:12], plan_dir))
    want = slice_sum(plan_dir, expect_slices, "%s/%s.json" % (DEVICES_DIR, name))
    got = hashlib.sha256(data).hexdigest()
    if want != got:
        raise ValueError("%s was changed after the plan wrote it (sha256 %s, the plan's %s): do not edit slices; change "
                         "the fabric intent and run role aifabric.roce.plan again" % (path, got[:12], (want or "none")[:12]))
    return record
