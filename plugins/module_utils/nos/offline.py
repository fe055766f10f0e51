# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-switch configuration files rendered offline from the plan (no device reachable), what ``playbooks/plan.yml``
writes to ``<build>/switches/<name>.cfg`` like AVD's intended configs: every line the switch role would push to an
empty switch, in the NOS's own syntax, headed by comments naming the platform and what fabric/platforms.py marks
unverified. A CONFIG_DB NOS (``offline_format`` json) gets ``<name>.json``: its managed tables as ``show
runningconfiguration all`` prints them."""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import platforms
from ansible_collections.aifabric.roce.plugins.module_utils.nos import configdb
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sources import audit


def switch_config(name, intent, qos):
    """The full managed config of one switch as text (defaults included: what is pushed, not what EOS shows)."""
    platform = intent["platform"]
    driver = get_driver(platform)
    lead = driver.comment
    entry = platforms.PLATFORMS[platform]
    head = ["%s %s: %s %s (platform %s, netmiko %s), rendered by aifabric.roce from the plan"
            % (lead, name, entry["vendor"], entry["os"], platform, intent.get("device_type") or entry["device_type"])]
    for item, source in platforms.unverified(platform):
        head.append("%s unverified: %s (%s)" % (lead, item, source))
    for feature in platforms.not_rendered(platform):
        head.append("%s not rendered: %s" % (lead, feature))
    # every section the driver renders (its `sections`), as the switch role pushes them
    body = driver.render_explicit(intent, qos, sections=driver.sections)
    missing, shaky = audit(driver, body)
    lines = len([line for line in body.splitlines() if line.strip()])
    head.append("%s %d lines; without a public source (unverified): %d%s; without any source entry: %d"
                % (lead, lines, len(shaky), " (%s)" % ", ".join(sorted(set(shaky))[:4]) if shaky and
                   len(shaky) < lines else "", len(missing)))
    return "\n".join(head) + "\n" + body


def switch_files(name, intent, qos, stem):
    """{relative path: text} of one switch's offline config: ``switches/<stem>.cfg``, or ``.json`` on a
    CONFIG_DB platform, plus what the driver adds (``offline_files``: AsterNOS's opt-in CONFIG_DB)."""
    driver = get_driver(intent["platform"])
    if driver.offline_format == "json":
        return {"switches/%s.json" % stem: configdb.show_running(driver.tables(intent, qos, driver.sections))}
    files = {"switches/%s.cfg" % stem: switch_config(name, intent, qos)}
    files.update(driver.offline_files(intent, qos, stem))
    return files
