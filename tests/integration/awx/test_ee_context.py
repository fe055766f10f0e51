"""`make ee-context` must produce a build context ansible-builder accepts, with our collection in it."""
import os
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CONTEXT = os.path.join(ROOT, "build", "ee", "context")


def test_containerfile_installs_pinned_core_runner_and_the_collection():
    with open(os.path.join(CONTEXT, "Containerfile")) as handle:
        containerfile = handle.read()
    assert "ansible-core==2.19.14" in containerfile and "ansible-runner==2.4.3" in containerfile
    assert "ansible-galaxy collection install" in containerfile
    with open(os.path.join(CONTEXT, "_build", "requirements.txt")) as handle:
        assert "netmiko==4.8.0" in handle.read()


def test_collection_tarball_is_in_the_context_and_lean():
    path = os.path.join(CONTEXT, "_build", "collections", "aifabric-roce.tar.gz")
    with tarfile.open(path) as tar:
        names = tar.getnames()
    assert "plugins/modules/fabric_plan.py" in names and "MANIFEST.json" in names
    assert not [n for n in names if n.startswith((".venv", ".collections", "build/", ".hypothesis", ".pytest_cache"))]
