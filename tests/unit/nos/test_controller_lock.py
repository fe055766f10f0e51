"""The controller lock (nos/lock.DeviceLock) never follows a planted symlink (issue 18 item 6)."""
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.lock import DeviceLock
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import RefusedError


def test_the_lock_is_taken_and_names_its_holder(tmp_path):
    lock_dir = str(tmp_path / "locks")
    with DeviceLock("leaf1:22", lock_dir, timeout=1) as lock:
        with open(lock.path) as handle:
            assert handle.read().startswith("pid %d " % os.getpid())
    assert oct(os.stat(lock_dir).st_mode & 0o777) == "0o700"


def test_a_planted_lock_file_symlink_is_refused_and_its_target_not_truncated(tmp_path):
    lock_dir = tmp_path / "locks"
    lock_dir.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    lock = DeviceLock("leaf1:22", str(lock_dir), timeout=1)
    os.symlink(str(victim), lock.path)
    with pytest.raises(RefusedError, match="is a symlink: refusing to follow it"):
        with lock:
            pass
    assert victim.read_text() == "precious\n"


def test_a_planted_lock_directory_symlink_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(str(elsewhere), str(tmp_path / "locks"))
    with pytest.raises(RefusedError, match="not a directory owned by this user"):
        with DeviceLock("leaf1:22", str(tmp_path / "locks"), timeout=1):
            pass
    assert os.listdir(str(elsewhere)) == []
