"""The capture kit (playbooks/capture.yml, issue 37 item 6): no file outside the capture directory, and no secret of
the switch in any captured file unless the user opts out; the fixture holds each NOS's secrets in their real formats
(tests/fixtures/capture/secrets/SOURCE.md)."""
import json
import os
import subprocess

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.capture import CapturePathError, capture_path, redact

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "capture", "secrets")
with open(os.path.join(FIXTURES, "secrets.json")) as _fh:
    SECRETS = json.load(_fh)


def _read(name):
    with open(os.path.join(FIXTURES, name)) as fh:
        return fh.read()


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_every_secret_of_the_fixture_is_redacted_and_listed(name):
    text = _read(name)
    assert all(secret in text for secret in SECRETS[name])  # the fixture holds what the test says it does
    out, found = redact(text)
    assert [secret for secret in SECRETS[name] if secret in out] == []
    assert len(found) >= len(set(hit[0] for hit in found)) > 0
    for line, rule in found:  # the list names a line and a rule, never the secret
        assert not any(secret in rule for secret in SECRETS[name]) and "<redacted" in out.split("\n")[line - 1]
    # every line without a secret is kept as it was, and a second pass finds nothing more
    changed = set(hit[0] for hit in found)
    assert [a for n, (a, b) in enumerate(zip(text.split("\n"), out.split("\n")), 1) if a != b and n not in changed] == []
    assert redact(out) == (out, [])


def test_structured_captures_stay_parseable_and_keep_what_is_not_secret():
    db = json.loads(redact(_read("sonic-show-runningconfiguration-all.txt"))[0])
    assert db["TACPLUS"]["global"] == {"auth_type": "chap", "passkey": "<redacted>", "timeout": "5"}
    assert db["SNMP_COMMUNITY"] == {"<redacted-1>": {"TYPE": "RO"}, "<redacted-2>": {"TYPE": "RW"}}
    assert db["SNMP_USER"]["v3user"]["SNMP_USER_AUTH_TYPE"] == "SHA"
    nvue = yaml.safe_load(redact(_read("nvue-config-show.yaml"))[0])[0]["set"]["system"]
    assert nvue["snmp-server"]["readonly-community"] == {"<redacted>": {"access": {"any": {}}}}
    assert nvue["aaa"]["user"]["admin2"]["role"] == "system-admin" and nvue["hostname"] == "leaf01"


def test_compact_config_db_and_text_around_it():
    out, found = redact('$ show runningconfiguration all\n{"SNMP_COMMUNITY": {"c0mm": {"TYPE": "RO"}}, '
                        '"TACPLUS": {"global": {"passkey": "k3y"}}}\nexit status 0')
    assert "c0mm" not in out and "k3y" not in out and out.endswith("exit status 0")
    assert [hit[1] for hit in found] == ["snmp community (SNMP_COMMUNITY key)", "config_db secret field"]


@pytest.mark.parametrize("root, host, arg", [
    ("", "sw1", "capture_dir"), ("  ", "sw1", "capture_dir"), ("/", "sw1", "capture_dir"),
    ("/tmp/cap", "../../x", "inventory_hostname"), ("/tmp/cap", "a/b", "inventory_hostname"),
    ("/tmp/cap", "..", "inventory_hostname"), ("/tmp/cap", ".hidden", "inventory_hostname"),
    ("/tmp/cap", "", "inventory_hostname"), ("/tmp/cap", "sw\n1", "inventory_hostname"),
])
def test_a_path_that_leaves_the_capture_directory_is_refused_by_name(root, host, arg):
    with pytest.raises(CapturePathError) as err:
        capture_path(root, host)
    assert str(err.value).startswith(arg) and "nothing was written" in str(err.value)


def test_an_output_name_and_a_symlink_cannot_leave_it_either(tmp_path):
    with pytest.raises(CapturePathError, match=r"^capture_commands\[\]\.name '\.\./x'"):
        capture_path(str(tmp_path), "sw1", "../x")
    os.symlink("/etc", str(tmp_path / "sw2"))
    with pytest.raises(CapturePathError, match="resolves outside capture_dir"):
        capture_path(str(tmp_path), "sw2")
    assert capture_path(str(tmp_path), "leaf-1.dc1", "show-run") == str(tmp_path / "leaf-1.dc1" / "show-run.txt")


def _capture(tmp_path, host, capture_dir, *extra):
    """Run playbooks/capture.yml on the controller itself: each 'switch command' cats a fixture."""
    commands = [{"name": name.rsplit(".", 1)[0], "command": "cat " + os.path.join(FIXTURES, name)} for name in sorted(SECRETS)]
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {host: {"ansible_connection": "local"}}}}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    args = ["ansible-playbook", "-i", str(inventory), os.path.join(ROOT, "playbooks", "capture.yml"),
            "-e", "capture_hosts=all", "-e", "ansible_connection=local",
            "-e", json.dumps({"capture_dir": capture_dir, "capture_commands": commands})] + list(extra)
    return subprocess.run(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                          timeout=180, universal_newlines=True)


def test_the_playbook_keeps_no_secret_and_lists_what_it_redacted(tmp_path):
    cap = tmp_path / "cap"
    run = _capture(tmp_path, "sw1", str(cap), "-vvv", "--diff")
    assert run.returncode == 0, run.stdout[-3000:]
    files = sorted(p.name for p in (cap / "sw1").iterdir())
    assert files == sorted([n.rsplit(".", 1)[0] + ".txt" for n in SECRETS] + ["REDACTED.txt"])
    everything = run.stdout + "".join(p.read_text() for p in (cap / "sw1").iterdir())
    leaked = [s for secrets in SECRETS.values() for s in secrets if s in everything]
    assert leaked == []  # 0 secrets in any captured file, nor in the -vvv --diff output
    listed = (cap / "sw1" / "REDACTED.txt").read_text()
    assert "eos-show-running-config.txt line 13: aaa server key" in listed  # line 12 of the output + the command line
    assert "secret(s) redacted in %s" % (cap / "sw1") in run.stdout
    eos = (cap / "sw1" / "eos-show-running-config.txt").read_text().split("\n")
    assert eos[0].startswith("$ cat ") and eos[13] == "tacacs-server host 10.0.0.5 key 7 <redacted>"


def test_the_opt_out_keeps_them_and_says_so(tmp_path):
    run = _capture(tmp_path, "sw1", str(tmp_path / "cap"), "-e", "capture_redact=false")
    assert run.returncode == 0, run.stdout[-3000:]
    assert "070E33455D1D18544541" in (tmp_path / "cap" / "sw1" / "eos-show-running-config.txt").read_text()
    assert "NOT REDACTED" in (tmp_path / "cap" / "sw1" / "REDACTED.txt").read_text()
    assert "secrets kept verbatim" in run.stdout


@pytest.mark.parametrize("host, capture_dir, arg", [("../../x", "cap", "inventory_hostname"), ("sw1", "", "capture_dir")])
def test_the_playbook_writes_nothing_outside_its_directory(tmp_path, host, capture_dir, arg):
    workdir = tmp_path / "work"
    workdir.mkdir()
    before = set(os.listdir("/"))
    run = _capture(workdir, host, str(workdir / capture_dir) if capture_dir else "")
    assert run.returncode != 0 and arg + " " in run.stdout and "nothing was written" in run.stdout
    assert [p.name for p in workdir.iterdir()] == ["hosts.yml"] and set(os.listdir("/")) == before
