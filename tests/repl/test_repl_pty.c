/* The REPL in a real terminal: hipkit runs on a pseudo-terminal (forkpty),
 * this test types lines and reads the screen, as a person would. Escape
 * sequences and carriage returns are stripped from what the terminal shows,
 * then each exchange is compared exactly: the echoed input, the output, the
 * next prompt.
 *
 * argv[1]: the hipkit binary. */
#include "pty_session.h"


int main(int argc, char **argv)
{
    tap_init();
    if (argc < 2) {
        fprintf(stderr, "usage: test_repl_pty HIPKIT\n");
        return 2;
    }
    hipkit = argv[1];
    snprintf(tmp, sizeof tmp, "%s/hipkit-pty.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(tmp) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    char home[300];
    snprintf(home, sizeof home, "%s/home", tmp);
    mkdir(home, 0755);
    int rl = has_readline();
    tap_diag("line editing: %s", rl ? "readline" : "none");
    const char *no_rl = "built without readline";

    /* Session one: the banner, expressions, multi-line input, errors. */
    session *s = calloc(1, sizeof *s);
    start(s, "--backend=host");
    const char *banner = wait_for(s, "hk> ", 0);
    int ok = strncmp(banner, "hipkit ", 7) == 0 && strstr(banner, " (Lua 5.4) on host:0 ") != NULL &&
             strstr(banner, " (x86_64) \xe2\x80\x94 Ctrl-D to quit\nhk> ") != NULL &&
             strchr(banner, '\n') == strrchr(banner, '\n');
    tap_ok(ok, "banner: one line with version, Lua and the device");
    if (!ok)
        show("got", banner);

    exchange(s, "1+2", "1+2\n3\nhk> ", "an expression prints its value");
    exchange(s, "1, 'two', nil", "1, 'two', nil\n1\ttwo\tnil\nhk> ", "several values, tab separated");
    exchange(s, "x = 10", "x = 10\nhk> ", "a statement prints nothing");
    exchange(s, "function sq(v)", "function sq(v)\n>> ", "an open function asks for more");
    exchange(s, "  return v * v", "  return v * v\n>> ", "still open");
    exchange(s, "end", "end\nhk> ", "closed by end");
    exchange(s, "sq(7)", "sq(7)\n49\nhk> ", "the function defined over three lines runs");
    exchange(s, "src = [[", "src = [[\n>> ", "a long string asks for more");
    exchange(s, "__global__ void k()", "__global__ void k()\n>> ", "still in the string");
    exchange(s, "{ }]]", "{ }]]\nhk> ", "closed by ]]");
    exchange(s, "#src, src", "#src, src\n23\t__global__ void k()\n{ }\nhk> ",
             "the string spans the lines joined by newlines");
    exchange(s, "error(\"oops\")", "error(\"oops\")\nstdin:1: oops\nhk> ", "an error prints its message");
    exchange(s, "x + sq(3)", "x + sq(3)\n19\nhk> ", "the session goes on with its globals");
    /* A kernel typed over several lines, compiled, launched, printed; then a
     * wrong launch, and the session carries on with the buffer intact. */
    exchange(s, "m = hk.compile([[", "m = hk.compile([[\n>> ", "a kernel source opens a long string");
    exchange(s, "#include <hip/hip_runtime.h>", "#include <hip/hip_runtime.h>\n>> ", "kernel line 1");
    exchange(s, "extern \"C\" __global__ void twice(int *v, int n) {",
             "extern \"C\" __global__ void twice(int *v, int n) {\n>> ", "kernel line 2");
    exchange(s, "  int i = threadIdx.x; if (i < n) v[i] = 2 * v[i]; }",
             "  int i = threadIdx.x; if (i < n) v[i] = 2 * v[i]; }\n>> ", "kernel line 3");
    exchange(s, "]], {name = 'twice'})", "]], {name = 'twice'})\nhk> ", "the kernel compiles");
    exchange(s, "v = hk.from({1, 2, 3}, 'i32')", "v = hk.from({1, 2, 3}, 'i32')\nhk> ", "a buffer from a table");
    exchange(s, "m.twice:launch(1, 64, v, 3)", "m.twice:launch(1, 64, v, 3)\nhk> ", "the kernel launches");
    exchange(s, "v", "v\nhk.buffer<i32>[3] device on host:0 {2, 4, 6}\nhk> ", "the buffer prints its new values");
    type(s, "m.twice:launch(1, 64, v)\r");
    const char *kerr = wait_for(s, "hk> ", 0);
    ok = strstr(kerr, "twice: expects 2 arguments") != NULL;
    tap_ok(ok, "a launch with a missing argument is an error naming the kernel");
    if (!ok)
        show("got", kerr);
    exchange(s, "v[3], #v", "v[3], #v\n6\t3\nhk> ", "the session carries on with the buffer intact");
    type(s, "error({})\r");
    const char *tb = wait_for(s, "hk> ", 0);
    const char *want_tb = "error({})\n(error object is a table value)\nstack traceback:\n";
    ok = strncmp(tb, want_tb, strlen(want_tb)) == 0;
    tap_ok(ok, "a non-string error gets a traceback");
    if (!ok)
        show("got", tb);
    if (rl) {
        type(s, "string.for\t");
        const char *got = wait_for(s, "string.format", 1);
        tap_ok(strstr(got, "string.format") != NULL, "TAB completes string.for to string.format");
        exchange(s, "('%d', 42)", "('%d', 42)\n42\nhk> ", "the completed call runs");
        type(s, "s = 'abc'\r");
        wait_for(s, "hk> ", 0);
        type(s, "s:up\t");
        got = wait_for(s, "s:upper", 1);
        tap_ok(strstr(got, "s:upper") != NULL, "TAB after ':' completes a method");
        exchange(s, "()", "()\nABC\nhk> ", "the completed method runs");
        type(s, "t = {inner = {value = 5, other = 6}}\r");
        wait_for(s, "hk> ", 0);
        type(s, "t.inner.va\t");
        got = wait_for(s, "t.inner.value", 1);
        tap_ok(strstr(got, "t.inner.value") != NULL, "TAB walks a.b.c chains");
        exchange(s, " + 1", " + 1\n6\nhk> ", "the completed field reads");
    } else {
        for (int i = 0; i < 6; i++)
            tap_skip("tab completion", no_rl);
    }
    exchange(s, "'hist' .. 'ory'", "'hist' .. 'ory'\nhistory\nhk> ", "the last line of the session");
    const char *rest;
    int status = finish(s, &rest);
    tap_ok(status == 0, "Ctrl-D exits 0 (got %d)", status);
    tap_ok(strcmp(rest, "\n") == 0, "and ends the line");
    if (strcmp(rest, "\n") != 0)
        show("after Ctrl-D", rest);

    /* History: in the file, and Up brings the last line back. */
    char path[400];
    snprintf(path, sizeof path, "%s/state/hipkit/history", tmp);
    if (rl) {
        const char *h = slurp(path);
        ok = h && has_line(h, "1+2") && has_line(h, "sq(7)") && has_line(h, "error(\"oops\")") &&
             has_line(h, "'hist' .. 'ory'") && has_line(h, "function sq(v)") &&
             has_line(h, "  return v * v");
        tap_ok(ok, "the history file holds the lines typed");
        if (!ok)
            show("history", h ? h : "(no file)");
        struct stat st;
        snprintf(path, sizeof path, "%s/state/hipkit", tmp);
        tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700, "its folder is private (0700)");

        start(s, "-q");
        const char *first = wait_for(s, "hk> ", 0);
        tap_ok(strcmp(first, "hk> ") == 0, "-q: no banner");
        if (strcmp(first, "hk> ") != 0)
            show("got", first);
        type(s, "\x1b[A");
        wait_for(s, "'hist' .. 'ory'", 1);
        type(s, "\r");
        const char *got = wait_for(s, "hk> ", 0);
        ok = strcmp(got, "\nhistory\nhk> ") == 0;
        tap_ok(ok, "Up then Enter runs the last line of the previous session");
        if (!ok)
            show("got", got);
        exchange(s, "sq = nil", "sq = nil\nhk> ", "a statement in session two");
        status = finish(s, &rest);
        tap_ok(status == 0, "second session exits 0");
    } else {
        for (int i = 0; i < 6; i++)
            tap_skip("history", no_rl);
    }
    free(s);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", tmp);
    return tap_done();
}
