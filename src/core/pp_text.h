/* Preprocessed source as the compilers print it (`-E`, GNU line markers
 * `# LINE "FILE" FLAGS`, which gcc and clang both write): the part that is
 * the user's, with markers kept so a line found in it can be named in the
 * user's own file. Kernel discovery scans this text, so kernels that macros
 * generate are found and those under `#if 0` are not. */
#ifndef HKC_PP_TEXT_H
#define HKC_PP_TEXT_H

#include "strbuf.h"

/* Says whether a file's lines are the user's: file as the marker names it,
 * system nonzero when the marker flags it a system header (flag 3). */
typedef int (*hkc_pp_is_user)(const char *file, int system, void *arg);

/* Copies the user's lines of cpp_out into out, each run of them after a
 * marker `# LINE "FILE"` that places it. Other lines are dropped. */
/* Whether a compiler flag is the preprocessor's (-D, -U, -I): discovery
 * passes those, and only those, to a preprocessor run beside a compiler
 * that takes others (--use_fast_math, -arch=...). */
int hkc_pp_is_pp_flag(const char *flag);
void hkc_pp_filter(const char *cpp_out, hkc_pp_is_user is_user, void *arg, hkc_strbuf *out);

/* Where line `line` (1-based) of filtered text came from: writes the file
 * into file (cap bytes) and returns its line there; 0 when unknown. */
int hkc_pp_locate(const char *filtered, int line, char *file, size_t cap);

/* Writes `#line LINE "NAME"` and a newline, NAME escaped as a string
 * literal (quotes, backslashes; control characters become '?'). */
void hkc_pp_line_directive(hkc_strbuf *out, int line, const char *name);

#endif
