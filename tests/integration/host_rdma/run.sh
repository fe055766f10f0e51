#!/usr/bin/env bash
# Role tests for host_preflight, host_rdma_qos, host_irq_affinity and host_nccl: ansible-playbook against
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
plan = build_plan(yaml.safe_load(open(repo + "/inventories/lab/group_vars/all/fabric.yml"))["fabric"])
qos = plan["qos"]
lab_host = plan["hosts"][sorted(plan["hosts"])[0]]  # a real plan slice for host_nccl
hosts = {}
for name in ("h100-cx7", "gpu8-nic4", "broken", "degraded"):
    hosts[name] = {"fx_intent": json.load(open("%s/%s/intent.json" % (fx, name)))}
doc = {"all": {"children": {"fixture_hosts": {"hosts": hosts, "vars": {
    "ansible_connection": "local", "ansible_python_interpreter": sys.executable, "fx_dir": fx, "fx_qos": qos,
    "fx_lab_host": {"nccl": lab_host["nccl"], "nics": lab_host["nics"]}}}}}}
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
# each host's result reads one finding per line (issue 41): its verdict line, then "<severity>: <message>" lines
grep -qE '^        "broken: [a-z]+ \([0-9]+ errors, [0-9]+ warnings; fleet report .*/preflight\)",$' "$OUT/preflight.log" \
  || fail "preflight: no verdict line for host broken"
grep -qE '^        "error: ' "$OUT/preflight.log" || fail "preflight: no one-finding-per-line result"
long=$(awk 'length > 600' "$OUT/preflight.log" | wc -l)
[ "$long" = 0 ] || fail "preflight: $long output line(s) over 600 characters"
echo "== host_preflight (strict): only the broken and degraded hosts fail"
rc=$(play preflight-strict "$HERE/preflight.yml" -e report_dir="$OUT/preflight-strict" -e strict=true)
[ "$rc" = 2 ] || fail "strict preflight rc=$rc (want 2)"
[ "$(recap_changed preflight-strict | grep 'failed=1' | cut -d' ' -f1 | tr '\n' ' ')" = "broken degraded " ] || fail "strict: $(recap_changed preflight-strict)"

echo "== qos: trust/PFC required by default: only the hosts without dcb/mlnx_qos output fail"
rc=$(play qos-required "$HERE/qos_required.yml" --check)
[ "$rc" = 2 ] || fail "qos required rc=$rc (want 2)"
[ "$(recap_changed qos-required | grep 'failed=1' | cut -d' ' -f1 | tr '\n' ' ')" = "broken degraded " ] || fail "qos required: $(recap_changed qos-required)"

for role in qos irq nccl; do
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
echo "== nccl-tests probe with stand-in all_reduce_perf and mpirun"
SI="$OUT/standin" && mkdir -p "$SI"
printf '#!/bin/sh\ncat "%s"\n' "$REPO/tests/fixtures/validate/nccl-tests-a3mega-all-reduce/all_reduce_perf.txt" >"$SI/all_reduce_perf"
cat >"$SI/mpirun" <<'SHEOF'
#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in */all_reduce_perf) break;; esac; shift; done
exec "$@"
SHEOF
chmod +x "$SI/all_reduce_perf" "$SI/mpirun"
rc=$(play nccl-tests "$HERE/nccl_tests.yml" -e standin="$SI")
[ "$rc" = 0 ] || { tail -30 "$OUT/nccl-tests.log"; fail "nccl-tests probe rc=$rc"; }

echo "== host_nic_firmware: check mode reports, no flag refuses, flag flashes serially, then nothing to do"
FW="$OUT/fw"
for h in h100-cx7 gpu8-nic4 broken degraded; do "$PY" tests/fixtures/hosts/standin_mlxfwmanager.py "$FW/$h" >/dev/null; done
flashed() { cat "$FW"/*/flashed 2>/dev/null | wc -l; }
rc=$(play fw-check "$HERE/nic_firmware.yml" -e fw_dir="$FW" --check)
if [ "$rc" != 0 ] || [ "$(flashed)" != 0 ]; then fail "firmware check mode rc=$rc, flashed $(flashed)"; fi
recap_changed fw-check | grep -q 'changed=1' || fail "firmware check mode reported no upgrade"
rc=$(play fw-refuse "$HERE/nic_firmware.yml" -e fw_dir="$FW")
if [ "$rc" = 0 ] || [ "$(flashed)" != 0 ]; then fail "firmware without the flag: rc=$rc, flashed $(flashed)"; fi
grep -q 'refusing to flash NIC firmware' "$OUT/fw-refuse.log" || fail "firmware refusal message missing"
rc=$(play fw-apply "$HERE/nic_firmware.yml" -e fw_dir="$FW" -e host_nic_firmware_upgrade=true)
if [ "$rc" != 0 ] || [ "$(flashed)" -le 4 ]; then tail -30 "$OUT/fw-apply.log"; fail "firmware apply rc=$rc, flashed $(flashed)"; fi
rc=$(play fw-again "$HERE/nic_firmware.yml" -e fw_dir="$FW" -e host_nic_firmware_upgrade=true)
[ "$rc" = 0 ] || fail "firmware second run rc=$rc"
if recap_changed fw-again | grep -v 'changed=0'; then fail "firmware second run flashed again"; fi
echo "== non-NVIDIA host (8x MI300X + Broadcom bnxt_re, firmware DCBX): strict preflight passes, QoS reads DCBX back"
"$PY" - "$FX" "$OUT/inventory.yml" "$OUT/inventory-stacks.yml" <<'PYEOF'
import json, sys, yaml
fx, base, inv = sys.argv[1:4]
doc = yaml.safe_load(open(base))
doc["all"]["children"]["fixture_hosts"]["hosts"] = {"mi300x-bnxt": {"fx_intent": json.load(open(fx + "/mi300x-bnxt/intent.json"))}}
yaml.safe_dump(doc, open(inv, "w"))
PYEOF
plays() { # like play, on the non-NVIDIA host only
  local name=$1; shift
  if "$REPO/.venv/bin/ansible-playbook" -i "$OUT/inventory-stacks.yml" "$@" >"$OUT/$name.log" 2>&1; then echo 0; else echo $?; fi
}
rc=$(plays stacks-preflight "$HERE/preflight.yml" -e report_dir="$OUT/stacks-preflight" -e strict=true)
[ "$rc" = 0 ] || { tail -30 "$OUT/stacks-preflight.log"; fail "non-NVIDIA host strict preflight rc=$rc"; }
"$PY" - "$OUT/stacks-preflight/preflight.json" <<'PYEOF' || fail "non-NVIDIA host preflight findings"
import json, sys
host = json.load(open(sys.argv[1]))["hosts"]["mi300x-bnxt"]
got = sorted((f["id"], f["subject"]) for f in host["findings"])
# RCCL's amdkfd peer memory, bnxt modules (no mlx5 errors), 8 MI300X found with PIX NICs and no ACS redirect
assert got == [("synthetic_root", "root")], got
PYEOF
rc=$(plays stacks-qos "$HERE/qos_required.yml" --diff)
[ "$rc" = 0 ] || { tail -30 "$OUT/stacks-qos.log"; fail "non-NVIDIA host QoS (default require [tool]) rc=$rc"; }
# DCQCN through the bnxt_re configfs (Broadcom README): RoCE/CNP DSCP written in hex, then apply, and replayed at boot
CC="$FX/mi300x-bnxt/root/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc"
if [ "$(cat "$CC/roce_dscp")" != 0x1a ] || [ "$(cat "$CC/cnp_dscp")" != 0x30 ] || [ "$(cat "$CC/apply")" != 0x1 ]; then
  fail "bnxt_re congestion control not set through configfs"
fi
grep -q "bnxt_re/bnxt_re0/ports/1/cc/apply" "$FX/mi300x-bnxt/root/usr/local/sbin/aifabric-rdma-qos" \
  || fail "replay script lacks the bnxt_re congestion-control apply"
if grep -q "dcb apptrust set\|dcb pfc set" "$FX/mi300x-bnxt/root/usr/local/sbin/aifabric-rdma-qos"; then
  fail "firmware-managed DCBX: the replay script sets trust/PFC"
fi
grep -q "default_roce_tos" "$FX/mi300x-bnxt/root/usr/local/sbin/aifabric-rdma-qos" || fail "replay script lacks the RoCE ToS"
rc=$(plays stacks-qos-again "$HERE/qos_required.yml")
[ "$rc" = 0 ] || fail "non-NVIDIA host QoS second run rc=$rc"
if recap_changed stacks-qos-again | grep -v 'changed=0'; then fail "non-NVIDIA host QoS not idempotent"; fi
echo "host_rdma role tests: PASS (logs and reports in $OUT)"
