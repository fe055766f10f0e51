"""tools/demo.py progress output against a stand-in ansible-playbook (no lab): a line per play with
the elapsed time, a heartbeat while a task runs long, a recap table, and a hint on failure."""
import importlib.util
import os

import pytest

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "demo.py")
FAKE = """#!/bin/sh
echo "PLAY [Plan the fabric once (controller)] ****"
echo "TASK [aifabric.roce.plan : Compute the plan] ****"
echo "PLAY [Switch RoCE QoS] ****"
echo "TASK [Say which switch batch this is] ****"
echo "ok: [leaf1] => {"
echo '    "msg": "switch batch 2 of 6: leaf1"'
echo "}"
echo "TASK [aifabric.roce.switch : Reconcile] ****"
sleep 0.5
echo "fatal: [leaf0 -> localhost]: FAILED! => {\\"msg\\": \\"cannot read running config: TCP connection to device failed.\\"}"
echo "PLAY RECAP ****"
echo "gpu01                      : ok=5    changed=1    unreachable=0    failed=0    skipped=0"
echo "leaf0                      : ok=1    changed=0    unreachable=0    failed=$FAKE_FAILED    skipped=0"
exit $FAKE_RC
"""


@pytest.fixture
def demo(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("demo_under_test", DEMO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fake = tmp_path / "ansible-playbook"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    monkeypatch.setattr(module, "BIN", str(tmp_path))
    monkeypatch.setattr(module, "HEARTBEAT_S", 0.2)
    return module


def test_progress_lines_heartbeat_and_recap_table(demo, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_RC", "0")
    monkeypatch.setenv("FAKE_FAILED", "0")
    recap = demo.playbook("site.yml")
    out = capsys.readouterr().out
    assert recap == {"gpu01": (1, 0, 0), "leaf0": (0, 0, 0)}
    assert "s] site.yml: Plan the fabric once (controller)" in out and "s] site.yml: Switch RoCE QoS" in out
    assert "... aifabric.roce.switch : Reconcile" in out  # the heartbeat names the running task
    assert "s] site.yml:   switch batch 2 of 6: leaf1" in out  # one play name for every batch: the batch line says which
    assert "device       ok  changed  unreachable  failed" in out and "gpu01         5        1" in out
    assert "{'gpu01'" not in out  # a table, not a Python dict


def test_failure_ends_with_the_likely_fix(demo, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_RC", "2")
    monkeypatch.setenv("FAKE_FAILED", "1")
    with pytest.raises(SystemExit) as exc:
        demo.playbook("site.yml")
    assert "site.yml failed (rc 2). Hint: the switch simulators are not running: make lab-up" in str(exc.value)
    assert demo.hint("Error: no such container aifabric-gpu02").startswith("the lab's GPU host containers are not running")
