"""reportgen: repeated eval runs in, a static reliability report out."""

__version__ = "0.1.0"
