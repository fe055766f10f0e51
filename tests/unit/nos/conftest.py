"""Fixtures shared by the NOS tests (tests/unit/nos/helpers.py holds the plain helpers)."""
import pytest

from .helpers import lab_plan


@pytest.fixture(scope="module")
def plan():
    """The plan of inventories/lab, one per test module (a module's own `plan` fixture overrides it)."""
    return lab_plan()
