/* progress.c — the monotonic clock and the progress line on stderr (rate and ETA). */
#include "common/xtts_common.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double xtts_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* strtol/strtod skip leading white space; a whole-string parse must not. */

/* ---- progress --------------------------------------------------------------- */

void xtts_progress_init(xtts_progress *p, const char *label, int force) {
    p->label = label;
    p->tty = isatty(2);
    p->active = force || p->tty;
    p->t0 = xtts_now_s();
    p->last = 0;
}

static void progress_line(xtts_progress *p, uint64_t done, uint64_t total, const char *extra, int final) {
    double t = xtts_now_s() - p->t0;
    double rate = t > 0 ? (double)done / t : 0;
    char eta[32] = "--:--";
    if (rate > 0 && total >= done) {
        double left = (double)(total - done) / rate;
        snprintf(eta, sizeof eta, "%02d:%02d", (int)(left / 60), (int)left % 60);
    }
    if (total)
        fprintf(stderr, "%s%s: %llu/%llu (%.1f/s, ETA %s)%s%s%s", p->tty ? "\r" : "", p->label,
                (unsigned long long)done, (unsigned long long)total, rate, eta, extra ? " " : "",
                extra ? extra : "", p->tty && !final ? "\033[K" : "\n");
    else
        fprintf(stderr, "%s%s: %llu (%.1f/s)%s%s%s", p->tty ? "\r" : "", p->label, (unsigned long long)done,
                rate, extra ? " " : "", extra ? extra : "", p->tty && !final ? "\033[K" : "\n");
    if (final && p->tty) fputc('\n', stderr);
}

void xtts_progress_update(xtts_progress *p, uint64_t done, uint64_t total, const char *extra) {
    if (!p->active) return;
    double now = xtts_now_s();
    if (now - p->last < (p->tty ? 0.25 : 2.0)) return;
    p->last = now;
    progress_line(p, done, total, extra, 0);
}

void xtts_progress_finish(xtts_progress *p, uint64_t done, uint64_t total, const char *extra) {
    if (!p->active) return;
    progress_line(p, done, total, extra, 1);
}
