"""CPU: the built op library's C++ errors raise as Python exceptions (a library linked with a
private libstdc++ crashes on them instead; tools/check_library_errors.py, run by setup.py after
every build), and the check tells a crash from a raise."""
import pathlib
import sys

import pytest

from conftest import requires_library

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import check_library_errors  # noqa: E402


@requires_library
def test_built_library_raises_its_errors():
    from dash._library import _find_library
    assert check_library_errors.check(_find_library()) is None


def test_check_reports_a_crash(monkeypatch):
    monkeypatch.setattr(check_library_errors, "_CHILD", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    problem = check_library_errors.check("any.so")
    assert problem is not None and "killed the process (signal 11)" in problem and "CXX=/usr/bin/g++" in problem


def test_check_reports_a_library_that_does_not_load(tmp_path):
    not_a_library = tmp_path / "_C.abi3.so"
    not_a_library.write_text("not an ELF file")
    problem = check_library_errors.check(not_a_library)
    assert problem is not None and "Could not load this library" in problem
