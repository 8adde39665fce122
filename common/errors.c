/* errors.c — the error type: setting, clearing and printing errors, their words and exit codes. */
#include "common/xtts_common.h"
#include <stdarg.h>
#include <stdio.h>

xtts_status xtts_error_set(xtts_error *err, xtts_status code, const char *fmt, ...) {
    if (!err) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    /* one line, always */
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return code;
}

void xtts_error_clear(xtts_error *err) {
    if (!err) return;
    err->code = XTTS_OK;
    err->msg[0] = '\0';
}

const char *xtts_strerror(xtts_status code) {
    switch (code) {
    case XTTS_OK: return "success";
    case XTTS_EUSAGE: return "usage error";
    case XTTS_EINPUT: return "malformed input";
    case XTTS_EIO: return "input/output error";
    case XTTS_ENOMEM: return "out of memory";
    case XTTS_ECORRUPT: return "corrupt data";
    case XTTS_EMISMATCH: return "configuration mismatch";
    case XTTS_ERANGE: return "value out of range";
    case XTTS_ENOTFOUND: return "not found";
    case XTTS_EBUSY: return "resource busy";
    case XTTS_EUNSUPPORTED: return "not supported";
    }
    return "unknown error";
}

int xtts_exit_code(xtts_status code) {
    if (code == XTTS_OK) return 0;
    if (code == XTTS_EUSAGE) return 1;
    return 2;
}

void xtts_error_print(const char *prog, const xtts_error *err) {
    if (!err) return;
    fprintf(stderr, "%s: %s\n", prog, err->msg[0] ? err->msg : xtts_strerror(err->code));
}
