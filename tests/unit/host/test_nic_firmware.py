"""NIC firmware upgrade: query parsing on real captures, refusal without the flag, check mode, serial flashing."""
import importlib.util
import os

from ansible_collections.aifabric.roce.plugins.module_utils.host import nic_firmware
from ansible_collections.aifabric.roce.plugins.modules import nic_firmware as nic_firmware_module

from ..module_runner import run_module

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures", "hosts")


def capture(name, file):
    with open(os.path.join(FIXTURES, "captures", name, file)) as handle:
        return handle.read()


def standin(tmp_path):
    spec = importlib.util.spec_from_file_location("standin", os.path.join(FIXTURES, "standin_mlxfwmanager.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.write(str(tmp_path / "bin"))


def test_update_required_capture():
    state = nic_firmware.device_state(capture("nvidia-tools-mlxup-query-update-required", "mlxup_--query.txt"), "0002:01:00.0")
    assert state == {"bdf": "0002:01:00.0", "psid": "MT_0000000575", "part_number": "MCX631102AS-ADA_Ax",
                     "current": "26.33.1048", "running": "26.33.1048", "flashed": "26.33.1048", "pending": None,
                     "pending_reset": False,
                     "available": "26.43.1014", "status": "Update required", "update": True}


def test_no_matching_image_capture_is_not_an_upgrade():
    # innova2-5: FreeBSD name pci0:6:0:0 (not a BDF) answering `-d`, Available N/A
    state = nic_firmware.device_state(capture("innova2-5-mlxup-query", "mlxup_--query.txt"), "0000:06:00.0")
    assert state["status"] == "No matching image found" and state["available"] is None and state["update"] is False


def test_commands_use_D_for_a_directory_and_i_for_a_file():
    assert nic_firmware.update_command("0000:65:00.0", image_dir="/srv/fw") == \
        ["mlxfwmanager", "-u", "-y", "-d", "0000:65:00.0", "-D", "/srv/fw"]
    assert nic_firmware.query_command("0000:65:00.0", image_file="/srv/fw/a.bin") == \
        ["mlxfwmanager", "--query", "-d", "0000:65:00.0", "-i", "/srv/fw/a.bin"]
    assert nic_firmware.normalise_bdf("65:00.1") == "0000:65:00.1" and nic_firmware.normalise_bdf("/dev/mst/x") is None


def test_module_check_refuse_flash_then_idempotent(tmp_path, capsys):
    tool = standin(tmp_path)
    args = {"devices": ["0000:65:00.0", "0000:65:00.1", "0000:b3:00.0"], "image_dir": "/srv/fw", "tool": tool}
    res = run_module(nic_firmware_module, dict(args, _ansible_check_mode=True), capsys)
    assert res["rc"] == 0 and res["changed"] is True and res["reset_required"] is False
    assert [u["bdf"] for u in res["upgrades"]] == ["0000:65:00.0", "0000:b3:00.0"]  # .1 is the same adapter
    assert res["upgrades"][0]["from"] == "26.33.1048" and res["upgrades"][0]["to"] == "26.43.1014"
    assert not (tmp_path / "bin" / "flashed").exists()
    res = run_module(nic_firmware_module, args, capsys)
    assert res["rc"] == 1 and "refusing to flash NIC firmware without allow_upgrade=true" in res["msg"]
    assert not (tmp_path / "bin" / "flashed").exists()
    res = run_module(nic_firmware_module, dict(args, allow_upgrade=True), capsys)
    assert res["rc"] == 0 and res["changed"] and res["reset_required"] is True
    assert (tmp_path / "bin" / "flashed").read_text().split() == ["0000:65:00.0", "0000:b3:00.0"]
    calls = (tmp_path / "bin" / "calls").read_text().splitlines()
    assert "-u -y -d 0000:65:00.0 -D /srv/fw" in calls
    res = run_module(nic_firmware_module, dict(args, allow_upgrade=True), capsys)
    assert res["rc"] == 0 and res["changed"] is False and res["upgrades"] == []


def test_module_bad_input(tmp_path, capsys):
    tool = standin(tmp_path)
    res = run_module(nic_firmware_module, {"devices": ["65:00.0;reboot"], "image_dir": "/srv/fw", "tool": tool}, capsys)
    assert res["rc"] == 1 and "is not a PCI address" in res["msg"]
    res = run_module(nic_firmware_module, {"devices": ["0000:65:00.0"], "image_dir": "/srv/fw",
                                           "tool": str(tmp_path / "none")}, capsys)
    assert res["rc"] == 1 and "not found: install NVIDIA MFT" in res["msg"]
