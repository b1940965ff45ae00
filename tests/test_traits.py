"""CPU: the trait table (csrc/instantiations/traits.py) is the single source of what is
compiled and supported: the generated instantiations and header are up to date, and the
library's torch.ops.dash.capabilities() answers from it."""
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest
import torch

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
    assert [tuple(p) for p in caps["traits"]["head_dims"]] == list(traits.HEAD_DIMS)
    assert capabilities.head_dim_pairs() == tuple(traits.HEAD_DIMS)
    assert caps["traits"]["masks"] == list(traits.MASKS)
    assert caps["traits"]["features"] == list(traits.FEATURES)
    for (head_dim, head_dim_v), tiles in traits.HEAD_DIMS.items():
        assert capabilities.supports(head_dim, head_dim_v)
        assert capabilities.fwd_tile_shape(head_dim, head_dim_v) == tiles["fwd"]
        assert generated_traits.FWD_TILE[(head_dim, head_dim_v)] == tiles["fwd"]
        assert capabilities.supports(head_dim, head_dim_v, backward=True) == ("bwd" in tiles)
        if "bwd" in tiles:
            assert capabilities.bwd_tile_shape(head_dim, head_dim_v) == tiles["bwd"]
            assert generated_traits.BWD_TILE[(head_dim, head_dim_v)] == tiles["bwd"]
            softcap_tile = tiles.get("bwd_softcap", {}).get("tile", tiles["bwd"])  # the softcap kernels' own tile, if any
            assert capabilities.bwd_tile_shape(head_dim, head_dim_v, softcap=50.0) == softcap_tile
            assert generated_traits.BWD_SOFTCAP_TILE[(head_dim, head_dim_v)] == softcap_tile
        else:
            assert (head_dim, head_dim_v) not in generated_traits.BWD_TILE
    # A full build compiles every combination; a DASH_INSTANTIATIONS build a subset of them.
    def every(kind):
        scores = traits.PASSES[kind][2]
        kernels = {(qk, v, d[2], m, s) for (qk, v), t in traits.HEAD_DIMS.items() if kind in t
                   for d in traits.DTYPES.values() for m in traits.MASKS for s in scores}
        if kind == "fwd":  # the short-walk kernels, plain and softcap, for their masks
            kernels |= {(qk, v, d[2], m, s) for (qk, v), t in traits.HEAD_DIMS.items() if "fwd_short" in t
                        for d in traits.DTYPES.values() for m in t["fwd_short"]["masks"] for s in ("short", "short_softcap")}
        return kernels
    assert {tuple(k) for k in caps["compiled"]["bwd"]} <= every("bwd")
    assert {tuple(k) for k in caps["compiled"]["fwd"]} <= every("fwd")
    assert caps["traits"]["score_mods"] == {kind: list(v[2]) for kind, v in traits.PASSES.items()}


@pytest.mark.skipif(not _library.LOADED, reason="dash's op library is not built")
def test_head_dims_are_described_from_the_table():
    from dash import capabilities
    traits = _traits()
    text = capabilities.describe_head_dims()
    for qk, v in traits.HEAD_DIMS:
        assert str(qk) in text and (qk == v or f"head_dim_v {v}" in text)
    bwd = capabilities.describe_head_dims(backward=True)
    assert all(str(qk) in bwd for (qk, v), t in traits.HEAD_DIMS.items() if "bwd" in t)
    assert not capabilities.supports(100) and not capabilities.supports(128, 64)


@pytest.mark.skipif(not _library.LOADED, reason="dash's op library is not built")
def test_code_choices_come_from_the_trait_table():
    # The library reports the per-head-dim choices it was compiled with (generated header).
    from dash import capabilities
    traits = _traits()
    caps = capabilities.capabilities()["traits"]
    generate = _generate()
    for (head_dim, head_dim_v), t in traits.HEAD_DIMS.items():
        name = generated_traits.head_dim_name(head_dim, head_dim_v)
        for key, (default, _) in generate.CHOICES.items():
            if key.startswith("bwd_") and "bwd" not in t:
                continue
            assert caps[key][name] == t.get(key, default), (key, name)


def test_forward_short_walk_kernels_come_from_the_trait_table():
    """"fwd_short": a unit per (dtype, mask it names), the header's tile, limit and choices (the
    pair's own where the entry gives none), the Python table and the library's capabilities."""
    generate = _generate()
    traits = _traits()
    shorts = generate.fwd_shorts()
    assert shorts, "no head dim has a short-walk forward kernel"
    header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    units = {p.name for p in GENERATE.parent.glob("*_short.cu")}
    want_units = set()
    for (qk, v), short in shorts.items():
        t = traits.HEAD_DIMS[(qk, v)]
        name = generated_traits.head_dim_name(qk, v)
        assert short["tile"] == t["fwd_short"]["tile"] and short["tile"][0] % 64 == 0
        assert f"if (short_walk && head_dim == {qk} && head_dim_v == {v}) {{ return TileShape{{{short['tile'][0]}, " \
               f"{short['tile'][1]}}}; }}" in header
        for mask in traits.MASKS:
            limit = short["max_seqlen_k"] if mask in short["masks"] else 0
            line = f"if (head_dim == {qk} && head_dim_v == {v} && {'' if mask == 'band' else '!'}banded) {{ return {limit}; }}"
            assert (line in header) == (limit > 0)
        for key, (default, value) in generate.CHOICES.items():
            if not key.startswith("fwd_"):
                continue
            assert short[key] == t["fwd_short"].get(key, t.get(key, default))
            assert f"if (short_walk && head_dim == {qk} && head_dim_v == {v}) {{ return " \
                   f"{'true' if short[key] == value else 'false'}; }}" in header
        want_units |= {f"fwd_hdim{name}_{d}_{m}_short.cu" for d in traits.DTYPES for m in short["masks"]}
    assert units == want_units
    original = generate.traits.HEAD_DIMS[(64, 64)]
    try:
        for bad in ({"tile": (100, 128), "max_seqlen_k": 2048, "masks": ("band",)},
                    {"tile": (128, 128), "max_seqlen_k": 0, "masks": ("band",)},
                    {"tile": (128, 128), "max_seqlen_k": 2048, "masks": ("diagonal",)},
                    {"tile": (128, 128), "max_seqlen_k": 2048, "masks": ("band",), "bwd_mask": "two_bodies"}):
            generate.traits.HEAD_DIMS[(64, 64)] = {**original, "fwd_short": bad}
            with pytest.raises(ValueError, match="fwd_short"):
                generate.fwd_shorts()
    finally:
        generate.traits.HEAD_DIMS[(64, 64)] = original
    if _library.LOADED:
        from dash import capabilities
        caps = capabilities.capabilities()["traits"]["fwd_short"]
        assert caps == {generated_traits.head_dim_name(*p): {**s, "tile": list(s["tile"]), "masks": list(s["masks"])}
                        for p, s in shorts.items()}
        for (qk, v), short in shorts.items():
            compiled = capabilities.fwd_takes_short_walk(qk, v, banded=True, seqlen_k=short["max_seqlen_k"])
            assert compiled == ([qk, v, "bfloat16", "band", "short"] in capabilities.capabilities()["compiled"]["fwd"])
            assert not capabilities.fwd_takes_short_walk(qk, v, banded=True, seqlen_k=short["max_seqlen_k"] + 1)
            assert capabilities.fwd_tile_shape(qk, v, banded=True, seqlen_k=short["max_seqlen_k"] + 1) == \
                tuple(traits.HEAD_DIMS[(qk, v)]["fwd"])
            if compiled:
                assert capabilities.fwd_tile_shape(qk, v, banded=True, seqlen_k=1) == short["tile"]
            assert not capabilities.fwd_takes_short_walk(qk, v, banded=False, seqlen_k=1) or "full" in short["masks"]
        with pytest.raises(RuntimeError, match="bfloat16 or float16"):  # the library's op asked directly
            torch.ops.dash.fwd_takes_short_walk(64, 64, torch.float32, True, 100)


def test_forward_kv_multicast_comes_from_the_trait_table():
    """"fwd_kv_multicast_min_seqlen_k": the header's fwd_kv_multicast_min_seqlen_k lines (0 where a pair
    sets none), the library's capabilities; values that are not integers >= 0 refused."""
    generate = _generate()
    traits = _traits()
    multicasts = generate.fwd_kv_multicasts()
    header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    body = header[header.index("constexpr int fwd_kv_multicast_min_seqlen_k("):]
    body = body[:body.index("\n}\n")]
    for (qk, v), t in traits.HEAD_DIMS.items():
        n = t.get("fwd_kv_multicast_min_seqlen_k", 0)
        assert multicasts.get((qk, v), 0) == n
        assert (f"if (head_dim == {qk} && head_dim_v == {v}) {{ return {n}; }}" in body) == (n > 0)
    assert body.endswith("return 0;")
    original = generate.traits.HEAD_DIMS[(128, 128)]
    try:
        for bad in (-1, 2.5, True, "4096"):
            generate.traits.HEAD_DIMS[(128, 128)] = {**original, "fwd_kv_multicast_min_seqlen_k": bad}
            with pytest.raises(ValueError, match="fwd_kv_multicast_min_seqlen_k"):
                generate.fwd_kv_multicasts()
    finally:
        generate.traits.HEAD_DIMS[(128, 128)] = original
    if _library.LOADED:
        from dash import capabilities
        assert capabilities.capabilities()["traits"]["fwd_kv_multicast_min_seqlen_k"] == {
            generated_traits.head_dim_name(*p): n for p, n in multicasts.items()}


def test_code_choices_defaults_and_bad_values():
    """A CHOICES key takes its default where an entry has none, refuses other values, and the
    backward's keys cover only the pairs with a backward; the generated header's cases list
    exactly the pairs with the non-default value."""
    generate = _generate()
    assert generate.choice({}, "bwd_mask") == "before_exp"
    assert generate.choice({"bwd_mask": "two_bodies"}, "bwd_mask") == "two_bodies"
    with pytest.raises(ValueError, match="bwd_mask must be one of before_exp, two_bodies"):
        generate.choice({"bwd_mask": "never"}, "bwd_mask")
    traits = _traits()
    assert [p for p, _ in generate.choice_pairs("bwd_mask")] == [p for p, t in traits.HEAD_DIMS.items() if "bwd" in t]
    assert [p for p, _ in generate.choice_pairs("fwd_rescale")] == list(traits.HEAD_DIMS)
    two_bodies = [p for p, t in traits.HEAD_DIMS.items() if t.get("bwd_mask") == "two_bodies"]
    assert two_bodies  # the cases below would be empty either way otherwise
    assert generate.choice_cases("bwd_mask", "two_bodies") == "".join(
        f"  if (head_dim == {qk} && head_dim_v == {v}) {{ return true; }}\n" for qk, v in two_bodies)


def _generate():
    spec = importlib.util.spec_from_file_location("generate", GENERATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_register_splits_fill_the_pool(tmp_path):
    """common/register_split.h, compiled for the host: the defaults (24 / 240 with two MMA
    warpgroups, 32 / 160 with three), a producer given more (40 leaves the MMA warpgroups
    232), and every backward head dim's split within the CTA's pool."""
    import shutil
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler on this machine")
    traits = _traits()
    lines = ["#include <cstdio>", '#include "kernels/common/register_split.h"',
             '#include "generated/kernel_traits.h"', "int main() {"]
    cases = [(2, 0), (3, 0), (2, 40)] + [(t.get("bwd_warpgroups", 2), registers)
                                         for p, t in traits.HEAD_DIMS.items() if "bwd" in t
                                         for registers in (t.get("bwd_producer_registers", 0),
                                                           _generate().bwd_softcap(p, t)["bwd_producer_registers"])]
    for groups, producer in cases:
        lines.append(f'  std::printf("%d %d\\n", dash::RegisterSplit<{groups}, {producer}>::kProducer, '
                     f"dash::RegisterSplit<{groups}, {producer}>::kMma);")
    source = tmp_path / "split.cpp"
    source.write_text("\n".join(lines + ["}"]) + "\n")
    exe = tmp_path / "split"
    subprocess.run([compiler, "-std=c++17", f"-I{ROOT / 'csrc'}", str(source), "-o", str(exe)], check=True)
    got = [tuple(map(int, line.split())) for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                                     check=True).stdout.splitlines()]
    assert got[:3] == [(24, 240), (32, 160), (40, 232)]
    for (groups, _), (producer, mma) in zip(cases, got):
        pool = (65536 // ((groups + 1) * 128)) // 8 * 8 * (groups + 1) * 128
        assert producer * 128 + mma * groups * 128 <= pool and mma % 8 == 0 and mma <= 256


@pytest.mark.skipif(not _library.LOADED, reason="dash's op library is not built")
def test_backward_register_split_comes_from_the_trait_table():
    from dash import capabilities
    traits = _traits()
    caps = capabilities.capabilities()["traits"]
    for (head_dim, head_dim_v), t in traits.HEAD_DIMS.items():
        if "bwd" in t:  # 0: the register split's default (register_split.h; tested above)
            name = generated_traits.head_dim_name(head_dim, head_dim_v)
            assert caps["bwd_producer_registers"][name] == t.get("bwd_producer_registers", 0)
            softcap = t.get("bwd_softcap", {})
            assert caps["bwd_softcap_producer_registers"][name] == softcap.get("bwd_producer_registers",
                                                                              t.get("bwd_producer_registers", 0))


@pytest.mark.skipif(not _library.LOADED, reason="dash's op library is not built")
def test_backward_dq_wait_comes_from_the_trait_table():
    from dash import capabilities
    traits = _traits()
    caps = capabilities.capabilities()["traits"]
    for pair, t in traits.HEAD_DIMS.items():
        if "bwd" in t:
            assert caps["bwd_dq_wait"][generated_traits.head_dim_name(*pair)] == _generate().bwd_dq_wait(pair, t)


def _bwd_mask_two_bodies_from_header(header, head_dim, head_dim_v, softcap, banded):
    """What the generated header's bwd_mask_two_bodies returns: its first `if` that holds."""
    body = header.split("constexpr bool bwd_mask_two_bodies")[1].split("\n}\n")[0]
    for cond, value in re.findall(r"if \((.*)\) \{ return (true|false); \}", body):
        env = {"head_dim": head_dim, "head_dim_v": head_dim_v, "softcap": softcap, "banded": banded}
        if eval(cond.replace("&&", " and ").replace("!banded", " not banded"), {}, env):
            return value == "true"
    return False


def test_backward_softcap_block_overrides_the_plain_keys():
    """"bwd_softcap": one block of overrides for the backward's softcap kernels (tile, producer
    registers, "bwd_mask" per mask, "bwd_last_gemm"), the entry's own keys for whatever it does not name; anything
    else is refused, and the generated header gives only the named keys a softcap line."""
    generate = _generate()
    traits = _traits()
    both = lambda value: {mask: value for mask in traits.MASKS}  # noqa: E731
    plain = {"bwd": (64, 128), "bwd_producer_registers": 40}
    assert generate.bwd_softcap((128, 128), plain) == \
        {"tile": (64, 128), "bwd_producer_registers": 40, "bwd_mask": both("before_exp"), "bwd_last_gemm": "dk"}
    assert generate.bwd_softcap((64, 64), {"bwd": (128, 128), "bwd_mask": "two_bodies"})["bwd_mask"] == both("two_bodies")
    assert generate.bwd_softcap((128, 128), {**plain, "bwd_softcap": {"bwd_mask": {"full": "two_bodies"}}})["bwd_mask"] == \
        {"full": "two_bodies", "band": "before_exp"}
    assert generate.bwd_softcap((64, 64), {"bwd": (128, 128), "bwd_mask": "two_bodies",
                                           "bwd_softcap": {"bwd_mask": "before_exp"}})["bwd_mask"] == both("before_exp")
    assert generate.bwd_softcap((64, 64), {**plain, "bwd_softcap": {"tile": (64, 128), "bwd_producer_registers": 0}}) == \
        {"tile": (64, 128), "bwd_producer_registers": 0, "bwd_mask": both("before_exp"), "bwd_last_gemm": "dk"}
    assert generate.bwd_softcap((256, 256), {"bwd": (64, 80), "bwd_split": "kv_cols",
                                             "bwd_softcap": {"bwd_last_gemm": "dq"}})["bwd_last_gemm"] == "dq"
    for bad in ({"bwd_mask": {"diagonal": "two_bodies"}}, {"bwd_mask": {"full": "never"}}, {"bwd_mask": "never"},
                {"bwd_mask": ["two_bodies"]}, {"bwd_split": "kv_cols"}, {"tile": (64, 100)}, {"tile": (64,)},
                {"bwd_producer_registers": -8}, {"bwd_producer_registers": "40"}):
        with pytest.raises(ValueError, match="bwd_(softcap|mask)"):
            generate.bwd_softcap((128, 128), {**plain, "bwd_softcap": bad})
    with pytest.raises(ValueError, match="bwd_softcap"):
        generate.bwd_softcap((128, 128), {**plain, "bwd_softcap": (64, 128)})  # the old tile-only form
    header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    blocks = [t["bwd_softcap"] for t in traits.HEAD_DIMS.values() if "bwd_softcap" in t]
    assert any("bwd_mask" in b for b in blocks) and any("bwd_producer_registers" in b for b in blocks)  # exercised
    producer = header.split("constexpr int bwd_producer_registers")[1].split("\n}\n")[0]
    tiles = header.split("constexpr TileShape bwd_tile_shape")[1].split("\n}\n")[0]
    for pair, t in traits.HEAD_DIMS.items():
        if "bwd" not in t:
            continue
        block, softcap = t.get("bwd_softcap", {}), generate.bwd_softcap(pair, t)
        line = f"if (softcap && head_dim == {pair[0]} && head_dim_v == {pair[1]})"
        assert (f"{line} {{ return {softcap['bwd_producer_registers']}; }}" in producer) == ("bwd_producer_registers" in block)
        assert (line in tiles) == ("tile" in block)
        for mask in traits.MASKS:
            banded = mask == "band"
            want_plain = generate.choice(t, "bwd_mask") == "two_bodies"
            want_softcap = softcap["bwd_mask"][mask] == "two_bodies"
            assert _bwd_mask_two_bodies_from_header(header, *pair, False, banded) == want_plain, (pair, mask)
            assert _bwd_mask_two_bodies_from_header(header, *pair, True, banded) == want_softcap, (pair, mask)
    if _library.LOADED:
        from dash import capabilities
        caps = capabilities.capabilities()["traits"]
        for key, field in (("bwd_softcap_mask", "bwd_mask"), ("bwd_softcap_producer_registers", "bwd_producer_registers")):
            assert caps[key] == {generated_traits.head_dim_name(*p): generate.bwd_softcap(p, t)[field]
                                 for p, t in traits.HEAD_DIMS.items() if "bwd" in t}, key


def test_backward_splits_are_kv_rows_or_kv_cols():
    """The backward's MMA warpgroups share a task by KV rows or by keys as columns of S: the generated
    header's BwdSplit has those two, every backward pair takes one, and any other name (256's former
    split along the head dim among them) is refused by the generator."""
    generate = _generate()
    traits = _traits()
    header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    assert "enum class BwdSplit { kKvRows, kKvCols };" in header
    assert set(generate.bwd_splits().values()) <= {"kv_rows", "kv_cols"}
    table = generate.traits.HEAD_DIMS
    original = dict(table[(256, 256)])
    for bad in ("head_dim", "kv", None):
        try:
            table[(256, 256)] = {**original, "bwd_split": bad}
            with pytest.raises(ValueError, match="bwd_split"):
                generate.bwd_splits()
        finally:
            table[(256, 256)] = original
    assert generate.bwd_splits() == {p: t["bwd_split"] for p, t in traits.HEAD_DIMS.items() if "bwd" in t}


def test_backward_tail_dealing_comes_from_the_trait_table():
    """"bwd_tail": item order unless a pair asks for its tail longest first (hdim 96, 128, 192 and
    192 / 128, RESULTS items 312, 322); the generated C++ switch, the Python list and the library's
    capabilities agree."""
    generate = _generate()
    traits = _traits()
    longest = [pair for pair, t in traits.HEAD_DIMS.items()
               if "bwd" in t and generate.bwd_tail(pair, t) == "longest_first"]
    assert longest == [(96, 96), (128, 128), (192, 128), (192, 192)]
    assert generated_traits.BWD_TAIL_LONGEST_FIRST == longest
    header = (pathlib.Path(generate.__file__).parents[1] / "generated" / "kernel_traits.h").read_text()
    switch = header.split("bwd_tail_longest_first")[1].split("return false;")[0]
    assert all(f"if (head_dim == {qk} && head_dim_v == {v}) {{ return true; }}" in switch for qk, v in longest)
    assert "head_dim == 64" not in switch and "head_dim == 256" not in switch
    for bad in ({"bwd_tail": "shortest_first"}, {"bwd_tail": True}):
        with pytest.raises(ValueError, match="bwd_tail"):
            generate.bwd_tail((128, 128), bad)
    if not _library.LOADED:
        pytest.skip("dash's op library is not built (the table's side is checked above)")
    from dash import capabilities
    caps = capabilities.capabilities()["traits"]
    for pair, t in traits.HEAD_DIMS.items():
        if "bwd" in t:
            assert caps["bwd_tail"][generated_traits.head_dim_name(*pair)] == generate.bwd_tail(pair, t)


def test_backward_dq_wait_by_keys_needs_the_kv_row_split():
    """"by_keys" splits the dQ GEMM by the keys each of two warpgroups' dS covers: the KV-row split
    with two warpgroups only (the kernel config also asserts its two Q stages and dS buffers)."""
    generate = _generate()
    assert generate.bwd_dq_wait((128, 128), {"bwd_split": "kv_rows"}) == "whole"
    assert generate.bwd_dq_wait((128, 128), {"bwd_split": "kv_rows", "bwd_dq_wait": "by_keys"}) == "by_keys"
    for bad in ({"bwd_split": "kv_cols", "bwd_warpgroups": 3, "bwd_dq_wait": "by_keys"},
                {"bwd_split": "kv_rows", "bwd_dq_wait": "sometimes"}):
        with pytest.raises(ValueError, match="bwd_dq_wait"):
            generate.bwd_dq_wait((192, 192), bad)


def test_backward_dp_v_registers_needs_the_kv_row_split():
    """"bwd_dp_v": "registers" feeds V to dP^T = V dO^T from registers, where V is that GEMM's A
    operand (the KV-row split); the generated header returns true for exactly those pairs, and the
    capabilities JSON reports every backward pair's choice."""
    generate = _generate()
    traits = _traits()
    assert generate.bwd_dp_v((128, 128), {"bwd_split": "kv_rows"}) == "smem"
    assert generate.bwd_dp_v((96, 96), {"bwd_split": "kv_rows", "bwd_dp_v": "registers"}) == "registers"
    for bad in ({"bwd_split": "kv_cols", "bwd_warpgroups": 3, "bwd_dp_v": "registers"},
                {"bwd_split": "kv_rows", "bwd_dp_v": "sometimes"}):
        with pytest.raises(ValueError, match="bwd_dp_v"):
            generate.bwd_dp_v((192, 192), bad)
    header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    body = header.split("constexpr bool bwd_dp_v_in_registers")[1].split("\n}\n")[0]
    chosen = {(qk, v) for qk, v in traits.HEAD_DIMS if "bwd" in traits.HEAD_DIMS[(qk, v)]
              and generate.bwd_dp_v((qk, v), traits.HEAD_DIMS[(qk, v)]) == "registers"}
    assert chosen, "no pair exercises bwd_dp_v registers"
    assert {(int(a), int(b)) for a, b in re.findall(r"head_dim == (\d+) && head_dim_v == (\d+)", body)} == chosen
    if _library.LOADED:
        from dash import capabilities
        caps = capabilities.capabilities()["traits"]
        assert caps["bwd_dp_v"] == {generated_traits.head_dim_name(*p): generate.bwd_dp_v(p, t)
                                    for p, t in traits.HEAD_DIMS.items() if "bwd" in t}


def test_backward_last_gemm_choice_and_its_softcap_override():
    """"bwd_last_gemm": "dq" issues the step's dK GEMM before its dQ GEMM; refused with "bwd_dq_wait":
    "by_keys" (which issues dQ in two key ranges first), also where a "bwd_softcap" block asks for it. The
    generated header returns true for exactly the (pair, softcap) kernels that take "dq", and the
    capabilities JSON reports the plain and the softcap choices."""
    generate = _generate()
    traits = _traits()
    assert generate.bwd_last_gemm((256, 256), {"bwd_split": "kv_cols"}) == "dk"
    assert generate.bwd_last_gemm((256, 256), {"bwd_split": "kv_cols", "bwd_last_gemm": "dq"}) == "dq"
    for bad in ({"bwd_split": "kv_rows", "bwd_dq_wait": "by_keys", "bwd_last_gemm": "dq"},
                {"bwd_split": "kv_cols", "bwd_last_gemm": "dv"}):
        with pytest.raises(ValueError, match="bwd_last_gemm"):
            generate.bwd_last_gemm((128, 128), bad)
    with pytest.raises(ValueError, match="bwd_last_gemm"):
        generate.bwd_softcap((128, 128), {"bwd": (64, 128), "bwd_split": "kv_rows", "bwd_dq_wait": "by_keys",
                                          "bwd_softcap": {"bwd_last_gemm": "dq"}})
    header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    body = header.split("constexpr bool bwd_dq_gemm_last")[1].split("\n}\n")[0]
    cases = {(bool(sc), int(a), int(b), r == "true") for sc, a, b, r in
             re.findall(r"if \((softcap && )?head_dim == (\d+) && head_dim_v == (\d+)\) \{ return (true|false); \}", body)}
    expected = {(True, qk, v, generate.bwd_softcap((qk, v), t)["bwd_last_gemm"] == "dq")
                for (qk, v), t in traits.HEAD_DIMS.items() if "bwd" in t and "bwd_last_gemm" in t.get("bwd_softcap", {})}
    expected |= {(False, qk, v, True) for (qk, v), t in traits.HEAD_DIMS.items()
                 if "bwd" in t and generate.bwd_last_gemm((qk, v), t) == "dq"}
    assert cases == expected
    assert any(dq for _, _, _, dq in cases), "no kernel exercises bwd_last_gemm dq"
    if _library.LOADED:
        from dash import capabilities
        caps = capabilities.capabilities()["traits"]
        assert caps["bwd_softcap_last_gemm"] == {generated_traits.head_dim_name(*p): generate.bwd_softcap(p, t)["bwd_last_gemm"]
                                                 for p, t in traits.HEAD_DIMS.items() if "bwd" in t}


def test_backward_nondet_order_comes_from_the_trait_table():
    """"bwd_nondet_order": the pairs whose deterministic=False backward runs the ordered kernel
    are the table's "ordered" entries, in the generated Python table and the C++ header alike;
    other values are refused."""
    generate = _generate()
    traits = _traits()
    ordered = {p for p, t in traits.HEAD_DIMS.items() if "bwd" in t and t.get("bwd_nondet_order") == "ordered"}
    assert set(generated_traits.BWD_ORDERS_BOTH_MODES) == ordered
    assert set(generate.bwd_ordered_pairs()) == ordered
    header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    body = header.split("constexpr bool bwd_orders_both_modes")[1].split("\n}\n")[0]
    assert {tuple(int(x) for x in m) for m in re.findall(r"head_dim == (\d+) && head_dim_v == (\d+)", body)} == ordered
    assert generate.bwd_nondet_order((128, 128), {"bwd_split": "kv_rows"}) == "unordered"
    with pytest.raises(ValueError, match="bwd_nondet_order"):
        generate.bwd_nondet_order((256, 256), {"bwd_split": "kv_cols", "bwd_nondet_order": "sometimes"})


@pytest.mark.parametrize("key,default", [
    ("bwd_det_band_walk_steps", 64), ("bwd_nondet_band_walk_steps", 0), ("bwd_nondet_full_walk_steps", 0),
    ("bwd_band_min_parts", 1), ("bwd_det_full_walk_steps", 512),
])
def test_backward_split_traits_come_from_the_trait_table(key, default):
    """The query-head group split's per-head-dim knobs: the generated Python table (pairs' values
    other than the default), the C++ header's GroupSplitTraits (every pair's) and the library's
    capabilities (where built) give each pair's value; values below the knob's floor are refused."""
    generate = _generate()
    traits = _traits()
    field = key.removeprefix("bwd_")
    values = {p: t.get(key, default) for p, t in traits.HEAD_DIMS.items() if "bwd" in t}
    assert {p: v[field] for p, v in generate.group_split_values().items()} == values
    assert generated_traits.GROUP_SPLIT_DEFAULTS[field] == default
    assert {p: v[field] for p, v in generated_traits.GROUP_SPLIT_TRAITS.items() if field in v} == \
        {p: v for p, v in values.items() if v != default}
    header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    fields = re.findall(r"^  int (\w+);$", header.split("struct GroupSplitTraits {")[1].split("};")[0], re.M)
    assert fields == list(generated_traits.GROUP_SPLIT_DEFAULTS)
    body = header.split("constexpr GroupSplitTraits group_split_traits")[1].split("\n}\n")[0]
    column = fields.index(field)
    found = {(int(a), int(b)): int(re.findall(r"=\*/(\d+)", init)[column]) for a, b, init in
             re.findall(r"head_dim == (\d+) && head_dim_v == (\d+)\) \{ return GroupSplitTraits(\{[^}]*\})", body)}
    assert found == values
    fallback = re.search(r"\n  return GroupSplitTraits(\{[^}]*\});", body).group(1)
    assert int(re.findall(r"=\*/(\d+)", fallback)[column]) == default
    if _library.LOADED:
        from dash import capabilities
        caps = capabilities.capabilities()["traits"][key]
        assert caps == {generated_traits.head_dim_name(*p): v for p, v in values.items()}
    table = generate.traits.HEAD_DIMS
    original = dict(table[(128, 128)])
    try:
        table[(128, 128)] = {**original, key: -1}
        with pytest.raises(ValueError, match=key):
            generate.group_split_values()
    finally:
        table[(128, 128)] = original


def test_group_split_mirror_has_the_generated_fields():
    """dash.schedule.GroupSplitTraits mirrors the generated struct field for field, defaults
    included."""
    import dataclasses
    from dash.schedule import GroupSplitTraits
    fields = {f.name: f.default for f in dataclasses.fields(GroupSplitTraits)}
    assert fields == generated_traits.GROUP_SPLIT_DEFAULTS


def _bwd_dq_cols(pair, t, tile):
    """The backward dQ GEMM's N a warpgroup, worked out here from the tile and the warpgroups (two
    row groups where the tile has 128 query rows): what bwd/config.h's kDqCols says."""
    warpgroups = t.get("bwd_warpgroups", 2)
    return pair[0] * (2 if tile[0] >= 128 else 1) // warpgroups


def test_units_compile_with_every_wgmma_width():
    """The forward's GEMMs are one WGMMA instruction as wide as S's keys and O's d_v, the
    backward's dQ GEMM as wide as a warpgroup's share of the head dim (three 16-wide instructions at
    hdim 96 read dS three times: bench/RESULTS.md item 291), and past the KV-row split its S / dP and
    dK^T / dV^T GEMMs as wide as their keys. CuTe has some of those widths only in its
    extended shapes, whose headers cost a unit most of its compile time (item 119): no unit defines
    them, and generated/wgmma_wide.h has an SS instruction, per dtype, for exactly those widths
    outside CuTe's base ones."""
    units = sorted((GENERATE.parent).glob("*.cu"))
    assert units
    for unit in units:
        assert "CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED" not in unit.read_text(), unit.name
    generate = _generate()
    base_n = set(generate.WGMMA_BASE_N)
    table = _traits()
    dq_cols = {_bwd_dq_cols(p, t, tile) for p, t in table.HEAD_DIMS.items() if "bwd" in t
               for tile in (t["bwd"], t.get("bwd_softcap", {}).get("tile", t["bwd"]))}
    assert 48 in dq_cols, "hdim 96's dQ share is the width this test guards"
    assert dq_cols == {generate.bwd_dq_cols(p, t, tile) for p, t in table.HEAD_DIMS.items() if "bwd" in t
                       for tile in (t["bwd"], generate.bwd_softcap(p, t)["tile"])}
    # bwd/config.h takes its kDqCols from the generated bwd_dq_cols(), one line per backward pair (and per
    # pair whose softcap tile differs).
    traits_header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    body = traits_header.split("constexpr int bwd_dq_cols")[1].split("\n}\n")[0]
    plain = {(int(a), int(b)): int(n) for a, b, n in
             re.findall(r"  if \(head_dim == (\d+) && head_dim_v == (\d+)\) \{ return (\d+); \}", body)}
    assert plain == {p: _bwd_dq_cols(p, t, t["bwd"]) for p, t in table.HEAD_DIMS.items() if "bwd" in t}
    capped = {(int(a), int(b)): int(n) for a, b, n in
              re.findall(r"if \(softcap && head_dim == (\d+) && head_dim_v == (\d+)\) \{ return (\d+); \}", body)}
    assert capped == {p: _bwd_dq_cols(p, t, t["bwd_softcap"]["tile"]) for p, t in table.HEAD_DIMS.items()
                      if "bwd" in t and "tile" in t.get("bwd_softcap", {})}
    # Past the KV-row split by columns (kv_cols): S / dP take a warpgroup's keys, dK^T / dV^T every key of the
    # tile (or a warpgroup's); 256's 64 x 80 tile needs 40 and 80.
    kv_cols = {n for t in table.HEAD_DIMS.values() if t.get("bwd_split") == "kv_cols"
               for tile in (t["bwd"], t.get("bwd_softcap", {}).get("tile", t["bwd"]))
               for n in (tile[1] // t.get("bwd_warpgroups", 2), tile[1])}
    assert {40, 80} <= kv_cols, "256's kv_cols widths are what this test guards"
    wide = ({t["fwd"][1] for t in table.HEAD_DIMS.values()} |
            {t["fwd_short"]["tile"][1] for t in table.HEAD_DIMS.values() if "fwd_short" in t} | dq_cols | kv_cols) - base_n
    assert wide and all(v in base_n for _, v in table.HEAD_DIMS), "the P V GEMM has no generated instructions"
    header = (ROOT / "csrc" / "generated" / "wgmma_wide.h").read_text()
    found = set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.(\w+)\.\w+ ", header))
    assert found == {(str(n), d[3]) for n in wide for d in table.DTYPES.values()}
    assert len(re.findall(r"struct WideSsWgmma<", header)) == len(found)
    assert all(t["fwd"][1] % 16 == 0 for t in _traits().HEAD_DIMS.values()), "block_n is the P V GEMM's K"


def test_wgmma_base_widths_match_cutlass():
    """generate.py's WGMMA_BASE_N is the set of N's CuTe's SS selector tries without the extended
    shapes (read from the CUTLASS headers the build uses)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import cutlass_locator
        include = cutlass_locator.find_cutlass_include(ROOT)
    except Exception as err:  # noqa: BLE001 - no headers: nothing to compare against
        pytest.skip(f"CUTLASS headers not found: {err}")
    finally:
        sys.path.remove(str(ROOT / "tools"))
    text = (include / "cute" / "arch" / "mma_sm90.hpp").read_text()
    selector = text[text.index("ss_op_selector"):]
    selector = selector[:selector.index("static_assert(Tile_N % 8 == 0")]
    base, extended_only = set(), False
    for line in selector.splitlines():
        if "CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED" in line:
            extended_only = True
            continue
        match = re.search(r"Tile_N % (\d+) == 0", line)
        if match:
            if not extended_only:
                base.add(int(match.group(1)))
            extended_only = False
    assert base == set(_generate().WGMMA_BASE_N)



def test_backward_dq_slices_cut_the_dq_share_into_instructions():
    """"bwd_dq_slices": a warpgroup's dQ share issued as that many instructions into one slice's accumulator
    registers (256 on 64 x 80 tiles, where dK^T and dV^T hold 160 registers a thread). Each slice must be a
    WGMMA width (a multiple of 8) and the slices run over every key (not with "bwd_dq_wait": "by_keys"). The
    generated header returns the count for exactly the pairs with more than one, and the capabilities JSON
    reports every pair's."""
    generate = _generate()
    traits = _traits()
    kv_cols_256 = {"bwd": (64, 80), "bwd_split": "kv_cols", "bwd_warpgroups": 2}
    assert generate.bwd_dq_slices((256, 256), kv_cols_256) == 1
    assert generate.bwd_dq_slices((256, 256), {**kv_cols_256, "bwd_dq_slices": 2}) == 2
    for bad in ({**kv_cols_256, "bwd_dq_slices": 0}, {**kv_cols_256, "bwd_dq_slices": 3},
                {**kv_cols_256, "bwd_dq_slices": 32},
                {"bwd": (64, 128), "bwd_split": "kv_rows", "bwd_dq_wait": "by_keys", "bwd_dq_slices": 2}):
        with pytest.raises(ValueError, match="bwd_dq_slices"):
            generate.bwd_dq_slices((256, 256) if "kv_cols" in bad.values() else (128, 128), bad)
    header = (ROOT / "csrc" / "generated" / "kernel_traits.h").read_text()
    body = header.split("constexpr int bwd_dq_slices")[1].split("\n}\n")[0]
    cases = {(int(a), int(b)): int(n) for a, b, n in
             re.findall(r"if \(head_dim == (\d+) && head_dim_v == (\d+)\) \{ return (\d+); \}", body)}
    assert cases == {p: generate.bwd_dq_slices(p, t) for p, t in traits.HEAD_DIMS.items()
                     if "bwd" in t and generate.bwd_dq_slices(p, t) != 1}
    assert cases, "no pair exercises bwd_dq_slices"
    if _library.LOADED:
        from dash import capabilities
        caps = capabilities.capabilities()["traits"]
        assert caps["bwd_dq_slices"] == {generated_traits.head_dim_name(*p): generate.bwd_dq_slices(p, t)
                                         for p, t in traits.HEAD_DIMS.items() if "bwd" in t}
