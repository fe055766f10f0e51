"""Regenerate the docs that come from code (run by `make docs`; a unit test checks they are current)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.docs import schema_doc  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import with_readme_table  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.nos.verification import (  # noqa: E402
    platforms_page, with_contract_table, with_driver_lists, with_module_items)
from ansible_collections.aifabric.roce.plugins.module_utils.bounds import bounds_doc  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.host.stacks import with_rules_doc  # noqa: E402


# whole pages: (file under docs/, text)
PAGES = (("fabric-schema.md", schema_doc), ("platforms.md", platforms_page), ("argument-bounds.md", bounds_doc))
# generated parts of hand-written files: (file, rewrite, what)
PARTS = (("README.md", with_readme_table, "the switch table"),
         ("docs/host-rdma.md", with_rules_doc, "the collective library rules"),
         ("docs/adding-a-nos.md", with_contract_table, "the driver table"),
         ("plugins/modules/switch_config.py", lambda t: with_module_items(t, "switch_config"),
          "the per-NOS DOCUMENTATION items"),
         ("plugins/modules/switch_facts.py", lambda t: with_module_items(t, "switch_facts"),
          "the per-NOS DOCUMENTATION items"),
         ("plugins/doc_fragments/switch_platform.py", with_driver_lists, "the platform choices"),
         ("roles/switch/defaults/main.yml", with_driver_lists, "the underlay platforms"),
         ("roles/switch/meta/argument_specs.yml", with_driver_lists, "the underlay platforms"))


def main():
    for name, page in PAGES:
        path = os.path.join(ROOT, "docs", name)
        with open(path, "w") as handle:
            handle.write(page())
        print("wrote %s" % path)
    for name, rewrite, what in PARTS:
        path = os.path.join(ROOT, name)
        with open(path) as handle:
            text = rewrite(handle.read())
        with open(path, "w") as handle:
            handle.write(text)
        print("wrote %s of %s" % (what, path))


if __name__ == "__main__":
    main()
