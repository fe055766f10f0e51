"""tools/twin_scale_model.py: per-device costs recovered from runs made of known costs, the sample check, the wall
model's serial batches and parallel forks."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools"))
import twin_scale_model as model  # noqa: E402

# known per-device costs (CPU s): controller forks, controller main process, device
SWITCH = (0.30, 0.10, 0.20)
HOST = (0.50, 0.15, 0.35)
V_HOST = (0.20, 0.05, 0.10)
V_SWITCH = (0.40, 0.05, 0.30)
PLAN_PER_GPU = 0.0002


def run(name, gpus, hosts, switches):
    def phase(per_host=(0, 0, 0), per_switch=(0, 0, 0), extra=0.0):
        forks = per_host[0] * hosts + per_switch[0] * switches
        main = per_host[1] * hosts + per_switch[1] * switches + extra
        return {"wall_s": 1.0, "controller_cpu_s": forks + main, "controller_main_cpu_s": main,
                "device_cpu_s": per_host[2] * hosts + per_switch[2] * switches}
    phases = {"plan": phase(extra=PLAN_PER_GPU * gpus), "switches": phase(per_switch=SWITCH),
              "hosts": phase(per_host=HOST), "validate": phase(V_HOST, V_SWITCH)}
    return {"fabric": name, "gpus": gpus, "hosts_run": hosts, "routers": switches, "noop": {"rc": 0, "phases": phases}}


LAB, K1, K4 = run("lab", 16, 4, 6), run("1k", 1024, 64, 32), run("4k", 4096, 64, 80)


def test_costs_are_recovered_per_device_and_validate_is_split_by_least_squares():
    costs = model.device_costs([LAB, K1, K4])
    assert costs["switches"]["controller_cpu_s"] == pytest.approx(sum(SWITCH[:2]))
    assert costs["hosts"]["device_cpu_s"] == pytest.approx(HOST[2])
    assert costs["validate"]["controller_cpu_s_per_host"] == pytest.approx(sum(V_HOST[:2]))
    assert costs["validate"]["device_cpu_s_per_switch"] == pytest.approx(V_SWITCH[2])
    assert costs["plan_cpu_s_per_gpu"] == pytest.approx(PLAN_PER_GPU) and costs["plan_cpu_s"] == pytest.approx(0.0, abs=1e-9)
    one = model.device_costs([LAB])
    assert one["plan_cpu_s_per_gpu"] == 0.0 and one["plan_cpu_s"] == pytest.approx(PLAN_PER_GPU * 16)


def test_the_sample_check_predicts_a_run_it_was_not_fitted_on():
    checked = model.check(model.device_costs([LAB, K1]), K4)
    assert checked["total"]["error"] == pytest.approx(0.0, abs=0.002)
    # a sample that cost 20 % more on its hosts is reported as a 20 % miss on the host phase
    dear = run("4k", 4096, 64, 80)
    for key in ("controller_cpu_s", "controller_main_cpu_s", "device_cpu_s"):
        dear["noop"]["phases"]["hosts"][key] *= 1.2
    assert model.check(model.device_costs([LAB, K1]), dear)["hosts"]["error"] == pytest.approx(1 / 1.2 - 1, abs=0.002)


def test_wall_counts_serial_batches_main_process_and_forks_over_cores():
    costs = model.device_costs([LAB, K1, K4])
    wall, cpu = model.predict_wall(costs, gpus=4096, hosts=512, switch_batch_sizes=[1, 8, 8], cores=16, forks=16)
    fork_s, main_s, dev_s = SWITCH
    # a batch of 8 on 16 cores: one switch's chain (fork + device) is longer than 8 forks / 16 cores
    assert wall["switches"] == pytest.approx(round(3 * (fork_s + dev_s) + 17 * main_s, 1), abs=0.11)
    fork_h, main_h, dev_h = HOST
    # 512 hosts in 4 batches of 128: 128 forks over 16 cores beat one host's chain
    assert wall["hosts"] == pytest.approx(round(4 * (128 * fork_h / 16) + 512 * main_h, 1), abs=0.11)
    assert cpu["hosts"]["device_cpu_s"] == pytest.approx(512 * dev_h)
    fewer, dummy = model.predict_wall(costs, gpus=4096, hosts=512, switch_batch_sizes=[1, 8, 8], cores=4, forks=16)
    assert fewer["hosts"] > wall["hosts"] and fewer["total"] > wall["total"]


def test_no_run_no_model():
    with pytest.raises(ValueError):
        model.device_costs([{"fabric": "lab", "error": "twin did not come up"}])


def test_the_audit_goes_in_one_batch_and_slices_divide_it():
    costs = model.device_costs([LAB, K1, K4])
    apply, dummy = model.predict_wall(costs, gpus=4096, hosts=512, switch_batch_sizes=[1] + [8] * 8 + [1] * 16, cores=16, forks=16)
    audit, dummy = model.predict_wall(costs, gpus=4096, hosts=512, switch_batch_sizes=[1] + [8] * 8 + [1] * 16, cores=16,
                                      forks=16, check_mode=True)
    sliced, dummy = model.predict_wall(costs, gpus=4096, hosts=512, switch_batch_sizes=[1] + [8] * 8 + [1] * 16, cores=16,
                                       forks=16, check_mode=True, slices=4)
    assert audit["switches"] < apply["switches"] and sliced["total"] < audit["total"]
    assert sliced["hosts"] == pytest.approx(round(128 * HOST[0] / 16 + 128 * HOST[1], 1), abs=0.11)
    with pytest.raises(ValueError):
        model.predict_wall(costs, gpus=4096, hosts=512, switch_batch_sizes=[1], cores=16, forks=16, slices=2)


def test_the_32k_audit_target_names_the_fewest_execution_nodes_that_meet_it():
    import bench_twin_scale as bench  # tools/ (the path above): its module imports need no twin
    walls = {"slices_1": 2228.2, "slices_2": 1114.4, "slices_4": 557.5, "slices_8": 279.0}
    figures = {"cores": 16, "forks": 16, "32k": {"audit_wall_s": walls}}
    assert bench.audit_nodes_needed(figures) == 8
    figures["32k"]["audit_wall_s"].update(slices_1=290.0)
    assert bench.audit_nodes_needed(figures) == 1
    figures["32k"]["audit_wall_s"] = {"slices_1": 2228.2, "slices_8": 301.0}
    assert bench.audit_nodes_needed(figures) is None
    assert [m for m in bench.judge([], figures) if m.startswith("modelled 32K")]


def test_a_run_whose_validation_did_not_pass_is_a_miss():
    import bench_twin_scale as bench
    run = {"rc": 0, "failed": [], "changed": 0, "wall_s": 10.0, "validation": "validation PASSED: 134 checks run"}
    failed = "validation FAILED: 5152 checks run (4640 passed, 512 failed), 64 not run"
    result = {"fabric": "1k", "converge": dict(run), "noop": dict(run, validation=failed),
              "noop_per_device": {"switches": {"cpu_s": 0.3}, "hosts": {"cpu_s": 0.9}}}
    assert bench.judge([result]) == ["1k noop: validation FAILED: 5152 checks run (4640 passed, 512 failed), 64 not run"]
