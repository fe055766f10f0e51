# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The twin's management path: one SSH endpoint per router and per GPU host on 127.0.0.1 (asyncssh).

A router session is a real interactive bash on a pseudo-terminal inside the router's network namespace,
with that router's ``vtysh`` first on PATH: no command is simulated, FRR answers everything.
A GPU host session is what OpenSSH's sshd gives root on a real host: ``bash -c <command>`` (exec
request, no terminal: Ansible with pipelining) or an interactive bash, inside the host's network
namespace and its own mount namespace (twin.py: its own /sys, /etc and /opt), with SSH_CONNECTION set.
Hosts accept the controller's public key only (<state>/ssh_client_key, generated here once).
Reads the endpoints from <state>/twin.json; writes <state>/known_hosts once listening.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import pty
import struct
import termios

import asyncssh


class Server(asyncssh.SSHServer):
    def __init__(self, password):
        self.password = password

    def begin_auth(self, username):
        return True

    def password_auth_supported(self):
        return self.password is not None

    def validate_password(self, username, password):
        return password == self.password


def shell_factory(ns, bindir, prompt, enter=None, lock_dir=None):
    """A pseudo-terminal bash in the router's namespace (``ip netns exec``) or, with ``enter`` (a command
    prefix entering a host's namespaces), an interactive root shell on a twin host; with an exec request
    on a host, ``bash -c <command>`` without a terminal."""
    async def handle(process):
        if enter and process.command is not None:
            await exec_command(process, enter)
            return
        master, slave = pty.openpty()
        cols, rows = (process.term_size or (200, 50))[:2]
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows or 50, cols or 200, 0, 0))
        env = {"PATH": "%s:/usr/sbin:/usr/bin:/sbin:/bin" % bindir, "TERM": "dumb", "HOME": "/root",
               "PS1": "%s# " % prompt, "LANG": "C"}
        if enter:
            env.update(session_env(process), TERM=process.term_type or "dumb")
        if lock_dir:
            env["AIF_LOCK_DIR"] = lock_dir
        child = await asyncio.create_subprocess_exec(
            *(enter or ["ip", "netns", "exec", ns]), "bash", "--noprofile", "--norc", "--noediting", "-i",
            stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def readable():
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b""
            if not data:
                loop.remove_reader(master)
                if not done.done():
                    done.set_result(None)
                return
            process.stdout.write(data if enter else data.decode("utf-8", "replace"))
        loop.add_reader(master, readable)

        async def pump():
            try:
                while True:
                    data = await process.stdin.read(65536)
                    if not data:
                        break
                    os.write(master, data if enter else data.encode())
            except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged, OSError):
                pass
        pumper = asyncio.ensure_future(pump())
        await asyncio.wait([done, pumper], return_when=asyncio.FIRST_COMPLETED)
        pumper.cancel()
        if child.returncode is None:
            child.kill()
        await child.wait()
        loop.remove_reader(master)
        os.close(master)
        process.exit(0)
    return handle


def session_env(process):
    """The environment OpenSSH's sshd gives a root session (SSH_CONNECTION: client ip/port, server ip/port)."""
    peer, local = process.get_extra_info("peername"), process.get_extra_info("sockname")
    return {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "USER": "root", "LOGNAME": "root",
            "SHELL": "/bin/bash", "LANG": "C.UTF-8",
            "SSH_CONNECTION": "%s %d %s %d" % (peer[0], peer[1], local[0], local[1])}


async def exec_command(process, enter):
    """``bash -c <command>`` in the host's namespaces: stdin, stdout, stderr as bytes, the exit status back."""
    child = await asyncio.create_subprocess_exec(
        *enter, "bash", "-c", process.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=session_env(process), start_new_session=True)

    async def feed():
        try:
            while True:
                data = await process.stdin.read(65536)
                if not data:
                    break
                child.stdin.write(data)
                await child.stdin.drain()
        except (asyncssh.Error, asyncssh.BreakReceived, asyncssh.SignalReceived, asyncssh.TerminalSizeChanged, OSError):
            pass
        finally:
            child.stdin.close()

    async def copy(source, sink):
        while True:
            data = await source.read(65536)
            if not data:
                break
            try:
                sink.write(data)
                await sink.drain()
            except (asyncssh.Error, OSError):   # the client went away: keep reading so the child never blocks
                pass

    feeder = asyncio.ensure_future(feed())
    try:
        await asyncio.gather(copy(child.stdout, process.stdout), copy(child.stderr, process.stderr))
        status = await child.wait()
    finally:
        feeder.cancel()
        if child.returncode is None:
            child.kill()
            await child.wait()
    process.exit(status if status >= 0 else 128 - status)


async def main(args):
    with open(os.path.join(args.state, "twin.json")) as handle:
        record = json.load(handle)
    if not os.path.exists(args.key):
        asyncssh.generate_private_key("ssh-ed25519").write_private_key(args.key)
    key = asyncssh.read_private_key(args.key)
    for name, info in record["routers"].items():
        bindir = os.path.join(args.state, "bin", info["namespace"])
        await asyncssh.create_server(lambda: Server(args.password), "127.0.0.1", info["port"], server_host_keys=[key],
                                     process_factory=shell_factory(info["namespace"], bindir, name, lock_dir=os.path.join(
                                         record["lock_dirs"], name) if record.get("lock_dirs") else None), encoding="utf-8",
                                     line_editor=False)
    if record.get("host_endpoints"):
        if not os.path.exists(args.client_key):
            asyncssh.generate_private_key("ssh-ed25519").write_private_key(args.client_key)
            os.chmod(args.client_key, 0o600)
        authorized = asyncssh.import_authorized_keys(
            asyncssh.read_private_key(args.client_key).export_public_key("openssh").decode())
    for name, info in record.get("host_endpoints", {}).items():
        enter = ["nsenter", "--net=/run/netns/%s" % info["namespace"], "--mount=%s" % info["mount_ns"], "--wd=/root"]
        await asyncssh.create_server(lambda: Server(None), "127.0.0.1", info["port"], server_host_keys=[key],
                                     authorized_client_keys=authorized, process_factory=shell_factory(
                                         info["namespace"], "", name, enter), encoding=None, line_editor=False)
    public = key.export_public_key("openssh").decode().strip()
    with open(os.path.join(args.state, "known_hosts.tmp"), "w") as handle:
        for info in list(record["routers"].values()) + list(record.get("host_endpoints", {}).values()):
            handle.write("[127.0.0.1]:%d %s\n" % (info["port"], public))
    os.replace(os.path.join(args.state, "known_hosts.tmp"), os.path.join(args.state, "known_hosts"))
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--state", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--client-key", help="the controller's private key for the GPU hosts (created when missing)")
    asyncio.run(main(parser.parse_args()))
