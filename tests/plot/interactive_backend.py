"""A matplotlib backend that, like IPython's inline backend, turns interactive mode on when it
loads (used by tests/plot/test_style.py)."""

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg as FigureCanvas

__all__ = ["FigureCanvas"]

matplotlib.interactive(True)
