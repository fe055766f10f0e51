# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The no-op site.yml at sizes the twin cannot run, modelled from what tools/bench_twin_scale.py measured (issue 28
item 2). Pure: no twin, no Ansible; unit-tested in tests/unit/tools/test_twin_scale_model.py.

Per-device costs, from the no-op runs (CPU seconds; controller = the ansible-playbook process tree, split into its
main process and its forks; device = what the twin's routers and hosts spent):
- switches phase: per switch; hosts phase: per host run;
- validate phase: per host and per switch, by least squares over the runs given (the lab, 1K and 4K twins have
  different host/switch mixes); with one run only, split in proportion to the device counts;
- plan phase: a fixed part plus a part linear in GPUs (the planner is linear; docs/benchmarks.md), by least
  squares over runs of different sizes; one size only: the fixed part.

CPU at another size = the per-device costs times its device counts. Wall on a controller with ``cores`` cores and
``forks`` forks, devices being real machines (their CPU is not the controller's): per serial batch (the plan's
switch rollout batches; the host plays' ``site_host_batch``, 25 % = 4 batches; validate in one batch) the larger
of one device's chain (its controller fork CPU + its device CPU: the tasks run one after another) and the batch's
fork CPU over min(cores, forks), plus the main process's CPU for the batch (one process: it does not spread over
cores; counted in full, not overlapped, so the figure leans high).
"""

PHASES = ("plan", "switches", "hosts", "validate")


def _per(run, phase, count, key):
    return run["noop"]["phases"][phase][key] / float(max(count, 1))


def _forks(figures):
    return figures["controller_cpu_s"] - figures.get("controller_main_cpu_s", 0.0)


def _lstsq2(rows):
    """Least squares for y = a*x1 + b*x2 (no intercept), both >= 0; rows [(x1, x2, y)]."""
    s11 = sum(r[0] * r[0] for r in rows)
    s22 = sum(r[1] * r[1] for r in rows)
    s12 = sum(r[0] * r[1] for r in rows)
    s1y = sum(r[0] * r[2] for r in rows)
    s2y = sum(r[1] * r[2] for r in rows)
    det = s11 * s22 - s12 * s12
    if len(rows) < 2 or abs(det) < 1e-9 * max(s11 * s22, 1.0):
        x1, x2, y = [sum(r[i] for r in rows) for i in range(3)]
        return y / max(x1 + x2, 1.0), y / max(x1 + x2, 1.0)
    a, b = (s1y * s22 - s2y * s12) / det, (s2y * s11 - s1y * s12) / det
    if a < 0:
        return 0.0, s2y / max(s22, 1e-9)
    if b < 0:
        return s1y / max(s11, 1e-9), 0.0
    return a, b


def device_costs(runs):
    """Per-device no-op costs from bench results (each with routers, hosts_run, gpus and noop.phases)."""
    runs = [r for r in runs if "noop" in r]
    if not runs:
        raise ValueError("no no-op run to model from")
    costs = {"runs": [r["fabric"] for r in runs]}
    for phase, count_key in (("switches", "routers"), ("hosts", "hosts_run")):
        n = sum(r[count_key] for r in runs)
        costs[phase] = dict((key, sum(r["noop"]["phases"][phase][key] for r in runs) / float(n))
                            for key in ("controller_cpu_s", "controller_main_cpu_s", "device_cpu_s"))
        costs[phase]["wall_s"] = sum(r["noop"]["phases"][phase]["wall_s"] for r in runs) / float(n)
    validate = {}
    for key in ("controller_cpu_s", "controller_main_cpu_s", "device_cpu_s"):
        validate[key] = _lstsq2([(r["hosts_run"], r["routers"], r["noop"]["phases"]["validate"][key]) for r in runs])
    costs["validate"] = dict(("%s_per_%s" % (key, dev), validate[key][i]) for key in validate
                             for i, dev in enumerate(("host", "switch")))
    # plan: a fixed part (the role, the playbook's start) + a part per GPU (the planner); one run: fixed only
    plans = [(1.0, r["gpus"], r["noop"]["phases"]["plan"]["controller_cpu_s"]) for r in runs]
    if len(set(r["gpus"] for r in runs)) > 1:
        costs["plan_cpu_s"], costs["plan_cpu_s_per_gpu"] = _lstsq2(plans)
    else:
        costs["plan_cpu_s"], costs["plan_cpu_s_per_gpu"] = sum(p[2] for p in plans) / len(plans), 0.0
    return costs


def predict_cpu(costs, gpus, hosts, switches):
    """No-op CPU per phase {phase: {controller_cpu_s, controller_main_cpu_s, device_cpu_s}} at a size."""
    out = {"plan": {"controller_cpu_s": costs["plan_cpu_s"] + costs["plan_cpu_s_per_gpu"] * gpus, "controller_main_cpu_s": 0.0,
                    "device_cpu_s": 0.0}}
    out["plan"]["controller_main_cpu_s"] = out["plan"]["controller_cpu_s"]   # one action in the main host's fork: serial
    for phase, count in (("switches", switches), ("hosts", hosts)):
        out[phase] = dict((key, costs[phase][key] * count)
                          for key in ("controller_cpu_s", "controller_main_cpu_s", "device_cpu_s"))
    out["validate"] = dict((key, costs["validate"]["%s_per_host" % key] * hosts + costs["validate"]["%s_per_switch" % key] * switches)
                           for key in ("controller_cpu_s", "controller_main_cpu_s", "device_cpu_s"))
    return out


def check(costs, sample):
    """Predicted vs measured no-op CPU (controller + device) of a run the costs were not taken from."""
    predicted = predict_cpu(costs, sample["gpus"], sample["hosts_run"], sample["routers"])
    out = {}
    for phase in PHASES:
        have = sample["noop"]["phases"][phase]
        want = predicted[phase]
        measured = have["controller_cpu_s"] + have["device_cpu_s"]
        model = want["controller_cpu_s"] + want["device_cpu_s"]
        out[phase] = {"measured_cpu_s": round(measured, 1), "modelled_cpu_s": round(model, 1),
                      "error": round((model - measured) / measured, 3) if measured else None}
    measured = sum(v["measured_cpu_s"] for v in out.values())
    modelled = sum(v["modelled_cpu_s"] for v in out.values())
    out["total"] = {"measured_cpu_s": round(measured, 1), "modelled_cpu_s": round(modelled, 1),
                    "error": round((modelled - measured) / measured, 3) if measured else None}
    return out


def _batches_wall(sizes, fork_cpu, main_cpu, device_cpu, parallel):
    """Serial batches of ``sizes`` devices, per-device costs: sum over batches of max(one device's chain, the
    batch's fork CPU spread over ``parallel``) + the batch's main-process CPU."""
    return sum(max(fork_cpu + device_cpu, n * fork_cpu / float(parallel)) + n * main_cpu for n in sizes if n)


def predict_wall(costs, gpus, hosts, switch_batch_sizes, cores, forks, host_batches=4, check_mode=False, slices=1):
    """Modelled no-op site.yml wall seconds per phase on a controller of ``cores`` cores and ``forks`` forks.

    ``check_mode``: the audit (``site.yml --check``): nothing is written, so every switch and every host goes in
    one batch. ``slices``: AWX job slicing, each slice its own ansible-playbook on its own execution node of
    ``cores`` cores, with 1/slices of the devices; only for the audit (slices running side by side would break the
    switch rollout's safe batches in apply mode)."""
    if slices > 1 and not check_mode:
        raise ValueError("job slicing is modelled for the audit (check mode) only")
    parallel = max(1, min(cores, forks))
    switches = sum(switch_batch_sizes)
    cpu = predict_cpu(costs, gpus, hosts, switches)
    if check_mode:
        switch_batch_sizes, host_batches = [-(-switches // slices)], 1
        hosts = -(-hosts // slices)
    wall = {"plan": cpu["plan"]["controller_cpu_s"]}
    per = costs["switches"]
    wall["switches"] = _batches_wall(switch_batch_sizes, per["controller_cpu_s"] - per["controller_main_cpu_s"],
                                     per["controller_main_cpu_s"], per["device_cpu_s"], parallel)
    per = costs["hosts"]
    size = -(-hosts // host_batches) if hosts else 0
    sizes = [min(size, hosts - i * size) for i in range(host_batches)] if size else []
    wall["hosts"] = _batches_wall(sizes, per["controller_cpu_s"] - per["controller_main_cpu_s"],
                                  per["controller_main_cpu_s"], per["device_cpu_s"], parallel)
    v = costs["validate"]
    forks_cpu = _forks(cpu["validate"]) / float(slices)
    chain = max(v["controller_cpu_s_per_host"] - v["controller_main_cpu_s_per_host"] + v["device_cpu_s_per_host"],
                v["controller_cpu_s_per_switch"] - v["controller_main_cpu_s_per_switch"] + v["device_cpu_s_per_switch"])
    wall["validate"] = max(chain, forks_cpu / float(parallel)) + cpu["validate"]["controller_main_cpu_s"] / float(slices)
    wall["total"] = sum(wall[p] for p in PHASES)
    return dict((k, round(v2, 1)) for k, v2 in wall.items()), cpu
