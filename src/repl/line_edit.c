/* Line editing behind four calls, as Lua's own lua.c does it with
 * lua_readline, lua_saveline, lua_freeline and lua_initreadline: the REPL
 * loop (repl.c) reads lines and never asks how.
 *
 * Built with GNU readline (HKL_HAVE_READLINE): editing, a history file and
 * completion of Lua names when stdin is a terminal. Without it, or when
 * stdin is not a terminal (`hipkit -i < file`), lines come from fgets.
 * This file is the only one that knows which. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#ifdef HKL_HAVE_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

#include "interrupt.h"
#include "line_edit.h"

#define HISTORY_MAX 1000

/* ------------------------------------------------------------ plain input */

static int interactive; /* stdin is a terminal: show prompts */
static int cut;         /* the last line read was cut short by Ctrl-C */

int hkl_line_interrupted(void)
{
    int was = cut;
    cut = 0;
    return was;
}

/* Waits for input on a terminal. A Ctrl-C ends the wait (poll is never
 * restarted): 1 to read, 0 for a Ctrl-C, -1 for a signal that ends the
 * session. */
static int wait_input(void)
{
    /* The signals stay blocked but inside ppoll: one that came while a key
     * was handled is seen here, not lost until the next key. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    int r;
    for (;;) {
        if (hki_quit_signal()) {
            r = -1;
            break;
        }
        if (hki_take()) {
            r = 0;
            break;
        }
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        if (ppoll(&p, 1, NULL, &old) > 0) {
            r = 1;
            break;
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* Plain input: the whole line however long, without its newline. A
 * Ctrl-C gives an empty line and hkl_line_interrupted() true. */
static char *read_plain(const char *prompt)
{
    if (interactive) {
        fputs(prompt, stdout);
        fflush(stdout);
        /* A terminal in canonical mode hands over one line per read, so
         * stdio holds nothing between lines and poll sees what is left. */
        int w = wait_input();
        if (w <= 0) {
            fputs(w == 0 ? "^C\n" : "\n", stdout);
            fflush(stdout);
            if (w == 0) {
                cut = 1;
                return strdup("");
            }
            return NULL;
        }
    }
    size_t cap = 256, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return NULL;
    for (;;) {
        if (fgets(buf + len, (int)(cap - len), stdin) == NULL) {
            if (len == 0) {
                free(buf);
                return NULL;
            }
            break;
        }
        len += strlen(buf + len);
        if (len > 0 && buf[len - 1] == '\n') {
            buf[--len] = '\0';
            break;
        }
        if (len + 1 == cap) {
            char *bigger = realloc(buf, cap * 2);
            if (bigger == NULL)
                break;
            buf = bigger;
            cap *= 2;
        }
    }
    return buf;
}

void hkl_line_free(char *line)
{
    free(line); /* readline's lines are malloc'd too */
}

/* The prompt's line is still open when input ends: close it, so the shell's
 * prompt starts on a line of its own. */
static void end_prompt_line(void)
{
    if (interactive) {
        fputc('\n', stdout);
        fflush(stdout);
    }
}

#ifdef HKL_HAVE_READLINE

static int use_readline; /* interactive, so readline does the reading */

/* --------------------------------------------------------------- history */

static char history_file[PATH_MAX];
static int history_ok; /* saving works so far */

static void history_warn(const char *what, int err)
{
    if (history_ok)
        fprintf(stderr, "hipkit: warning: %s %s: %s (history is not saved)\n", what,
                history_file[0] ? history_file : "history", strerror(err));
    history_ok = 0;
}

/* Creates each missing folder of path, private to the user. */
static int make_dirs(char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        int rc = mkdir(path, 0700);
        int err = errno;
        *p = c;
        if (rc != 0 && err != EEXIST) {
            errno = err;
            return -1;
        }
        if (c == '\0')
            return 0;
    }
}

/* append_history writes a timestamp line before every entry; a file with
 * none (from elsewhere) has one entry per line. */
static int has_timestamps(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    char line[256];
    int found = 0, line_start = 1;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        found = line_start && line[0] == '#' && line[1] >= '0' && line[1] <= '9';
        line_start = strchr(line, '\n') != NULL;
    }
    fclose(f);
    return found;
}

static void history_open(void)
{
    char dir[PATH_MAX - sizeof "/history"];
    const char *state = getenv("XDG_STATE_HOME");
    int n;
    /* The XDG spec ignores relative values. */
    if (state != NULL && state[0] == '/') {
        n = snprintf(dir, sizeof dir, "%s/hipkit", state);
    } else {
        const char *home = getenv("HOME");
        if (home == NULL || home[0] == '\0') {
            struct passwd *pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : NULL;
        }
        if (home == NULL)
            return;
        n = snprintf(dir, sizeof dir, "%s/.local/state/hipkit", home);
    }
    if (n < 0 || (size_t)n >= sizeof dir)
        return;
    snprintf(history_file, sizeof history_file, "%s/history", dir);
    history_ok = 1;

    using_history();
    stifle_history(HISTORY_MAX);
    /* Timestamps mark where entries begin, so a multi-line chunk (a
     * function, a kernel source) comes back as one entry. */
    history_comment_char = '#';
    history_write_timestamps = 1;

    if (make_dirs(dir) != 0) {
        history_warn("cannot create the folder of", errno);
        return;
    }
    /* Without timestamps (a file from elsewhere) every line is an entry:
     * joining them would make the whole file one. */
    history_multiline_entries = has_timestamps(history_file);
    int err = read_history(history_file);
    history_multiline_entries = 1;
    if (err != 0 && err != ENOENT)
        fprintf(stderr, "hipkit: warning: cannot read %s: %s\n", history_file, strerror(err));
    /* append_history needs the file to exist. */
    int fd = open(history_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        history_warn("cannot write", errno);
        return;
    }
    close(fd);
}

/* Each entry goes to the file at once, so a session that ends badly (a
 * kernel that crashes the process) keeps what was typed. */
static void history_add(const char *entry)
{
    HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
    if (last != NULL && strcmp(last->line, entry) == 0)
        return;
    add_history(entry);
    if (history_ok) {
        int err = append_history(1, history_file);
        if (err != 0)
            history_warn("cannot write", err);
    }
}

static void history_close(void)
{
    if (history_ok) {
        int err = history_truncate_file(history_file, HISTORY_MAX);
        if (err != 0)
            history_warn("cannot trim", err);
    }
}

/* ------------------------------------------------------------ completion */

/* Readline's callbacks take no user pointer. */
static lua_State *complete_L;
static char **cands;
static size_t ncands, capcands;
static size_t cand_next;

static const char *const keywords[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
    "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    NULL,
};

static int is_ident(const char *s, size_t n)
{
    if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

static void cand_clear(void)
{
    for (size_t i = 0; i < ncands; i++)
        free(cands[i]);
    ncands = 0;
    cand_next = 0;
}

static void cand_add(const char *prefix, size_t plen, const char *name, size_t nlen)
{
    for (size_t i = 0; i < ncands; i++)
        if (strncmp(cands[i] + plen, name, nlen) == 0 && cands[i][plen + nlen] == '\0')
            return;
    if (ncands == capcands) {
        size_t cap = capcands ? capcands * 2 : 64;
        char **bigger = realloc(cands, cap * sizeof *cands);
        if (bigger == NULL)
            return;
        cands = bigger;
        capcands = cap;
    }
    char *s = malloc(plen + nlen + 1);
    if (s == NULL)
        return;
    memcpy(s, prefix, plen);
    memcpy(s + plen, name, nlen);
    s[plen + nlen] = '\0';
    cands[ncands++] = s;
}

/* Replaces the value on top with its metatable's __index when that is a
 * table; else pops it and returns 0. Where __index is a function (buffers:
 * b[i] reads an element), the binding files keep the method table in the
 * metatable's `methods` field for this. */
static int to_index_table(lua_State *L)
{
    if (!lua_getmetatable(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2);
    if (lua_type(L, -1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_pushliteral(L, "methods");
        lua_rawget(L, -2);
    }
    lua_remove(L, -2);
    lua_remove(L, -2);
    if (lua_type(L, -1) != LUA_TTABLE) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

/* hipkit's objects whose fields an __index function makes (a module's
 * kernels, hk.ops's families and their kernels) say so with a metatable
 * field __complete: a function of the object listing the names it has.
 * Pushes that metatable's field `what` when the value on top has
 * __complete, else nothing; returns whether it pushed. */
static int completable(lua_State *L, const char *what)
{
    if (!lua_getmetatable(L, -1))
        return 0;
    lua_pushliteral(L, "__complete");
    lua_rawget(L, -2);
    int ok = lua_type(L, -1) == LUA_TFUNCTION;
    lua_pop(L, 1);
    if (ok) {
        lua_pushstring(L, what);
        lua_rawget(L, -2);
        ok = lua_type(L, -1) == LUA_TFUNCTION;
        if (!ok)
            lua_pop(L, 1);
    }
    lua_remove(L, ok ? -2 : -1);
    return ok;
}

/* The field name of such an object, through its __index function (called
 * protected: hipkit's own code, which fails cleanly). Replaces the value on
 * top with it and returns 1, or leaves the stack as it was and returns 0. */
static int index_call(lua_State *L, const char *name, size_t len)
{
    if (!completable(L, "__index"))
        return 0;
    lua_pushvalue(L, -2);
    lua_pushlstring(L, name, len);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK || lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    lua_remove(L, -2);
    return 1;
}

/* Replaces the value on top with its field name, read raw (completion must
 * never run Lua code that could fail or have effects), following __index
 * tables, or through index_call for hipkit's objects. Returns 0 with
 * nothing pushed when there is no such field. */
static int get_field(lua_State *L, const char *name, size_t len)
{
    for (int depth = 0; depth < 8; depth++) {
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_pushlstring(L, name, len);
            lua_rawget(L, -2);
            if (!lua_isnil(L, -1)) {
                lua_remove(L, -2);
                return 1;
            }
            lua_pop(L, 1);
        }
        if (depth == 0 && index_call(L, name, len))
            return 1;
        if (!to_index_table(L))
            return 0;
    }
    lua_pop(L, 1);
    return 0;
}

/* Adds the names the __complete of the value on top lists that start with
 * word (the value stays). */
static void add_listed(lua_State *L, const char *prefix, size_t plen, const char *word, size_t wlen)
{
    if (!completable(L, "__complete"))
        return;
    lua_pushvalue(L, -2);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        size_t klen;
        if (lua_rawgeti(L, -1, i) == LUA_TSTRING) {
            const char *k = lua_tolstring(L, -1, &klen);
            if (klen >= wlen && memcmp(k, word, wlen) == 0 && is_ident(k, klen))
                cand_add(prefix, plen, k, klen);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* Adds the string keys of the table on top (and of its __index tables)
 * that start with word; methods_only keeps functions. Pops the table. */
static void add_keys(lua_State *L, const char *prefix, size_t plen, const char *word,
                     size_t wlen, int methods_only)
{
    for (int depth = 0; depth < 8; depth++) {
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                size_t klen;
                /* lua_tolstring only on strings: converting a number key
                 * in place would derail lua_next. */
                if (lua_type(L, -2) == LUA_TSTRING) {
                    const char *k = lua_tolstring(L, -2, &klen);
                    int hidden = klen >= 2 && k[0] == '_' && k[1] == '_' && !(wlen >= 2 && word[0] == '_' && word[1] == '_');
                    if (klen >= wlen && memcmp(k, word, wlen) == 0 && is_ident(k, klen) && !hidden &&
                        (!methods_only || lua_type(L, -1) == LUA_TFUNCTION))
                        cand_add(prefix, plen, k, klen);
                }
                lua_pop(L, 1);
            }
        }
        if (!to_index_table(L))
            return;
    }
    lua_pop(L, 1);
}

/* Fills cands for text: a global, `a.b.c.<word>` (the keys of a.b.c) or
 * `a.b:<word>` (the methods of a.b's metatable). */
static void collect(lua_State *L, const char *text)
{
    size_t len = strlen(text);
    size_t sep = len;
    while (sep > 0 && text[sep - 1] != '.' && text[sep - 1] != ':')
        sep--;
    const char *word = text + sep;
    size_t wlen = len - sep;
    if (!lua_checkstack(L, 8))
        return;
    int top = lua_gettop(L);
    if (sep == 0) {
        lua_pushglobaltable(L);
        add_keys(L, "", 0, word, wlen, 0);
        for (int i = 0; keywords[i]; i++)
            if (strncmp(keywords[i], word, wlen) == 0)
                cand_add("", 0, keywords[i], strlen(keywords[i]));
        lua_settop(L, top);
        return;
    }
    int method = text[sep - 1] == ':';
    size_t chain = sep - 1;
    lua_pushglobaltable(L);
    for (size_t i = 0; i < chain;) {
        size_t j = i;
        while (j < chain && text[j] != '.')
            j++;
        /* ':' may only come last: `a:b.c` is not a chain to walk. */
        if (!is_ident(text + i, j - i) || !get_field(L, text + i, j - i)) {
            lua_settop(L, top);
            return;
        }
        i = j + 1;
    }
    if (method) {
        if (to_index_table(L))
            add_keys(L, text, sep, word, wlen, 1);
    } else {
        add_listed(L, text, sep, word, wlen);
        add_keys(L, text, sep, word, wlen, 0);
    }
    lua_settop(L, top);
}

static char *next_candidate(const char *text, int state)
{
    (void)text;
    (void)state;
    return cand_next < ncands ? strdup(cands[cand_next++]) : NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **complete(const char *text, int start, int end)
{
    (void)start;
    (void)end;
    rl_attempted_completion_over = 1; /* never fall back to file names */
    rl_completion_append_character = '\0'; /* `hk` may go on with `.` */
    cand_clear();
    collect(complete_L, text);
    if (ncands == 0)
        return NULL;
    qsort(cands, ncands, sizeof *cands, cmp_str);
    return rl_completion_matches(text, next_candidate);
}

static void readline_setup(lua_State *L)
{
    complete_L = L;
    rl_readline_name = "hipkit";
    rl_catch_signals = 0; /* interrupt.c's handlers, and wait_input, take them */
    rl_attempted_completion_function = complete;
    /* No '.' or ':': the word to complete is the whole `a.b:c`. */
    rl_completer_word_break_characters = " \t\n\"'`@$><=;|&{}()[],+-*/%^~#";
    history_open();
}


/* ------------------------------------------------------------------ calls */

void hkl_line_init(lua_State *L, int tty)
{
    interactive = tty;
    use_readline = tty;
    if (use_readline)
        readline_setup(L);
}

/* Readline's alternate interface, so that a Ctrl-C can end the wait for a
 * key (readline() itself would go on reading the same line). */
static char *got_line;
static int got_done;

static void rl_take_line(char *line)
{
    got_line = line;
    got_done = 1;
    rl_callback_handler_remove(); /* the terminal is the program's again */
}

static char *read_readline(const char *prompt)
{
    got_line = NULL;
    got_done = 0;
    rl_callback_handler_install(prompt, rl_take_line);
    while (!got_done) {
        int w = wait_input();
        if (w > 0) {
            rl_callback_read_char();
            continue;
        }
        /* What was typed is dropped; the prompt comes back on a new line. */
        rl_replace_line("", 0);
        rl_free_line_state();
        rl_callback_sigcleanup();
        rl_callback_handler_remove();
        fputs(w == 0 ? "^C\n" : "\n", stdout);
        fflush(stdout);
        if (w < 0)
            return NULL;
        cut = 1;
        return strdup("");
    }
    return got_line;
}

char *hkl_line_read(const char *prompt)
{
    return use_readline ? read_readline(prompt) : read_plain(prompt);
}

void hkl_line_save(const char *entry)
{
    if (use_readline && entry[0] != '\0')
        history_add(entry);
}

void hkl_line_end(void)
{
    if (!use_readline) {
        end_prompt_line(); /* readline ends the line itself */
        return;
    }
    history_close();
    cand_clear();
    free(cands);
    cands = NULL;
    capcands = 0;
    clear_history();
    use_readline = 0;
}

const char *hkl_line_editing(void)
{
    static char s[48];
    snprintf(s, sizeof s, "readline %s", rl_library_version);
    return s;
}

#else /* plain fgets */

void hkl_line_init(lua_State *L, int tty)
{
    (void)L;
    interactive = tty;
}

char *hkl_line_read(const char *prompt)
{
    return read_plain(prompt);
}

void hkl_line_save(const char *entry)
{
    (void)entry; /* no history without readline */
}

void hkl_line_end(void)
{
    end_prompt_line();
}

const char *hkl_line_editing(void)
{
    return "none";
}

#endif /* HKL_HAVE_READLINE */
