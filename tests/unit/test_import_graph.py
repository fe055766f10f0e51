"""The import graph of plugins/module_utils (every ``from ... import``, at module level or inside a function): no
module imports itself through others (a cycle), and the packages form layers (no package imports one that imports
it back; ``fabric`` below ``nos``: the NOS drivers read the platform table, never the other way)."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UTILS = os.path.join(ROOT, "plugins", "module_utils")
PREFIX = "ansible_collections.aifabric.roce.plugins.module_utils."


def _is_module(dotted):
    return os.path.exists(os.path.join(UTILS, dotted.replace(".", "/") + ".py"))


def graph():
    """{module: set(modules it imports)}, dotted names below module_utils."""
    edges = {}
    for folder, _dirs, files in os.walk(UTILS):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            module = os.path.relpath(path, UTILS)[:-3].replace(os.sep, ".")
            out = edges.setdefault(module, set())
            with open(path) as handle:
                tree = ast.parse(handle.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PREFIX):
                    base = node.module[len(PREFIX):]
                    out.update(base + "." + a.name if _is_module(base + "." + a.name) else base for a in node.names)
    return edges


def cycles(edges):
    """Strongly connected components of more than one node, or a node importing itself (Tarjan)."""
    index, low, stack, found = {}, {}, [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            comp = []
            while True:
                comp.append(stack.pop())
                if comp[-1] == node:
                    break
            if len(comp) > 1 or node in edges.get(node, ()):
                found.append(sorted(comp))
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_through_others():
    assert cycles(graph()) == []


def test_packages_form_layers_and_fabric_sits_below_nos():
    packages = {}
    for module, targets in graph().items():
        for target in targets:
            if module.split(".")[0] != target.split(".")[0]:
                packages.setdefault(module.split(".")[0], set()).add(target.split(".")[0])
    assert cycles(packages) == []
    assert "nos" not in packages.get("fabric", set())


def test_the_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
