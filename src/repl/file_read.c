#include "file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hkl_file_open(const char *path, FILE **out)
{
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer
     * forever; the type is checked on the descriptor (no race with a
     * rename), and a regular file ignores the flag. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int e = fstat(fd, &st) != 0 ? -errno
            : S_ISDIR(st.st_mode) ? -EISDIR
            : !S_ISREG(st.st_mode) ? HKL_ENOTREG
                                   : 0;
    FILE *f = e ? NULL : fdopen(fd, "rb");
    if (!e && !f)
        e = -errno;
    if (e) {
        close(fd);
        return e;
    }
    *out = f;
    return 0;
}

const char *hkl_file_strerror(int e)
{
    if (e == HKL_ENOTREG)
        return "not a regular file (a FIFO, a socket or a device)";
    return strerror(-e);
}

int hkl_file_read(const char *path, char **data, size_t *size)
{
    FILE *f = NULL;
    int e = hkl_file_open(path, &f);
    if (e)
        return e;
    struct stat st;
    e = fstat(fileno(f), &st) != 0 ? -errno : 0;
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

int hkl_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}
