/* Ctrl-C, and the signals that end a session, as the REPL and scripts
 * take them (see interrupt.h).
 *
 * The handler only sets flags, asks the host backend's launches to stop
 * (hk_interrupt) and, while Lua runs, installs a hook that raises the
 * "interrupted" error at the next Lua instruction, the way Lua's own lua.c
 * does: a hook is the one thing Lua lets a signal handler set safely. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <hipkit/hipkit.h>

#include "interrupt.h"

static volatile sig_atomic_t pending;    /* a Ctrl-C not yet taken */
static volatile sig_atomic_t quit_sig;   /* SIGTERM or SIGHUP: end the session */
static volatile sig_atomic_t gpu_notice; /* say that a GPU's work is waited for */
static volatile sig_atomic_t hits;       /* Ctrl-Cs since the code began */
static lua_State *volatile running;      /* Lua runs code of the user's */
static int script_mode;

static void stop_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    lua_pushliteral(L, "interrupted");
    lua_error(L);
}

/* Counted instructions only: a call or return hook would also fire in the
 * REPL's message handler and replace the error being reported (a launch's
 * own "interrupted" that says how far it got). */
#define STOP_MASK LUA_MASKCOUNT

static void say(const char *msg)
{
    ssize_t w = write(STDERR_FILENO, msg, strlen(msg));
    (void)w;
}

static void default_sigint(void)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGINT, &dfl, NULL);
}

static void on_signal(int sig)
{
    int saved = errno;
    if (sig == SIGINT)
        pending = 1;
    else
        quit_sig = sig;
    hk_interrupt();
    lua_State *L = running;
    if (L != NULL) {
        lua_sethook(L, stop_hook, STOP_MASK, 1);
        int n = sig == SIGINT ? ++hits : 0;
        if (n == 1 && gpu_notice)
            say("\n(interrupt: back at the prompt once the GPU has finished the work in flight; "
                "a GPU kernel cannot be stopped)\n");
        else if (n == 2)
            say("\n(still running: a CPU block between barriers, or a GPU's work, ends first; "
                "Ctrl-C once more ends hipkit)\n");
        else if (n >= 3) { /* the way out of a kernel that never ends */
            default_sigint();
            raise(SIGINT); /* delivered as this handler returns */
        }
    }
    /* In a script, as in lua.c, a second Ctrl-C before the first took
     * effect (a long wait in C) ends the process; in the REPL a third. */
    if (script_mode && sig == SIGINT)
        default_sigint();
    errno = saved;
}

void hki_install(int script)
{
    script_mode = script;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* Restarted system calls keep the library's reads and waits whole;
     * select and poll, which the line reader waits in, still return EINTR. */
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

void hki_set_gpu(int gpu) { gpu_notice = gpu; }

void hki_begin(lua_State *L)
{
    pending = 0;
    hits = 0;
    hk_interrupt_reset();
    lua_sethook(L, NULL, 0, 0);
    running = L;
    if (quit_sig) /* a signal came between two entries: stop at once */
        lua_sethook(L, stop_hook, STOP_MASK, 1);
}

int hki_end(lua_State *L)
{
    running = NULL;
    hits = 0;
    lua_sethook(L, NULL, 0, 0);
    int was = pending || quit_sig;
    pending = 0;
    hk_interrupt_reset();
    return was;
}

int hki_take(void)
{
    int was = pending;
    pending = 0;
    return was;
}

int hki_quit_signal(void) { return quit_sig; }
