"""`make report-sample` (issue 41 item 6): the sample 1,000-host report, produced by the user's command, not only
inside a test. Runs make with BUILD in a temporary directory; the report is the collection's own rendering."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_make_report_sample_writes_the_1000_host_report(tmp_path):
    build = str(tmp_path / "build")
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").write_text("")  # newer than the requirements: `setup` has nothing to do, this venv's python runs
    proc = subprocess.run(["make", "--no-print-directory", "-C", ROOT, "report-sample", "BUILD=" + os.path.relpath(build, ROOT),
                           "VENV=" + str(venv), "BIN=" + os.path.dirname(sys.executable)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    dest = os.path.join(build, "report-sample")
    assert "DRIFT / NOT READY: 1008 devices (generated fleet); open file://%s/drift-report.html" % dest in proc.stdout
    with open(os.path.join(dest, "drift-report.json")) as handle:
        report = json.load(handle)
    assert report["fabric"] == "sample-1000-hosts (generated)" and report["summary"]["devices"] == 1008
    assert report["summary"]["devices_drift"] == ["gpu0002", "leaf1"]
    with open(os.path.join(dest, "drift-report.html")) as handle:
        page = handle.read()
    assert page.index("Drift") < page.index("Readiness findings")
    assert page.count("<details><summary>1000 devices</summary>") == 10
