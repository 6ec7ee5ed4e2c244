/* Disassembly through LLVM's llvm-objdump, for processors the installed
 * comgr cannot decode (ROCm 5.2's comgr refuses gfx940's isa name, which
 * Debian's LLVM 15 disassembles): the code object goes to a private
 * folder, llvm-objdump prints it. Needs no device. */
#include <stdio.h>
#include <string.h>

#include "hip_objdump.h"
#include "process.h"

/* The newest llvm-objdump: versioned on PATH (Debian's llvm-objdump-15)
 * or in an LLVM folder, the plain name last (Debian's is LLVM 14's, which
 * aborts on gfx940) */
static int find_objdump(char *path, size_t cap)
{
    static const char *const names[] = {"llvm-objdump-19", "llvm-objdump-18", "llvm-objdump-17", "llvm-objdump-16",
                                        "llvm-objdump-15", "llvm-objdump"};
    static const char *const dirs[] = {"/usr/lib/llvm-19/bin", "/usr/lib/llvm-18/bin", "/usr/lib/llvm-17/bin",
                                       "/usr/lib/llvm-16/bin", "/usr/lib/llvm-15/bin", "/opt/rocm/llvm/bin",
                                       NULL};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (hkc_find_program(names[i], NULL, dirs, path, cap) == 0)
            return 0;
    return -1;
}

int hkc_hip_objdump_disasm(const void *elf, size_t size, const char *proc, const char *kernel, hkc_strbuf *out)
{
    char tool[4096], dir[4096], file[4200], mcpu[128], only[600];
    if (find_objdump(tool, sizeof tool) != 0) {
        hkc_strbuf_puts(out, "no llvm-objdump (LLVM) to disassemble it instead");
        return HK_EBACKEND;
    }
    int e = hkc_tempdir_create("disasm", dir, sizeof dir);
    if (e == 0)
        e = hkc_tempdir_write(dir, "code.o", elf, size);
    if (e != 0) {
        hkc_strbuf_printf(out, "cannot write the code object for llvm-objdump: %s", strerror(-e));
        if (dir[0])
            hkc_tempdir_remove(dir);
        return HK_EIO;
    }
    snprintf(file, sizeof file, "%s/code.o", dir);
    snprintf(mcpu, sizeof mcpu, "--mcpu=%s", proc);
    snprintf(only, sizeof only, "--disassemble-symbols=%s", kernel ? kernel : "");
    char *argv[] = {tool, "-d", "--no-show-raw-insn", mcpu, file, kernel ? only : NULL, NULL};
    hkc_strbuf got;
    hkc_strbuf_init(&got);
    int status = hkc_run_capture(argv, NULL, &got);
    hkc_tempdir_remove(dir);
    if (status != 0) { /* one line of what it said: its error, not a crash dump */
        const char *say = got.len ? got.data : "no output";
        const char *err = got.len ? strstr(got.data, "ERROR:") : NULL;
        if (!err && got.len)
            err = strstr(got.data, "error:");
        if (err) {
            while (err > got.data && err[-1] != '\n')
                err--;
            say = err;
        }
        hkc_strbuf_printf(out, "%s failed: %.*s", tool, (int)(strcspn(say, "\n") < 200 ? strcspn(say, "\n") : 200),
                          say);
        hkc_strbuf_free(&got);
        return HK_EBACKEND;
    }
    hkc_strbuf_printf(out, "; disassembled by %s %s (comgr cannot decode %s)\n", tool, mcpu, proc);
    hkc_strbuf_puts(out, got.len ? got.data : "");
    int oom = got.oom || out->oom;
    hkc_strbuf_free(&got);
    return oom ? HK_ENOMEM : 0;
}
