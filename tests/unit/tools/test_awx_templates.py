"""awx/configure.yml: every survey answer is read by the collection, and scope goes through AWX's own Limit
prompt (a survey question cannot set the limit; issue 18 item 6: the "Limit" answer was read by nothing)."""
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LIMITED = {"playbooks/site.yml", "playbooks/validate.yml"}  # the playbooks written to honour --limit


def job_templates():
    with open(os.path.join(ROOT, "awx", "configure.yml"), encoding="utf-8") as handle:
        play = yaml.safe_load(handle)[0]
    return [task["awx.awx.job_template"] for task in play["tasks"] if "awx.awx.job_template" in task]


def collection_text():
    texts = []
    for top in ("playbooks", "roles", "plugins"):
        for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith((".yml", ".yaml", ".py", ".j2")):
                    with open(os.path.join(folder, name), encoding="utf-8") as handle:
                        texts.append(handle.read())
    return "\n".join(texts)


def test_every_survey_answer_is_read_by_the_collection():
    text = collection_text()
    unread = []
    for template in job_templates():
        for question in ((template.get("survey_spec") or {}).get("spec") or []) if template.get("survey_enabled") else []:
            if not re.search(r"\b%s\b" % re.escape(question["variable"]), text):
                unread.append("%s: %s (%s)" % (template["name"], question["question_name"], question["variable"]))
    assert unread == [], "survey answers nothing reads: %s" % unread


def test_scope_is_the_launch_limit_never_a_survey_question():
    templates = job_templates()
    assert {t["playbook"] for t in templates if t.get("ask_limit_on_launch")} == LIMITED
    for template in templates:
        questions = (template.get("survey_spec") or {}).get("spec") or []
        assert not [q for q in questions if "limit" in (q["question_name"] + q["variable"]).lower()], template["name"]
