/* Signals in the REPL and in scripts (interrupt.c).
 *
 * Ctrl-C while Lua runs raises the error "interrupted" at the next Lua
 * instruction and asks the host backend's launch to stop (hk_interrupt);
 * at the prompt the line reader takes it (hki_take) and clears the line.
 * SIGTERM and SIGHUP interrupt the same way and end the session after it
 * has cleaned up. */
#ifndef HKR_INTERRUPT_H
#define HKR_INTERRUPT_H

#include <lua.h>

/* Installs the handlers. script: a second Ctrl-C before the first took
 * effect ends the process, as in lua.c; the REPL keeps its handler. */
void hki_install(int script);
/* The device is a GPU: a Ctrl-C says that its work is waited for. */
void hki_set_gpu(int gpu);
/* Around code of the user's: begin clears what came before, end returns
 * nonzero when a signal came meanwhile. */
void hki_begin(lua_State *L);
int hki_end(lua_State *L);
/* Nonzero once per Ctrl-C that came outside hki_begin/hki_end. */
int hki_take(void);
/* SIGTERM or SIGHUP when one came (the session must end), else 0. */
int hki_quit_signal(void);

#endif
