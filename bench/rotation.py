"""The order in which the benchmarks measure their contenders (bench/run.py for kernlint's
speed, bench/reference_*.py for the reference kernels)."""

from __future__ import annotations


def in_rotation(names, rounds):
    """The names in the order to measure them: each once per round, each round starting one
    name later than the last, so that no contender always runs first, or always after the same
    other one. What runs first after a change of state measures slower (the same kernel, same
    tensors: 3.8 us measured first, 3.1 us measured again after the others at 256 x 4096), so
    every contender is measured in every position."""
    names = list(names)
    for k in range(rounds):
        shift = k % len(names)
        yield from names[shift:] + names[:shift]
