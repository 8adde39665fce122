/* cli.c — what every program's command line shares: the usage hint, the checked number
 * parsers, standard output checked up to its close. */
#include "common/xtts_common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void xtts_usage_hint(const char *prog) { fprintf(stderr, "Try '%s --help' for more information.\n", prog); }

int xtts_parse_long(const char *s, long lo, long hi, long *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int xtts_parse_double(const char *s, double lo, double hi, double *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* ---- standard output checked up to its close ------------------------------------------- */

static const char *stdout_prog = "xtts";
static int stdout_reported;

void xtts_stdout_error_reported(void) { stdout_reported = 1; }

static void close_stdout(void) {
    int bad = ferror(stdout);
    errno = 0;
    if (fclose(stdout) != 0) bad = 1;
    if (bad && stdout_reported) _exit(2);
    if (bad) {
        int e = errno;
        fprintf(stderr, "%s: standard output: write failed%s%s\n", stdout_prog, e ? ": " : "",
                e ? strerror(e) : "");
        fflush(stderr);
        _exit(2);
    }
}

void xtts_check_stdout_at_exit(const char *prog) {
    if (prog) stdout_prog = prog;
    atexit(close_stdout);
}
