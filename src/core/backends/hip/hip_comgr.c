/* AMD's code object manager (comgr) on one AMDGPU ELF: kernel metadata
 * through its metadata API, disassembly through its instruction decoder.
 *
 * comgr 2.4 (ROCm 5.2) must not see malformed input: its whole-object
 * disassembly action (llvm-objdump inside) calls exit(1) on a corrupt or
 * non-AMDGPU ELF, and its metadata reader (LLVM 15's msgpack reader) traps
 * with SIGILL on some malformed documents. So this file checks the ELF
 * headers and every metadata note before comgr reads them, and walks the
 * symbol table itself, handing comgr only instruction bytes to decode. */
#if __has_include(<amd_comgr/amd_comgr.h>) /* ROCm 6 */
#include <amd_comgr/amd_comgr.h>
#else
#include <amd_comgr.h>
#endif
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_comgr.h"
#include "hip_objdump.h"

#define NT_AMD_HSA_METADATA 10 /* YAML metadata, code object v2 */
#define NT_AMDGPU_METADATA 32  /* msgpack metadata, code object v3+ */
#define ISA_PREFIX "amdgcn-amd-amdhsa--"

static int comgr_fail(hkc_strbuf *err, int code, const char *call, amd_comgr_status_t st)
{
    const char *s = NULL;
    if (amd_comgr_status_string(st, &s) != AMD_COMGR_STATUS_SUCCESS || !s)
        s = "unknown status";
    hkc_strbuf_printf(err, "comgr %s failed: %s", call, s);
    return code;
}

static void copy_trunc(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* ------------------------------------------------------------- ELF checks */

typedef struct elf_file {
    const unsigned char *p;
    size_t size;
    Elf64_Ehdr eh;
} elf_file;

static int in_file(const elf_file *f, uint64_t off, uint64_t n)
{
    return off <= f->size && n <= f->size - off;
}

/* The code object may sit unaligned inside a bundle: copy, never cast. */
static int elf_get(const elf_file *f, uint64_t off, void *out, size_t n)
{
    if (!in_file(f, off, n))
        return -1;
    memcpy(out, f->p + off, n);
    return 0;
}

static int elf_shdr(const elf_file *f, unsigned i, Elf64_Shdr *sh)
{
    if (i >= f->eh.e_shnum)
        return -1;
    return elf_get(f, f->eh.e_shoff + (uint64_t)i * sizeof *sh, sh, sizeof *sh);
}

static int elf_open(elf_file *f, const void *data, size_t size, hkc_strbuf *err)
{
    const Elf64_Ehdr *e = &f->eh;
    f->p = data;
    f->size = size;
    if (!data || size < sizeof f->eh || memcmp(data, ELFMAG, SELFMAG) != 0) {
        hkc_strbuf_puts(err, "not an AMDGPU code object: not an ELF file");
        return HK_EFORMAT;
    }
    memcpy(&f->eh, data, sizeof f->eh);
    if (e->e_ident[EI_CLASS] != ELFCLASS64 || e->e_ident[EI_DATA] != ELFDATA2LSB ||
        e->e_machine != EM_AMDGPU) {
        hkc_strbuf_printf(err, "not an AMDGPU code object: an ELF for machine %u", e->e_machine);
        return HK_EFORMAT;
    }
    /* To LLVM a section count of 0 with a table present means "the count
     * is in section 0": refused, so that comgr reads no section unchecked. */
    if ((e->e_shnum && e->e_shentsize != sizeof(Elf64_Shdr)) ||
        (e->e_phnum && e->e_phentsize != sizeof(Elf64_Phdr)) || (!e->e_shnum && e->e_shoff) ||
        !in_file(f, e->e_shoff, (uint64_t)e->e_shnum * sizeof(Elf64_Shdr)) ||
        !in_file(f, e->e_phoff, (uint64_t)e->e_phnum * sizeof(Elf64_Phdr))) {
        hkc_strbuf_puts(err, "corrupt AMDGPU code object: bad section or program header table");
        return HK_EFORMAT;
    }
    return 0;
}

/* Whether the msgpack object at *pos holds only what code object metadata
 * uses: maps with string keys, arrays, strings, numbers, booleans, nil.
 * Anything else (binary, extensions, other map keys) or a truncated object
 * is -1: those are what LLVM's reader and comgr's printer trip on. */
static int mp_check(const unsigned char *p, size_t n, size_t *pos, int depth, int key)
{
    if (depth > 32 || *pos >= n)
        return -1;
    unsigned c = p[(*pos)++];
    uint64_t len = 0, items = 0;
    int str = 0, map = 0, lenbytes = 0;
    if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
        ; /* fixint, nil, bool */
    else if (c <= 0x8f)
        map = 1, items = c & 0xf;
    else if (c <= 0x9f)
        items = c & 0xf;
    else if (c <= 0xbf)
        str = 1, len = c & 0x1f;
    else if (c == 0xca || c == 0xcb)
        len = c == 0xca ? 4 : 8; /* float */
    else if (c >= 0xcc && c <= 0xd3)
        len = 1u << (c & 3); /* uint8..64, int8..64 */
    else if (c >= 0xd9 && c <= 0xdb)
        str = 1, lenbytes = 1 << (c - 0xd9);
    else if (c >= 0xdc && c <= 0xdf)
        map = c >= 0xde, lenbytes = c & 1 ? 4 : 2;
    else
        return -1;
    if (key && !str)
        return -1;
    if (lenbytes && n - *pos < (size_t)lenbytes)
        return -1;
    uint64_t v = 0;
    for (int i = 0; i < lenbytes; i++)
        v = v << 8 | p[(*pos)++]; /* big-endian */
    if (lenbytes)
        *(str ? &len : &items) = v;
    if (len > n - *pos || items > n - (*pos += len)) /* an item takes a byte at least */
        return -1;
    for (uint64_t i = 0; i < items; i++)
        if (mp_check(p, n, pos, depth + 1, map) || (map && mp_check(p, n, pos, depth + 1, 0)))
            return -1;
    return 0;
}

/* Walks the notes of a PT_NOTE segment or SHT_NOTE section as LLVM's note
 * iterator does, checking each note that comgr takes for metadata. LLVM 15
 * pads names and descriptions to 4 bytes; later ones to the area's
 * alignment when it is 8: both walks are checked. */
static int check_note_area(const elf_file *f, uint64_t off, uint64_t size, uint64_t align,
                           hkc_strbuf *err)
{
    if (!in_file(f, off, size)) {
        hkc_strbuf_puts(err, "corrupt AMDGPU code object: a note area runs past the end of the file");
        return HK_EFORMAT;
    }
    for (uint64_t a = 4; a == 4 || (a == 8 && align == 8); a += 4) {
        for (uint64_t pos = 0, next; size - pos >= sizeof(Elf64_Nhdr); pos = next) {
            Elf64_Nhdr nh;
            memcpy(&nh, f->p + off + pos, sizeof nh);
            uint64_t head = (sizeof nh + (uint64_t)nh.n_namesz + a - 1) & ~(a - 1);
            next = pos + head + (((uint64_t)nh.n_descsz + a - 1) & ~(a - 1));
            if (next > size)
                break; /* where LLVM stops with an error */
            const char *name = (const char *)f->p + off + pos + sizeof nh;
            size_t namelen = nh.n_namesz ? nh.n_namesz - 1 : 0, at = 0;
            if (namelen == 3 && !memcmp(name, "AMD", 3) && nh.n_type == NT_AMD_HSA_METADATA) {
                hkc_strbuf_puts(err, "code object v2 (YAML metadata) is not supported: rebuild "
                                     "it with ROCm 4 or newer");
                return HK_EFORMAT;
            }
            if (namelen == 6 && !memcmp(name, "AMDGPU", 6) && nh.n_type == NT_AMDGPU_METADATA &&
                mp_check(f->p + off + pos + head, nh.n_descsz, &at, 0, 0) != 0) {
                hkc_strbuf_puts(err, "corrupt AMDGPU code object: malformed metadata note (msgpack)");
                return HK_EFORMAT;
            }
        }
    }
    return 0;
}

static int check_notes(const elf_file *f, hkc_strbuf *err)
{
    int rc = 0;
    for (unsigned i = 0; i < f->eh.e_phnum && !rc; i++) {
        Elf64_Phdr ph;
        elf_get(f, f->eh.e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph);
        if (ph.p_type == PT_NOTE)
            rc = check_note_area(f, ph.p_offset, ph.p_filesz, ph.p_align, err);
    }
    for (unsigned i = 0; i < f->eh.e_shnum && !rc; i++) {
        Elf64_Shdr sh;
        elf_shdr(f, i, &sh);
        if (sh.sh_type == SHT_NOTE)
            rc = check_note_area(f, sh.sh_offset, sh.sh_size, sh.sh_addralign, err);
    }
    return rc;
}

/* --------------------------------------------------------------- metadata */

static int md_error(hkc_strbuf *err, const char *kernel, const char *what, const char *problem)
{
    int named = kernel && kernel[0];
    hkc_strbuf_printf(err, "code object metadata%s%s%s: %s %s", named ? " of kernel '" : "",
                      named ? kernel : "", named ? "'" : "", what, problem);
    return HK_EFORMAT;
}

static int md_kind(amd_comgr_metadata_node_t n, amd_comgr_metadata_kind_t want, const char *what,
                   const char *kernel, hkc_strbuf *err)
{
    static const char *const names[] = {"is not a scalar", "is not a scalar", "is not a map",
                                        "is not a list"};
    amd_comgr_metadata_kind_t kind;
    amd_comgr_status_t st = amd_comgr_get_metadata_kind(n, &kind);
    if (st != AMD_COMGR_STATUS_SUCCESS)
        return comgr_fail(err, HK_EBACKEND, "amd_comgr_get_metadata_kind", st);
    return kind == want ? 0 : md_error(err, kernel, what, names[want & 3]);
}

/* The scalar at `key` of map m, truncated into out; comgr hands every
 * scalar over as text. 1 found, 0 absent, or a negative HK_E* code. */
static int md_str(amd_comgr_metadata_node_t m, const char *key, const char *kernel, char *out,
                  size_t cap, hkc_strbuf *err)
{
    amd_comgr_metadata_node_t v;
    if (amd_comgr_metadata_lookup(m, key, &v) != AMD_COMGR_STATUS_SUCCESS)
        return 0;
    size_t n = 0;
    char *buf = NULL;
    int rc = md_kind(v, AMD_COMGR_METADATA_KIND_STRING, key, kernel, err);
    amd_comgr_status_t st = AMD_COMGR_STATUS_SUCCESS;
    if (rc == 0 && (st = amd_comgr_get_metadata_string(v, &n, NULL)) == AMD_COMGR_STATUS_SUCCESS)
        st = (buf = malloc(n + 1)) ? amd_comgr_get_metadata_string(v, &n, buf)
                                   : AMD_COMGR_STATUS_ERROR_OUT_OF_RESOURCES;
    if (st != AMD_COMGR_STATUS_SUCCESS)
        rc = comgr_fail(err, HK_EBACKEND, "amd_comgr_get_metadata_string", st);
    else if (rc == 0) {
        buf[n] = 0;
        copy_trunc(out, cap, buf);
        rc = 1;
    }
    free(buf);
    amd_comgr_destroy_metadata(v);
    return rc;
}

/* Fields of a kernel or an argument: 's' a char array, 'u' a uint32_t
 * (0 when absent), 'i' an int (-1 when absent). */
typedef struct md_field {
    const char *key;
    char type;
    size_t off, cap;
} md_field;

#define MD_STR(t, field, key) {key, 's', offsetof(t, field), sizeof(((t *)0)->field)}
#define MD_NUM(t, field, key, type) {key, type, offsetof(t, field), 0}

static const md_field kernel_fields[] = {
    MD_STR(hk_code_kernel, name, ".name"),
    MD_STR(hk_code_kernel, symbol, ".symbol"),
    MD_NUM(hk_code_kernel, kernarg_size, ".kernarg_segment_size", 'u'),
    MD_NUM(hk_code_kernel, kernarg_align, ".kernarg_segment_align", 'u'),
    MD_NUM(hk_code_kernel, sgprs, ".sgpr_count", 'i'),
    MD_NUM(hk_code_kernel, vgprs, ".vgpr_count", 'i'),
    MD_NUM(hk_code_kernel, agprs, ".agpr_count", 'i'),
    MD_NUM(hk_code_kernel, sgpr_spills, ".sgpr_spill_count", 'i'),
    MD_NUM(hk_code_kernel, vgpr_spills, ".vgpr_spill_count", 'i'),
    MD_NUM(hk_code_kernel, lds_bytes, ".group_segment_fixed_size", 'u'),
    MD_NUM(hk_code_kernel, scratch_bytes, ".private_segment_fixed_size", 'u'),
    MD_NUM(hk_code_kernel, max_flat_workgroup_size, ".max_flat_workgroup_size", 'u'),
    MD_NUM(hk_code_kernel, wavefront_size, ".wavefront_size", 'u'),
    {NULL, 0, 0, 0},
};

static const md_field arg_fields[] = {
    MD_STR(hk_code_arg, name, ".name"),
    MD_STR(hk_code_arg, type_name, ".type_name"),
    MD_STR(hk_code_arg, value_kind, ".value_kind"),
    MD_STR(hk_code_arg, address_space, ".address_space"),
    MD_NUM(hk_code_arg, size, ".size", 'u'),
    MD_NUM(hk_code_arg, offset, ".offset", 'u'),
    {NULL, 0, 0, 0},
};

/* Numbers are decimal, or hex as LLVM's hex mode writes them. kernel may
 * be the name field being filled: errors name the kernel once it is read. */
static int md_fields(amd_comgr_metadata_node_t m, const md_field *fs, void *obj, const char *kernel,
                     hkc_strbuf *err)
{
    for (const md_field *f = fs; f->key; f++) {
        char text[64], why[96], *end = text, *dst = (char *)obj + f->off;
        int rc = f->type == 's' ? md_str(m, f->key, kernel, dst, f->cap, err)
                                : md_str(m, f->key, kernel, text, sizeof text, err);
        if (rc < 0)
            return rc;
        if (f->type == 's')
            continue;
        unsigned long long v = 0, max = f->type == 'i' ? INT_MAX : UINT32_MAX;
        if (rc == 1) {
            errno = 0;
            int hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
            v = text[0] >= '0' && text[0] <= '9' ? strtoull(text, &end, hex ? 16 : 10) : ULLONG_MAX;
            snprintf(why, sizeof why, "is \"%s\", not a count", text);
            if (v > max || errno || *end)
                return md_error(err, kernel, f->key, why);
        }
        if (f->type == 'i')
            *(int *)dst = rc == 1 ? (int)v : -1;
        else
            *(uint32_t *)dst = (uint32_t)v;
    }
    return 0;
}

/* Each map of list `key` of map m through read() into element i of *out,
 * calloc'd with `size`-byte elements. *count is set before the items are
 * read, so that the caller frees what was read when one fails. */
typedef int (*md_item_fn)(amd_comgr_metadata_node_t item, void *out, const char *kernel,
                          hkc_strbuf *err);

static int md_list(amd_comgr_metadata_node_t m, const char *key, const char *kernel, size_t size,
                   md_item_fn read, void **out, int *count, hkc_strbuf *err)
{
    amd_comgr_metadata_node_t list, item;
    size_t n = 0;
    if (amd_comgr_metadata_lookup(m, key, &list) != AMD_COMGR_STATUS_SUCCESS)
        return 0; /* no kernels, no arguments */
    int rc = md_kind(list, AMD_COMGR_METADATA_KIND_LIST, key, kernel, err);
    amd_comgr_status_t st = AMD_COMGR_STATUS_SUCCESS;
    if (rc == 0 && (st = amd_comgr_get_metadata_list_size(list, &n)) != AMD_COMGR_STATUS_SUCCESS)
        rc = comgr_fail(err, HK_EBACKEND, "amd_comgr_get_metadata_list_size", st);
    if (rc == 0 && n && (n > INT_MAX || !(*out = calloc(n, size))))
        rc = HK_ENOMEM;
    if (rc == 0)
        *count = (int)n;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if ((st = amd_comgr_index_list_metadata(list, i, &item)) != AMD_COMGR_STATUS_SUCCESS)
            rc = comgr_fail(err, HK_EBACKEND, "amd_comgr_index_list_metadata", st);
        else if ((rc = md_kind(item, AMD_COMGR_METADATA_KIND_MAP, key, kernel, err)) == 0)
            rc = read(item, (char *)*out + i * size, kernel, err);
        if (st == AMD_COMGR_STATUS_SUCCESS)
            amd_comgr_destroy_metadata(item);
    }
    amd_comgr_destroy_metadata(list);
    return rc;
}

static int read_arg(amd_comgr_metadata_node_t m, void *out, const char *kernel, hkc_strbuf *err)
{
    hk_code_arg *a = out;
    int rc = md_fields(m, arg_fields, a, kernel, err);
    a->hidden = strncmp(a->value_kind, "hidden_", 7) == 0;
    return rc;
}

static int read_kernel(amd_comgr_metadata_node_t m, void *out, const char *kernel, hkc_strbuf *err)
{
    hk_code_kernel *k = out;
    (void)kernel;
    void *args = NULL;
    int rc = md_fields(m, kernel_fields, k, k->name, err);
    if (rc == 0 && !k->name[0])
        return md_error(err, NULL, "a kernel", "has no .name");
    if (rc == 0 && !k->symbol[0]) /* the ABI's name for its descriptor */
        snprintf(k->symbol, sizeof k->symbol, "%s.kd", k->name);
    if (rc == 0)
        rc = md_list(m, ".args", k->name, sizeof *k->args, read_arg, &args, &k->nargs, err);
    k->args = args;
    return rc;
}

static void free_kernels(hk_code_kernel *ks, int n)
{
    for (int i = 0; ks && i < n; i++)
        free(ks[i].args);
    free(ks);
}

int hkc_hip_comgr_kernels(const void *elf, size_t size, hk_code_entry *entry, hkc_strbuf *err)
{
    elf_file f;
    int rc = elf_open(&f, elf, size, err), n = 0;
    if (rc == 0)
        rc = check_notes(&f, err);
    if (rc != 0)
        return rc;
    amd_comgr_data_t data;
    amd_comgr_metadata_node_t root;
    void *ks = NULL;
    char target[sizeof entry->target + sizeof ISA_PREFIX] = "";
    amd_comgr_status_t st = amd_comgr_create_data(
        f.eh.e_type == ET_REL ? AMD_COMGR_DATA_KIND_RELOCATABLE : AMD_COMGR_DATA_KIND_EXECUTABLE,
        &data);
    if (st != AMD_COMGR_STATUS_SUCCESS)
        return comgr_fail(err, HK_EBACKEND, "amd_comgr_create_data", st);
    if ((st = amd_comgr_set_data(data, size, elf)) != AMD_COMGR_STATUS_SUCCESS)
        rc = comgr_fail(err, HK_EBACKEND, "amd_comgr_set_data", st);
    else if ((st = amd_comgr_get_data_metadata(data, &root)) != AMD_COMGR_STATUS_SUCCESS) {
        rc = comgr_fail(err, HK_EFORMAT, "amd_comgr_get_data_metadata", st);
        hkc_strbuf_puts(err, " (no readable AMDGPU metadata note)");
    } else {
        rc = md_kind(root, AMD_COMGR_METADATA_KIND_MAP, "the document", NULL, err);
        if (rc == 0 && (rc = md_str(root, "amdhsa.target", NULL, target, sizeof target, err)) > 0)
            rc = 0;
        if (rc == 0)
            rc = md_list(root, "amdhsa.kernels", NULL, sizeof(hk_code_kernel), read_kernel, &ks, &n, err);
        amd_comgr_destroy_metadata(root);
    }
    amd_comgr_release_data(data);
    if (rc == HK_ENOMEM)
        hkc_strbuf_puts(err, "out of memory reading code object metadata");
    if (rc != 0) {
        free_kernels(ks, n);
        return rc;
    }
    if (target[0]) {
        size_t pre = strncmp(target, ISA_PREFIX, strlen(ISA_PREFIX)) ? 0 : strlen(ISA_PREFIX);
        copy_trunc(entry->target, sizeof entry->target, target + pre);
    }
    entry->kernels = ks;
    entry->nkernels = n;
    return 0;
}

/* ------------------------------------------------------------ disassembly */

typedef struct func_sym {
    const char *name;
    uint64_t value, size;
    unsigned shndx;
} func_sym;

typedef struct disasm_ctx {
    const unsigned char *sec; /* the function's section */
    uint64_t sec_addr, sec_size;
    const func_sym *fn;
    hkc_strbuf text, note;
} disasm_ctx;

static uint64_t read_cb(uint64_t from, char *to, uint64_t size, void *user)
{
    const disasm_ctx *c = user;
    if (from < c->sec_addr || from - c->sec_addr >= c->sec_size)
        return 0;
    uint64_t at = from - c->sec_addr, n = c->sec_size - at < size ? c->sec_size - at : size;
    memcpy(to, c->sec + at, n);
    return n;
}

static void inst_cb(const char *text, void *user)
{
    hkc_strbuf_puts(&((disasm_ctx *)user)->text, text + strspn(text, " \t"));
}

/* Branch targets, shown as objdump does: <kernel+0xa8>. */
static void addr_cb(uint64_t addr, void *user)
{
    disasm_ctx *c = user;
    if (addr >= c->fn->value)
        hkc_strbuf_printf(&c->note, " <%s+0x%" PRIx64 ">", c->fn->name, addr - c->fn->value);
    else
        hkc_strbuf_printf(&c->note, " <0x%" PRIx64 ">", addr);
}

static int func_cmp(const void *a, const void *b)
{
    const func_sym *x = a, *y = b;
    if (x->shndx != y->shndx)
        return x->shndx < y->shndx ? -1 : 1;
    return x->value < y->value ? -1 : x->value > y->value;
}

/* The functions of the symbol table (.symtab, else .dynsym) in executable
 * sections, sorted by address; the kernels (their ".kd" descriptor
 * symbols) are listed into `kernels` for messages. */
static int elf_functions(const elf_file *f, func_sym **out, size_t *count, hkc_strbuf *kernels)
{
    Elf64_Shdr tab = {0}, str, sh;
    for (unsigned i = 0; elf_shdr(f, i, &sh) == 0; i++)
        if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && tab.sh_type != SHT_SYMTAB))
            tab = sh;
    if (!tab.sh_type)
        return 0;
    if (tab.sh_entsize != sizeof(Elf64_Sym) || !in_file(f, tab.sh_offset, tab.sh_size) ||
        elf_shdr(f, tab.sh_link, &str) != 0 || !in_file(f, str.sh_offset, str.sh_size))
        return HK_EFORMAT;
    size_t nsym = tab.sh_size / sizeof(Elf64_Sym), len;
    if (!(*out = calloc(nsym + 1, sizeof **out)))
        return HK_ENOMEM;
    for (size_t i = 0; i < nsym; i++) {
        Elf64_Sym s;
        elf_get(f, tab.sh_offset + i * sizeof s, &s, sizeof s);
        const char *name = (const char *)f->p + str.sh_offset + s.st_name;
        if (s.st_name >= str.sh_size || (len = strnlen(name, str.sh_size - s.st_name)) == str.sh_size - s.st_name)
            continue; /* its name runs out of the string table */
        unsigned type = ELF64_ST_TYPE(s.st_info);
        if (type == STT_OBJECT && len > 3 && !strcmp(name + len - 3, ".kd"))
            hkc_strbuf_printf(kernels, "%s%.*s", kernels->len ? ", " : "", (int)(len - 3), name);
        if (type == STT_FUNC && elf_shdr(f, s.st_shndx, &sh) == 0 && (sh.sh_flags & SHF_EXECINSTR) &&
            sh.sh_type != SHT_NOBITS && in_file(f, sh.sh_offset, sh.sh_size))
            (*out)[(*count)++] = (func_sym){name, s.st_value, s.st_size, s.st_shndx};
    }
    qsort(*out, *count, sizeof **out, func_cmp);
    return 0;
}

/* One function, from its symbol for its size, else up to the next symbol
 * or the end of its section. Words that do not decode print as .long. */
static void disasm_function(const elf_file *f, amd_comgr_disassembly_info_t info,
                            const func_sym *fn, const func_sym *next, hkc_strbuf *out)
{
    Elf64_Shdr sh;
    elf_shdr(f, fn->shndx, &sh);
    disasm_ctx c = {f->p + sh.sh_offset, sh.sh_addr, sh.sh_size, fn, {0}, {0}};
    uint64_t at = fn->value - sh.sh_addr, stop = sh.sh_size; /* offsets in the section */
    if (fn->value < sh.sh_addr || at >= stop)
        at = stop; /* a symbol outside its section: nothing to show */
    else if (fn->size && fn->size < stop - at)
        stop = at + fn->size;
    else if (!fn->size && next && next->shndx == fn->shndx && next->value > fn->value &&
             next->value - sh.sh_addr < stop)
        stop = next->value - sh.sh_addr;
    hkc_strbuf_init(&c.text);
    hkc_strbuf_init(&c.note);
    hkc_strbuf_printf(out, "%s:\n", fn->name);
    for (uint64_t n = 0; stop - at >= 4; at += n) {
        hkc_strbuf_clear(&c.text);
        hkc_strbuf_clear(&c.note);
        if (amd_comgr_disassemble_instruction(info, sh.sh_addr + at, &c, &n) != AMD_COMGR_STATUS_SUCCESS ||
            n == 0 || n % 4 || n > stop - at) {
            hkc_strbuf_clear(&c.text);
            hkc_strbuf_clear(&c.note);
            hkc_strbuf_puts(&c.text, ".long (not an instruction)");
            n = 4;
        }
        hkc_strbuf_printf(out, "\t%-58s // %012" PRIX64 ":", c.text.data, sh.sh_addr + at);
        for (uint64_t w = 0; w < n; w += 4) {
            uint32_t word;
            memcpy(&word, c.sec + at + w, 4);
            hkc_strbuf_printf(out, " %08" PRIX32, word);
        }
        hkc_strbuf_printf(out, "%s\n", c.note.data);
    }
    hkc_strbuf_puts(out, "\n");
    hkc_strbuf_free(&c.text);
    hkc_strbuf_free(&c.note);
}

int hkc_hip_comgr_disasm(const void *elf, size_t size, const char *target, const char *kernel,
                         hkc_strbuf *out)
{
    elf_file f;
    hk_code_entry meta = {0};
    int rc = elf_open(&f, elf, size, out);
    if (rc == 0 && (!target || !target[0])) { /* the one its metadata states */
        if ((rc = hkc_hip_comgr_kernels(elf, size, &meta, out)) == 0 && !meta.target[0]) {
            hkc_strbuf_puts(out, "the code object states no target id: pass the one it was built for");
            rc = HK_EINVAL;
        }
        free_kernels(meta.kernels, meta.nkernels);
        target = meta.target;
    }
    if (rc != 0)
        return rc;
    func_sym *fs = NULL;
    size_t nfs = 0, pick = SIZE_MAX, klen = kernel ? strlen(kernel) : 0;
    hkc_strbuf kernels, isa;
    hkc_strbuf_init(&kernels);
    hkc_strbuf_init(&isa);
    if ((rc = elf_functions(&f, &fs, &nfs, &kernels)) == HK_EFORMAT)
        hkc_strbuf_puts(out, "corrupt AMDGPU code object: bad symbol table");
    if (klen > 3 && !strcmp(kernel + klen - 3, ".kd"))
        klen -= 3; /* its descriptor names the kernel too */
    for (size_t i = 0; rc == 0 && kernel && i < nfs; i++)
        if (!strncmp(fs[i].name, kernel, klen) && !fs[i].name[klen])
            pick = i;
    if (rc == 0 && kernel && pick == SIZE_MAX) {
        hkc_strbuf_printf(out, "no kernel '%s' in the code object; it has %s%s", kernel,
                          kernels.len ? "" : "none", kernels.data);
        rc = HK_ENOTFOUND;
    }
    /* The processor alone: features do not change how instructions decode,
     * and comgr 2.4 garbles a second one ("'-xnack c' is not a recognized
     * feature", on stderr). */
    hkc_strbuf_printf(&isa, "%s%.*s", strncmp(target, "amdgcn-", 7) ? ISA_PREFIX : "",
                      (int)strcspn(target, ":"), target);
    amd_comgr_disassembly_info_t info;
    amd_comgr_status_t st;
    if (rc == 0 && isa.oom)
        rc = HK_ENOMEM;
    if (rc == 0 && (st = amd_comgr_create_disassembly_info(isa.data, read_cb, inst_cb, addr_cb,
                                                             &info)) != AMD_COMGR_STATUS_SUCCESS) {
        /* a processor newer than this comgr (ROCm 5.2: gfx940): LLVM's
         * llvm-objdump, where one is installed, decodes it */
        char proc[64];
        snprintf(proc, sizeof proc, "%.*s", (int)strcspn(target, ":"), target);
        hkc_strbuf alt;
        hkc_strbuf_init(&alt);
        if (hkc_hip_objdump_disasm(elf, size, proc, pick == SIZE_MAX ? NULL : fs[pick].name, &alt) == 0) {
            hkc_strbuf_puts(out, alt.data);
            rc = out->oom ? HK_ENOMEM : 0;
        } else {
            rc = comgr_fail(out, HK_EBACKEND, "amd_comgr_create_disassembly_info", st);
            hkc_strbuf_printf(out, " (isa name \"%s\"); %s", isa.data, alt.data);
        }
        hkc_strbuf_free(&alt);
    } else if (rc == 0) {
        for (size_t i = 0; i < nfs; i++)
            if (pick == SIZE_MAX || i == pick)
                disasm_function(&f, info, &fs[i], i + 1 < nfs ? &fs[i + 1] : NULL, out);
        amd_comgr_destroy_disassembly_info(info);
        rc = out->oom ? HK_ENOMEM : 0;
    }
    if (rc == HK_ENOMEM)
        hkc_strbuf_puts(out, "out of memory disassembling");
    free(fs);
    hkc_strbuf_free(&kernels);
    hkc_strbuf_free(&isa);
    return rc;
}

static char version_text[64];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void version_init(void)
{
    size_t major = 0, minor = 0;
    amd_comgr_get_version(&major, &minor);
    snprintf(version_text, sizeof version_text, "comgr %zu.%zu", major, minor);
}

const char *hkc_hip_comgr_version(void)
{
    pthread_once(&version_once, version_init);
    return version_text;
}
