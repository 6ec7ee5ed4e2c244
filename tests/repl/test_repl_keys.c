/* The REPL in a real terminal, the keys beyond typing lines: Ctrl-C at the
 * prompt, at a continuation prompt, in a Lua loop and during kernels on the
 * CPU backend. The session must survive each with its globals and buffers,
 * and leave no temporary folder behind when it ends.
 *
 * argv[1]: the hipkit binary. */
#include <dirent.h>

#include "pty_session.h"

/* Types line and Enter, waits a moment for it to be running, then Ctrl-C;
 * checks the screen up to the next prompt holds want. */
static void interrupt(session *s, const char *line, const char *want, const char *name)
{
    type(s, line);
    type(s, "\r");
    wait_for(s, "\n", 1);
    usleep(300000);
    type(s, "\x03");
    const char *got = wait_for(s, "hk> ", 0);
    int ok = strstr(got, want) != NULL;
    tap_ok(ok, "%s", name);
    if (!ok)
        show("got", got);
}

/* Folders hipkit made under dir. */
static int count_folders(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += strncmp(e->d_name, "hipkit-", 7) == 0;
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    tap_init();
    if (argc < 2) {
        fprintf(stderr, "usage: test_repl_keys HIPKIT\n");
        return 2;
    }
    hipkit = argv[1];
    snprintf(tmp, sizeof tmp, "%s/hipkit-keys.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(tmp) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    char dir[300];
    snprintf(dir, sizeof dir, "%s/home", tmp);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/tmp", tmp);
    mkdir(dir, 0700);
    setenv("TMPDIR", dir, 1); /* the session's folders land here */

    session *s = calloc(1, sizeof *s);
    int ok;
    start2(s, "-q", "--backend=host");
    wait_for(s, "hk> ", 0);
    exchange(s, "x = 42", "x = 42\nhk> ", "a global");
    type(s, "y = 'half typed");
    wait_for(s, "typed", 1);
    type(s, "\x03");
    const char *got = wait_for(s, "hk> ", 0);
    tap_ok(strcmp(got, "^C\nhk> ") == 0, "Ctrl-C at the prompt: ^C, and a fresh prompt");
    exchange(s, "y", "y\nnil\nhk> ", "the line typed was dropped, not run");
    exchange(s, "for i = 1, 3 do", "for i = 1, 3 do\n>> ", "a chunk begun");
    type(s, "\x03");
    got = wait_for(s, "hk> ", 0);
    tap_ok(strcmp(got, "^C\nhk> ") == 0, "Ctrl-C at a continuation prompt drops the chunk");
    interrupt(s, "while true do end", "interrupted\nhk> ", "Ctrl-C in a Lua loop: interrupted, back at the prompt");
    exchange(s, "x", "x\n42\nhk> ", "the session goes on with its globals");

    exchange(s, "m = hk.compile([[", "m = hk.compile([[\n>> ", "a kernel source");
    exchange(s, "extern \"C\" __global__ void spin(float *v, int n) { float a = 0;",
             "extern \"C\" __global__ void spin(float *v, int n) { float a = 0;\n>> ", "spin, line 1");
    exchange(s, "  for (int k = 0; k < n; k++) a = a * 0.999f + 1.0f; v[blockIdx.x] = a; }",
             "  for (int k = 0; k < n; k++) a = a * 0.999f + 1.0f; v[blockIdx.x] = a; }\n>> ",
             "spin, line 2");
    exchange(s, "extern \"C\" __global__ void wait(float *v, int n) {",
             "extern \"C\" __global__ void wait(float *v, int n) {\n>> ", "a kernel of barriers, line 1");
    exchange(s, "  for (int k = 0; k < n; k++) __syncthreads(); v[0] = -1; }",
             "  for (int k = 0; k < n; k++) __syncthreads(); v[0] = -1; }\n>> ",
             "a kernel of barriers, line 2");
    type(s, "]])\r");
    got = wait_for(s, "hk> ", 0);
    /* a compile over a second shows a progress line first: no exact match */
    tap_ok(strncmp(got, "]])\n", 4) == 0 && strstr(got, "error") == NULL && strstr(got, "failed") == NULL,
           "they compile");
    if (strstr(got, "error") != NULL || strstr(got, "failed") != NULL)
        show("got", got);
    exchange(s, "m:kernels()", "m:kernels()\n2 kernels: spin, wait\nhk> ", "m:kernels() prints as a report");
    exchange(s, "{3, 1, b = {x = 1, [2] = true}, a = 's\\n'}",
             "{3, 1, b = {x = 1, [2] = true}, a = 's\\n'}\n{3, 1, a = \"s\\n\", b = {[2] = true, x = 1}}\nhk> ",
             "a table prints nested, keys sorted after the array part");
    exchange(s, "t = {} for i = 1, 30 do t[i] = i * i end", "t = {} for i = 1, 30 do t[i] = i * i end\nhk> ",
             "a long table");
    exchange(s, "t, 'x'", "t, 'x'\n{\n  1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225, 256,\n"
             "  289, 324, 361, 400,\n  ... (10 more)\n}\tx\nhk> ",
             "prints its first 20 values, lines filled, and how many more");
    exchange(s, "v = hk.from({1, 2, 3}, 'f32')", "v = hk.from({1, 2, 3}, 'f32')\nhk> ", "a buffer");
    exchange(s, "w = hk.alloc(100000, 'f32')", "w = hk.alloc(100000, 'f32')\nhk> ", "a big one");
    interrupt(s, "m.spin:launch(100000, 32, w, 100000)", " of 100000 blocks ran to their end\nhk> ",
              "Ctrl-C during a kernel: the launch stops between blocks and says how far it got");
    interrupt(s, "m.wait:launch(1, 64, v, 2000000000)",
              "kernel wait interrupted: 0 of 1 blocks ran to their end\nhk> ",
              "Ctrl-C during a kernel: a block stops at a barrier");
    exchange(s, "v", "v\nhk.buffer<f32>[3] device on host:0 {1, 2, 3}\nhk> ", "the buffers are intact");
    /* One block with no barrier cannot be stopped: a second Ctrl-C says so,
     * and the prompt comes back when it ends. */
    type(s, "m.spin:launch(1, 1, v, 300000000)\r");
    wait_for(s, "\n", 1);
    usleep(200000);
    type(s, "\x03");
    usleep(100000);
    type(s, "\x03");
    got = wait_for(s, "hk> ", 0);
    ok = strstr(got, "\n(still running: a CPU block between barriers, or a GPU's work, ends first; "
                     "Ctrl-C once more ends hipkit)\n") != NULL &&
         strstr(got, "\n(interrupted: the call ran to its end)\nhk> ") != NULL;
    tap_ok(ok, "a block that runs on: a second Ctrl-C says so, the prompt comes back after it");
    if (!ok)
        show("got", got);
    exchange(s, "m.spin:launch(3, 1, v, 1)", "m.spin:launch(3, 1, v, 1)\nhk> ", "the next launch runs");
    exchange(s, "v", "v\nhk.buffer<f32>[3] device on host:0 {1, 1, 1}\nhk> ", "whole");

    if (has_readline()) {
        /* hk.ops.affine is not loaded yet: its name comes from the plugins */
        type(s, "hk.ops.aff\t");
        got = wait_for(s, "hk.ops.affine", 1);
        tap_ok(strstr(got, "hk.ops.affine") != NULL, "TAB completes a family not yet loaded");
        type(s, ".affine_tw\t");
        got = wait_for(s, ".affine_twice", 1); /* the screen had hk.ops.affine already */
        tap_ok(strstr(got, ".affine_twice") != NULL, "and its ops");
        type(s, "\x03");
        wait_for(s, "hk> ", 0);
        type(s, "m.sp\t");
        got = wait_for(s, "m.spin", 1);
        tap_ok(strstr(got, "m.spin") != NULL, "TAB completes a module's kernel names");
        type(s, ":la\t");
        got = wait_for(s, ":launch", 1);
        tap_ok(strstr(got, ":launch") != NULL, "and a kernel's methods through the module's __index");
        type(s, "\x03");
        wait_for(s, "hk> ", 0);
    } else {
        for (int i = 0; i < 4; i++)
            tap_skip("tab completion", "built without readline");
    }
    exchange(s, "help(hk.alloc)", "help(hk.alloc)\nhk.alloc(n [, dtype [, mode]]) -> buffer\n"
             "  n elements of dtype (default f32) in mode device, managed or host\nhk> ",
             "help(f): signature and doc line");
    type(s, "help(v)\r");
    got = wait_for(s, "hk> ", 0);
    tap_ok(strstr(got, "\nhk.buffer<f32>[3] device on host:0 {1, 1, 1}\nmethods:\n") != NULL &&
               strstr(got, "\n  b:fill      sets every element to v\n") != NULL,
           "help(buffer): the buffer, then its methods with their doc lines");
    exchange(s, "help(m.wait)", "help(m.wait)\nwait(float *v, int n)\nmethods:\n"
             "  k:launch  runs the kernel; grid and block are numbers or {x, y, z}\n"
             "  k:info    signature, parameters, registers, shared and local memory, origin\n"
             "  k:disasm  the kernel's machine code\nhk> ", "help(kernel): its signature and methods");
    type(s, "help(hk.ops.binary.add_f32)\r");
    got = wait_for(s, "hk> ", 0);
    tap_ok(strstr(got, "\nhk.ops.binary.add_f32(const float *a, const float *b, float *c, size_t n)\n  c[0..n) = ") != NULL,
           "help of a family's kernel: its signature and the plugin's doc");
    type(s, "hk\r");
    got = wait_for(s, "hk> ", 0);
    tap_ok(strncmp(got, "hk\nhk: hipkit's module.", 23) == 0 && strstr(got, "\n  Devices             hk.backends") != NULL,
           "`hk` alone prints the module's sections");
    if (strncmp(got, "hk\nhk: hipkit's module.", 23) != 0)
        show("got", got);

    const char *rest;
    int status = finish(s, &rest);
    tap_ok(status == 0, "Ctrl-D exits 0 (got %d)", status);
    tap_ok(count_folders(dir) == 0, "no temporary folder is left behind");

    /* A kernel that never ends: the third Ctrl-C ends hipkit, as Ctrl-C
     * did before there was any other way. */
    start2(s, "-q", "--backend=host");
    wait_for(s, "hk> ", 0);
    type(s, "f = hk.compile('extern \"C\" __global__ void forever(volatile int *v) { while (v[0] == 0) {} }')\r");
    wait_for(s, "hk> ", 0);
    type(s, "f.forever:launch(1, 1, hk.alloc(1, 'i32'):fill(0))\r");
    wait_for(s, "\n", 1);
    usleep(300000);
    for (int i = 0; i < 3; i++) {
        type(s, "\x03");
        usleep(200000);
    }
    long end = now_ms() + TIMEOUT_MS;
    int wstatus = 0;
    while (waitpid(s->pid, &wstatus, WNOHANG) != s->pid && now_ms() < end)
        pump(s, 50);
    ok = WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGINT;
    tap_ok(ok, "the third Ctrl-C ends a session stuck in a kernel");
    if (!ok) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, &wstatus, 0);
    }
    close(s->fd);
    free(s);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", tmp);
    return tap_done();
}
