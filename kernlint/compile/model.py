"""What the compile pass measures: one kernel's resource usage in one build."""

from __future__ import annotations

from ..record import record


@record(frozen=True)
class Usage:
    """Registers and spills of one kernel, one instantiation, one architecture.

    symbol: the kernel as the compiler names it (a mangled C++ name, or a Triton kernel's
        name); `name` is the unqualified source name the definition is found by.
    instantiation: what was built, for the message: a wrapper symbol such as
        `FusedAddRMSNorm<bf16_t, 4096, true>::run`, a Triton signature and config, or the
        binary a build directory held.
    source: how kernlint came to build it: "config" (`compile-instantiate`), "load_jit" (a
        `load_jit` call with literal template arguments), "plain" (a kernel that is no template:
        its file compiled as it is), "build" (`--compile-from`), "triton".
    threads: the threads per block the build fixes, when it does (Triton: 32 x num_warps).
    """

    symbol: str
    name: str
    arch: str
    registers: int
    spill_stores: int = 0  # bytes
    spill_loads: int = 0  # bytes
    local_bytes: int = 0  # stack frame (local memory) bytes
    instantiation: str = ""
    source: str = ""
    threads: int | None = None

    @property
    def spills(self) -> bool:
        return bool(self.spill_stores or self.spill_loads)
