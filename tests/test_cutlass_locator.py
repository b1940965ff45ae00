"""CPU: the build finds CUTLASS in the documented order and fails with one clear line."""
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import cutlass_locator  # noqa: E402


def _fake_cutlass(root: pathlib.Path) -> pathlib.Path:
    include = root / "include"
    (include / "cutlass").mkdir(parents=True)
    (include / "cute").mkdir(parents=True)
    (include / "cutlass" / "cutlass.h").write_text("")
    (include / "cute" / "tensor.hpp").write_text("")
    return include


def test_env_var_wins(tmp_path):
    include = _fake_cutlass(tmp_path / "mine")
    repo = tmp_path / "repo"
    _fake_cutlass(repo / "third_party" / "cutlass")
    assert cutlass_locator.find_cutlass_include(repo, {"CUTLASS_PATH": str(tmp_path / "mine")}) == include
    # CUTLASS_PATH may also name the include folder itself
    assert cutlass_locator.find_cutlass_include(repo, {"CUTLASS_PATH": str(include)}) == include


def test_bad_env_var_is_an_error(tmp_path):
    with pytest.raises(cutlass_locator.CutlassNotFound, match="CUTLASS_PATH"):
        cutlass_locator.find_cutlass_include(tmp_path, {"CUTLASS_PATH": str(tmp_path / "nothing")})


def test_submodule_before_wheel(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    include = _fake_cutlass(repo / "third_party" / "cutlass")
    monkeypatch.setattr(cutlass_locator, "_from_wheel", lambda: pytest.fail("wheel consulted first"))
    assert cutlass_locator.find_cutlass_include(repo, {}) == include


def test_wheel_then_clear_error(tmp_path, monkeypatch):
    wheel_include = _fake_cutlass(tmp_path / "wheel")
    monkeypatch.setattr(cutlass_locator, "_from_wheel", lambda: wheel_include)
    assert cutlass_locator.find_cutlass_include(tmp_path / "empty_repo", {}) == wheel_include
    monkeypatch.setattr(cutlass_locator, "_from_wheel", lambda: None)
    with pytest.raises(cutlass_locator.CutlassNotFound) as err:
        cutlass_locator.find_cutlass_include(tmp_path / "empty_repo", {})
    message = str(err.value)
    assert "\n" not in message and "submodule" in message and "nvidia-cutlass" in message


def test_real_headers_resolve():
    """On a build machine the headers resolve to real CuTe sources (CI installs the wheel)."""
    try:
        include = cutlass_locator.find_cutlass_include(ROOT)
    except cutlass_locator.CutlassNotFound:
        pytest.skip("no CUTLASS headers on this machine: it runs a library built elsewhere")
    assert (include / "cute" / "atom" / "mma_traits_sm90_gmma.hpp").is_file()
