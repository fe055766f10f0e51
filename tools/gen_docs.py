"""Regenerate the docs that come from code (run by `make docs`; a unit test checks they are current)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.docs import schema_doc  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import with_readme_table  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.nos.verification import platforms_page, with_contract_table  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.bounds import bounds_doc  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.host.stacks import with_rules_doc  # noqa: E402


def main():
    for name, text in (("fabric-schema.md", schema_doc()), ("platforms.md", platforms_page()),
                       ("argument-bounds.md", bounds_doc())):
        path = os.path.join(ROOT, "docs", name)
        with open(path, "w") as handle:
            handle.write(text)
        print("wrote %s" % path)
    readme = os.path.join(ROOT, "README.md")
    with open(readme) as handle:
        text = with_readme_table(handle.read())
    with open(readme, "w") as handle:
        handle.write(text)
    print("wrote the switch table of %s" % readme)
    host = os.path.join(ROOT, "docs", "host-rdma.md")
    with open(host) as handle:
        text = with_rules_doc(handle.read())
    with open(host, "w") as handle:
        handle.write(text)
    print("wrote the collective library rules of %s" % host)
    contract = os.path.join(ROOT, "docs", "adding-a-nos.md")
    with open(contract) as handle:
        text = with_contract_table(handle.read())
    with open(contract, "w") as handle:
        handle.write(text)
    print("wrote the driver table of %s" % contract)


if __name__ == "__main__":
    main()
