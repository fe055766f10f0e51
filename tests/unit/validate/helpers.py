"""Shared test data: the sourced ib_write_bw sample (tests/fixtures/validate/SOURCE.md)."""
import os

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "validate")

with open(os.path.join(FIXTURES, "ib_write_bw_client_roce.txt")) as _handle:
    SAMPLE = _handle.read()
