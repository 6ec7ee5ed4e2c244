/* The interactive loop and the protected calls shared by main.c and repl.c. */
#ifndef HK_REPL_H
#define HK_REPL_H

#include <lua.h>

/* Calls the function under its narg arguments on top of the stack through
 * lua_pcall with hipkit's message handler: non-string errors always get a
 * traceback, string errors (hipkit's own, already precise) only when
 * traceback is nonzero (scripts). Returns lua_pcall's status, the message on
 * top of the stack on failure. */
int hkr_call(lua_State *L, int narg, int nres, int traceback);

/* Prints the error message on top of the stack to stderr after prefix
 * ("hipkit: " for scripts, "" in the REPL) and pops it. */
void hkr_report(lua_State *L, const char *prefix);

/* The value at idx as the REPL prints it: a table without __tostring or
 * __name nested, keys sorted, long ones elided with a count (show.c);
 * anything else as tostring does. Pushes the string and returns it. */
const char *hkr_show(lua_State *L, int idx);

/* Reads, runs and prints until end of input. Prints a one-line banner first
 * unless quiet or stdin is not a terminal. Lines come from line_edit.h. */
void hkr_repl(lua_State *L, int quiet);

#endif
