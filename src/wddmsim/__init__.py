"""wddmsim: an executable model of how Windows submits work to a GPU (WDDM).

The public Python API is :mod:`wddmsim.api` (docs/api.md); its names are also reachable from the
package itself (``wddmsim.run``, ``wddmsim.load``, ...), imported on first use so that importing
the package (the command line, the pytest plugin) costs nothing. Every other module is internal:
its names may change without notice.
"""

__version__ = "0.1.0"

from . import _native

# The modules compiled with mypyc, or their interpreted sources under WDDMSIM_PURE=1 (wddmsim._native).
_native.install()

from .publicnames import API_NAMES

#: The public names, all from :mod:`wddmsim.api`.
__all__ = sorted(["__version__", *API_NAMES])


def __getattr__(name: str):
    """The public names of :mod:`wddmsim.api`, imported when first asked for (PEP 562)."""
    if name in __all__ and name != "__version__":
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'wddmsim' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
