"""Artifact paths stay inside the artifact directory, whatever names a plan or a manifest carries."""
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import inside
from ansible_collections.aifabric.roce.plugins.module_utils.nos.offline import switch_files
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.artifacts import UnsafeArtifactPath, render_all
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.modules import fabric_artifacts

from ..fabric.intents import lab
from ..module_runner import run_module


@pytest.mark.parametrize("name", ["x/../../../escaped-by-server-name", "..", "a\\..\\b", "/etc/passwd"])
def test_render_all_refuses_a_name_that_leaves_the_directory(name):
    plan = build_plan(lab())
    plan["leafs"][name] = plan["leafs"].pop("leaf0")  # leafs name files (leafs/<leaf>-bindings.csv)
    with pytest.raises(UnsafeArtifactPath):
        render_all(plan, switch_files)


def test_every_rendered_path_is_inside():
    for path in render_all(build_plan(lab()), switch_files):
        assert path == os.path.normpath(path) and not path.startswith(("/", ".."))


def test_inside_resolves_dot_dot_absolute_names_and_symlinks(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "link").symlink_to(tmp_path)
    assert inside(str(dest), "leafs/leaf0-bindings.csv") == os.path.join(os.path.realpath(str(dest)), "leafs", "leaf0-bindings.csv")
    for name in ("../escaped", "leafs/../../escaped", "/etc/passwd", "link/escaped", ".", ""):
        with pytest.raises(ValueError):
            inside(str(dest), name)


def test_a_tampered_manifest_never_removes_files_outside_dest(tmp_path, capsys):
    dest = tmp_path / "out"
    run_module(fabric_artifacts, {"fabric": lab(), "dest": str(dest), "render_svg": False}, capsys)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    manifest = dest / fabric_artifacts.MANIFEST
    manifest.write_text(manifest.read_text() + "../victim.txt\n")
    result = run_module(fabric_artifacts, {"fabric": lab(), "dest": str(dest), "render_svg": False}, capsys)
    assert result["rc"] == 0 and "../victim.txt" not in result["removed"] and victim.exists()


def test_a_hostile_server_name_is_refused_before_any_file_is_written(tmp_path, capsys):
    fabric = lab()
    del fabric["servers"]["count"]
    fabric["servers"]["names"] = ["x/../../../escaped-by-server-name"]
    result = run_module(fabric_artifacts, {"fabric": fabric, "dest": str(tmp_path / "out"), "render_svg": False}, capsys)
    assert result["failed"] and [p["path"] for p in result["problems"]] == ["fabric.servers.names[0]"]
    assert os.listdir(str(tmp_path)) == []


def test_an_unexpected_planner_exception_fails_the_task_without_planning(tmp_path, capsys, monkeypatch):
    from ansible_collections.aifabric.roce.plugins.module_utils import plan_module

    def broken(_fabric):
        raise RuntimeError("boom")
    monkeypatch.setattr(plan_module, "build_plan", broken)
    result = run_module(fabric_artifacts, {"fabric": lab(), "dest": str(tmp_path / "out"), "render_svg": False}, capsys)
    assert result["failed"] and "RuntimeError: boom" in result["msg"] and not (tmp_path / "out").exists()
