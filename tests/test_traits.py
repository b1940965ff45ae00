"""CPU: the trait table (csrc/instantiations/traits.py) is the single source of what is
compiled and supported: the generated instantiations and header are up to date, and the
library's torch.ops.dash.capabilities() answers from it."""
import importlib.util
import pathlib
import subprocess
import sys

import pytest

from dash import _library
from dash import _traits as generated_traits

ROOT = pathlib.Path(__file__).resolve().parents[1]
GENERATE = ROOT / "csrc" / "instantiations" / "generate.py"


def _traits():
    spec = importlib.util.spec_from_file_location("traits", GENERATE.parent / "traits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_files_are_up_to_date():
    result = subprocess.run([sys.executable, str(GENERATE), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, f"run python {GENERATE.relative_to(ROOT)}: {result.stdout}"


@pytest.mark.skipif(not _library.LOADED, reason="dash's op library is not built")
def test_capabilities_come_from_the_trait_table():
    from dash import capabilities
    traits = _traits()
    caps = capabilities.capabilities()
    assert caps["traits"]["head_dims"] == list(traits.HEAD_DIMS)
    assert caps["traits"]["masks"] == list(traits.MASKS)
    assert caps["traits"]["features"] == list(traits.FEATURES)
    for head_dim, tiles in traits.HEAD_DIMS.items():
        assert capabilities.bwd_tile_shape(head_dim) == tiles["bwd_tile"]
        assert capabilities.fwd_tile_shape(head_dim) == tiles["fwd_tile"]
        assert generated_traits.BWD_TILE[head_dim] == capabilities.bwd_tile_shape(head_dim)
        assert generated_traits.FWD_TILE[head_dim] == capabilities.fwd_tile_shape(head_dim)
    compiled = {tuple(k) for k in caps["compiled"]["bwd"]}
    # A full build compiles every combination; a DASH_INSTANTIATIONS build a subset of them.
    def every(kind):
        scores = traits.PASSES[kind][2]
        return {(h, d[2], m, s) for h in traits.HEAD_DIMS for d in traits.DTYPES.values() for m in traits.MASKS
                for s in scores}
    assert compiled <= every("bwd") and {tuple(k) for k in caps["compiled"]["fwd"]} <= every("fwd")
    assert caps["traits"]["score_mods"] == {kind: list(v[2]) for kind, v in traits.PASSES.items()}
