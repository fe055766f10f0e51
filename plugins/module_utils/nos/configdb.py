# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CONFIG_DB model shared by community SONiC, AsterNOS's CONFIG_DB opt-in and the GCU transaction: tables
(``TABLE`` -> ``key`` -> ``{field: string}``, composite keys joined by ``|``), their canonical text view, RFC 6902
JSON Patch between two managed views, and the patch a switch holding a whole CONFIG_DB is given (generic_config_updater's
rules: no empty table, no op into a missing member). Pure data: none of the three imports another through here.
"""

from __future__ import annotations

import copy
import json
import re
from collections import namedtuple

from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command


def field_text(value):
    """One field as the text view writes it (a list field joined by commas)."""
    return ",".join(value) if isinstance(value, list) else str(value)


def text(tables):
    """Tables -> canonical lines: ``TABLE|key`` for every key, ``TABLE|key field value`` for every field."""
    lines = []
    for table in sorted(tables):
        for key in sorted(tables[table]):
            fields = tables[table][key]
            lines.append("%s|%s" % (table, key))
            lines += ["%s|%s %s %s" % (table, key, f, field_text(fields[f])) for f in sorted(fields)]
    return "\n".join(lines) + ("\n" if lines else "")


LIST_FIELDS = {("ACL_TABLE", "ports")}
CANONICAL = re.compile(r"^[A-Z][A-Z0-9_]*\|\S+( \S+ \S.*)?$")


def tables_of(canonical):
    """Canonical lines -> tables (inverse of ``text``)."""
    out = {}
    for line in canonical.splitlines():
        if not line.strip():
            continue
        head, _sp, rest = line.partition(" ")
        table, _bar, key = head.partition("|")
        row = out.setdefault(table, {}).setdefault(key, {})
        if rest:
            field, _sp, value = rest.partition(" ")
            row[field] = value.split(",") if (table, field) in LIST_FIELDS else value
    return out


def patch(have, want):
    """RFC 6902 ops (jsonpatch) from the ``have`` owned tables to the ``want`` ones, per table, so no op
    ever replaces or removes a whole table (tables also hold keys that are not ours). A table absent
    from the device needs an ``add /TABLE {}`` first: the transaction adds it, knowing the whole config."""
    import jsonpatch   # controller-only dependency (requirements.txt), imported when a diff is asked for
    ops = []
    for table in sorted(set(have) | set(want)):
        for op in jsonpatch.make_patch(have.get(table, {}), want.get(table, {})).patch:
            op = dict(op, path=pointer(table) + op["path"])
            if "from" in op:
                op["from"] = pointer(table) + op["from"]
            ops.append(op)
    return ops


def pointer(*keys):
    """Keys -> a JSON pointer (RFC 6901 escapes)."""
    return "".join("/" + str(k).replace("~", "~0").replace("/", "~1") for k in keys)


def parts(ptr):
    """A JSON pointer -> its keys (inverse of ``pointer``)."""
    return tuple(k.replace("~1", "/").replace("~0", "~") for k in ptr.split("/")[1:])


VERBS = {"add": "set", "replace": "set", "remove": "unset"}


class PatchOp(namedtuple("PatchOp", "kind path value verb source")):
    """One RFC 6902 op as a typed op (nos/ops.py Op): ``kind`` set (add, replace) or unset (remove) (a move or copy:
    its verb, which attribution reads as no setting), ``path`` the pointer's parts, ``value``, ``verb`` the JSON Patch
    op, ``source`` the parts of a move's or copy's ``from``."""
    __slots__ = ()

    @classmethod
    def of(cls, op):
        """A JSON Patch op (dict) -> PatchOp."""
        return cls(VERBS.get(op["op"], op["op"]), parts(op["path"]), op.get("value"), op["op"],
                   parts(op["from"]) if "from" in op else None)

    def patch(self):
        """The JSON Patch op (dict)."""
        out = {"op": self.verb, "path": pointer(*self.path)}
        if self.source is not None:
            out["from"] = pointer(*self.source)
        if self.verb in ("add", "replace", "test"):
            out["value"] = self.value
        return out

    def lines(self):
        """The read-back lines it sets or unsets: a dict below the field level stands for each field it holds."""
        if self.kind == "unset":
            return [self.path[-1]] if self.path else []
        return _field_lines(self.path, self.value) if self.kind == "set" else []


def _field_lines(keys, value):
    if isinstance(value, dict) and len(keys) < 3:
        return [line for key in sorted(value) for line in _field_lines(keys + (key,), value[key])]
    if len(keys) < 3:
        return [keys[-1]] if keys else []
    return ["%s %s" % (keys[-1], field_text(value))]


def patch_ops(ops):
    """JSON Patch ops (dicts) -> PatchOps."""
    return [PatchOp.of(op) for op in ops]


def commands(ops):
    """PatchOps -> one JSON string each (keys sorted), as the transaction writes them, each knowing its op."""
    return [Command(json.dumps(op.patch(), sort_keys=True), op) for op in ops]


def device_view(managed, outside_paths):
    """An Image of the switch (managed canonical text, ``outside`` paths) -> (``config``, ``owned``, ``foreign``): the
    tables and keys the switch holds (values only where the Image keeps them), the owned tables, and for every key that
    is not wholly ours the names of its fields that are not ours ({TABLE: {key: set(fields)}})."""
    owned = tables_of(managed)
    config = copy.deepcopy(owned)
    foreign = {}
    for path in outside_paths:
        bits = path.split(" > ", 2)
        if len(bits) < 2:
            continue   # a non-table entry: nothing a patch touches
        table, key = bits[0], bits[1]
        config.setdefault(table, {}).setdefault(key, {})
        fields = foreign.setdefault(table, {}).setdefault(key, set())
        if len(bits) == 3:
            field, _sp, value = bits[2].partition(" ")
            config[table][key][field] = value
            fields.add(field)
    return config, owned, foreign


def device_patch(ops, config, owned, foreign, managed):
    """The JSON Patch ``ops`` between managed views (``patch``/``Driver.diff``) -> the patch GCU is given for a switch
    holding ``config`` (``device_view``), so that it changes exactly the same fields and nothing of the switch's own.
    ``managed``: the names of the tables the driver renders (its ``config_tables``); an op on any other table (the
    drain's BGP_DEVICE_GLOBAL) passes as it is:

    * a table the switch does not hold is added whole (``add /TABLE {...}``: RFC 6902 cannot add into a missing member);
    * a table the change leaves empty is removed whole (GCU refuses a patch that leaves an empty table:
      generic_updater.py PatchApplier, EmptyTableError); only when it held nothing but ours;
    * a key that also holds fields not ours is changed field by field (adding or removing the whole key would
      replace or drop them); a PORT key is never removed;
    * move/copy ops become the adds and removes they stand for (one explicit op per field)."""
    import jsonpatch
    by_table = {}
    for op in ops:
        by_table.setdefault(parts(op["path"])[0], []).append(op)
    out = []
    for table, mine in by_table.items():
        if table not in managed:   # a table this driver does not manage (the drain's BGP_DEVICE_GLOBAL): as it is
            out += mine
            continue
        have = owned.get(table, {})
        want = jsonpatch.apply_patch({table: copy.deepcopy(have)}, mine)[table]
        theirs = foreign.get(table, {})
        if not config.get(table):
            if want:
                out.append({"op": "add", "path": pointer(table), "value": want})
            continue
        if not want and not theirs:
            out.append({"op": "remove", "path": pointer(table)})
            continue
        for key in sorted(set(have) | set(want)):
            before, after = have.get(key), want.get(key)
            if before == after:
                continue
            if after is None:
                if table == "PORT" or theirs.get(key):   # the key also holds fields not ours
                    out += [{"op": "remove", "path": pointer(table, key, f)} for f in sorted(before)]
                else:
                    out.append({"op": "remove", "path": pointer(table, key)})
            elif before is None and key not in config[table]:
                out.append({"op": "add", "path": pointer(table, key), "value": after})
            else:
                before = before or {}
                for field in sorted(set(before) | set(after)):
                    if field not in after:
                        out.append({"op": "remove", "path": pointer(table, key, field)})
                    elif before.get(field) != after[field]:
                        out.append({"op": "add", "path": pointer(table, key, field), "value": after[field]})
    return out


def show_running(tables):
    """Tables as ``show runningconfiguration all`` prints CONFIG_DB (json.dumps, indent 4, sorted keys)."""
    return json.dumps(tables, indent=4, sort_keys=True) + "\n"
