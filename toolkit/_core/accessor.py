"""The ``df.toolkit`` accessor: a frame from any function draws itself with the right helper.

``df.toolkit.plot(...)`` and ``df.toolkit.explore(...)`` look up ``df.attrs["operation"]`` (set by
every function) and call the :mod:`toolkit.plot` or :mod:`toolkit.explore` helper that the
operation's record names (:mod:`toolkit._core.registry`) with the frame and the given arguments.
The accessor is registered on pandas when the first toolkit frame is built, if the ``plot``
extra (matplotlib) is installed; ``import toolkit`` registers nothing.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.registry import find, helper, records

if TYPE_CHECKING:  # the plot and maps extras are imported when a frame draws itself
    import folium
    from matplotlib.axes import Axes

__all__ = ["ToolkitAccessor", "register"]

_registered = False
_lock = threading.Lock()


class ToolkitAccessor:
    """``df.toolkit``: pictures and maps chosen by the operation that made the frame."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    @property
    def operation(self) -> str | None:
        """The public function that made the frame (``df.attrs["operation"]``)."""
        value = self._frame.attrs.get("operation")
        return value if isinstance(value, str) else None

    def _call(self, kind: str, what: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # a frame read back from a file may come from an operation whose module is not imported
        # yet: records() imports the operations' modules
        record = find(self.operation) or records().get(self.operation or "")
        name = getattr(record, kind) if record is not None else None
        if name is None:
            known = ", ".join(n for n, r in records().items() if getattr(r, kind))
            raise ValidationError("df.attrs['operation']", self.operation,
                                  f"has no {what}; frames that have one come from {known}")
        function = helper(kind, name)
        if record is not None and record.input_first:
            if not args:
                raise ValidationError("args", (), f"{name} needs the points as recorded first: "
                                      f"df.toolkit.{kind}(raw)")
            return function(args[0], self._frame, *args[1:], **kwargs)
        return function(self._frame, *args, **kwargs)

    def plot(self, *args: Any, **kwargs: Any) -> Axes:
        """Draw the frame with its :mod:`toolkit.plot` helper; returns the matplotlib Axes."""
        # the registry holds helpers by name, untyped: every plot helper returns an Axes
        return cast("Axes", self._call("plot", "plot helper", args, kwargs))

    def explore(self, *args: Any, **kwargs: Any) -> folium.Map:
        """Show the frame on an interactive map (:mod:`toolkit.explore`); returns the map."""
        # every explore helper returns a folium.Map
        return cast("folium.Map", self._call("explore", "explore map", args, kwargs))


def register() -> bool:
    """Register ``df.toolkit`` on pandas once, when matplotlib (the ``plot`` extra) is installed.

    Returns whether it is registered.
    """
    global _registered
    if _registered:
        return True
    with _lock:
        if _registered:
            return True
        if importlib.util.find_spec("matplotlib") is None:
            return False
        if "toolkit" not in getattr(pd.DataFrame, "_accessors", set()):
            pd.api.extensions.register_dataframe_accessor("toolkit")(ToolkitAccessor)
        _registered = True
        return True
