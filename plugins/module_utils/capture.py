# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The capture kit's two guards (playbooks/capture.yml): every file it writes stays inside the capture directory, and
no secret of the switch reaches a captured file unless the user opts out.

Which lines carry secrets, per NOS, with the witness for each form:
- EOS and NX-OS (`snmp-server community`, `snmp-server host ... <community>`, `username ... secret|password <type>`,
  `enable secret|password`, `tacacs-server`/`radius-server ... key <type> <key>`, SNMPv3 `auth md5|sha <key>`,
  `priv des|aes <key>`, `localizedkey`): Oxidized's own secret scrubbers, lib/oxidized/model/eos.rb and nxos.rb
  (github.com/ytti/oxidized), and the real device outputs in its spec/model/data (EOS 4.29.2F on DCS-7050SX3,
  NX-OS 10.4.5 on C93180YC-FX3), which hold `snmp-server host 10.1.2.3 version 1 string123` and
  `snmp-server user admin network-admin auth md5 ... priv aes-128 ... localizedV2key`.
- Dell SONiC / AsterNOS klish (`username X password <hash> role R`, `tacacs-server key`, `radius-server key`,
  `snmp-server community`): the same keyword forms (dellemc.enterprise_sonic sonic_tacacs_server/sonic_radius_server
  `key`), caught by the same rules.
- NVUE (`nv set system aaa tacacs server N secret K`, `nv set system snmp-server readonly-community C access any`,
  `hashed-password`, SNMPv3 `auth-sha K encrypt-aes K`): NVIDIA's NVUE reference (docs.nvidia.com/networking-ethernet-
  software/nvue-reference, "SNMP Server" and "TACACS"); the YAML form (`nv config show`) with the community or key as a
  map key under `readonly-community:` / `auth-sha:` / `encrypt-aes:` is in Oxidized's spec/model/data
  cumulus#MSN2010_5.9.2_nvue (a real switch).
- Community SONiC CONFIG_DB (`show runningconfiguration all`): sonic-yang-models' sonic-system-tacacs.yang
  (TACPLUS/TACPLUS_SERVER `passkey`), sonic-system-radius.yang (RADIUS/RADIUS_SERVER `passkey`), sonic-snmp.yang
  (SNMP_COMMUNITY, whose key "must be the community name", and SNMP_USER `SNMP_USER_AUTH_PASSWORD` /
  `SNMP_USER_ENCRYPTION_PASSWORD`), ../shared/oracles/sonic-yang-models.
- Any crypt(3) hash (`$1$`, `$5$`, `$6$`, `$9$`, `$y$`...) wherever it appears.

What is redacted is replaced by ``<redacted>`` (a table key by ``<redacted-N>``, so the JSON stays valid and keys stay
distinct); the caller gets the list of (line, rule) with no secret in it. Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re

MASK = "<redacted>"

# tokens that name a secret's encoding rather than being the secret (EOS `secret sha512`, NX-OS `password 5`, klish
# `key ... encrypted`, NX-OS `key 7 "..."`)
_TYPE = r"(?:(?:[0-9]|sha512|sha256|md5|encrypted|hashed|cleartext)\s+)?"

# (rule name, compiled pattern, group holding the secret); applied per line, in order, each may fire several times
_LINE_RULES = [
    ("snmp community", re.compile(r"^(\s*snmp-server\s+community\s+)(\S+)")),
    ("snmp community (host)", re.compile(r"^(\s*snmp-server\s+host\s+\S+.*?\bversion\s+(?:1|2c)\s+)(\S+)")),
    ("snmp community (mib map)", re.compile(r"^(\s*snmp-server\s+mib\s+community-map\s+)(\S+)")),
    ("snmp v3 key", re.compile(r"(\b(?:auth\s+(?:md5|sha\S*)|priv\s+(?:3?des|aes\S*))\s+)(\S+)")),
    ("nvue snmp v3 key", re.compile(r"(\b(?:auth-(?:md5|sha)|encrypt-(?:aes|des))\s+)(?!\{)(\S+)")),
    ("nvue snmp community", re.compile(r"(\b(?:readonly|readwrite)-community(?:-v6)?\s+)(\S+)")),
    ("aaa server key", re.compile(r"^(\s*(?:\S+\s+)*?(?:tacacs-server|radius-server|tacacs|radius|server)\b.*?\bkey\s+"
                                  + _TYPE + r")(\"[^\"]*\"|\S+)")),
    ("secret", re.compile(r"(\b(?:secret|passkey|hashed-password|password)\s+" + _TYPE + r")(?!\{)(\"[^\"]*\"|\S+)")),
    ("secret (yaml)", re.compile(r"^(\s*-?\s*(?:secret|passkey|hashed-password|password|key|community)\s*:\s+)"
                                 r"(?![{\[]|$)(\S.*)")),
    ("crypt hash", re.compile(r"()(\$(?:1|2[aby]?|5|6|7|8|9|y|gy|md5|sha1)\$[./A-Za-z0-9$=+-]+)")),
]

# YAML maps whose keys are secrets (NVUE: the community under readonly-community, the key under auth-sha/encrypt-aes)
_YAML_SECRET_MAPS = re.compile(r"^(\s*)(?:readonly-community|readwrite-community|readonly-community-v6|"
                               r"readwrite-community-v6|auth-md5|auth-sha|encrypt-aes|encrypt-des)\s*:\s*$")
_YAML_KEY = re.compile(r"^(\s*)(['\"]?)([^:'\"\s][^:]*?)(['\"]?)(\s*:.*)$")

# CONFIG_DB: fields that hold a secret, and tables whose keys are secrets
_DB_FIELDS = ("passkey", "SNMP_USER_AUTH_PASSWORD", "SNMP_USER_ENCRYPTION_PASSWORD", "password", "secret")
_DB_FIELD = re.compile(r'("(?:%s)"\s*:\s*)"((?:[^"\\]|\\.)*)"' % "|".join(_DB_FIELDS))
_DB_KEYED_TABLES = ("SNMP_COMMUNITY",)


def _db_keyed_tables(text, found):
    """Replace every key of a CONFIG_DB table whose keys are secrets (SNMP_COMMUNITY) with <redacted-N>. A brace
    scan, so it works on pretty-printed and compact JSON and on text around it, whether or not the JSON parses."""
    count = 0
    for table in _DB_KEYED_TABLES:
        pos = 0
        pattern = re.compile(r'"%s"\s*:\s*\{' % table)
        while True:
            match = pattern.search(text, pos)
            if not match:
                break
            out, i, depth = [], match.end(), 1
            while i < len(text) and depth:
                ch = text[i]
                if ch == '"':
                    end = i + 1
                    while end < len(text) and text[end] != '"':
                        end += 2 if text[end] == "\\" else 1
                    token = text[i:end + 1]
                    rest = text[end + 1:end + 40].lstrip()
                    if depth == 1 and rest.startswith(":") and not re.match(r'^"<redacted-\d+>"$', token):
                        count += 1
                        found.append((text.count("\n", 0, i) + 1, "snmp community (%s key)" % table))
                        token = '"<redacted-%d>"' % count
                    out.append(token)
                    i = end + 1
                    continue
                depth += {"{": 1, "}": -1}.get(ch, 0)
                out.append(ch)
                i += 1
            text = text[:match.end()] + "".join(out) + text[i:]
            pos = match.end() + len("".join(out))
    return text


def redact(text):
    """Return (redacted text, [(line number, rule)]): every secret form above replaced. Line numbers are 1-based in
    the text given; the list never holds a secret."""
    if not text:
        return text or "", []
    found = []
    text = _db_keyed_tables(text, found)
    lines = text.split("\n")
    maps = []  # open YAML secret maps: [indent of the opener, indent of its keys (None until the first)]
    for number, line in enumerate(lines, 1):
        original = line
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        while maps and stripped and indent <= maps[-1][0]:
            maps.pop()
        if maps and stripped and maps[-1][1] in (None, indent):
            match = _YAML_KEY.match(line)
            if match:
                maps[-1][1] = indent
                if match.group(3) != MASK:
                    line = match.group(1) + match.group(2) + MASK + match.group(4) + match.group(5)
                    found.append((number, "nvue snmp community/key (yaml key)"))
        opener = _YAML_SECRET_MAPS.match(line)
        if opener:
            maps.append([len(opener.group(1)), None])
        for name, pattern in _LINE_RULES:
            line = pattern.sub(lambda m: m.group(1) + MASK if m.group(2) != MASK else m.group(0), line)
            if line != original:
                found.append((number, name))
                original = line
        if _DB_FIELD.sub(lambda m: m.group(1) + '"%s"' % MASK, line) != line:
            line = _DB_FIELD.sub(lambda m: m.group(1) + '"%s"' % MASK, line)
            found.append((number, "config_db secret field"))
        lines[number - 1] = line
    # one entry per (line, rule) that changed something; a rule that re-matched its own mask is not counted
    seen, report = set(), []
    for item in found:
        if item not in seen:
            seen.add(item)
            report.append(item)
    return "\n".join(lines), report


class CapturePathError(ValueError):
    """A capture path that would leave the capture directory; the message names the argument and the fix."""


_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+-]*$")


def capture_path(root, host, name=None):
    """The directory <root>/<host> (or the file <root>/<host>/<name>.txt): root must be a non-empty directory path
    other than '/'; host and name single path components (no '/', no '..', no leading '.', no control character),
    and the result must lie inside root after resolving symlinks. Raises CapturePathError naming the argument."""
    if not isinstance(root, str) or not root.strip():
        raise CapturePathError("capture_dir is empty: give a directory for the capture (e.g. -e capture_dir=/tmp/cap); "
                               "nothing was written")
    real_root = os.path.realpath(os.path.abspath(root))
    if real_root == os.path.sep:
        raise CapturePathError("capture_dir %r is the filesystem root: give a directory of its own; nothing was "
                               "written" % root)
    for arg, value in (("inventory_hostname", host), ("capture_commands[].name", name)):
        if value is None and arg != "inventory_hostname":
            continue
        if not isinstance(value, str) or not _NAME.match(value):
            raise CapturePathError("%s %r is not a plain file name (letters, digits, _ . : @ + -, not starting with "
                                   "'.' and without '/'): it would write outside capture_dir %s; rename it or "
                                   "--limit it out; nothing was written" % (arg, value, root))
    path = os.path.join(real_root, host)
    if name is not None:
        path = os.path.join(path, name + ".txt")
    real = os.path.realpath(path)
    if os.path.commonpath([real, real_root]) != real_root:
        raise CapturePathError("inventory_hostname %r resolves outside capture_dir %s (a symlink?): remove the link; "
                               "nothing was written" % (host, root))
    return real
