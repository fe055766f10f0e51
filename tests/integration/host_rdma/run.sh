#!/usr/bin/env bash
# Role tests for host_preflight, host_rdma_qos and host_irq_affinity: ansible-playbook against
# localhost (connection local) with each role's root pointed at a fresh copy of a generated fixture tree.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
PY="${PY:-$REPO/.venv/bin/python}"
OUT="${HOST_RDMA_OUT:-$REPO/build/host_rdma}"
export ANSIBLE_CONFIG="$REPO/ansible.cfg" PYTHONPATH="$REPO/.collections" ANSIBLE_NOCOLOR=1
cd "$REPO"
rm -rf "$OUT" && mkdir -p "$OUT"
FX="$OUT/fixtures"
"$PY" tests/fixtures/hosts/gen_fixtures.py "$FX" >/dev/null
"$PY" - "$FX" "$OUT/inventory.yml" "$REPO" <<'PYEOF'
import json, sys, yaml
sys.path.insert(0, sys.argv[3] + "/.collections")
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
fx, inv, repo = sys.argv[1:4]
qos = build_plan(yaml.safe_load(open(repo + "/inventories/lab/group_vars/all/fabric.yml"))["fabric"])["qos"]
hosts = {}
for name in ("h100-cx7", "gpu8-nic4", "broken", "degraded"):
    hosts[name] = {"fx_intent": json.load(open("%s/%s/intent.json" % (fx, name)))}
doc = {"all": {"children": {"fixture_hosts": {"hosts": hosts, "vars": {
    "ansible_connection": "local", "ansible_python_interpreter": sys.executable, "fx_dir": fx, "fx_qos": qos}}}}}
yaml.safe_dump(doc, open(inv, "w"))
PYEOF
play() { # log-name playbook args...
  local name=$1; shift
  if "$REPO/.venv/bin/ansible-playbook" -i "$OUT/inventory.yml" "$@" >"$OUT/$name.log" 2>&1; then echo 0; else echo $?; fi
}
recap_changed() { grep -E '^[a-z0-9-]+ +: ok=' "$OUT/$1.log" | sed -E 's/^([a-z0-9-]+) +: .*changed=([0-9]+).*failed=([0-9]+).*/\1 changed=\2 failed=\3/' | sort; }
fail() { echo "FAIL: $*"; exit 1; }

echo "== host_preflight (report only)"
rc=$(play preflight "$HERE/preflight.yml" -e report_dir="$OUT/preflight" -e strict=false)
[ "$rc" = 0 ] || { tail -40 "$OUT/preflight.log"; fail "preflight (non-strict) rc=$rc"; }
"$PY" "$HERE/assert_preflight.py" "$OUT/preflight/preflight.json" || fail "preflight findings"
echo "== host_preflight (strict): only the broken and degraded hosts fail"
rc=$(play preflight-strict "$HERE/preflight.yml" -e report_dir="$OUT/preflight-strict" -e strict=true)
[ "$rc" = 2 ] || fail "strict preflight rc=$rc (want 2)"
[ "$(recap_changed preflight-strict | grep 'failed=1' | cut -d' ' -f1 | tr '\n' ' ')" = "broken degraded " ] || fail "strict: $(recap_changed preflight-strict)"

for role in qos irq; do
  echo "== $role: check mode writes nothing"
  before=$(cd "$FX" && find . -path '*/tools' -prune -o -type f -print0 | sort -z | xargs -0 cat | md5sum)
  rc=$(play "$role-check" "$HERE/$role.yml" --check --diff)
  [ "$rc" = 0 ] || { tail -30 "$OUT/$role-check.log"; fail "$role check rc=$rc"; }
  after=$(cd "$FX" && find . -path '*/tools' -prune -o -type f -print0 | sort -z | xargs -0 cat | md5sum)
  [ "$before" = "$after" ] || fail "$role check mode changed files"
  recap_changed "$role-check" | grep -q 'changed=1' || fail "$role check mode reported no change"
  echo "== $role: apply"
  rc=$(play "$role-apply" "$HERE/$role.yml" --diff)
  [ "$rc" = 0 ] || { tail -30 "$OUT/$role-apply.log"; fail "$role apply rc=$rc"; }
  echo "== $role: second run changes nothing"
  rc=$(play "$role-again" "$HERE/$role.yml")
  [ "$rc" = 0 ] || fail "$role second run rc=$rc"
  if recap_changed "$role-again" | grep -v 'changed=0'; then fail "$role not idempotent"; fi
done
"$PY" "$HERE/assert_applied.py" "$FX" || fail "applied state"
echo "host_rdma role tests: PASS (logs and reports in $OUT)"
