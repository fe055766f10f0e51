# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan on disk: ``plan.json`` plus one small slice per device under ``devices/``.

Written once per run on the controller; every later step reads plan.json (controller-wide steps)
or its own device's slice (roles), never re-plans. Files are written only when their bytes
change, each atomically, and slices of devices that left the plan are removed.
No Ansible imports.
"""

from __future__ import annotations

import hashlib
import json
import os

from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import inside, read_bytes, write_if_changed
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


def not_a_symlink(path):
    """``path`` itself, refused when it is a symlink: a planted link would send the plan's writes (and the
    removal of stale slices) to wherever it points, outside the build directory."""
    if os.path.islink(path):
        raise ValueError("%s is a symlink (to %s): the plan writes only real files and directories inside its build "
                         "directory; remove the link (rm %s) and run again" % (path, os.readlink(path), path))
    return path


def device_path(plan_dir, name):
    return inside(not_a_symlink(os.path.join(plan_dir, DEVICES_DIR)), name + ".json")


def write_plan(plan, plan_dir, input_digest="", check_mode=False):
    """Write the plan and its device slices; return the handle (small dict) roles are given.

    The handle names the files and carries what is small and fabric-wide (sizing, QoS profile,
    digests, device counts); ``written``/``removed`` list what changed on disk.
    """
    data = plan_bytes(plan)
    digest = hashlib.sha256(data).hexdigest()
    written, removed = [], []
    for name in (PLAN_FILE, HANDLE_FILE, SLICES_FILE, DEVICES_DIR):  # refused before anything is written
        not_a_symlink(os.path.join(plan_dir, name))
    if write_if_changed(os.path.join(plan_dir, PLAN_FILE), data, check_mode=check_mode):
        written.append(PLAN_FILE)
    devices_dir = os.path.join(plan_dir, DEVICES_DIR)
    present, sums = set(), []
    for name, record in device_slices(plan, digest):
        if name + ".json" in present:
            raise ValueError("two devices of the plan are named %r: device names must be unique "
                             "across servers, leafs and spines" % name)
        present.add(name + ".json")
        record_bytes = slice_bytes(record)
        sums.append("%s  %s/%s.json\n" % (hashlib.sha256(record_bytes).hexdigest(), DEVICES_DIR, name))
        if write_if_changed(device_path(plan_dir, name), record_bytes, check_mode=check_mode):
            written.append("%s/%s.json" % (DEVICES_DIR, name))
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
    data = read_bytes(path)
    if data is None:
        raise IOError("no plan at %s: run role aifabric.roce.plan (or playbooks/plan.yml) first" % path)
    return json.loads(data)


def _disk_handle(plan_dir):
    """The handle the plan wrote beside its slices (the reference when no run's handle is given)."""
    data = read_bytes(os.path.join(plan_dir, HANDLE_FILE))
    try:
        handle = json.loads(data) if data else {}
    except ValueError:
        handle = {}
    return handle if isinstance(handle, dict) else {}


_SUMS = {}  # (path, expected digest) -> (file identity, sums): one check per process while the file is unchanged


def _identity(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def slice_sums(plan_dir, expect_slices):
    """{"devices/<name>.json": sha256} from devices.sha256, once its own sha256 is the one expected."""
    path = os.path.join(plan_dir, SLICES_FILE)
    identity = _identity(not_a_symlink(path))
    cached = _SUMS.get((path, expect_slices))
    if identity and cached and cached[0] == identity:
        return cached[1]
    data = read_bytes(path)
    if not expect_slices or data is None:
        raise ValueError("%s has no digest of its slices (%s or the handle's slices_digest is missing: written by an "
                         "older version or removed): run role aifabric.roce.plan again" % (plan_dir, path))
    if hashlib.sha256(data).hexdigest() != expect_slices:
        raise ValueError("%s was changed after the plan wrote it (sha256 %s, the plan's slices_digest %s): do not edit "
                         "the plan directory %s; change the fabric intent and run role aifabric.roce.plan again"
                         % (path, hashlib.sha256(data).hexdigest()[:12], expect_slices[:12], plan_dir))
    sums = {}
    for line in data.decode("utf-8").splitlines():
        digest, _sep, name = line.partition("  ")
        sums[name] = digest
    _SUMS[(path, expect_slices)] = (identity, sums)
    return sums


def load_slice(plan_dir, name, expect_digest=None, expect_slices=None):
    """One device's slice, checked by the sha256 of its bytes against the plan's devices.sha256 (itself checked
    against ``expect_slices``, this run's handle, or else the plan-handle.json written beside it, e.g. with
    ``plan_dir``). IOError names what is missing, ValueError a slice from another plan or changed on disk."""
    path = device_path(plan_dir, name)
    data = read_bytes(path)
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
    want = slice_sums(plan_dir, expect_slices).get("%s/%s.json" % (DEVICES_DIR, name))
    got = hashlib.sha256(data).hexdigest()
    if want != got:
        raise ValueError("%s was changed after the plan wrote it (sha256 %s, the plan's %s): do not edit slices; change "
                         "the fabric intent and run role aifabric.roce.plan again" % (path, got[:12], (want or "none")[:12]))
    return record
