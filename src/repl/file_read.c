#include "file_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int hkl_file_read(const char *path, char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -errno;
    struct stat st;
    int e = fstat(fileno(f), &st) != 0 ? -errno : !S_ISREG(st.st_mode) ? -EISDIR : 0;
    char *buf = e ? NULL : malloc((size_t)st.st_size + 1);
    if (!e && !buf)
        e = -ENOMEM;
    size_t got = e ? 0 : fread(buf, 1, (size_t)st.st_size, f);
    if (!e && ferror(f))
        e = -EIO;
    fclose(f);
    if (e) {
        free(buf);
        return e;
    }
    buf[got] = 0;
    *data = buf;
    if (size)
        *size = got;
    return 0;
}
