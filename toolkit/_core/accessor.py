"""The ``df.toolkit`` accessor: a frame from any function draws itself with the right helper.

``df.toolkit.plot(...)`` and ``df.toolkit.explore(...)`` look up ``df.attrs["operation"]`` (set by
every function) and call the matching :mod:`toolkit.plot` or :mod:`toolkit.explore` helper with the
frame and the given arguments. The accessor is registered on pandas when the first toolkit frame
is built, if the ``plot`` extra (matplotlib) is installed; ``import toolkit`` registers nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from typing import Any

import pandas as pd

from toolkit._core.errors import ValidationError

__all__ = ["EXPLORERS", "PLOTTERS", "ToolkitAccessor", "register"]

#: operation -> plot helper (``module:function``); ``*`` marks helpers taking another input
#: before the frame (``snapped_trace(raw, snapped)``).
PLOTTERS = {
    "backend_health": "toolkit.plot:backend_health",
    "policy_states": "toolkit.plot:compliance_by",
    "compliance_summary": "toolkit.plot:compliance_by",
    "compliance_trend": "toolkit.plot:compliance_trend",
    "encryption_protector": "toolkit.plot:encryption_posture",
    "update_encryption_protector": "toolkit.plot:encryption_posture",
    "authentication_strength_usage": "toolkit.plot:authentication_strength_usage",
    "authentication_strength_audit": "toolkit.plot:authentication_strength_usage",
    "route_directions": "toolkit.plot:routes",
    "snap_to_roads": "*toolkit.plot:snapped_trace",
    "traffic_incidents": "toolkit.plot:incidents",
    "air_quality": "toolkit.plot:air_quality_map",
    "air_quality_forecast": "toolkit.plot:air_quality_forecast",
    "air_quality_pollutants": "toolkit.plot:pollutants",
    "severe_weather_alerts": "toolkit.plot:alert_timeline",
}
#: operation -> interactive map helper.
EXPLORERS = {
    "route_directions": "toolkit.explore:routes",
    "snap_to_roads": "*toolkit.explore:snapped_trace",
    "traffic_incidents": "toolkit.explore:incidents",
    "autocomplete": "toolkit.explore:suggestions",
    "air_quality": "toolkit.explore:air_quality",
    "air_quality_forecast": "toolkit.explore:air_quality",
    "severe_weather_alerts": "toolkit.explore:alerts",
}

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

    def _call(self, table: dict[str, str], kind: str, args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Any:
        target = table.get(self.operation or "")
        if target is None:
            known = ", ".join(sorted(table))
            raise ValidationError("df.attrs['operation']", self.operation,
                                  f"has no {kind}; frames that have one come from {known}")
        before = target.startswith("*")
        module, _, name = target.lstrip("*").partition(":")
        helper = getattr(importlib.import_module(module), name)
        if before:
            if not args:
                raise ValidationError("args", (), f"{name} needs the points as recorded first: "
                                      f"df.toolkit.{kind.split()[0]}(raw)")
            return helper(args[0], self._frame, *args[1:], **kwargs)
        return helper(self._frame, *args, **kwargs)

    def plot(self, *args: Any, **kwargs: Any) -> Any:
        """Draw the frame with its :mod:`toolkit.plot` helper; returns the matplotlib Axes."""
        return self._call(PLOTTERS, "plot helper", args, kwargs)

    def explore(self, *args: Any, **kwargs: Any) -> Any:
        """Show the frame on an interactive map (:mod:`toolkit.explore`); returns the map."""
        return self._call(EXPLORERS, "explore map", args, kwargs)


def register() -> bool:
    """Register ``df.toolkit`` on pandas once, when matplotlib (the ``plot`` extra) is
    installed; whether it is registered."""
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
