"""The device lock's marker listing as bash answers it (transactions.ShellMarkers.listing), shared by the lab's
Linux shells (simulator.shell_command, configdb_sim.SonicShell) and the FRR unit test's router: every entry whose
name starts with the glob's prefix, whatever characters follow and empty or not, one line each,
"AIF-LOCK <name><TAB><first line without tabs>", exit status 0 (a `for` loop over a glob; checked against real
bash by tests/unit/nos/test_devicelock.py)."""
import re

LISTING_RE = re.compile(r"^for f in (\S+); do \[ -e \"\$f\" \] \|\| \[ -L \"\$f\" \] \|\| continue; "
                        r"n=\$\{f##\*/aifabric-lock\.\}; printf 'AIF-LOCK %s\\t%s\\n' \"\$n\" "
                        r"\"\$\(head -n 1 \"\$f\" 2>/dev/null \| tr -d '\\t'\)\"; done$")


def listing(cmd, files, lock_dir, here="/tmp"):
    """The listing's output for ``files`` ({path: content}), or None when ``cmd`` is not the listing."""
    m = LISTING_RE.match(cmd)
    if not m:
        return None
    prefix = m.group(1).replace(lock_dir, here).rstrip("*")
    cut = len(prefix) - len("aif-")
    return "".join("AIF-LOCK %s\t%s\n" % (path[cut:], content.split("\n")[0].replace("\t", ""))
                   for path, content in sorted(files.items()) if path.startswith(prefix))
