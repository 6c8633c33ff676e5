"""A body read within its caps: at most ``max_body_bytes`` and within ``request_deadline``.

The body is counted after decompression (gzip is asked for and decoded here, so a gzip bomb stops
at the cap having inflated no more than it) and read within the attempt's deadline however slowly
it arrives; either cap broken raises :class:`~toolkit._core.errors.ResponseLimitError`, which is
not retried. Bodies are read in large reads (a body of declared length straight into one buffer
of its size), and the start of a success body can be handed to a watcher while the rest still
streams (:data:`head_watch`).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import requests

from toolkit._core.deadlines import deadlines
from toolkit._core.errors import ProtocolError, ResponseLimitError
from toolkit._core.transport import attempt_end, guarded_pools, proxies_for
from toolkit._core.urls import short

logger = logging.getLogger(__name__)

__all__ = ["BoundedBodyAdapter", "head_watch"]

#: ``head -> done``: called with the start of a success body (decoded) while it still streams,
#: until it answers True (set by :meth:`~toolkit._core.pipeline.Pipeline.send` for its own
#: thread's request).
head_watch = threading.local()

#: The largest single read of a body.
_READ_BLOCK = 1 << 20

#: The most of a body's start handed to a head watcher.
_HEAD_BYTES = 64 * 1024

#: The most compressed bytes held before they are inflated (inflated in one call, a body comes
#: out in one piece, with no join).
_INFLATE_BATCH = 1 << 20


class _BodyDecoder:
    """Decode a Content-Encoding without ever passing a byte budget.

    A gzip bomb stops at the cap, having inflated no more than it.

    Parameters
    ----------
    encoding : str
        The answer's Content-Encoding (``gzip``, ``deflate``, ``identity`` or none).

    Raises
    ------
    ProtocolError
        An encoding the toolkit did not ask for.
    """

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        if encoding in ("gzip", "x-gzip"):
            self._z: Any = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._z = None  # zlib or raw deflate: decided on the first bytes
        elif encoding in ("", "identity"):
            self._z = False
        else:
            raise ProtocolError(f"the service sent a body encoded as {encoding!r}, which the "
                                "toolkit did not ask for")

    def feed(self, data: bytes, budget: int) -> bytes:
        """Decode ``data``, at most ``budget + 1`` bytes of it (enough to tell the cap is passed).

        Parameters
        ----------
        data : bytes
            Bytes as they came.
        budget : int
            How many decoded bytes are still allowed.

        Returns
        -------
        bytes
            The decoded bytes.
        """
        if self._z is False:
            return data
        if self._z is None:
            wbits = zlib.MAX_WBITS if data[:1] and (data[0] & 0x0F) == 8 else -zlib.MAX_WBITS
            self._z = zlib.decompressobj(wbits)
        out: list[bytes] = []
        size = 0
        pending = data
        while True:
            try:
                chunk = self._z.decompress(pending, budget + 1 - size)
            except zlib.error as err:
                raise requests.exceptions.ContentDecodingError(err) from err
            out.append(chunk)
            size += len(chunk)
            pending = self._z.unconsumed_tail
            if not pending or size > budget:
                return out[0] if len(out) == 1 else b"".join(out)


class BoundedBodyAdapter(requests.adapters.HTTPAdapter):
    """A requests adapter that reads a body in large reads, within the caps.

    A body that is not streamed is read in large reads (pages of several megabytes arrive
    several times faster than in requests' 10 kB chunks; a body of declared length goes straight
    into one buffer of its size), within the caps: at most ``max_body`` bytes after
    decompression, and the whole attempt within ``deadline`` seconds however slowly the bytes
    drip. Read errors map to the exceptions requests itself raises, so azure-core's retries see
    the same failures; a broken cap raises ResponseLimitError, which is not retried.

    Parameters
    ----------
    max_body : int
        The most bytes a body may have, after decompression.
    deadline : float
        Seconds an attempt may take, from sending to the body's last byte.
    read_timeout : float
        Seconds a single read may wait.
    **kw
        HTTPAdapter's own arguments.
    """

    def __init__(self, *, max_body: int, deadline: float, read_timeout: float,
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.max_body = max_body
        self.deadline = deadline
        self.read_timeout = read_timeout

    def init_poolmanager(self, *args: Any, **kw: Any) -> None:
        super().init_poolmanager(*args, **kw)
        self.poolmanager.pool_classes_by_scheme = guarded_pools()

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: Any = None, verify: bool | str = True, cert: Any = None,
             proxies: Mapping[str, str] | None = None) -> requests.Response:
        proxies = proxies_for(request, proxies)  # no credential in clear through a proxy
        started = time.monotonic()
        attempt_end.value = started + self.deadline
        try:
            response = super().send(request, stream=True, timeout=timeout, verify=verify,
                                    cert=cert, proxies=proxies)
        finally:
            attempt_end.value = None
        if stream:
            return response
        response._content = self._read(response, started)
        # what requests itself records once a body is read
        setattr(response, "_content_consumed", True)  # noqa: B010
        return response

    def _over_deadline(self, response: Any) -> ResponseLimitError:
        response.close()
        return ResponseLimitError(
            f"the answer took more than request_deadline={self.deadline:g} s; stopped reading "
            "it. A slow or stalled server; try again, or raise request_deadline in "
            "toolkit.connect() for a very slow network.", limit="request_deadline",
            url=short(response.url), status=response.status_code)

    def _too_large(self, response: Any, size: str) -> ResponseLimitError:
        response.close()
        return ResponseLimitError(
            f"the answer is larger than max_body_bytes={self.max_body} ({size}); not read. "
            "Ask for less (max_items, top, select) or raise max_body_bytes in "
            "toolkit.connect() if the service really sends pages this large.",
            limit="max_body_bytes", url=short(response.url), status=response.status_code)

    def _read(self, response: Any, started: float) -> bytes:
        import urllib3.exceptions as u3

        end = started + self.deadline
        if time.monotonic() > end:
            raise self._over_deadline(response)
        declared = (response.headers.get("Content-Length") or "").strip()
        encoding = (response.headers.get("Content-Encoding") or "").strip().lower()
        if declared.isdigit() and int(declared) > self.max_body and not encoding:
            raise self._too_large(response, f"{int(declared)} bytes declared")
        try:
            decoder = _BodyDecoder(encoding)
        except ProtocolError:
            response.close()
            raise
        raw = response.raw
        watch = (getattr(head_watch, "value", None) if 200 <= response.status_code < 300
                 else None)
        try:
            if declared.isdigit() and decoder.encoding in ("", "identity") \
                    and _has_body(response) and _exact_reads(raw):
                return self._read_exact(response, int(declared), end, watch)
            return self._read_chunks(response, decoder, end, watch)
        except u3.ProtocolError as err:
            raise requests.exceptions.ChunkedEncodingError(err) from err
        except u3.DecodeError as err:
            raise requests.exceptions.ContentDecodingError(err) from err
        except u3.ReadTimeoutError as err:
            raise requests.exceptions.ConnectionError(err) from err
        except u3.SSLError as err:
            raise requests.exceptions.SSLError(err) from err

    def _left(self, response: Any, end: float) -> None:
        """Raise when the attempt is past its deadline; else bound the socket's wait by it.

        The socket's timeout is set to at most the time left, while the connection is still
        this answer's (once complete it goes back to the pool, where another thread may take it).
        """
        left = end - time.monotonic()
        if left <= 0:
            raise self._over_deadline(response)
        raw = response.raw
        conn = getattr(raw, "connection", None)
        sock = getattr(conn, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.settimeout(max(0.001, min(self.read_timeout, left)))

    def _timed_out(self, response: Any, end: float) -> ResponseLimitError | None:
        return self._over_deadline(response) if time.monotonic() >= end else None

    def _read_exact(self, response: Any, size: int, end: float,
                    watch: Callable[[bytes], bool] | None) -> bytes:
        """Read a body of a declared length into one ``bytes`` of that size.

        No chunk is copied again and no buffer grows (fresh pages of memory cost more than the
        copy itself on many machines). The reads are bounded by the socket's timeout each, and
        all together by the attempt's deadline, at which the socket is shut down.
        """
        import urllib3.exceptions as u3

        raw = response.raw
        sock = getattr(getattr(raw, "connection", None), "sock", None)
        expired = threading.Event()
        reading = threading.Lock()  # held while this answer owns the socket

        def expire() -> None:
            with reading:
                if done:
                    return
                expired.set()
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)

        done = False
        self._left(response, end)
        key = deadlines().arm(end, expire)
        try:
            head = b""
            peek = getattr(raw._fp, "peek", None)
            if watch is not None and size and peek is not None:
                # the head as it sits in the reader's buffer (not taken from it, so the body
                # is still read into one buffer below); more of it only if the watcher needs it
                with raw._error_catcher():
                    watch = _watched(watch, peek(1)[:size])
            while watch is not None and len(head) < size:  # the head as it comes, for it
                data = raw.read1(min(_HEAD_BYTES, size) - len(head), decode_content=False)
                if not data:
                    break
                head += data
                watch = _watched(watch, head)
            with raw._error_catcher():
                # (read even when nothing is left: reading closes the answer, so that its
                # connection can serve the next request)
                rest: bytes = raw._fp.read(size - len(head))
                with reading:  # the connection may go back to the pool once this block ends
                    done = True
                if len(head) + len(rest) < size:  # closed before the declared length
                    raise u3.IncompleteRead(len(head) + len(rest), size - len(head) - len(rest))
        except (u3.HTTPError, OSError):
            if expired.is_set():
                raise self._over_deadline(response) from None
            raise
        finally:
            deadlines().disarm(key)
        # (a deadline that came as the last bytes did shut the socket: the pool finds it
        # dropped before it serves another request)
        raw.release_conn()  # done already when the last read closed the answer
        return head + rest if head else rest

    def _read_chunks(self, response: Any, decoder: _BodyDecoder, end: float,
                     watch: Callable[[bytes], bool] | None) -> bytes:
        """Read a body of unknown length (chunked, or compressed), decoded in large reads.

        The reads are joined once at the end. Compressed reads no watcher waits for are held
        (up to :data:`_INFLATE_BATCH` bytes) and inflated together, within the same cap.
        """
        import urllib3.exceptions as u3

        raw = response.raw
        parts: list[bytes] = []
        size = 0
        held: list[bytes] = []
        held_size = 0
        while True:
            self._left(response, end)
            try:
                data = raw.read1(_READ_BLOCK, decode_content=False)
            except u3.ReadTimeoutError:
                late = self._timed_out(response, end)
                if late is not None:
                    raise late from None
                raise
            if data and watch is None and decoder.encoding not in ("", "identity") \
                    and held_size + len(data) < _INFLATE_BATCH:
                held.append(data)
                held_size += len(data)
                continue
            if held:
                held.append(data)
                data = b"".join(held)
                held.clear()
                held_size = 0
            if not data:
                break
            data = decoder.feed(data, self.max_body - size)
            size += len(data)
            if size > self.max_body:
                raise self._too_large(response, "after decompression"
                                      if decoder.encoding else "read so far")
            if data:
                parts.append(data)
            if watch is not None and parts:
                head = parts[0] if len(parts) == 1 else b"".join(parts)
                watch = _watched(watch, head[:_HEAD_BYTES])
        return parts[0] if len(parts) == 1 else b"".join(parts)


def _has_body(response: Any) -> bool:
    """Tell whether the answer's Content-Length counts a body that follows.

    Not for HEAD, 1xx, 204 or 304, whose bodies are empty whatever the header says.
    """
    method = getattr(getattr(response, "request", None), "method", "") or ""
    status = response.status_code
    return method.upper() != "HEAD" and status not in (204, 304) and status >= 200


def _exact_reads(raw: Any) -> bool:
    """Tell whether urllib3's answer lets a body of known length be read into our own buffer.

    Its underlying ``http.client`` answer and its error mapping must be there.
    """
    return (hasattr(getattr(raw, "_fp", None), "read")
            and hasattr(raw, "_error_catcher") and hasattr(raw, "release_conn"))


def _watched(watch: Callable[[bytes], bool], head: bytes) -> Callable[[bytes], bool] | None:
    """Hand ``head`` to the watcher; return the watcher to call with the next chunk.

    ``None`` once it has seen enough (or failed: the body is read on regardless).
    """
    try:
        done = watch(head)
    except Exception:  # the watcher's own failure must not fail the read
        logger.debug("head watcher failed", exc_info=True)
        return None
    return None if done or len(head) >= _HEAD_BYTES else watch
