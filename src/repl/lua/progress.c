/* A progress line for long work (compiles, big fills): quiet for the first
 * second so quick calls print nothing, then "what … 1.2 s" redrawn every
 * 100 ms on stderr until the work ends. Only when stderr is a terminal: a
 * log file or a pipe never sees it.
 *
 * The waiting is done by a helper thread sleeping on a condition variable,
 * so end() wakes it at once instead of waiting out a tick. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hkl.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_t helper;
static int depth;       /* begin calls not yet ended */
static int running;     /* helper thread started and not yet joined */
static int stop;        /* end() asks the helper to leave */
static int shown;       /* the helper has drawn a line that needs erasing */
static char label[96];
static struct timespec started;

/* The condition variable waits on the monotonic clock, so a change of the
 * wall clock neither hurries nor stalls the line. */
static void init_cond(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &a);
    pthread_condattr_destroy(&a);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void add_ms(struct timespec *t, long ms)
{
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static void *progress_main(void *arg)
{
    (void)arg;
    struct timespec due = started;
    add_ms(&due, 1000);
    pthread_mutex_lock(&lock);
    while (!stop) {
        int rc = pthread_cond_timedwait(&wake, &lock, &due);
        if (stop)
            break;
        if (rc == ETIMEDOUT) {
            /* Stderr is written under the lock so end() never erases a line
             * that is half drawn. */
            fprintf(stderr, "\r%s \xe2\x80\xa6 %.1f s", label, seconds_since(&started));
            fflush(stderr);
            shown = 1;
            add_ms(&due, 100);
        }
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

void hkl_progress_begin(const char *what)
{
    pthread_once(&once, init_cond);
    pthread_mutex_lock(&lock);
    /* Nested work (a bench that compiles) shows only the outermost label. */
    if (depth++ > 0 || !isatty(STDERR_FILENO)) {
        pthread_mutex_unlock(&lock);
        return;
    }
    snprintf(label, sizeof label, "%s", what ? what : "working");
    clock_gettime(CLOCK_MONOTONIC, &started);
    stop = 0;
    shown = 0;
    running = pthread_create(&helper, NULL, progress_main, NULL) == 0;
    pthread_mutex_unlock(&lock);
}

void hkl_progress_end(void)
{
    pthread_once(&once, init_cond);
    pthread_mutex_lock(&lock);
    if (depth == 0 || --depth > 0 || !running) {
        pthread_mutex_unlock(&lock);
        return;
    }
    stop = 1;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(helper, NULL);
    running = 0;
    if (shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        shown = 0;
    }
}
