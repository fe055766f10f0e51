#!/usr/bin/env bash
# Run `ansible-test sanity` on a copy of the collection laid out as ansible_collections/aifabric/roce
# (ansible-test needs that path; a symlinked checkout resolves to the real path and is refused).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# AIF_SANITY_DIR: another place for the copy (two sanity runs of one checkout must not share it)
base="${AIF_SANITY_DIR:-$root/build/sanity}"
work="$base/ansible_collections/aifabric/roce"
rm -rf "$base"
mkdir -p "$work"
cd "$root"
# ansible-test fetches a get-pip script from a host outside PyPI; hand it our stand-in instead.
pip_version=$(python -c "from ansible_test._internal.python_requirements import get_venv_packages as g; from types import SimpleNamespace as S; print(g(S(version='3.11'))['pip'])" 2>/dev/null || echo 24.2)
cache="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
mkdir -p "$(dirname "$cache")"
cp tools/get_pip_offline.py "$cache"
# Tracked files plus new files git does not ignore: what would be committed.
# One tar pipe, not a mkdir and a cp per file (~1,000 files: 2,000 processes, 15 s under CI's load); -h copies what a
# link points to, as cp did; a file deleted but not yet committed is left out.
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  if [ -e "$f" ]; then printf '%s\0' "$f"; fi
done | tar --null --no-recursion -T - -chf - | tar -xpf - -C "$work"
cd "$work"
if git init -q .; then git add -A >/dev/null 2>&1 || true; fi
ansible-test sanity --python 3.11 --color no "$@"
