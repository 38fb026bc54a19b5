"""a0-org-kernel: an executive officer (XO) for Agent-Zero.

The package holds all logic; the files under ``extensions/`` only hand Agent-Zero's
objects to :mod:`org.a0.hooks`.
"""

__version__ = "0.1.0"
