"""raw-benchmark-tensor (PY017): the shorthands come from the checked tree's benchmark
utilities, and a warm cached run follows edits of those utilities."""

from __future__ import annotations

import json

from cli_support import write_old as _write

from kernlint.cli import main

BENCH = (
    "import torch\n\n\n"
    "def inputs(n):\n"
    '    return torch.randn(n, 8, dtype=torch.bfloat16, device="cuda")\n'
)
UTILS_WITHOUT = "import torch\n\nDEFAULT_DEVICE = 'cuda'\n"
UTILS_WITH = (
    "import torch\n\n\n"
    "def create_random(*shape, dtype=torch.bfloat16, device='cuda'):\n"
    "    return torch.randn(shape, dtype=dtype, device=device)\n"
)


def test_warm_run_follows_the_utilities(tmp_path, monkeypatch, capsys):
    from kernlint_rules.python import raw_benchmark_tensor

    monkeypatch.chdir(tmp_path)
    utils = tmp_path / "repo" / "python" / "sglang" / "kernels" / "jit" / "benchmark" / "utils.py"
    bench = tmp_path / "repo" / "test" / "registered" / "kernels" / "benchmark" / "bench_x.py"
    _write(utils, UTILS_WITHOUT, 1)
    _write(bench, BENCH, 1)

    def check(cache=True):
        raw_benchmark_tensor.reset()  # (a new process would start without the memo)
        capsys.readouterr()
        args = ["check", "repo", "--select", "PY017", "--preview", "--output-format", "json"]
        args += ["--cache-dir", str(tmp_path / "cache")] if cache else ["--no-cache"]
        rc = main(args)
        out, err = capsys.readouterr()
        assert rc in (0, 1) and "Traceback" not in err, err
        return [(d["code"], d["line"]) for d in json.loads(out)]

    assert check() == []  # no shorthand in this tree: nothing to suggest
    _write(utils, UTILS_WITH, 2)
    assert check() == [("PY017", 5)] == check(cache=False)
    assert check() == [("PY017", 5)]  # (answered from the cache)
    utils.unlink()
    assert check() == [] == check(cache=False)
