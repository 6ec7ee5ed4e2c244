/* Filtering preprocessed text down to the user's lines (see pp_text.h). */
#include "pp_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses a line marker at s ("# 12 \"file\" 1 3"); 1 when it is one. */
static int parse_marker(const char *s, size_t len, long *line, char *file, size_t cap, int *system)
{
    if (len < 4 || s[0] != '#' || s[1] != ' ' || s[2] < '0' || s[2] > '9')
        return 0;
    char *end;
    *line = strtol(s + 2, &end, 10);
    if (*end != ' ' || end[1] != '"')
        return 0;
    const char *q = end + 2, *stop = s + len;
    size_t n = 0;
    while (q < stop && *q != '"') {
        if (*q == '\\' && q + 1 < stop)
            q++;
        if (n + 1 < cap)
            file[n++] = *q;
        q++;
    }
    file[n] = 0;
    *system = 0;
    for (q++; q < stop; q++)
        if (*q == '3' && (q[-1] == ' ') && (q + 1 == stop || q[1] == ' '))
            *system = 1;
    return 1;
}

void hkc_pp_filter(const char *cpp_out, hkc_pp_is_user is_user, void *arg, hkc_strbuf *out)
{
    char file[1024] = "";
    long line = 1;
    int user = 0, placed = 0;
    for (const char *s = cpp_out; *s;) {
        size_t len = strcspn(s, "\n");
        long mline;
        char mfile[1024];
        int system;
        if (parse_marker(s, len, &mline, mfile, sizeof mfile, &system)) {
            snprintf(file, sizeof file, "%s", mfile);
            line = mline;
            user = is_user(file, system, arg);
            placed = 0;
        } else {
            if (user) {
                if (!placed)
                    hkc_strbuf_printf(out, "# %ld \"%s\"\n", line, file);
                placed = 1;
                hkc_strbuf_append(out, s, len);
                hkc_strbuf_puts(out, "\n");
            }
            line++;
        }
        s += len + (s[len] == '\n');
    }
}

int hkc_pp_locate(const char *filtered, int want, char *file, size_t cap)
{
    long line = 0;
    int n = 1;
    file[0] = 0;
    for (const char *s = filtered; *s && n <= want; n++) {
        size_t len = strcspn(s, "\n");
        long mline;
        int system;
        char mfile[1024];
        if (parse_marker(s, len, &mline, mfile, sizeof mfile, &system)) {
            snprintf(file, cap, "%s", mfile);
            line = mline - 1; /* the next line is mline */
        } else {
            line++;
        }
        if (n == want)
            return line > 0 ? (int)line : 0;
        s += len + (s[len] == '\n');
    }
    return 0;
}

void hkc_pp_line_directive(hkc_strbuf *out, int line, const char *name)
{
    hkc_strbuf_printf(out, "#line %d \"", line);
    for (const char *p = name; *p; p++) {
        if (*p == '"' || *p == '\\')
            hkc_strbuf_printf(out, "\\%c", *p);
        else if ((unsigned char)*p < 0x20)
            hkc_strbuf_puts(out, "?");
        else
            hkc_strbuf_append(out, p, 1);
    }
    hkc_strbuf_puts(out, "\"\n");
}

int hkc_pp_is_pp_flag(const char *flag)
{
    return !strncmp(flag, "-D", 2) || !strncmp(flag, "-U", 2) || !strncmp(flag, "-I", 2);
}
