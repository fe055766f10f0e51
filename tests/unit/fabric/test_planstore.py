"""plan.json + per-device slices on disk, safe switch batches and the rollout order."""
import json
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import (
    intent_digest, load_plan, load_slice, write_plan)
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.rollout import rollout, switch_batches

from .intents import lab, small


def test_plan_and_slices_round_trip(tmp_path):
    plan = build_plan(lab())
    handle, _batches, written, removed = write_plan(plan, str(tmp_path), input_digest=intent_digest(lab()))
    assert load_plan(handle["path"]) == plan
    assert "plan.json" in written and "devices/gpu03.json" in written and removed == []
    host = load_slice(handle["dir"], "gpu03", expect_digest=handle["digest"])
    assert host["nics"] == plan["hosts"]["gpu03"]["nics"] and host["qos"] == plan["qos"]
    assert host["kind"] == "host" and host["routing"] == plan["routing"] and host["plan_digest"] == handle["digest"]
    leaf = load_slice(handle["dir"], "leaf1")
    assert leaf["kind"] == "leaf" and leaf["bindings"] == plan["leafs"]["leaf1"]["bindings"]
    assert load_slice(handle["dir"], "spine2")["kind"] == "spine"


def test_second_write_changes_nothing_and_a_smaller_fabric_removes_its_slices(tmp_path):
    write_plan(build_plan(lab()), str(tmp_path))
    _handle, _batches, written, removed = write_plan(build_plan(lab()), str(tmp_path))
    assert written == [] and removed == []
    smaller = lab()
    smaller["servers"]["count"] = 3
    _handle, _batches, written, removed = write_plan(build_plan(smaller), str(tmp_path))
    assert removed == ["devices/gpu04.json"] and not os.path.exists(str(tmp_path / "devices" / "gpu04.json"))
    # every other slice carries the new plan's digest, so it is rewritten
    assert "devices/gpu01.json" in written


def test_slices_are_small_and_do_not_grow_with_the_fabric(tmp_path):
    sizes = []
    for servers in (8, 64):
        handle = write_plan(build_plan(small(servers=servers, rails=2, spg=8, spines=2)), str(tmp_path / str(servers)))[0]
        sizes.append(os.path.getsize(os.path.join(handle["devices_dir"], "h001.json")))
        assert len(json.dumps(handle)) < 4096
    assert sizes[0] == sizes[1]


def test_slice_errors_say_what_to_do(tmp_path):
    handle = write_plan(build_plan(lab()), str(tmp_path))[0]
    with pytest.raises(IOError, match="not a device of the plan"):
        load_slice(handle["dir"], "gpu99")
    with pytest.raises(ValueError, match="belongs to another plan"):
        load_slice(handle["dir"], "gpu01", expect_digest="0" * 64)
    with pytest.raises(ValueError, match="outside"):
        load_slice(handle["dir"], "../plan")
    with pytest.raises(IOError, match="run role aifabric.roce.plan"):
        load_plan(str(tmp_path / "missing"))


def _leaf_safety(plan, batch):
    leafs = [plan["leafs"][n] for n in batch if n in plan["leafs"]]
    spines = [plan["spines"][n] for n in batch if n in plan["spines"]]
    return (len(set(l["rail"] for l in leafs)) == len(leafs) and len(set(l["group"] for l in leafs)) == len(leafs)
            and len(set(s["plane"] for s in spines)) == len(spines) and not (leafs and spines))


@pytest.mark.parametrize("servers,rails,spg,spines", [(4, 4, 4, 2), (64, 8, 8, 8), (48, 2, 8, 4), (16, 8, 2, 8)])
def test_batches_cover_every_switch_once_and_are_safe(servers, rails, spg, spines):
    plan = build_plan(small(servers=servers, rails=rails, spg=spg, spines=spines))
    batches = switch_batches(plan)
    flat = [n for batch in batches for n in batch]
    assert sorted(flat) == sorted(list(plan["leafs"]) + list(plan["spines"]))
    assert all(_leaf_safety(plan, batch) for batch in batches)
    groups = max(l["group"] for l in plan["leafs"].values())
    leaf_batches = [b for b in batches if b[0] in plan["leafs"]]
    assert len(leaf_batches) == max(groups, rails)  # the fewest batches the rules allow
    assert flat.index(sorted(plan["leafs"])[0]) < flat.index(sorted(plan["spines"])[0])  # leafs first


def test_rollout_keeps_scope_canary_and_cap():
    plan = build_plan(small(servers=64, rails=8, spg=8, spines=8))
    batches = switch_batches(plan)
    everything = [n for batch in batches for n in batch]
    out = rollout(batches, everything, canary=1, batch_max=3)
    assert out["serial"][0] == 1 and max(out["serial"]) == 3 and sum(out["serial"]) == len(everything)
    assert all(_leaf_safety(plan, batch) for batch in out["batches"])
    scope = everything[::3] + ["stray-switch"]
    limited = rollout(batches, scope, canary=0)
    assert sorted(limited["order"]) == sorted(scope) and limited["batches"][-1] == ["stray-switch"]
    assert all(_leaf_safety(plan, batch) for batch in limited["batches"][:-1])
    assert sum(limited["serial"]) == len(limited["order"])


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_symlinked_devices_dir_is_refused_and_nothing_outside_is_written_or_removed(tmp_path, check_mode):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.json").write_text('{"mine": true}\n')
    build = tmp_path / "build"
    build.mkdir()
    (build / "devices").symlink_to(outside)
    with pytest.raises(ValueError, match=r"build/devices is a symlink .*outside.*remove the link"):
        write_plan(build_plan(lab()), str(build), check_mode=check_mode)
    assert sorted(os.listdir(str(outside))) == ["keep.json"]
    assert (outside / "keep.json").read_text() == '{"mine": true}\n'
    assert not (build / "plan.json").exists()  # refused before anything was written


@pytest.mark.parametrize("name", ["plan.json", "plan-handle.json"])
def test_a_symlinked_plan_file_is_refused(tmp_path, name):
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    build = tmp_path / "build"
    build.mkdir()
    (build / name).symlink_to(victim)
    with pytest.raises(ValueError, match="%s is a symlink" % name):
        write_plan(build_plan(lab()), str(build))
    assert victim.read_text() == "keep\n" and (build / name).is_symlink()


def test_a_slice_symlinked_outside_the_devices_dir_is_refused(tmp_path):
    victim = tmp_path / "victim.json"
    victim.write_text("keep\n")
    build = tmp_path / "build"
    (build / "devices").mkdir(parents=True)
    (build / "devices" / "gpu01.json").symlink_to(victim)
    with pytest.raises(ValueError, match="outside"):
        write_plan(build_plan(lab()), str(build))
    assert victim.read_text() == "keep\n"
