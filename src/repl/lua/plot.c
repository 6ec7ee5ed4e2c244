/* Quick looks at a buffer: buf:plot(opts) draws text (a sparkline, or a
 * heatmap when given rows), buf:png(path, opts) writes an image.
 *
 * Both first reduce the data to a small grid of box means, reading the buffer
 * once, in order, in chunks (so a 10^8-element buffer on a device costs one
 * pass and 1 MiB of scratch). Non-finite values are left out of the means; a
 * cell with none finite shows blank (text) or grey (images). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HKL_HAVE_PNG
#include <png.h>
#endif

#include "hkl.h"

#define CHUNK_BYTES ((size_t)1 << 20)
#define MAX_IMAGE 16384

/* ------------------------------------------------------------- reading */

typedef struct reader {
    hk_buffer *b;
    hk_dtype t;
    size_t es, n;
    unsigned char *host, *tmp;
    size_t first, count; /* what tmp holds */
} reader;

/* Leaves its scratch (or nil) on the stack. */
static void reader_init(lua_State *L, reader *r, hk_buffer *b)
{
    hkl_check_addressable(L, hk_buffer_dtype(b), "plot");
    r->b = b;
    r->t = hk_buffer_dtype(b);
    r->es = hk_dtype_size(r->t);
    r->n = hk_buffer_length(b);
    r->host = hkl_host_ptr(b);
    r->first = r->count = 0;
    r->tmp = NULL;
    if (r->host) {
        hkl_check(L, hk_synchronize(hkl_ctx(L)));
        lua_pushnil(L);
    } else {
        r->tmp = lua_newuserdatauv(L, CHUNK_BYTES, 0);
    }
}


/* Element i; cheap when i follows the previous one. */
static double reader_get(lua_State *L, reader *r, size_t i)
{
    if (r->host)
        return hkl_load_f64(r->t, r->host + i * r->es);
    if (i < r->first || i >= r->first + r->count) {
        size_t per = CHUNK_BYTES / r->es;
        r->first = i;
        r->count = r->n - i < per ? r->n - i : per;
        hkl_check(L, hk_buffer_download(r->b, i * r->es, r->tmp, r->count * r->es));
    }
    return hkl_load_f64(r->t, r->tmp + (i - r->first) * r->es);
}

/* The data as rows x cols, reduced to gh x gw box means (gh <= rows,
 * gw <= cols) into g; also the finite min and max of the data itself. */
typedef struct grid {
    size_t gh, gw;
    double *g;
    double lo, hi;         /* over the finite cells of g */
    double dmin, dmax;     /* over the finite data */
} grid;

static void make_grid(lua_State *L, hk_buffer *b, size_t rows, size_t cols, grid *gr)
{
    reader r;
    reader_init(L, &r, b);
    size_t gh = gr->gh, gw = gr->gw;
    gr->g = lua_newuserdatauv(L, gh * gw * sizeof(double) + gw * sizeof(size_t), 0);
    size_t *cnt = (size_t *)(gr->g + gh * gw);
    gr->dmin = gr->lo = INFINITY;
    gr->dmax = gr->hi = -INFINITY;
    size_t gy = 0;
    double *row = gr->g;
    memset(row, 0, gw * sizeof *row);
    memset(cnt, 0, gw * sizeof *cnt);
    /* gh <= rows, so the grid row moves on by at most one per data row. */
    for (size_t y = 0; y < rows; y++) {
        if (y * gh / rows != gy) {
            for (size_t x = 0; x < gw; x++)
                row[x] = cnt[x] ? row[x] / (double)cnt[x] : NAN;
            row = gr->g + ++gy * gw;
            memset(row, 0, gw * sizeof *row);
            memset(cnt, 0, gw * sizeof *cnt);
        }
        for (size_t x = 0; x < cols; x++) {
            double v = reader_get(L, &r, y * cols + x);
            if (!isfinite(v))
                continue;
            size_t gx = x * gw / cols;
            row[gx] += v;
            cnt[gx]++;
            gr->dmin = v < gr->dmin ? v : gr->dmin;
            gr->dmax = v > gr->dmax ? v : gr->dmax;
        }
    }
    for (size_t x = 0; x < gw; x++)
        row[x] = cnt[x] ? row[x] / (double)cnt[x] : NAN;
    for (size_t k = 0; k < gh * gw; k++) {
        double v = gr->g[k];
        if (isfinite(v)) {
            gr->lo = v < gr->lo ? v : gr->lo;
            gr->hi = v > gr->hi ? v : gr->hi;
        }
    }
    lua_remove(L, -2); /* the reader's scratch; the grid stays on the stack */
}

/* Position of v in [lo, hi] as 0..1; 0.5 when the range is empty. */
static double unit(const grid *gr, double v)
{
    if (!(gr->hi > gr->lo))
        return 0.5;
    /* Halved: hi - lo of {1e308, -1e308} overflows to infinity, and
     * inf / inf is NaN. */
    double u = (v * 0.5 - gr->lo * 0.5) / (gr->hi * 0.5 - gr->lo * 0.5);
    return u < 0 ? 0 : u > 1 ? 1 : u == u ? u : 0.5;
}

/* Which of n equal bins u in [0, 1] falls in. */
static int level(double u, int n)
{
    int k = (int)(u * n);
    return k < 0 ? 0 : k >= n ? n - 1 : k;
}

/* A viridis-like map: dark purple, blue, teal, green, yellow. */
static void colormap(double u, unsigned char rgb[3])
{
    static const double stops[][3] = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37},
    };
    const int last = (int)(sizeof stops / sizeof stops[0]) - 1;
    if (isnan(u)) {
        rgb[0] = rgb[1] = rgb[2] = 128;
        return;
    }
    double x = u * last;
    int i = (int)x;
    if (i >= last)
        i = last - 1;
    double f = x - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (unsigned char)lround(stops[i][c] + (stops[i + 1][c] - stops[i][c]) * f);
}

/* -------------------------------------------------------------- options */

/* opts[key] as a positive integer, or def. */
static size_t opt_size(lua_State *L, int idx, const char *key, size_t def)
{
    if (lua_isnoneornil(L, idx))
        return def;
    size_t v = def;
    if (lua_getfield(L, idx, key) != LUA_TNIL) {
        int isint;
        lua_Integer i = lua_tointegerx(L, -1, &isint);
        if (!isint || i < 1)
            luaL_argerror(L, idx, lua_pushfstring(L, "option '%s' must be a positive integer", key));
        v = (size_t)i;
    }
    lua_pop(L, 1);
    return v;
}

/* rows x cols from opts.rows or opts.shape; rows = 0 when neither. */
static void opt_shape(lua_State *L, int idx, size_t n, size_t *rows, size_t *cols)
{
    *rows = opt_size(L, idx, "rows", 0);
    *cols = 0;
    if (!lua_isnoneornil(L, idx) && lua_getfield(L, idx, "shape") != LUA_TNIL) {
        int ok = lua_istable(L, -1) && luaL_len(L, -1) == 2;
        lua_Integer d[2] = {0, 0};
        for (int k = 0; ok && k < 2; k++) {
            lua_geti(L, -1, k + 1);
            d[k] = lua_tointegerx(L, -1, &ok);
            ok = ok && d[k] >= 1;
            lua_pop(L, 1);
        }
        if (!ok)
            luaL_argerror(L, idx, "option 'shape' must be {rows, cols} of positive integers");
        *rows = (size_t)d[0];
        *cols = (size_t)d[1];
        lua_pop(L, 1);
    } else if (!lua_isnoneornil(L, idx)) {
        lua_pop(L, 1);
    }
    if (!*rows)
        return;
    if (!*cols) {
        if (n % *rows)
            luaL_argerror(L, idx, lua_pushfstring(L, "%I elements do not make %I equal rows",
                                                  (lua_Integer)n, (lua_Integer)*rows));
        *cols = n / *rows;
    }
    if ((uint64_t)*rows * *cols != n)
        luaL_argerror(L, idx, lua_pushfstring(L, "shape %I x %I does not match the %I elements",
                                              (lua_Integer)*rows, (lua_Integer)*cols, (lua_Integer)n));
}

static size_t terminal_width(void)
{
    const char *c = getenv("COLUMNS");
    long w = c ? strtol(c, NULL, 10) : 0;
    return w > 0 ? (size_t)w : 80;
}

/* ------------------------------------------------------------------ plot */

static void add_num(luaL_Buffer *lb, const char *fmt, double v)
{
    char s[64];
    snprintf(s, sizeof s, fmt, v);
    luaL_addstring(lb, s);
}

/* The grids: pushed on the stack before any luaL_Buffer is opened. */
static void sparkline_grid(lua_State *L, hk_buffer *b, size_t width, grid *gr)
{
    size_t n = hk_buffer_length(b);
    gr->gh = 1;
    gr->gw = n < width ? n : width;
    if (!n) { /* nothing to read: an empty grid */
        gr->gw = 0;
        gr->g = NULL;
        gr->dmin = gr->lo = INFINITY;
        gr->dmax = gr->hi = -INFINITY;
        lua_pushnil(L);
        return;
    }
    make_grid(L, b, 1, n, gr);
}

static void sparkline(const grid *gr, size_t n, luaL_Buffer *lb)
{
    static const char *const bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    for (size_t x = 0; x < gr->gw; x++) {
        double v = gr->g[x];
        if (!isfinite(v))
            luaL_addchar(lb, ' ');
        else
            luaL_addstring(lb, bars[level(unit(gr, v), 8)]);
    }
    luaL_addchar(lb, '\n');
    if (!n) {
        luaL_addstring(lb, "(empty)");
    } else if (!(gr->dmax >= gr->dmin)) {
        luaL_addstring(lb, "(no finite values)");
    } else {
        add_num(lb, "min %.6g", gr->dmin);
        add_num(lb, "  max %.6g", gr->dmax);
        if (gr->gw < n) {
            add_num(lb, "  (%.0f values, ", (double)n);
            add_num(lb, "%.3g per column; ", (double)n / (double)gr->gw);
            add_num(lb, "▁ %.6g", gr->lo);
            add_num(lb, " █ %.6g)", gr->hi);
        }
    }
}

static void heatmap_grid(lua_State *L, hk_buffer *b, size_t rows, size_t cols, size_t width,
                         size_t height, int color, grid *gr)
{
    gr->gw = cols < width ? cols : width;
    /* Keep the aspect: a half-block cell is about square, a whole character
     * about twice as tall as wide. */
    double scale = (double)gr->gw / (double)cols / (color ? 1 : 2);
    size_t gh = (size_t)lround((double)rows * scale);
    gh = gh < 1 ? 1 : gh > rows ? rows : gh;
    if (height && gh > height * (color ? 2 : 1))
        gh = height * (color ? 2 : 1);
    gr->gh = gh;
    make_grid(L, b, rows, cols, gr);
}

static void heatmap(const grid *gr, size_t rows, size_t cols, int color, luaL_Buffer *lb)
{
    static const char *const shades[] = {" ", "░", "▒", "▓", "█"};
    char esc[64];
    for (size_t y = 0; y < gr->gh; y += color ? 2 : 1) {
        for (size_t x = 0; x < gr->gw; x++) {
            double top = gr->g[y * gr->gw + x];
            if (!color) {
                luaL_addstring(lb, isfinite(top) ? shades[level(unit(gr, top), 5)] : "?");
                continue;
            }
            unsigned char a[3], c[3];
            colormap(isfinite(top) ? unit(gr, top) : NAN, a);
            if (y + 1 < gr->gh) {
                double bot = gr->g[(y + 1) * gr->gw + x];
                colormap(isfinite(bot) ? unit(gr, bot) : NAN, c);
                snprintf(esc, sizeof esc, "\x1b[38;2;%d;%d;%dm\x1b[48;2;%d;%d;%dm▀", a[0], a[1], a[2],
                         c[0], c[1], c[2]);
            } else { /* an odd last row: the terminal's background below */
                snprintf(esc, sizeof esc, "\x1b[38;2;%d;%d;%dm\x1b[49m▀", a[0], a[1], a[2]);
            }
            luaL_addstring(lb, esc);
        }
        if (color)
            luaL_addstring(lb, "\x1b[0m");
        luaL_addchar(lb, '\n');
    }
    char s[160];
    snprintf(s, sizeof s, "%zu x %zu", rows, cols);
    luaL_addstring(lb, s);
    if (gr->gh != rows || gr->gw != cols) {
        snprintf(s, sizeof s, " shown as %zu x %zu box means", gr->gh, gr->gw);
        luaL_addstring(lb, s);
    }
    if (gr->dmax >= gr->dmin) {
        add_num(lb, "; min %.6g", gr->dmin);
        add_num(lb, " max %.6g", gr->dmax);
    }
}

/* buf:plot{width=, height=, rows=, shape={r, c}, color=, print=} */
static int m_plot(lua_State *L)
{
    static const char *const names[] = {"width", "height", "rows", "shape", "color", "print", NULL};
    hkl_settop(L, 2);
    hk_buffer *b = hkl_hold_buffer(L, 1, "b:plot"); /* 3; the options may run Lua */
    hkl_check_options(L, 2, names, "plot");
    size_t n = hk_buffer_length(b);
    size_t width = opt_size(L, 2, "width", terminal_width());
    size_t height = opt_size(L, 2, "height", 0);
    size_t rows, cols;
    opt_shape(L, 2, n, &rows, &cols);
    int color = isatty(1) && !getenv("NO_COLOR"), print = 1;
    if (!lua_isnil(L, 2)) {
        if (lua_getfield(L, 2, "color") != LUA_TNIL)
            color = lua_toboolean(L, -1);
        if (lua_getfield(L, 2, "print") != LUA_TNIL)
            print = lua_toboolean(L, -1);
        lua_pop(L, 2);
    }
    grid gr;
    if (rows && n)
        heatmap_grid(L, b, rows, cols, width, height, color, &gr);
    else
        sparkline_grid(L, b, width, &gr); /* 4 */
    luaL_Buffer lb;
    luaL_buffinit(L, &lb);
    if (rows && n)
        heatmap(&gr, rows, cols, color, &lb);
    else
        sparkline(&gr, n, &lb);
    luaL_pushresult(&lb); /* 5 */
    if (print) {
        if (lua_getglobal(L, "print") == LUA_TFUNCTION) {
            lua_pushvalue(L, 5);
            lua_call(L, 1, 0);
        } else {
            lua_pop(L, 1);
            printf("%s\n", lua_tostring(L, 5));
            fflush(stdout);
        }
        return 0; /* printed: returning it too would show it twice at the prompt */
    }
    return 1;
}

/* ------------------------------------------------------------------- png */

#ifdef HKL_HAVE_PNG
static void set_px(unsigned char *img, size_t w, size_t h, long x, long y, const unsigned char c[3])
{
    if (x < 0 || y < 0 || (size_t)x >= w || (size_t)y >= h)
        return;
    memcpy(img + ((size_t)y * w + (size_t)x) * 3, c, 3);
}

/* Clips the segment to [lo, hi] on both axes (Liang-Barsky, in doubles so
 * that no coordinate overflows); 0 when nothing of it is inside. */
static int clip(double *x0, double *y0, double *x1, double *y1, double lo, double hix, double hiy)
{
    double t0 = 0, t1 = 1, dx = *x1 - *x0, dy = *y1 - *y0;
    double p[4] = {-dx, dx, -dy, dy}, q[4] = {*x0 - lo, hix - *x0, *y0 - lo, hiy - *y0};
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return 0;
            continue;
        }
        double r = q[i] / p[i];
        if (p[i] < 0 && r > t1)
            return 0;
        if (p[i] > 0 && r < t0)
            return 0;
        if (p[i] < 0 && r > t0)
            t0 = r;
        if (p[i] > 0 && r < t1)
            t1 = r;
    }
    double ax = *x0, ay = *y0;
    *x0 = round(ax + t0 * dx);
    *y0 = round(ay + t0 * dy);
    *x1 = round(ax + t1 * dx);
    *y1 = round(ay + t1 * dy);
    return 1;
}

/* Bresenham, on the segment clipped to just around the image: endpoints
 * far outside (a value scaled past the plot) cost no steps and cannot
 * overflow the error terms. */
static void line(unsigned char *img, size_t w, size_t h, long x0, long y0, long x1, long y1,
                 const unsigned char c[3])
{
    double fx0 = (double)x0, fy0 = (double)y0, fx1 = (double)x1, fy1 = (double)y1;
    if (!clip(&fx0, &fy0, &fx1, &fy1, -1, (double)w, (double)h))
        return;
    x0 = (long)fx0;
    y0 = (long)fy0;
    x1 = (long)fx1;
    y1 = (long)fy1;
    long dx = labs(x1 - x0), dy = -labs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    long err = dx + dy;
    for (;;) {
        set_px(img, w, h, x0, y0, c);
        if (x0 == x1 && y0 == y1)
            break;
        long e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

/* Plain C: libpng's longjmp must not cross Lua frames. NULL or a message. */
static const char *write_png(const char *path, const unsigned char *img, size_t w, size_t h,
                             char *err, size_t cap)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, cap, "%s", strerror(errno));
        return err;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        snprintf(err, cap, "libpng failed to write it");
        return err;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (size_t y = 0; y < h; y++)
        png_write_row(png, img + y * w * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0) {
        snprintf(err, cap, "%s", strerror(errno));
        return err;
    }
    return NULL;
}

/* buf:png(path, {kind="heatmap"|"line", width=, height=, rows=, shape=}) */
static int m_png(lua_State *L)
{
    static const char *const names[] = {"kind", "width", "height", "rows", "shape", NULL};
    const char *path = luaL_checkstring(L, 2);
    hkl_settop(L, 3);
    hk_buffer *b = hkl_hold_buffer(L, 1, "b:png"); /* the options may run Lua */
    hkl_check_options(L, 3, names, "png");
    size_t n = hk_buffer_length(b), rows, cols;
    luaL_argcheck(L, n > 0, 1, "the buffer is empty");
    opt_shape(L, 3, n, &rows, &cols);
    const char *kind = rows ? "heatmap" : "line";
    if (!lua_isnil(L, 3)) {
        if (lua_getfield(L, 3, "kind") != LUA_TNIL)
            kind = luaL_checkstring(L, -1); /* stays on the stack */
    }
    int heat = strcmp(kind, "heatmap") == 0;
    if (!heat && strcmp(kind, "line") != 0)
        return luaL_argerror(L, 3, lua_pushfstring(L, "unknown kind '%s' (heatmap, line)", kind));
    if (heat && !rows)
        return luaL_argerror(L, 3, "a heatmap needs rows = or shape = {rows, cols}");
    size_t w = opt_size(L, 3, "width", heat ? (cols < 4096 ? cols : 4096) : 800);
    size_t h = opt_size(L, 3, "height", heat ? (rows < 4096 ? rows : 4096) : 300);
    luaL_argcheck(L, w <= MAX_IMAGE && h <= MAX_IMAGE, 3, "width and height must be at most 16384");
    unsigned char *img = lua_newuserdatauv(L, w * h * 3, 0);
    grid gr;
    if (heat) {
        gr.gw = cols < w ? cols : w;
        gr.gh = rows < h ? rows : h;
        make_grid(L, b, rows, cols, &gr);
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++) {
                double v = gr.g[(y * gr.gh / h) * gr.gw + x * gr.gw / w];
                colormap(isfinite(v) ? unit(&gr, v) : NAN, img + (y * w + x) * 3);
            }
    } else {
        static const unsigned char axis[3] = {64, 64, 64}, ink[3] = {31, 119, 180};
        luaL_argcheck(L, w >= 24 && h >= 24, 3, "a line chart needs at least 24 x 24 pixels");
        memset(img, 255, w * h * 3);
        long left = 10, top = 10, pw = (long)w - 20, ph = (long)h - 20;
        gr.gh = 1;
        gr.gw = n < (size_t)pw ? n : (size_t)pw;
        make_grid(L, b, 1, n, &gr);
        line(img, w, h, left - 1, top, left - 1, top + ph, axis);
        line(img, w, h, left - 1, top + ph, left + pw, top + ph, axis);
        long px = 0, py = 0;
        int have = 0;
        for (size_t k = 0; k < gr.gw; k++) {
            double v = gr.g[k];
            if (!isfinite(v)) {
                have = 0;
                continue;
            }
            long x = gr.gw == 1 ? left + pw / 2 : left + (long)(k * (size_t)(pw - 1) / (gr.gw - 1));
            long y = top + (long)lround((double)(ph - 1) * (1 - unit(&gr, v)));
            if (have)
                line(img, w, h, px, py, x, y, ink);
            else
                set_px(img, w, h, x, y, ink);
            px = x;
            py = y;
            have = 1;
        }
    }
    char err[256];
    if (write_png(path, img, w, h, err, sizeof err))
        return luaL_error(L, "png '%s': %s", path, err);
    hkl_settop(L, 1);
    return 1;
}
#else
static int m_png(lua_State *L)
{
    return luaL_error(L, "png: hipkit was built without libpng");
}
#endif

void hkl_plot_register(lua_State *L)
{
    lua_pushcfunction(L, m_plot);
    lua_setfield(L, -2, "plot");
    lua_pushcfunction(L, m_png);
    lua_setfield(L, -2, "png");
}
