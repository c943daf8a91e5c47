"""The forked worker pool the lint runs on (kernlint/forkpool.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kernlint import forkpool

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _square_with_pid(x):
    if x % 7 == 0:
        time.sleep(0.01)  # uneven work: the idle worker takes the next item
    return x * x, os.getpid()


def test_every_item_once_across_workers():
    items = list(range(200))
    got = list(forkpool.imap_unordered(_square_with_pid, items, 3))
    assert sorted(v for v, _ in got) == [x * x for x in items]
    pids = {pid for _, pid in got}
    assert len(pids) >= 2 and os.getpid() not in pids


def _big(x):
    return bytes([x % 256]) * 300_000  # each result is larger than a pipe's buffer


def test_results_larger_than_a_pipe_buffer():
    got = sorted(forkpool.imap_unordered(_big, list(range(12)), 2))
    assert [g[:1] for g in got] == [bytes([x]) for x in range(12)]
    assert all(len(g) == 300_000 for g in got)


class Odd(ValueError):
    pass


def _fails_on_five(x):
    if x == 5:
        raise Odd(f"item {x}")
    return x


def test_a_worker_exception_is_raised_in_the_parent():
    with pytest.raises(Odd, match="item 5"):
        list(forkpool.imap_unordered(_fails_on_five, list(range(10)), 2))


def _dies_on_three(x):
    if x == 3:
        os._exit(3)
    return x


def test_a_dead_worker_is_reported_not_waited_for():
    with pytest.raises(forkpool.WorkerLost, match="without a result.*exited with status 3"):
        list(forkpool.imap_unordered(_dies_on_three, list(range(10)), 2))


def test_too_many_items_is_refused():
    with pytest.raises(ValueError, match="at most"):
        list(forkpool.imap_unordered(abs, list(range(forkpool.MAX_ITEMS + 1)), 2))
    assert list(forkpool.imap_unordered(abs, [], 2)) == []


def test_no_worker_left_behind_and_parent_output_written_once():
    """Buffered output of the parent is not written again by the workers, and no worker
    process outlives the pool (a consumer stopping early ends them)."""
    code = (
        "import os, sys\n"
        "from kernlint import forkpool\n"
        "sys.stdout.write('before-')\n"
        "def f(x):\n"
        "    return os.getpid()\n"
        "pids = set(forkpool.imap_unordered(f, list(range(50)), 2))\n"
        "gen = forkpool.imap_unordered(f, list(range(50)), 2)\n"
        "pids.add(next(gen)); gen.close()\n"
        "alive = []\n"
        "for pid in pids:\n"
        "    try:\n"
        "        os.kill(pid, 0); alive.append(pid)\n"
        "    except ProcessLookupError:\n"
        "        pass\n"
        "print('after', len(pids) >= 2, alive)\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "before-after True []\n"


_STATE = {"loaded": False}


def _sees_state(x):
    return _STATE["loaded"]


def test_meanwhile_runs_in_the_parent_after_the_workers_start():
    calls = []

    def meanwhile():
        calls.append(os.getpid())
        _STATE["loaded"] = True

    try:
        seen = set(forkpool.imap_unordered(_sees_state, list(range(20)), 2, meanwhile))
        assert calls == [os.getpid()]
        assert seen == {False}  # the workers were forked before it ran
        assert set(forkpool.imap_unordered(_sees_state, list(range(4)), 2)) == {True}
    finally:
        _STATE["loaded"] = False


def test_a_lost_worker_is_a_clear_error_of_the_cli(tmp_path, monkeypatch, capsys):
    """A worker killed mid-run (say, by the out-of-memory killer): exit 2, one line naming the
    cause, no traceback and no partial report."""
    from kernlint import cli, runner

    for k in range(60):
        (tmp_path / f"m{k}.py").write_text("import aiter\n")
    real = runner._lint_chunk

    def dies(job):
        candidates = runner._POOL_STATE["candidates"]
        if any(candidates[i].display.endswith("m7.py") for i in job[0]):
            os.kill(os.getpid(), 9)
        return real(job)

    monkeypatch.setattr(runner, "_lint_chunk", dies)
    monkeypatch.setattr(runner, "_jobs", lambda: 2)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", ".", "--no-cache"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "killed by signal 9 (SIGKILL)" in err and "nothing was reported" in err
    assert "Traceback" not in err
