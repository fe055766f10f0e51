# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The twin's management path: one SSH endpoint per router on 127.0.0.1 (asyncssh).

A session is a real interactive bash on a pseudo-terminal inside the router's network namespace,
with that router's ``vtysh`` first on PATH: no command is simulated, FRR answers everything.
Reads the routers and ports from <state>/twin.json; writes <state>/known_hosts once listening.
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
        return True

    def validate_password(self, username, password):
        return password == self.password


def shell_factory(ns, bindir, prompt):
    async def handle(process):
        master, slave = pty.openpty()
        cols, rows = (process.term_size or (200, 50))[:2]
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows or 50, cols or 200, 0, 0))
        env = {"PATH": "%s:/usr/sbin:/usr/bin:/sbin:/bin" % bindir, "TERM": "dumb", "HOME": "/root",
               "PS1": "%s# " % prompt, "LANG": "C"}
        child = await asyncio.create_subprocess_exec(
            "ip", "netns", "exec", ns, "bash", "--noprofile", "--norc", "--noediting", "-i",
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
            process.stdout.write(data.decode("utf-8", "replace"))
        loop.add_reader(master, readable)

        async def pump():
            try:
                while True:
                    data = await process.stdin.read(65536)
                    if not data:
                        break
                    os.write(master, data.encode())
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


async def main(args):
    with open(os.path.join(args.state, "twin.json")) as handle:
        record = json.load(handle)
    if not os.path.exists(args.key):
        asyncssh.generate_private_key("ssh-ed25519").write_private_key(args.key)
    key = asyncssh.read_private_key(args.key)
    for name, info in record["routers"].items():
        bindir = os.path.join(args.state, "bin", info["namespace"])
        await asyncssh.create_server(lambda: Server(args.password), "127.0.0.1", info["port"], server_host_keys=[key],
                                     process_factory=shell_factory(info["namespace"], bindir, name), encoding="utf-8",
                                     line_editor=False)
    public = key.export_public_key("openssh").decode().strip()
    with open(os.path.join(args.state, "known_hosts.tmp"), "w") as handle:
        for info in record["routers"].values():
            handle.write("[127.0.0.1]:%d %s\n" % (info["port"], public))
    os.replace(os.path.join(args.state, "known_hosts.tmp"), os.path.join(args.state, "known_hosts"))
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--state", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--password", required=True)
    asyncio.run(main(parser.parse_args()))
