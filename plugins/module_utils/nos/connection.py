# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""netmiko connection factory shared by switch_config and switch_facts."""

from __future__ import annotations

import io
import os

CONNECTION_ARGS = dict(
    host=dict(type="str", required=True),
    port=dict(type="int", default=22),
    username=dict(type="str", required=True),
    password=dict(type="str", no_log=True),
    secret=dict(type="str", no_log=True),
    device_type=dict(type="str"),
    host_key_checking=dict(type="bool", default=True),
    known_hosts=dict(type="path"),
    timeout=dict(type="int", default=30),
)


def netmiko_factory(params, driver):
    """Return connect() for the module's connection parameters (host keys checked unless disabled)."""
    from netmiko import ConnectHandler

    device_type = params.get("device_type") or driver.device_type
    # the driver's session facts (prompt reads, a shell hop) hold for its own netmiko class, not for another one
    own = device_type == driver.device_type
    if own:
        driver.before_login()
    kwargs = dict(device_type=device_type, host=params["host"], port=params["port"], username=params["username"],
                  password=params.get("password"), conn_timeout=params["timeout"], auth_timeout=params["timeout"],
                  ssh_strict=bool(params["host_key_checking"]), fast_cli=True)
    if params.get("known_hosts"):
        kwargs.update(system_host_keys=False, alt_host_keys=True, alt_key_file=os.path.expanduser(params["known_hosts"]))
    else:
        kwargs.update(system_host_keys=True)

    if params.get("secret"):
        kwargs["secret"] = params["secret"]

    def connect():
        # an in-memory session log (netmiko masks the password and secret in it): when a read times out,
        # what the device last said is the only evidence of why
        log = io.BytesIO()
        conn = ConnectHandler(session_log=log, **kwargs)
        conn._aif_log = log
        _fail_fast_on_close(conn)
        if params.get("secret"):
            conn.enable()  # unprivileged exec (EOS/NX-OS `>`) -> privileged, with netmiko's enable handling
        if own:
            driver.after_login(conn)
        return conn
    return connect


def lock_key(params):
    """Key of the controller's per-device lock: the switch's address and SSH port."""
    return "%s_%s" % (params["host"], params["port"])


def _fail_fast_on_close(conn):
    """netmiko keeps polling a channel the device has closed until its read timeout; raise at once."""
    orig = conn.read_channel

    def read_channel():
        out = orig()
        chan = getattr(conn, "remote_conn", None)
        if not out and chan is not None and getattr(chan, "closed", False):
            raise EOFError("SSH session closed by the device")
        return out
    conn.read_channel = read_channel


KLISH_PROMPT = r"[#$>]\s*$"


def asternos_cli_mode():
    """netmiko 4.8 sets AsterNOS's ``_cli_mode`` after ``__init__`` has already run ``session_preparation()``: set it
    on the class before a login."""
    from netmiko.asterfusion import AsterfusionAsterNOSSSH
    if not hasattr(AsterfusionAsterNOSSSH, "_cli_mode"):
        AsterfusionAsterNOSSSH._cli_mode = "klish"


def prompt_config_checks(conn):
    """netmiko 4.8's dell_sonic driver checks config mode with a *timing* read (2 s of silence each, ~11 s of a SONiC
    apply on the lab): read up to the klish prompt instead, as its own ``config_mode`` does."""
    orig_check = conn.check_config_mode

    def check_config_mode(check_string=")#", pattern="", force_regex=False):
        return orig_check(check_string=check_string, pattern=pattern or KLISH_PROMPT, force_regex=force_regex)
    conn.check_config_mode = check_config_mode


def asternos_prompt_reads(conn):
    """netmiko 4.8's AsterNOS driver checks config mode and saves with *timing* reads (~13 s of sleeping per change):
    read up to the klish prompt instead."""
    prompt = KLISH_PROMPT
    prompt_config_checks(conn)

    def save_config(cmd="write", confirm=True, confirm_response="y"):
        if not confirm:
            return conn.send_command(cmd, expect_string=prompt)
        out = conn.send_command(cmd, expect_string=r"\[y/N\]|" + prompt, strip_prompt=False)
        if "[y/N]" in out:
            out += conn.send_command(confirm_response, expect_string=prompt, cmd_verify=False)
        return out
    conn.save_config = save_config


def asternos_bash_home(conn):
    """Work in the AsterNOS Linux shell, entered by netmiko's own ``_enter_bash_cli`` (``system bash``, prompt ``$``);
    a save goes back into klish for ``write`` + ``y``."""
    conn._enter_bash_cli()
    conn.set_base_prompt(alt_prompt_terminator="$")
    shell, klish = r"\$\s*$", r"#\s*$"

    def save_config(cmd="write", confirm=True, confirm_response="y"):
        conn.send_command("sonic-cli", expect_string=klish, cmd_verify=False)
        try:
            out = conn.send_command(cmd, expect_string=r"\[y/N\]|" + klish, strip_prompt=False)
            if confirm and "[y/N]" in out:
                out += conn.send_command(confirm_response, expect_string=klish, cmd_verify=False)
        finally:
            conn.send_command("exit", expect_string=shell, cmd_verify=False)
        return out
    conn.save_config = save_config


def with_credentials(entries, credentials, key, label):
    """``entries`` (dicts named by ``key``) with their password and secret from ``credentials`` (kept apart to be
    no_log); ValueError names an entry for an unknown name (``label``) or another key."""
    credentials = credentials or {}
    unknown = sorted(set(credentials) - set(e.get(key) for e in entries), key=str)
    if unknown:
        raise ValueError("credentials: %s not listed in %s: %s" % (label, label, ", ".join(map(str, unknown))))
    out = []
    for entry in entries:
        creds = credentials.get(entry.get(key)) or {}
        extra = sorted(set(creds) - set(("password", "secret")))
        if extra:
            raise ValueError("credentials.%s: only password and secret are taken, not %s" % (entry.get(key), ", ".join(extra)))
        merged = dict(entry)
        merged.update((k, v) for k, v in creds.items() if v is not None)
        out.append(merged)
    return out
