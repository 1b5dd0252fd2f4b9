"""A representative share of the suite again with the interpreted sources (``WDDMSIM_PURE=1``):
the rest of the suite runs whatever this build made of ``wddmsim._native.COMPILED`` (compiled
where a compiler was there), so this file is what makes one ``pytest`` run check both ways. The
share is the tests of the compiled modules themselves and the byte-for-byte determinism checks."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import wddmsim._native as native

ROOT = Path(__file__).parents[1]
SUMS = Path(native.__file__).with_name(native.SUMS)

#: The share: the kernel, the memory model and the GPU that drives it, and determinism end to end.
SHARE = ("tests/test_sim.py", "tests/test_gpu_memory.py", "tests/test_mmio.py", "tests/test_determinism.py")


@pytest.mark.skipif(not (SUMS.exists() and native._fresh()),
                    reason="this build compiled nothing: the whole suite already ran the sources")
def test_the_share_passes_with_the_interpreted_sources():
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["WDDMSIM_PURE"] = "1"
    probe = subprocess.run([sys.executable, "-c", "import wddmsim._native as n, importlib\n"
                            "for m in n.COMPILED: importlib.import_module(m)\nprint(set(n.status().values()))"],
                           env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    assert probe.stdout.strip() == "{'pure: WDDMSIM_PURE is set'}"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *SHARE], env=env,
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout.splitlines()[-1] and "failed" not in r.stdout.splitlines()[-1]
