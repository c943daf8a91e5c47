"""A small pool of forked worker processes: what the lint needs of `multiprocessing.Pool`.

`multiprocessing` takes about 8 ms to import and 14 ms to start a pool of two on a 2-core
machine (pipes, locks, three helper threads), all of it serial time before the first file is
linted; forking an interpreter that already holds the work takes under a millisecond. Here
the workers inherit the work items (nothing is pickled on the way in) and pull item numbers
from one shared pipe: writes and reads of 4 bytes on a pipe are atomic, so each number goes
to exactly one worker, and the first idle worker takes the next one. Each worker sends back
the pickled result of each item on its own pipe, which the parent drains as results come.

A worker that raises sends the exception back and the parent raises it again; a worker that
dies (a signal, `os._exit`) makes the parent raise `WorkerLost` instead of waiting forever.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys

_INDEX = struct.Struct("<I")
_LENGTH = struct.Struct("<Q")
_STOP = 0xFFFFFFFF
# The item numbers (and one stop mark per worker) are written before the workers start, so
# they must fit in a pipe's buffer: 64 KiB on Linux, one 4 KiB page when the user's pipe
# allowance is spent. The callers hand over a few dozen items per worker.
MAX_JOBS = 64
# The cyclic garbage collector's thresholds for a check run, its workers and its parent: what a
# run builds (syntax trees, import records, results) holds no reference cycles, and with the
# default thresholds the collector walks the young objects again and again (`--select ALL
# --preview` on the SGLang snapshot: 7.0 s of a worker's CPU, 6.2 s with these; the parent of
# a run of the sglang wheel, which builds the aiter index and judges import sites: 1.05 s, 0.83
# s with these).
GC_THRESHOLDS = (100_000, 50, 100)
MAX_ITEMS = 1024 - MAX_JOBS


class WorkerLost(RuntimeError):
    """A worker process ended without sending back the results of the items it took."""


def imap_unordered(fn, items: list, jobs: int, meanwhile=None):
    """Yield `fn(item)` for every item, in the order they complete, computed in `jobs` forked
    processes. `fn` and `items` reach the workers through the fork. `meanwhile`: a function
    the parent runs once the workers have started (work for a later pool to inherit)."""
    if not items:
        return
    if len(items) > MAX_ITEMS:
        raise ValueError(f"at most {MAX_ITEMS} items per pool (got {len(items)})")
    jobs = max(1, min(jobs, len(items), MAX_JOBS))
    task_r, task_w = os.pipe()
    _write_all(task_w, b"".join(_INDEX.pack(k) for k in range(len(items))))
    _write_all(task_w, _INDEX.pack(_STOP) * jobs)
    os.close(task_w)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # (a child must not write out the parent's buffered output again)
        except (AttributeError, OSError, ValueError):
            pass
    children: dict[int, int] = {}  # result pipe -> pid
    finished = False
    try:
        for _ in range(jobs):
            result_r, result_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker
                os.close(result_r)
                for fd in children:
                    os.close(fd)
                _work(fn, items, task_r, result_w)  # never returns
            os.close(result_w)
            children[result_r] = pid
        os.close(task_r)
        task_r = -1
        if meanwhile is not None:
            meanwhile()
        yield from _collect(children, len(items))
        finished = True
    finally:
        if task_r >= 0:
            os.close(task_r)
        _reap(children, stop=not finished)


def _work(fn, items, task_r: int, result_w: int) -> None:
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent reports it
        import gc

        gc.set_threshold(*GC_THRESHOLDS)  # (a worker forked by a parent that did not)
        while True:
            raw = os.read(task_r, _INDEX.size)
            if len(raw) < _INDEX.size:
                break
            (k,) = _INDEX.unpack(raw)
            if k == _STOP:
                break
            try:
                payload = pickle.dumps((True, fn(items[k])), pickle.HIGHEST_PROTOCOL)
            except Exception as exc:
                payload = _error_payload(exc)
            _write_all(result_w, _LENGTH.pack(len(payload)) + payload)
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _error_payload(exc: Exception) -> bytes:
    import traceback

    text = "".join(traceback.format_exception(exc))
    try:
        return pickle.dumps((False, (exc, text)), pickle.HIGHEST_PROTOCOL)
    except Exception:  # an exception that cannot be pickled: its text still goes back
        return pickle.dumps((False, (None, text)), pickle.HIGHEST_PROTOCOL)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _collect(children: dict[int, int], expected: int):
    buffers = {fd: bytearray() for fd in children}
    open_fds = list(children)
    received = 0
    while open_fds:
        ready, _, _ = select.select(open_fds, [], [])
        for fd in ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                open_fds.remove(fd)
                continue
            buf = buffers[fd]
            buf += chunk
            while len(buf) >= _LENGTH.size:
                (size,) = _LENGTH.unpack_from(buf)
                if len(buf) < _LENGTH.size + size:
                    break
                ok, value = pickle.loads(bytes(buf[_LENGTH.size : _LENGTH.size + size]))
                del buf[: _LENGTH.size + size]
                received += 1
                if not ok:
                    exc, text = value
                    if exc is None:
                        raise RuntimeError(f"a worker failed:\n{text}")
                    raise exc
                yield value
    if received < expected:
        raise WorkerLost(
            f"a worker process ended early ({expected - received} of {expected} work items "
            f"without a result; {_how_they_ended(children)})"
        )


def _how_they_ended(children: dict[int, int]) -> str:
    """How the workers ended (they all have: their result pipes are closed), e.g. `a worker
    was killed by signal 9 (SIGKILL)`."""
    ends = []
    for pid in children.values():
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            continue
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = "unknown"
            ends.append(f"a worker was killed by signal {number} ({name})")
        elif os.WEXITSTATUS(status):
            ends.append(f"a worker exited with status {os.WEXITSTATUS(status)}")
    return "; ".join(ends) or "the workers exited normally"


def _reap(children: dict[int, int], stop: bool) -> None:
    """Close the result pipes and wait for the workers (`stop`: end them first, on an error
    or an interruption in the parent)."""
    for fd, pid in children.items():
        try:
            os.close(fd)
        except OSError:
            pass
        try:
            if stop:
                os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        except (ChildProcessError, ProcessLookupError):
            pass
