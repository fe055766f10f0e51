# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: redact_secrets
short_description: Remove a switch's secrets from captured output
version_added: "1.1.0"
author:
  - aifabric.roce developers (@aifabric)
description:
  - Replaces with C(<redacted>) the secrets a switch prints in its configuration, in the forms of EOS, NX-OS, Dell
    SONiC and AsterNOS klish, NVUE (commands and YAML) and community SONiC CONFIG_DB, and any crypt(3) password hash
    (TACACS+/RADIUS keys, SNMP communities and SNMPv3 keys, C(username ... secret|password), C(enable secret),
    C(hashed-password), the C(passkey) of C(TACPLUS)/C(RADIUS) and their servers, C(SNMP_COMMUNITY) keys,
    C(SNMP_USER) passwords). The witnesses for each form are listed in C(plugins/module_utils/capture.py).
  - Returns the text and the list of what was redacted (line and rule, never the secret).
  - Used by C(playbooks/capture.yml) on every output it keeps; C(-e capture_redact=false) is the explicit opt-out.
options:
  _input:
    description: The captured text.
    type: str
    required: true
  enabled:
    description: When false, the text is returned unchanged with an empty list (the capture kit's opt-out).
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Keep an output without its secrets
  ansible.builtin.copy:
    dest: /tmp/cap/show-run.txt
    content: "{{ (out.stdout | aifabric.roce.redact_secrets).text }}"
    mode: "0600"
  delegate_to: localhost
"""

RETURN = r"""
_value:
  description: C(text), the redacted text, and C(redacted), a list of C({line, rule}) (1-based line in the text).
  type: dict
"""

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.aifabric.roce.plugins.module_utils.capture import redact


def redact_secrets(text, enabled=True):
    text = "" if text is None else str(text)
    if not boolean(enabled, strict=False):
        return {"text": text, "redacted": []}
    out, found = redact(text)
    return {"text": out, "redacted": [{"line": line, "rule": rule} for line, rule in found]}


class FilterModule(object):
    def filters(self):
        return {"redact_secrets": redact_secrets}
