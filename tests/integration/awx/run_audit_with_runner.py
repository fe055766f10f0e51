"""Run playbooks/audit.yml through ansible-runner from a private_data_dir laid out the way AWX
lays it out, against the running lab (`make lab-up`). Exit 0 when the job succeeds and the report
says the fabric is in sync. `--keep-report DIR` copies the job's report directory to DIR (tools/demo.py
checks it as its zero-drift audit).

AWX's layout (awx/main/tasks/jobs.py build_private_data_files / ansible-runner's input dir):
  <pdd>/project/          the project checkout (AWX copies the SCM tree here; cwd of the job)
  <pdd>/inventory/hosts   an executable script printing the inventory as `ansible-inventory --list` JSON
  <pdd>/env/extravars     extra vars (survey answers)
  <pdd>/env/envvars       environment (collections path inside the EE)
  <pdd>/env/settings      runner settings
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import ansible_runner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import labid  # noqa: E402  pylint: disable=wrong-import-position


def build_private_data_dir(pdd):
    project = os.path.join(pdd, "project")
    files = subprocess.run(["git", "ls-files", "-z", "--cached"], cwd=ROOT,  # what an SCM checkout holds
                           check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = os.path.join(ROOT, rel)
        if not os.path.isfile(src):
            continue
        dst = os.path.join(project, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    # The EE has the collection installed; here the collection is this checkout, installed the same way.
    collections = os.path.join(pdd, "collections")
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--force", "--output-path", pdd, project],
                   check=True, capture_output=True)
    tarball = [f for f in os.listdir(pdd) if f.endswith(".tar.gz")][0]
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--force", "-p", collections,
                    os.path.join(pdd, tarball)], check=True, capture_output=True)
    # AWX imports the project's inventory (SCM inventory source) and hands the job a script.
    inventory = subprocess.run([os.path.join(BIN, "ansible-inventory"), "-i", os.path.join(ROOT, "inventories", "lab"),
                                "--list", "--export"], check=True, capture_output=True, text=True).stdout
    os.makedirs(os.path.join(pdd, "inventory"))
    script = os.path.join(pdd, "inventory", "hosts")
    with open(script, "w") as handle:
        handle.write("#!%s\nimport sys\nsys.stdout.write(%r)\n" % (sys.executable, inventory))
    os.chmod(script, 0o755)
    os.makedirs(os.path.join(pdd, "env"))
    with open(os.path.join(pdd, "env", "extravars"), "w") as handle:
        json.dump({"audit_fail_on_drift": True, "audit_report_dir": os.path.join(pdd, "artifacts-report")}, handle)
    with open(os.path.join(pdd, "env", "envvars"), "w") as handle:
        # the job runs from a copy of the project, elsewhere: it names this checkout's lab (tests/lab/labid.py) by id
        json.dump({"ANSIBLE_COLLECTIONS_PATH": collections, "ANSIBLE_CONFIG": os.path.join(project, "ansible.cfg"),
                   "PATH": BIN + ":" + os.environ.get("PATH", ""), "AIFABRIC_LAB_ID": labid.lab_id(ROOT)}, handle)
    with open(os.path.join(pdd, "env", "settings"), "w") as handle:
        json.dump({"suppress_ansible_output": False, "job_timeout": 900}, handle)
    return project


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--keep-report", help="copy the job's report directory here (replaced if it exists)")
    args = parser.parse_args(argv)
    pdd = tempfile.mkdtemp(prefix="awx-pdd-")
    try:
        build_private_data_dir(pdd)
        result = ansible_runner.run(private_data_dir=pdd, playbook="playbooks/audit.yml", quiet=True)
        print("ansible-runner status=%s rc=%s" % (result.status, result.rc))
        if args.keep_report and os.path.isdir(os.path.join(pdd, "artifacts-report")):
            shutil.rmtree(args.keep_report, ignore_errors=True)
            shutil.copytree(os.path.join(pdd, "artifacts-report"), args.keep_report)
        with open(os.path.join(pdd, "artifacts-report", "drift-report.json")) as handle:
            report = json.load(handle)
        print("report: drift=%s devices=%d" % (report["drift"], report["summary"]["devices"]))
        # what AWX keeps after the job: set_stats data, carried by the stats event as artifact_data
        artifacts = [e["event_data"].get("artifact_data", {}) for e in result.events if e.get("event") == "playbook_on_stats"]
        kept = (artifacts[-1] if artifacts else {}).get("aifabric_audit", {})
        print("job artifacts: aifabric_audit verdict=%s" % kept.get("verdict"))
        ok = (result.status == "successful" and result.rc == 0 and report["drift"] is False and report["summary"]["devices"] > 0
              and kept.get("verdict") == report["verdict"] and kept.get("report_markdown", "").startswith("# Drift audit"))
        if not ok:
            print(result.stdout.read()[-4000:])
        return 0 if ok else 1
    finally:
        shutil.rmtree(pdd, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
