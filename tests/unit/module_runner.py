"""Run a module's main() in-process the way AnsiballZ runs it, and return its JSON result plus rc."""
import json

import pytest
from ansible.module_utils.testing import patch_module_args


def run_module(module, args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exit_info:
            module.main()
    result = json.loads(capsys.readouterr().out)
    result["rc"] = exit_info.value.code
    return result
