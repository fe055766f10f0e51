"""Stand-in for ansible-test's get-pip bootstrap script.

ansible-test downloads get-pip.py from a host this network cannot reach; it looks in
~/.ansible/test/cache/get_pip_<version>.py first. This stand-in installs pip with the
interpreter's own ensurepip, then the requested pip version from PyPI, accepting get-pip's
arguments (--no-setuptools / --no-wheel are get-pip's own and are dropped).
"""
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])
subprocess.check_call([sys.executable, "-m", "pip", "install"] + args)
