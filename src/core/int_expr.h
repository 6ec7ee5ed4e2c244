/* Integer constant expressions over lexed tokens: what a kernel's
 * `__launch_bounds__(256)` or `__launch_bounds__(8 * 32, 2)` argument holds
 * once the preprocessor has expanded its macros. */
#ifndef HKC_INT_EXPR_H
#define HKC_INT_EXPR_H

#include "cpp_lexer.h"

/* Evaluates v[0..n): integer literals (decimal, hex, octal, binary, with
 * u/l suffixes and ' separators), parentheses, unary + - ~, and binary
 * * / % + - << >> & ^ |. Returns 0 with *out set, or -1 when the tokens are
 * anything else (a name, a template parameter, a cast), overflow, or divide
 * by zero: the caller then knows no value. */
int hkc_int_expr_eval(const hkc_tok *v, int n, long long *out);

#endif
