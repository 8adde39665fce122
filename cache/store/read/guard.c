/* guard.c — the readers' fault guard (guard.h says how it works and how a host process
 * keeps its own handlers; reader.h, xtts_cache_guard_faults, who installs it).
 */
#include "cache/store/read/guard.h"
#include "cache/store/read/reader.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

__thread sigjmp_buf *xtts_guard_jb;
static struct sigaction old_segv, old_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

static void guard_handler(int sig, siginfo_t *si, void *uc) {
    sigjmp_buf *jb = xtts_guard_jb;
    if (jb) {
        xtts_guard_jb = NULL;
        siglongjmp(*jb, sig);
    }
    /* Not a fault of a guarded read: give the signal back to whoever had it. */
    struct sigaction *old = sig == SIGBUS ? &old_bus : &old_segv;
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uc);
        return;
    }
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL); /* returning re-executes the faulting access, now fatal */
}

static void guard_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = guard_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
}

/* LMDB's internal consistency checks call this before abort(); inside a guard, leave. */
void xtts_guard_lmdb_assert(MDB_env *env, const char *msg) {
    (void)env;
    (void)msg;
    sigjmp_buf *jb = xtts_guard_jb;
    if (jb) {
        xtts_guard_jb = NULL;
        siglongjmp(*jb, SIGABRT);
    }
}

const char *xtts_guard_signame(int sig) {
    return sig == SIGBUS ? "SIGBUS" : sig == SIGSEGV ? "SIGSEGV" : "LMDB assertion";
}

void xtts_cache_guard_faults(void) { pthread_once(&guard_once, guard_install); }
