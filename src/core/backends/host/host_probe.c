/* Proving a shared object a user hands to hk.load before this process loads
 * it (docs/RELIABILITY.md says why this way).
 *
 * A truncated or bit-flipped .so makes the dynamic loader assert ("Inconsistency
 * detected by ld.so") or fault while it relocates, and its constructors may
 * crash: none of that can be recovered from inside the process, since the
 * loader holds its own locks. So the bytes are checked twice: first their ELF
 * structure (cheap: the header and program headers lie within the file, one
 * PT_DYNAMIC inside a PT_LOAD), which names what is wrong with a truncated
 * file; then a forked child loads them and walks the kernel table, and only
 * when it exits cleanly does this process load them. Modules hipkit built
 * itself (a compile, a checksummed cache entry) skip the child. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_backend.h"
#include "hip/hipkit_host_abi.h"

#define PROBE_SECONDS 20 /* a child that takes longer is stuck, not slow */

/* The part ld.so reads first, as an x86-64 or AArch64 ELF64 shared object. */
int hkc_host_elf_check(const void *code, size_t size, hkc_strbuf *err)
{
    const unsigned char *c = code;
    Elf64_Ehdr eh;
    if (size < sizeof eh || memcmp(c, ELFMAG, SELFMAG) != 0) {
        hkc_strbuf_puts(err, "not an ELF shared object");
        return HK_EFORMAT;
    }
    memcpy(&eh, c, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_DYN ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_ehsize != sizeof eh) {
        hkc_strbuf_puts(err, "its ELF header is not that of a 64-bit little-endian shared object");
        return HK_EFORMAT;
    }
    if (!eh.e_phnum || eh.e_phoff > size || (size - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum) {
        hkc_strbuf_printf(err, "truncated or damaged: %u program headers at offset %llu do not fit "
                               "in its %zu bytes", eh.e_phnum, (unsigned long long)eh.e_phoff, size);
        return HK_EFORMAT;
    }
    int loads = 0, dyn = 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, c + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC)
            continue;
        if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset || ph.p_filesz > ph.p_memsz) {
            hkc_strbuf_printf(err, "truncated or damaged: a %s segment (bytes %llu to %llu) lies "
                                   "outside its %zu bytes", ph.p_type == PT_LOAD ? "loadable" : "dynamic",
                              (unsigned long long)ph.p_offset,
                              (unsigned long long)(ph.p_offset + ph.p_filesz), size);
            return HK_EFORMAT;
        }
        loads += ph.p_type == PT_LOAD;
        dyn += ph.p_type == PT_DYNAMIC;
    }
    if (!loads || dyn != 1) {
        hkc_strbuf_printf(err, "damaged: %d loadable and %d dynamic segments", loads, dyn);
        return HK_EFORMAT;
    }
    return 0;
}

#define PROBE_LOADED "\nhipkit-probe: loaded\n"

/* In the child: load, walk what the parent will read, say so, exit 0. */
static _Noreturn void child(const char *path, int out)
{
    dup2(out, 2);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        if (write(2, e, strlen(e)) < 0)
            _exit(3);
        _exit(2);
    }
    const uint32_t *count = dlsym(dl, "hk_host_kernel_count");
    const hk_host_kernel_desc *k = dlsym(dl, "hk_host_kernels");
    if (count && k) { /* faults here if the table points nowhere */
        volatile size_t sum = 0;
        for (uint32_t i = 0; i < *count; i++) {
            sum += strlen(k[i].name);
            for (uint32_t p = 0; p < k[i].nparams && p < 64; p++)
                sum += k[i].param_size[p] + k[i].param_align[p];
        }
    }
    /* said before exiting: a tool watching the process (valgrind) may make
     * the exit itself fail, e.g. on the other threads' memory a fork leaves
     * unreachable in the child */
    if (write(2, PROBE_LOADED, sizeof PROBE_LOADED - 1) < 0)
        _exit(3);
    _exit(0);
}

/* Reads the child's stderr into err until it closes, or the deadline. */
static int drain(int fd, time_t deadline, hkc_strbuf *msg)
{
    char buf[512];
    for (;;) {
        int left = (int)(deadline - time(NULL));
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, left * 1000) == 0)
            return -1;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        if (msg->len < 4000)
            hkc_strbuf_printf(msg, "%.*s", (int)n, buf);
    }
}

int hkc_host_probe_load(const char *path, hkc_strbuf *err)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        hkc_strbuf_printf(err, "cannot check the module in a child process: %s", strerror(errno));
        return HK_EIO;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        child(path, pipefd[1]);
    }
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        hkc_strbuf_printf(err, "cannot check the module in a child process: %s", strerror(errno));
        return HK_EIO;
    }
    hkc_strbuf msg;
    hkc_strbuf_init(&msg);
    int stuck = drain(pipefd[0], time(NULL) + PROBE_SECONDS, &msg);
    close(pipefd[0]);
    if (stuck)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int loaded = msg.data && strstr(msg.data, PROBE_LOADED) != NULL;
    while (msg.len && (msg.data[msg.len - 1] == '\n' || msg.data[msg.len - 1] == ' '))
        msg.data[--msg.len] = 0;
    int r = 0;
    if (loaded && !stuck && !WIFSIGNALED(status)) {
        /* the module loaded and its table was read */
    } else if (stuck) {
        hkc_strbuf_printf(err, "loading it in a child process did not finish in %d s", PROBE_SECONDS);
        r = HK_EFORMAT;
    } else if (WIFSIGNALED(status)) {
        hkc_strbuf_printf(err, "damaged: loading it killed a child process (%s)%s%s",
                          strsignal(WTERMSIG(status)), msg.len ? ": " : "", msg.len ? msg.data : "");
        r = HK_EFORMAT;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        hkc_strbuf_printf(err, "cannot load the module%s%s", msg.len ? ": " : "",
                          msg.len ? msg.data : " (a child process failed to)");
        r = HK_EFORMAT;
    }
    hkc_strbuf_free(&msg);
    return r;
}
