"""docs/comparison.md points each claim to the test that proves it: every test it names exists (file, and the test
function when named), so a renamed or deleted test cannot leave a claim without its proof."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def referenced(text):
    """(path, test name or None) of every `tests/...` / `monitoring/tests/...` reference, following `::name` chains
    written as `file::a`, `::b` (same file)."""
    out, last = [], None
    for m in re.finditer(r"`((?:monitoring/)?tests/[\w/.-]+\.(?:py|yml))(?:::(\w+))?`|`::(\w+)`", text):
        if m.group(1):
            last = m.group(1)
            out.append((last, m.group(2)))
        elif last:
            out.append((last, m.group(3)))
    return out


def test_every_test_the_comparison_names_exists():
    with open(os.path.join(ROOT, "docs", "comparison.md")) as fh:
        refs = referenced(fh.read())
    assert len(refs) >= 20
    for path, name in refs:
        full = os.path.join(ROOT, path)
        assert os.path.isfile(full), path
        if name:
            with open(full) as fh:
                assert re.search(r"^def %s\(" % name, fh.read(), re.M), "%s::%s" % (path, name)


def test_reference_parser_follows_chains():
    assert referenced("`tests/a.py::x`, `::y` and `monitoring/tests/b.yml`") == [
        ("tests/a.py", "x"), ("tests/a.py", "y"), ("monitoring/tests/b.yml", None)]
