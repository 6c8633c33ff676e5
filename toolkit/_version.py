"""The package's version, in one place.

Setuptools reads it for the distribution's metadata (``[tool.setuptools.dynamic]`` in
pyproject.toml) and ``toolkit.__version__`` is this string.

It imports nothing, so reading it costs nothing and works from a source tree as from a wheel.
"""

__version__ = "0.1.0"
