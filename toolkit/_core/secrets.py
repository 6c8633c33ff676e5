"""The masked value type for credentials.

A :class:`Secret` holds a credential value (token, key, password, kubeconfig). Every way of showing
it (``repr``, ``str``, ``format``, HTML, pickling into a frame export, logging) shows a mask; only
:meth:`Secret.reveal` gives the value back. Every secret value ever wrapped is also registered
with :func:`redact`, which the toolkit's log handler, warnings and error texts use as a last line
of defence.

Log records are masked by :class:`RedactingHandler`, a handler that shows nothing and masks the
record in place. It sits on the ``toolkit`` logger (and, once a connection is made, on the
``azure`` and ``urllib3`` loggers), so every record of their child loggers is masked before it
reaches any handler further up (the application's, pytest's, a notebook's).
"""

from __future__ import annotations

import hmac
import logging
import os
import stat
import threading
import weakref
from typing import IO, Any

__all__ = ["MASK", "RedactingFilter", "RedactingHandler", "Secret", "install_log_redaction",
           "open_private", "redact", "redact_value", "reveal"]

MASK = "••••••••"

_registry_lock = threading.Lock()
_registry: weakref.WeakValueDictionary[int, Secret] = weakref.WeakValueDictionary()
#: Secrets registered so far: with the registry's size, says when the values to look for change.
_registered = 0
#: The values :func:`redact` looks for, and the ``(_registered, len(_registry))`` they were read at.
_values: tuple[tuple[int, int], tuple[str, ...]] = ((0, 0), ())


class Secret:
    """A credential value that never shows itself.

    Parameters
    ----------
    value : str or bytes
        The secret.
    label : str, optional
        What the secret is ("token", "password", "kubeconfig"...), shown next to the mask.

    Examples
    --------
    >>> s = Secret("hunter2", label="password")
    >>> s
    Secret(password: ••••••••)
    >>> s.reveal()
    'hunter2'
    """

    __slots__ = ("__weakref__", "_label", "_value")
    _value: str | bytes
    _label: str

    def __init__(self, value: str | bytes, label: str = "secret") -> None:
        if isinstance(value, Secret):
            value = value.reveal()
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_label", label)
        if value:
            global _registered
            with _registry_lock:
                _registry[id(self)] = self
                _registered += 1

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Secret is immutable")

    def reveal(self) -> str | bytes:
        """Return the secret value. The only way to get it out."""
        return self._value

    @property
    def label(self) -> str:
        """What the secret is."""
        return self._label

    def __repr__(self) -> str:
        return f"Secret({self._label}: {MASK})"

    def __str__(self) -> str:
        return MASK

    def __format__(self, spec: str) -> str:
        return format(MASK, spec)

    def _repr_html_(self) -> str:
        return f"<code>{MASK}</code>"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Secret):
            a, b = self._value, other._value
        else:
            return NotImplemented
        if isinstance(a, str):
            a = a.encode()
        if isinstance(b, str):
            b = b.encode()
        return hmac.compare_digest(a, b)

    def __hash__(self) -> int:
        return hash((Secret, self._label))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __len__(self) -> int:
        return len(self._value)

    # pandas and json exporters fall back on these; all of them show the mask.
    def __reduce__(self) -> Any:
        return (str, (MASK,))

    def toDict(self) -> str:
        return MASK

    def __getstate__(self) -> str:
        return MASK


def reveal(value: Any) -> Any:
    """Return ``value.reveal()`` for a Secret, and any other value unchanged."""
    return value.reveal() if isinstance(value, Secret) else value


def _live_values() -> tuple[str, ...]:
    """Give the values of the live secrets, longest first.

    They are read again only when a secret was made or has gone: every log record and error
    text is redacted, and the registry is not walked for each one.
    """
    global _values
    with _registry_lock:
        state = (_registered, len(_registry))
        if _values[0] == state:
            return _values[1]
        secrets = list(_registry.values())
    out = []
    for s in secrets:
        v = s.reveal()
        if isinstance(v, bytes):
            try:
                v = v.decode()
            except UnicodeDecodeError:
                continue
        if len(v) >= 6:
            out.append(v)
    values = tuple(sorted(set(out), key=len, reverse=True))
    with _registry_lock:
        _values = (state, values)
    return values


def redact(text: str) -> str:
    """Replace every live secret value that occurs in ``text`` with the mask."""
    if not text:
        return text
    for value in _live_values():
        if value in text:
            text = text.replace(value, MASK)
    return text


def redact_value(value: Any, _depth: int = 0) -> Any:
    """:func:`redact` applied to every string inside lists, tuples and dicts (error details)."""
    if isinstance(value, str):
        return redact(value)
    if _depth > 20:
        return value
    if isinstance(value, dict):
        return {redact_value(k, _depth + 1): redact_value(v, _depth + 1)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v, _depth + 1) for v in value)
    return value


def _mask_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a record whose args do not format is left alone
        return
    cleaned = redact(message)
    if cleaned != message:
        record.msg = cleaned
        record.args = None
    if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
        text = logging.Formatter().formatException(record.exc_info)
        cleaned = redact(text)
        if cleaned != text:
            record.exc_text = cleaned
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


class RedactingFilter(logging.Filter):
    """A logging filter that masks any live secret value in a record's message."""

    def filter(self, record: logging.LogRecord) -> bool:
        _mask_record(record)
        return True


class RedactingHandler(logging.Handler):
    """A handler that emits nothing and masks each record it sees in place.

    On a logger, it sees the records of the logger's whole subtree before the handlers of any
    ancestor (propagation walks up from the emitting logger), so those handlers get the masked
    record.
    """

    def handle(self, record: logging.LogRecord) -> Any:
        _mask_record(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:  # pragma: no cover - never called
        pass


_install_lock = threading.Lock()


def install_log_redaction(*names: str) -> None:
    """Put a :class:`RedactingHandler` first on each named logger (once)."""
    with _install_lock:
        for name in names:
            log = logging.getLogger(name)
            if not any(isinstance(h, RedactingHandler) for h in log.handlers):
                log.handlers.insert(0, RedactingHandler())


def open_private(path: str | os.PathLike[str], *, overwrite: bool = True) -> IO[bytes]:
    """Open a file for writing secrets, readable and writable by its owner only.

    Created with mode 0600 (also when it existed with a wider mode), so no other user can read it at
    any moment.

    Raises
    ------
    FileExistsError
        The file exists and ``overwrite`` is False.
    """
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if overwrite else os.O_EXCL)
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, stat.S_IRUSR | stat.S_IWUSR)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise
