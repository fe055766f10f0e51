"""How NVUE prints interface keys in `nv config show` (test code for the simulator and the unit tests).

Real output groups interfaces that carry an identical setting under one range-compressed key:
``swp1-3`` (CumulusNetworks/docs DCI guide capture), ``swp1-2,32`` (prefix not repeated after a comma),
``eth0,swp19-22`` (a new prefix is written out) - tests/fixtures/switches/nvue/ and SOURCE.md there.
"""
import re


def _split(name):
    m = re.match(r"^([A-Za-z_]+)(\d+)$", name)
    return (m.group(1), int(m.group(2))) if m else (name, None)


def compress_names(names):
    """['swp1', 'swp2', 'swp32', 'eth0'] -> 'eth0,swp1-2,32'."""
    keyed = sorted(set(names), key=lambda n: (_split(n)[0], _split(n)[1] if _split(n)[1] is not None else -1))
    parts, prev_prefix = [], None
    i = 0
    while i < len(keyed):
        prefix, num = _split(keyed[i])
        if num is None:
            parts.append(keyed[i])
            prev_prefix = None
            i += 1
            continue
        j = i
        while j + 1 < len(keyed) and _split(keyed[j + 1]) == (prefix, _split(keyed[j])[1] + 1):
            j += 1
        last = _split(keyed[j])[1]
        text = str(num) if last == num else "%d-%d" % (num, last)
        parts.append(text if prefix == prev_prefix else prefix + text)
        prev_prefix = prefix
        i = j + 1
    return ",".join(parts)


def compress_commands(paths):
    """``nv set`` paths (without 'nv set ') -> the lines `nv config show -o commands` prints: interface
    paths with the same remainder share one range-compressed key."""
    groups, out = {}, []
    for path in paths:
        m = re.match(r"^interface (\S+) (.+)$", path)
        if m:
            groups.setdefault(m.group(2), []).append(m.group(1))
        else:
            out.append(path)
    out += ["interface %s %s" % (compress_names(names), rest) for rest, names in groups.items()]
    return sorted(out)
