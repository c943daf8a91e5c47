/* kernlint's minimal stand-in for the compiler's <stddef.h> (libclang from PyPI ships no
   builtin headers). Types come from the compiler's predefined macros. */
#ifndef KERNLINT_STDDEF_H
#define KERNLINT_STDDEF_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
#ifndef __cplusplus
typedef __WCHAR_TYPE__ wchar_t;
#endif
#if defined(__cplusplus) && __cplusplus >= 201103L
typedef decltype(nullptr) nullptr_t;
#endif
typedef struct {
  long long kernlint_ll __attribute__((__aligned__(__alignof__(long long))));
  long double kernlint_ld __attribute__((__aligned__(__alignof__(long double))));
} max_align_t;
#endif
#undef NULL
#ifdef __cplusplus
#define NULL __null
#else
#define NULL ((void*)0)
#endif
#ifndef offsetof
#define offsetof(t, d) __builtin_offsetof(t, d)
#endif
