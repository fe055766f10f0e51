# Telemetry checks (issue 21 item 3): the alert rules through promtool (Debian package prometheus, installed by
# tools/setup-system.sh) - `check rules` and `test rules` on recorded series (monitoring/tests/*.yml) - and the
# dashboard/exporter tests (structure, every queried series exported, PromQL parsed by promtool). About 3 s.
.PHONY: test-monitoring

TEST_TARGETS += test-monitoring

test-monitoring: setup
	promtool check rules monitoring/roce-alerts.yml monitoring/gom-alerts.yml
	promtool test rules monitoring/tests/*.yml
	$(PY) -m pytest -q tests/unit/telemetry/test_monitoring.py tests/unit/telemetry/test_switch_metrics.py tests/unit/gom/test_monitoring_gom.py
