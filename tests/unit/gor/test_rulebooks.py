"""The shipped rulebooks against ansible-rulebook's own ruleset schema (the engine's JSON schema, not ours), and their
job template names against awx/configure.yml."""
import json
import os

import jsonschema
import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RULEBOOKS = os.path.join(ROOT, "extensions", "eda", "rulebooks")


def schema():
    ansible_rulebook = pytest.importorskip("ansible_rulebook")   # requirements-dev.txt pins it: always here in CI
    with open(os.path.join(os.path.dirname(ansible_rulebook.__file__), "schema", "ruleset_schema.json")) as handle:
        return json.load(handle)


@pytest.mark.parametrize("name", ["gor.yml", "gor_controller.yml"])
def test_rulebook_matches_the_engines_schema(name):
    with open(os.path.join(RULEBOOKS, name)) as handle:
        rulesets = yaml.safe_load(handle)
    jsonschema.validate(rulesets, schema())
    actions = [list(rule["action"])[0] for rule in rulesets[0]["rules"]]
    assert actions == (["run_playbook"] * 2 if name == "gor.yml" else ["run_job_template"] * 2)


def test_controller_rulebook_launches_the_job_templates_awx_defines():
    with open(os.path.join(ROOT, "awx", "configure.yml")) as handle:
        tasks = yaml.safe_load(handle)[0]["tasks"]
    templates = dict((t["awx.awx.job_template"]["name"], t["awx.awx.job_template"]["playbook"])
                     for t in tasks if "awx.awx.job_template" in t)
    with open(os.path.join(RULEBOOKS, "gor_controller.yml")) as handle:
        rules = yaml.safe_load(handle)[0]["rules"]
    with open(os.path.join(RULEBOOKS, "gor.yml")) as handle:
        cli = yaml.safe_load(handle)[0]["rules"]
    for rule, twin in zip(rules, cli):
        assert rule["condition"] == twin["condition"]
        playbook = "playbooks/%s.yml" % twin["action"]["run_playbook"]["name"].split(".")[-1]
        assert templates[rule["action"]["run_job_template"]["name"]] == playbook
