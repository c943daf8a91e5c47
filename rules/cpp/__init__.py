"""C/C++/CUDA rules (code prefix CU)."""
