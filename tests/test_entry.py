"""The ``wddmsim`` script's entry point (wddmsim.entry): a Ctrl-C while the command line is still
being imported ends with one line and exit status 130, never a traceback."""

import subprocess
import sys
from importlib.metadata import entry_points

# A SIGINT that arrives while wddmsim.cli is imported: Python raises KeyboardInterrupt there.
_INTERRUPTED_IMPORT = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "wddmsim.cli":
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Interrupt())
from wddmsim.entry import main
main()
"""


def test_a_ctrl_c_during_the_import_ends_with_one_line_and_130():
    r = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT, "--version"], capture_output=True, text=True,
                       timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (130, "", "wddmsim: interrupted by SIGINT\n")


def test_the_script_and_python_m_use_the_entry_point():
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "wddmsim"]
    assert script.value == "wddmsim.entry:main"
    r = subprocess.run([sys.executable, "-m", "wddmsim", "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("wddmsim, version ")


def test_the_line_is_the_one_a_command_prints_when_interrupted_outside_a_run():
    import inspect

    from wddmsim.cli import util as cliutil
    from wddmsim.entry import INTERRUPTED_LINE

    assert f'click.echo("{INTERRUPTED_LINE}", err=True)' in inspect.getsource(cliutil.WddmsimGroup.invoke)
