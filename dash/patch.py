"""Make `import flash_attn_interface` (and `flash_attn_3.flash_attn_interface`) resolve to
dash's drop-in module."""
from __future__ import annotations

import sys
import types

MODULE_NAME = "flash_attn_interface"
PACKAGE_NAME = "flash_attn_3"


def patch_flash_attn_interface() -> types.ModuleType:
    """Install dash.flash_attn_interface as sys.modules["flash_attn_interface"] and as
    sys.modules["flash_attn_3.flash_attn_interface"] (Megatron imports the latter for the
    private entry points).

    Afterwards `import flash_attn_interface`, `from flash_attn_interface import
    flash_attn_func` and `from flash_attn_3.flash_attn_interface import _flash_attn_forward`
    give dash's functions (whether or not FlashAttention-3 is installed; an imported
    `flash_attn_3` package keeps its other contents, a missing one is stood in for by an
    empty package). Call it before the code that imports them: names that code bound
    earlier keep pointing where they pointed. Calling it again changes nothing. Returns the
    module.
    """
    from . import flash_attn_interface as module

    sys.modules[MODULE_NAME] = module
    package = sys.modules.get(PACKAGE_NAME)
    if package is None:
        package = types.ModuleType(PACKAGE_NAME, "stand-in for FlashAttention-3's package (dash)")
        package.__path__ = []  # a package: submodules resolve through sys.modules
        sys.modules[PACKAGE_NAME] = package
    sys.modules[f"{PACKAGE_NAME}.{MODULE_NAME}"] = module
    setattr(package, MODULE_NAME, module)
    return module
