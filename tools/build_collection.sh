#!/usr/bin/env bash
# Build the collection tarball from the files git tracks (committed or staged, with their working
# tree content) and nothing else: untracked files - an inventory of your own, keys, scratch
# output - never ship. galaxy.yml build_ignore then drops tests, tools and the lab inventories.
#   tools/build_collection.sh <output dir>
set -euo pipefail
out="${1:?usage: $0 <output dir>}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
galaxy="${ANSIBLE_GALAXY:-$repo/.venv/bin/ansible-galaxy}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"
(cd "$repo" && git ls-files -z --cached | while IFS= read -r -d '' f; do
  [ -f "$f" ] && printf '%s\0' "$f"
done | xargs -0 -r cp --parents -t "$stage")
"$galaxy" collection build --force --output-path "$(cd "$out" && pwd)" "$stage"
