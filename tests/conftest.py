"""Shared fixtures. GPU tests carry the `hopper` marker's skip reason when there is no
sm90 GPU or the op library is not built, so a CPU-only run shows why they did not run."""
import pytest
import torch

import dash


def hopper_skip_reason():
    if not dash.library_loaded:
        return "dash op library not built (run 'make build')"
    if not torch.cuda.is_available():
        return "no CUDA GPU on this machine: the kernels need an sm90 (Hopper) GPU"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) != (9, 0):
        return f"GPU is sm_{major}{minor}; the kernels need sm_90 (Hopper)"
    return None


_REASON = hopper_skip_reason()
requires_hopper = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")
requires_library = pytest.mark.skipif(not dash.library_loaded,
                                      reason="dash op library not built (run 'make build')")


@pytest.fixture
def deterministic_algorithms():
    """Sets torch.use_deterministic_algorithms for one test and restores it."""
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    try:
        yield lambda mode: torch.use_deterministic_algorithms(mode)
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
