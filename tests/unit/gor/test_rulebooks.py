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
    actions = [list(rule["action"])[0] for ruleset in rulesets for rule in ruleset["rules"]]
    assert actions == (["run_playbook"] * 2 if name == "gor.yml" else ["run_job_template"] * 2)
    # steering one run at a time (each run reads and writes the steer record); draining in a ruleset of its own
    assert rulesets[0]["execution_strategy"] == "sequential" and len(rulesets) == 2
    ports = [ruleset["sources"][0]["eda.builtin.webhook"]["port"] for ruleset in rulesets]
    assert len(set(ports)) == 2


def test_controller_rulebook_launches_the_job_templates_awx_defines():
    with open(os.path.join(ROOT, "awx", "configure.yml")) as handle:
        tasks = yaml.safe_load(handle)[0]["tasks"]
    templates = dict((t["awx.awx.job_template"]["name"], t["awx.awx.job_template"]["playbook"])
                     for t in tasks if "awx.awx.job_template" in t)
    with open(os.path.join(RULEBOOKS, "gor_controller.yml")) as handle:
        rules = [r for ruleset in yaml.safe_load(handle) for r in ruleset["rules"]]
    with open(os.path.join(RULEBOOKS, "gor.yml")) as handle:
        cli = [r for ruleset in yaml.safe_load(handle) for r in ruleset["rules"]]
    for rule, twin in zip(rules, cli):
        assert rule["condition"] == twin["condition"]
        playbook = "playbooks/%s.yml" % twin["action"]["run_playbook"]["name"].split(".")[-1]
        assert templates[rule["action"]["run_job_template"]["name"]] == playbook
