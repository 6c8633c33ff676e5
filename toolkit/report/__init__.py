"""Reports: the curated notebooks run as reports of your own cloud (``python -m toolkit.report``).

:mod:`toolkit.report.run` executes notebooks with their parameters (papermill) and
:mod:`toolkit.report.pages` writes each as a light, offline HTML page; both need the ``report``
extra (part of ``notebook``).
"""

from __future__ import annotations

__all__: list[str] = []
