"""wddmsim: an executable model of how Windows submits work to a GPU (WDDM)."""
__version__ = "0.1.0"
