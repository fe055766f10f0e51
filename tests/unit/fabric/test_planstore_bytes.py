"""write_plan encodes each device record once for plan.json and every slice: the bytes must stay exactly those
of json.dumps(sort_keys=True, compact) (plan_bytes, slice_bytes), and the files as write_if_changed wrote them."""
import os
import stat

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import planstore
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import (
    _Members, load_slice, plan_bytes, slice_bytes, slice_sum, slice_sums, write_plan)
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.slices import device_slices

from .intents import lab, rail512, small


@pytest.mark.parametrize("intent", [lab, rail512, lambda: small(servers=24, rails=4, spg=8, spines=4)])
def test_files_are_the_bytes_of_plan_bytes_and_slice_bytes(tmp_path, intent):
    plan = build_plan(intent())
    handle = write_plan(plan, str(tmp_path))[0]
    data = plan_bytes(plan)
    assert (tmp_path / "plan.json").read_bytes() == data
    for name, record in device_slices(plan, handle["digest"]):
        assert (tmp_path / "devices" / (name + ".json")).read_bytes() == slice_bytes(record)
        assert stat.S_IMODE(os.stat(str(tmp_path / "devices" / (name + ".json"))).st_mode) == 0o644


ODD = {
    "fabric": "f\u00e9", "schema_version": 1, "qos": {"b": 1.5, "a": [None, True, "x"]}, "routing": {},
    "hosts": {"h\u00e9": {"z": 1, "a": {"2": 1, "10": 2}}, "h0": {}, "h1": {"k": {1: "int key below a record"}}},
    "leafs": {"l1": {3: "int keys in a record", 10: 1}},  # not str keys: json.dumps of that record (10 after 3)
    "spines": [],  # not a dict of records
    "addressing_scheme": "s", "sizing": {"x": float("inf")},
}


def test_odd_plans_fall_back_to_json_dumps_byte_for_byte():
    assert b"".join(_Members().plan(ODD)) == plan_bytes(ODD)
    members = _Members()
    members.plan(ODD)
    for record in (ODD["hosts"]["h\u00e9"], ODD["hosts"]["h0"], ODD["leafs"]["l1"], dict(ODD["hosts"]["h1"], extra=ODD["qos"])):
        assert members.slice(record) == slice_bytes(record)
    assert b"".join(_Members().plan({})) == plan_bytes({})


def test_a_slice_with_another_mode_or_content_is_rewritten_and_a_stale_temporary_name_is_skipped(tmp_path):
    plan = build_plan(lab())
    write_plan(plan, str(tmp_path))
    path = tmp_path / "devices" / "gpu01.json"
    good = path.read_bytes()
    os.chmod(str(path), 0o600)
    (tmp_path / "devices" / "gpu02.json").write_bytes(b"{}\n")
    (tmp_path / "devices" / (".gpu02.json.%d.0.tmp" % os.getpid())).write_bytes(b"left over\n")
    written = write_plan(plan, str(tmp_path))[2]
    assert sorted(written) == ["devices/gpu01.json", "devices/gpu02.json"]
    assert path.read_bytes() == good and stat.S_IMODE(os.stat(str(path)).st_mode) == 0o644
    assert load_slice(str(tmp_path), "gpu02")["name"] == "gpu02"


def test_check_mode_without_a_devices_dir_reports_every_slice_and_writes_nothing(tmp_path):
    plan = build_plan(lab())
    written = write_plan(plan, str(tmp_path / "new"), check_mode=True)[2]
    assert len([w for w in written if w.startswith("devices/")]) == len(plan["hosts"]) + len(plan["leafs"]) + len(plan["spines"])
    assert not (tmp_path / "new").exists()


def test_one_manifest_line_found_by_search_agrees_with_the_parsed_table(tmp_path):
    plan = build_plan(rail512())
    handle = write_plan(plan, str(tmp_path))[0]
    table = slice_sums(str(tmp_path), handle["slices_digest"])
    planstore._SUMS.clear()
    for relative in sorted(table)[:planstore._FINDS + 3] + ["devices/nobody.json"]:
        assert slice_sum(str(tmp_path), handle["slices_digest"], relative) == table.get(relative)


def test_a_new_devices_dir_appears_whole_with_the_umask_mode_and_nothing_is_left_behind(tmp_path):
    plan = build_plan(lab())
    write_plan(plan, str(tmp_path))
    assert sorted(os.listdir(str(tmp_path))) == ["devices", "devices.sha256", "plan-handle.json", "plan.json"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(str(tmp_path / "devices")).st_mode) == 0o777 & ~umask


def test_a_failed_write_leaves_no_devices_dir_and_no_temporary_one(tmp_path):
    plan = build_plan(lab())
    plan["leafs"]["gpu01"] = plan["leafs"]["leaf1"]  # a leaf named like a host
    with pytest.raises(ValueError, match="two devices of the plan are named 'gpu01'"):
        write_plan(plan, str(tmp_path))
    assert sorted(os.listdir(str(tmp_path))) == ["plan.json"]


def test_a_devices_dir_made_meanwhile_gets_the_slices_one_by_one(tmp_path):
    (tmp_path / "plan.json").write_text("{}\n")
    writer = planstore._SliceWriter(str(tmp_path), False)
    assert writer.write("gpu01", b"{}\n")
    (tmp_path / "devices").mkdir()
    (tmp_path / "devices" / "other.json").write_text("{}\n")
    writer.commit()
    writer.close()
    assert sorted(os.listdir(str(tmp_path / "devices"))) == ["gpu01.json", "other.json"]
    assert sorted(os.listdir(str(tmp_path))) == ["devices", "plan.json"]
