/* Line editing for the REPL (line_edit.c): GNU readline with history and
 * completion, or plain fgets, chosen when hipkit is built. */
#ifndef HKL_LINE_EDIT_H
#define HKL_LINE_EDIT_H

#include <lua.h>

/* Starts a session reading stdin; tty: stdin is a terminal (prompts are
 * shown; readline, its history file and completion of L's names are used
 * when built in). */
void hkl_line_init(lua_State *L, int tty);
/* One line without its newline, after showing prompt; NULL at the end of
 * input. The line is malloc'd: the caller may realloc it, and frees it with
 * hkl_line_free (or free). */
char *hkl_line_read(const char *prompt);
/* Nonzero (once) when the last hkl_line_read was cut short by Ctrl-C: it
 * returned an empty line and the screen shows "^C" and a fresh line. A
 * SIGTERM or SIGHUP while reading ends input (NULL). */
int hkl_line_interrupted(void);
/* Adds a whole entry (it may span lines) to the history; empty ones are
 * skipped. */
void hkl_line_save(const char *entry);
void hkl_line_free(char *line);
/* Ends the session: closes the prompt's line, trims the history file. */
void hkl_line_end(void);

/* "readline 8.2" or "none": what --version reports. */
const char *hkl_line_editing(void);

#endif
