"""The compile pass (`kernlint check --compile`): registers and spills of kernels, as findings."""
