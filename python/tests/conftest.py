"""Paths the tests need, from the environment CTest sets (python/CMakeLists.txt), with defaults for
a run from the source tree after a build into build/:

    PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
"""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("PASSLENS_BUILD_DIR", ROOT / "build"))


@pytest.fixture(scope="session")
def cli():
    return os.environ.get("PASSLENS_CLI", str(BUILD / "bin" / "passlens-cli"))


@pytest.fixture(scope="session")
def examples():
    return pathlib.Path(os.environ.get("PASSLENS_EXAMPLES", BUILD / "examples"))


@pytest.fixture(scope="session")
def fixtures():
    """The committed torch exports (tests/models)."""
    return pathlib.Path(os.environ.get("PASSLENS_FIXTURES", ROOT / "tests" / "models"))


@pytest.fixture(scope="session")
def run_cli(cli):
    def run(*args, check=True):
        p = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError("passlens-cli %s failed (%d): %s" % (" ".join(map(str, args)), p.returncode, p.stderr))
        return p
    return run
