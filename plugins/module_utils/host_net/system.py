# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real host for the rail network engine (engine.py's ``host`` object): iproute2 through the module's
run_command, and the file system. Used by the modules rail_network and host_state."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import json
import os

from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import read_bytes
from ansible_collections.aifabric.roce.plugins.module_utils.host_net.engine import run, ssh_connection_of_ancestors
from ansible_collections.aifabric.roce.plugins.module_utils.host_net.model import HostNetError

ARGUMENT_SPEC = dict(
    intent=dict(type="dict", required=True),
    persistence=dict(type="str", default="auto", choices=["auto", "netplan", "networkmanager", "systemd", "none"]),
    sysctls=dict(type="bool", default=True),
    owned_tables=dict(type="list", elements="int", default=[]),
    owned_rule_priorities=dict(type="list", elements="int", default=[]),
    mgmt_check_targets=dict(type="list", elements="str", default=[]),
    rollback=dict(type="bool", default=True),
    mgmt_interface=dict(type="str"),
    mgmt_interfaces=dict(type="list", elements="str", default=[]),
    mgmt_address=dict(type="str"),
    allow_mgmt_change=dict(type="bool", default=False),
)


def converge(host, params, check_mode):
    """engine.run with the module's parameters (the management path from this SSH session)."""
    return run(host, params["intent"], check_mode=check_mode,
               persistence=params["persistence"], manage_sysctls=params["sysctls"],
               owned_tables=params["owned_tables"], owned_priorities=params["owned_rule_priorities"],
               mgmt_targets=params["mgmt_check_targets"], rollback=params["rollback"],
               ssh_connection=os.environ.get("SSH_CONNECTION") or ssh_connection_of_ancestors(read_bytes, os.getpid()),
               mgmt_interface=params["mgmt_interface"], allow_mgmt_change=params["allow_mgmt_change"],
               mgmt_interfaces=params["mgmt_interfaces"], mgmt_address=params["mgmt_address"])


class SystemHost(object):
    """The real host, through iproute2 and the file system."""

    def __init__(self, module):
        self.module = module
        self.ip = module.get_bin_path("ip", required=True)
        self.ping_bin = module.get_bin_path("ping")

    def ip_json(self, args):
        rc, out, err = self.module.run_command([self.ip, "-j"] + list(args))
        if rc != 0:
            if args and args[0] == "route" and "get" in args:
                return []
            # raised, not fail_json: after the first batch the engine must still restore the host
            raise HostNetError("ip -j %s failed: %s" % (" ".join(args), err.strip()))
        return json.loads(out or "[]")

    def ip_batch(self, lines, force=False):
        cmd = [self.ip] + (["-force"] if force else []) + ["-batch", "-"]
        rc, dummy, err = self.module.run_command(cmd, data="\n".join(lines))
        return rc, err

    @staticmethod
    def read(path):
        try:
            with open(path) as handle:
                return handle.read()
        except (IOError, OSError):
            return None

    @staticmethod
    def write(path, content, mode):
        directory = os.path.dirname(path)
        if mode is None:  # /proc/sys: write in place
            with open(path, "w") as handle:
                handle.write(content)
            return
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        tmp = path + ".aifabric-tmp"
        with open(tmp, "w") as handle:
            handle.write(content)
        os.chmod(tmp, mode)
        os.rename(tmp, path)

    @staticmethod
    def remove(path):
        if os.path.lexists(path):
            os.unlink(path)

    @staticmethod
    def symlink(path, target):
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)

    @staticmethod
    def readlink(path):
        return os.readlink(path) if os.path.islink(path) else None

    @staticmethod
    def glob(pattern):
        return glob.glob(pattern)

    @staticmethod
    def exists(path):
        return os.path.exists(path)

    def ping(self, address):
        if not self.ping_bin:
            return None
        rc = self.module.run_command([self.ping_bin, "-n", "-c", "1", "-W", "1", address])[0]
        if rc != 0:  # one retry: the first probe can race ARP resolution
            rc = self.module.run_command([self.ping_bin, "-n", "-c", "1", "-W", "1", address])[0]
        return rc == 0

    def reload_backend(self, backend, paths):
        nmcli = self.module.get_bin_path("nmcli")
        if backend == "networkmanager" and nmcli:
            keyfiles = [p for p in paths if p.endswith(".nmconnection")]
            if keyfiles:
                self.module.run_command([nmcli, "connection", "load"] + keyfiles)
