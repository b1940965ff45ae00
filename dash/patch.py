"""Make `import flash_attn_interface` resolve to dash's drop-in module."""
from __future__ import annotations

import sys
import types

MODULE_NAME = "flash_attn_interface"


def patch_flash_attn_interface() -> types.ModuleType:
    """Install dash.flash_attn_interface as sys.modules["flash_attn_interface"].

    Afterwards `import flash_attn_interface` and `from flash_attn_interface import
    flash_attn_func` give dash's functions (whether or not FlashAttention-3 is installed).
    Call it before the code that imports flash_attn_interface: names that code bound
    earlier keep pointing where they pointed. Calling it again changes nothing. Returns
    the module.
    """
    from . import flash_attn_interface as module

    sys.modules[MODULE_NAME] = module
    return module
