/* Which symbols a shared object file exports, read from its bytes: the
 * plugin loader asks before dlopen, which would run the object's
 * constructors whether or not it turns out to be a plugin. Every offset
 * and size is checked against the file: the bytes may be anything. */
#include <elf.h>
#include <string.h>

#include "elf_exports.h"

/* Section i's header, if it lies inside the file. */
static int section(const unsigned char *c, size_t size, const Elf64_Ehdr *eh, unsigned i, Elf64_Shdr *out)
{
    if (i >= eh->e_shnum)
        return 0;
    uint64_t at = eh->e_shoff + (uint64_t)i * sizeof *out;
    if (at < eh->e_shoff || at > size || size - at < sizeof *out)
        return 0;
    memcpy(out, c + at, sizeof *out);
    return out->sh_offset <= size && out->sh_size <= size - out->sh_offset;
}

int hkc_elf_exports(const void *data, size_t size, const char *const *names, int n, int *found)
{
    const unsigned char *c = data;
    for (int k = 0; k < n; k++)
        found[k] = 0;
    Elf64_Ehdr eh;
    if (size < sizeof eh || memcmp(c, ELFMAG, SELFMAG) != 0 || c[EI_CLASS] != ELFCLASS64 ||
        c[EI_DATA] != ELFDATA2LSB)
        return HKC_ELF_NOT_ELF;
    memcpy(&eh, c, sizeof eh);
    if (eh.e_type != ET_DYN || eh.e_shentsize != sizeof(Elf64_Shdr))
        return HKC_ELF_NOT_ELF;
    if (!eh.e_shnum || eh.e_shoff > size)
        return HKC_ELF_NO_SYMBOLS;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sym, str;
        if (!section(c, size, &eh, i, &sym) || sym.sh_type != SHT_DYNSYM)
            continue;
        if (sym.sh_entsize != sizeof(Elf64_Sym) || !section(c, size, &eh, sym.sh_link, &str) ||
            str.sh_type != SHT_STRTAB)
            return HKC_ELF_NO_SYMBOLS;
        size_t count = sym.sh_size / sizeof(Elf64_Sym);
        for (size_t s = 1; s < count; s++) {
            Elf64_Sym e;
            memcpy(&e, c + sym.sh_offset + s * sizeof e, sizeof e);
            unsigned bind = ELF64_ST_BIND(e.st_info), vis = ELF64_ST_VISIBILITY(e.st_other);
            if (e.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
                (vis != STV_DEFAULT && vis != STV_PROTECTED) || e.st_name >= str.sh_size)
                continue;
            const char *name = (const char *)c + str.sh_offset + e.st_name;
            size_t room = str.sh_size - e.st_name;
            for (int k = 0; k < n; k++) {
                size_t len = strlen(names[k]);
                if (len < room && !memcmp(name, names[k], len) && !name[len])
                    found[k] = 1;
            }
        }
        return 0;
    }
    return HKC_ELF_NO_SYMBOLS;
}
