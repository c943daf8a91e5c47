"""Rules on what the compiler reports for each kernel (`kernlint check --compile`)."""
