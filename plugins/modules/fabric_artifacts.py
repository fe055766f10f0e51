#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_artifacts
short_description: Write a fabric's plan artifacts (cabling CSV, switch configs, report, diagram)
description:
  - Reads the plan (O(plan), written by role aifabric.roce.plan) and writes, under O(dest) -
    C(cabling.csv) (printable cable labels), C(leafs/<leaf>-bindings.csv) (leaf port binding tables),
    C(switches/<switch>.cfg) (every switch's rendered config in its NOS's syntax, rendered offline without contacting any device),
    C(report.md) (with the platforms in use and what is unverified on them) and C(topology.dot),
    plus C(topology.svg) when Graphviz C(dot) is installed.
    Past 96 switches the diagram shows one node per spine plane and per server group's leafs.
  - C(plan.json) and the per-device slices C(devices/<name>.json) are the plan role's files; when O(dest)
    is the plan directory they sit beside these artifacts and are never touched here.
  - For each platform of the plan, what its NOS driver will not configure (sections it does not render, or renders
    only under a fabric opt-in) and which switch checks cannot verify it there, with why, from the driver's own
    declarations - printed as warnings and written in C(report.md).
  - Only files whose content differs are written, so a second run reports no change. Files this
    module wrote before that the plan no longer has (a removed host) are deleted.
  - Never writes or removes a path that resolves outside O(dest) (C(..), absolute names, symlinks in O(dest));
    the task fails instead.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  dest:
    description: Directory to write into; created when missing.
    type: path
    required: true
  render_svg:
    description: Render C(topology.svg) with Graphviz C(dot) when it is installed.
    type: bool
    default: true
extends_documentation_fragment:
  - aifabric.roce.fabric
attributes:
  check_mode:
    support: full
    description: Reports which files would be written or removed; writes nothing.
  diff_mode:
    support: full
    description: Before/after text of each changed text file (plan.json is summarised by name).
notes:
  - Runs where it is executed; use C(delegate_to=localhost) to write on the controller.
"""

EXAMPLES = r"""
- name: Write the lab fabric's artifacts
  aifabric.roce.fabric_artifacts:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    dest: "{{ lookup('aifabric.roce.build_dir', 'lab') }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
written:
  description: Files written (or that would be, in check mode), relative to O(dest).
  returned: always
  type: list
  elements: str
  sample: ["cabling.csv", "report.md"]
removed:
  description: Stale files removed (or that would be).
  returned: always
  type: list
  elements: str
  sample: ["hosts/gpu05.json"]
files:
  description: Every artifact path, relative to O(dest).
  returned: always
  type: list
  elements: str
  sample: ["plan.json", "cabling.csv", "report.md", "switches/leaf1.cfg", "topology.dot", "topology.svg"]
svg:
  description: Whether topology.svg is produced (false when Graphviz is missing or O(render_svg=false)).
  returned: always
  type: bool
  sample: true
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import inside, read_bytes, write_if_changed
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.artifacts import UnsafeArtifactPath, render_all
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import DEVICES_DIR, HANDLE_FILE, PLAN_FILE
from ansible_collections.aifabric.roce.plugins.module_utils.nos.offline import switch_files
from ansible_collections.aifabric.roce.plugins.module_utils.nos import capabilities
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils import bounds

MANIFEST = ".aifabric-artifacts"
DIFF_LIMIT = 20000


# Files of the plan itself (role aifabric.roce.plan): never written or removed by this module.
PLAN_OWNED = (PLAN_FILE, HANDLE_FILE)


def _plan_owned(name):
    return name in PLAN_OWNED or name.startswith(DEVICES_DIR + "/")


def _render_svg(module, dot_bin, dot_text):
    rc, out, err = module.run_command([dot_bin, "-Tsvg"], data=dot_text, binary_data=True, encoding=None)
    if rc != 0:
        module.fail_json(msg="graphviz dot failed: %s" % err)
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(PLAN_ARGUMENTS, dest=dict(type="path", required=True),
                           render_svg=dict(type="bool", default=True)),
        supports_check_mode=True,
        **PLAN_CONSTRAINTS)
    bounds.enforce(module, "fabric_artifacts")
    dest = module.params["dest"]
    plan = plan_or_fail(module)
    try:
        notes = capabilities.platform_notes(plan)
        files = dict((name, text.encode("utf-8"))
                     for name, text in render_all(plan, switch_files, capabilities.report_lines(notes)).items())
    except UnsafeArtifactPath as exc:
        module.fail_json(msg="refusing to write artifacts: %s" % exc)
    dot_bin = module.get_bin_path("dot") if module.params["render_svg"] else None
    if dot_bin:
        files["topology.svg"] = _render_svg(module, dot_bin, files["topology.dot"])
    files[MANIFEST] = ("\n".join(sorted(files)) + "\n").encode("utf-8")

    previous = (read_bytes(os.path.join(dest, MANIFEST)) or b"").decode("utf-8").split()
    stale = sorted(name for name in previous if name not in files and not _plan_owned(name))
    written, diffs = [], []
    for name in sorted(files):
        try:
            path = inside(dest, name)
        except ValueError as exc:
            module.fail_json(msg="refusing to write an artifact outside %s: %s" % (dest, exc))
        before = read_bytes(path)
        if not write_if_changed(path, files[name], check_mode=module.check_mode, before=before):
            continue
        if name != MANIFEST:
            written.append(name)
            if module._diff and name.endswith((".csv", ".md", ".dot", ".json", ".cfg")) and len(files[name]) < DIFF_LIMIT:
                diffs.append({"before_header": path, "after_header": path,
                              "before": (before or b"").decode("utf-8", "replace"), "after": files[name].decode("utf-8")})
    removed = []
    for name in stale:
        try:
            path = inside(dest, name)
        except ValueError:
            continue  # a manifest line pointing outside dest is not ours to delete
        if os.path.exists(path):
            removed.append(name)
            if not module.check_mode:
                os.unlink(path)
    for line in capabilities.warning_lines(notes):   # plan.yml's terminal: what a platform will not configure or verify
        module.warn(line)
    result = dict(changed=bool(written or removed), written=written, removed=removed,
                  files=sorted(name for name in files if name != MANIFEST), svg=bool(dot_bin))
    if module._diff:
        result["diff"] = diffs or [{"before": "", "after": ""}]
    module.exit_json(**result)


if __name__ == "__main__":
    main()
