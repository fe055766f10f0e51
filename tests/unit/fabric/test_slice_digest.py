"""Slices are checked by the sha256 of their content, not by the plan_digest label they carry, through the
lookup with this run's handle and with plan_dir (issue 18 item 6)."""
import hashlib
import json
import subprocess

import pytest
from ansible.errors import AnsibleError

from ansible_collections.aifabric.roce.plugins.lookup.device_intent import LookupModule
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import load_slice, write_plan

from .intents import lab


@pytest.fixture
def planned(tmp_path):
    handle = write_plan(build_plan(lab()), str(tmp_path))[0]
    return handle, tmp_path / "devices" / "gpu01.json"


def tamper(path, **changes):
    """Edit a slice the way an attacker would: new values, the plan_digest label kept."""
    record = json.loads(path.read_text())
    record.update(changes)
    path.write_text(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")


class DeviceIntent(LookupModule):
    """The lookup's run() with its one option taken from the call (no plugin loader in a unit test)."""

    def set_options(self, task_keys=None, var_options=None, direct=None):
        self.direct = direct or {}

    def get_option(self, option, hostvars=None):
        return self.direct.get(option)


def device_intent():
    return DeviceIntent()


def test_the_handle_carries_the_digest_of_a_sha256sum_manifest_of_every_slice(planned, tmp_path):
    handle, _path = planned
    manifest = (tmp_path / "devices.sha256").read_bytes()
    assert hashlib.sha256(manifest).hexdigest() == handle["slices_digest"]
    assert b"  devices/gpu01.json\n" in manifest and b"  devices/spine2.json\n" in manifest
    checked = subprocess.run(["sha256sum", "--check", "--strict", "devices.sha256"], cwd=str(tmp_path), check=False,
                             stdout=subprocess.PIPE)
    assert checked.returncode == 0


def test_an_untouched_slice_loads_with_the_handle_and_with_plan_dir(planned):
    handle, _path = planned
    assert load_slice(handle["dir"], "gpu01", handle["digest"], handle["slices_digest"])["name"] == "gpu01"
    assert load_slice(handle["dir"], "gpu01")["name"] == "gpu01"
    lookup = device_intent()
    assert lookup.run(["gpu01"], variables={"hostvars": {"localhost": {"aifabric_plan": handle}}})[0]["name"] == "gpu01"
    assert lookup.run(["leaf1"], variables={}, plan_dir=handle["dir"])[0]["kind"] == "leaf"


def test_a_tampered_slice_keeping_its_label_is_refused_by_the_lookup_with_the_handle(planned):
    handle, path = planned
    tamper(path, mtu=1500)
    assert json.loads(path.read_text())["plan_digest"] == handle["digest"]
    with pytest.raises(AnsibleError, match=r"devices/gpu01.json was changed after the plan wrote it .*run role aifabric.roce.plan"):
        device_intent().run(["gpu01"], variables={"hostvars": {"localhost": {"aifabric_plan": handle}}})


def test_a_tampered_slice_is_refused_with_plan_dir_too(planned):
    handle, path = planned
    tamper(path, mtu=1500)
    with pytest.raises(AnsibleError, match=r"gpu01.json was changed after the plan wrote it"):
        device_intent().run(["gpu01"], variables={}, plan_dir=handle["dir"])
    assert device_intent().run(["gpu02"], variables={}, plan_dir=handle["dir"])[0]["name"] == "gpu02"


def test_a_manifest_rewritten_to_match_the_tampered_slice_is_refused(planned, tmp_path):
    handle, path = planned
    tamper(path, mtu=1500)
    manifest = tmp_path / "devices.sha256"
    lines = [line if not line.endswith("devices/gpu01.json") else "%s  devices/gpu01.json" % hashlib.sha256(path.read_bytes()).hexdigest()
             for line in manifest.read_text().splitlines()]
    manifest.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"devices.sha256 was changed after the plan wrote it"):
        load_slice(handle["dir"], "gpu01", handle["digest"], handle["slices_digest"])


def test_a_plan_dir_without_digests_is_refused_with_the_fix(planned, tmp_path):
    handle, _path = planned
    (tmp_path / "devices.sha256").unlink()
    with pytest.raises(ValueError, match=r"no digest of its slices .*run role aifabric.roce.plan again"):
        load_slice(handle["dir"], "gpu01")


def test_a_fifo_in_place_of_a_slice_is_refused_without_blocking(planned):
    """Issue 26 item 5: a FIFO at devices/<switch>.json used to hang the lookup (the read blocks for a writer)."""
    import os
    import threading
    handle, path = planned
    path.unlink()
    os.mkfifo(str(path))
    outcome = {}

    def look():
        try:
            device_intent().run(["gpu01"], variables={"hostvars": {"localhost": {"aifabric_plan": handle}}})
        except AnsibleError as exc:
            outcome["error"] = str(exc)
    reader = threading.Thread(target=look, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "the lookup hangs on the FIFO"
    assert "gpu01.json is not a regular file" in outcome["error"] and "run role aifabric.roce.plan" in outcome["error"]


@pytest.mark.parametrize("bad", [12345, ["x"], "not-a-digest"])
def test_a_mistyped_slices_digest_is_named_not_a_traceback(planned, bad):
    handle, _path = planned
    with pytest.raises(AnsibleError, match=r"slices_digest must be a sha256 \(64 lowercase hex digits\)"):
        device_intent().run(["gpu01"], variables={"hostvars": {"localhost": {"aifabric_plan": dict(handle, slices_digest=bad)}}})


def test_an_empty_plan_dir_is_refused_not_the_current_directory(planned, tmp_path, monkeypatch):
    handle, _path = planned
    monkeypatch.chdir(handle["dir"])   # a plan right here must not be picked up through ""
    with pytest.raises(AnsibleError, match=r"plan_dir is empty, which would mean the current directory"):
        device_intent().run(["gpu01"], variables={}, plan_dir="")
    with pytest.raises(ValueError, match=r"plan_dir is empty"):
        load_slice("", "gpu01")
    with pytest.raises(ValueError, match=r"dest \(role variable plan_dir\) is empty"):
        write_plan(build_plan(lab()), "")
