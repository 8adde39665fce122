/* phonemes.c — the phoneme tokenizer: espeak-ng IPA mapped to ids through a fixed table.
 *
 * espeak-ng keeps its state (voice, translator, output buffer) in process-wide globals, so
 * within one process every call into it holds one mutex. To phonemize on several cores,
 * xtts_phonemizer_start_workers() forks worker processes, each with its own espeak-ng;
 * thread t of an OpenMP team then sends its texts to worker t % n over a socket pair. The
 * cost is measured in docs/xtts-tokenize.md.
 *
 * Ids: 0-20 as the bytes tokenizer ([PAD] [START] [STOP] [UNK], 17 language tokens), 21 the
 * word separator (space), then one id per symbol of ipa_symbols[] in order. A code point
 * not in the table becomes [UNK].
 */
#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <espeak-ng/speak_lib.h>
#include <utf8proc.h>

#include "common/strbuf.h"
#include "prep/text/tokenizer/tokenizer.h"
#include "prep/text/tokenizer/tokenizer_internal.h"

/* espeak-ng voice per XTTS language (xtts_lang_codes order). */
static const char *const voice_of_lang[XTTS_N_LANGS] = {"en-us", "es", "fr", "de", "it", "pt-br", "pl", "tr", "ru",
                                                        "nl", "cs", "ar", "cmn", "hu", "ko", "ja", "hi"};

/* The IPA symbol table, version 1: one code point per entry, ids 22 onward in this order.
 * Append only; never reorder (ids would change). */
static const char *const ipa_symbols[] = {
    /* ASCII letters espeak-ng uses as IPA */
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w",
    "x", "y", "z",
    /* vowels */
    "æ", "ɐ", "ɑ", "ɒ", "ɔ", "ə", "ɘ", "ɚ", "ɛ", "ɜ", "ɝ", "ɞ", "ɨ", "ɪ", "ɯ", "ɵ", "ø", "œ", "ɶ", "ʉ", "ʊ", "ʌ",
    "ʏ", "ɤ", "ᵻ",
    /* consonants */
    "ɓ", "ɕ", "ç", "ɗ", "ɖ", "ð", "ɟ", "ʄ", "ɡ", "ɠ", "ɢ", "ʛ", "ɦ", "ɧ", "ħ", "ɥ", "ʜ", "ʝ", "ɭ", "ɬ", "ɫ", "ɮ",
    "ʟ", "ɱ", "ɰ", "ŋ", "ɳ", "ɲ", "ɴ", "ɸ", "θ", "ɹ", "ɺ", "ɾ", "ɻ", "ʀ", "ʁ", "ɽ", "ʂ", "ʃ", "ʈ", "ʋ", "ⱱ", "ɣ",
    "ʍ", "χ", "ʎ", "ʑ", "ʐ", "ʒ", "ʔ", "ʡ", "ʕ", "ʢ", "β", "ʙ",
    /* suprasegmentals and diacritics */
    "ˈ", "ˌ", "ː", "ˑ", "ʼ", "ʰ", "ʱ", "ʲ", "ʷ", "ˠ", "ˤ", "˞", "\u0303", "\u0329", "\u032F", "\u032A", "\u0325",
    "\u030A", "\u0306", "\u0361", "\u035C", "‿", "↗", "↘", "-",
    /* tone numbers (Mandarin) and a few ASCII marks espeak-ng emits */
    "1", "2", "3", "4", "5", "'", ",", ".", "?", "!", ";", ":",
    /* more vowels and diacritics espeak-ng emits for ja, ko, hi, ar */
    "ä", "\u031E", "\u031D", "\u0348",
    /* Japanese compressed u, and the quote mark espeak-ng keeps in Russian */
    "ᵝ", "\"",
};
#define N_IPA (sizeof ipa_symbols / sizeof ipa_symbols[0])
#define PH_SPACE 21
#define PH_FIRST 22

#define MAX_WORKERS 256

typedef struct {
    int fd;                 /* parent's end of the socket pair */
    pid_t pid;
    pthread_mutex_t lock;   /* one request at a time per worker */
} ph_worker;

struct xtts_phonemizer {
    int32_t cp[N_IPA];
    char hash[72];
    int voice;   /* language whose voice is selected, -1 none */
    int has_voice[XTTS_N_LANGS];
    signed char extra_voice[XTTS_MAX_LANGS]; /* languages past XTTS's: 0 unknown, 1 yes, -1 no */
    int n_workers;
    ph_worker workers[MAX_WORKERS];
};

static pthread_mutex_t espeak_lock = PTHREAD_MUTEX_INITIALIZER;
static int espeak_ready = 0;

int xtts_phonemizer_vocab_size(void) { return PH_FIRST + (int)N_IPA; }

const char *xtts_phonemizer_symbol(int id) {
    if (id < 0 || id >= xtts_phonemizer_vocab_size()) return NULL;
    if (id < XTTS_BYTES_LANG0) {
        static const char *const specials[4] = {"[PAD]", "[START]", "[STOP]", "[UNK]"};
        return specials[id];
    }
    if (id < XTTS_BYTES_LANG0 + XTTS_N_LANGS) return xtts_lang_codes[id - XTTS_BYTES_LANG0];
    if (id == PH_SPACE) return " ";
    return ipa_symbols[id - PH_FIRST];
}

xtts_status xtts_phonemizer_new(xtts_phonemizer **out, xtts_error *err) {
    *out = NULL;
    xtts_phonemizer *p = calloc(1, sizeof *p);
    if (!p) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (size_t i = 0; i < N_IPA; i++) {
        int32_t cp;
        utf8proc_iterate((const uint8_t *)ipa_symbols[i], -1, &cp);
        p->cp[i] = cp;
    }
    pthread_mutex_lock(&espeak_lock);
    if (!espeak_ready) {
        if (espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL, espeakINITIALIZE_DONT_EXIT) < 0) {
            pthread_mutex_unlock(&espeak_lock);
            free(p);
            return xtts_error_set(err, XTTS_EIO, "espeak-ng: cannot initialize (is espeak-ng-data installed?)");
        }
        espeak_ready = 1;
    }
    for (int l = 0; l < XTTS_N_LANGS; l++) p->has_voice[l] = espeak_SetVoiceByName(voice_of_lang[l]) == EE_OK;
    const char *version = espeak_Info(NULL);
    pthread_mutex_unlock(&espeak_lock);
    p->voice = -1;
    xtts_sha256 s;
    xtts_sha256_init(&s);
    for (size_t i = 0; i < N_IPA; i++) {
        xtts_sha256_update(&s, ipa_symbols[i], strlen(ipa_symbols[i]));
        xtts_sha256_update(&s, "\n", 1);
    }
    xtts_sha256_update(&s, version ? version : "", version ? strlen(version) : 0);
    uint8_t d[32];
    xtts_sha256_final(&s, d);
    memcpy(p->hash, "sha256:", 7);
    xtts_hex(d, 32, p->hash + 7);
    *out = p;
    return XTTS_OK;
}

static void stop_workers(xtts_phonemizer *p) {
    for (int i = 0; i < p->n_workers; i++)
        if (p->workers[i].fd >= 0) close(p->workers[i].fd); /* EOF ends the worker */
    for (int i = 0; i < p->n_workers; i++) {
        while (waitpid(p->workers[i].pid, NULL, 0) < 0 && errno == EINTR) {}
        pthread_mutex_destroy(&p->workers[i].lock);
    }
    p->n_workers = 0;
}

void xtts_phonemizer_delete(xtts_phonemizer *p) {
    /* espeak-ng stays initialized for the life of the process (it cannot be re-initialized
     * safely); its memory is released by espeak_Terminate at exit. */
    if (!p) return;
    stop_workers(p);
    free(p);
}

static const char *voice_name(int lang) { return lang < XTTS_N_LANGS ? voice_of_lang[lang] : xtts_lang_code(lang); }

int xtts_phonemizer_has_lang(const xtts_phonemizer *p, int lang) {
    if (lang >= 0 && lang < XTTS_N_LANGS) return p->has_voice[lang];
    if (!xtts_lang_code(lang)) return 0;
    xtts_phonemizer *w = (xtts_phonemizer *)p; /* the cache of voice look-ups */
    pthread_mutex_lock(&espeak_lock);
    if (!w->extra_voice[lang]) {
        /* espeak-ng names voices in lower case ("sv", "pt-br", "en-gb-x-rp") */
        char name[16];
        snprintf(name, sizeof name, "%s", xtts_lang_code(lang));
        for (char *c = name; *c; c++) if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
        w->extra_voice[lang] = espeak_SetVoiceByName(name) == EE_OK ? 1 : -1;
        w->voice = -1;
    }
    int yes = w->extra_voice[lang] > 0;
    pthread_mutex_unlock(&espeak_lock);
    return yes;
}

const char *xtts_phonemizer_hash(const xtts_phonemizer *p) { return p->hash; }

/* IPA from this process's espeak-ng. */
static xtts_status ipa_local(xtts_phonemizer *p, const char *text, int lang, char **ipa, xtts_error *err) {
    xtts_sb b = {0};
    xtts_sb_cstr(&b);
    pthread_mutex_lock(&espeak_lock);
    if (p->voice != lang) {
        char name[16];
        snprintf(name, sizeof name, "%s", voice_name(lang));
        for (char *c = name; *c; c++) if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
        if (espeak_SetVoiceByName(name) != EE_OK) {
            pthread_mutex_unlock(&espeak_lock);
            xtts_sb_free(&b);
            return xtts_error_set(err, XTTS_EINPUT, "espeak-ng: cannot select voice %s", name);
        }
        p->voice = lang;
    }
    const void *ptr = text;
    while (ptr) {
        const char *ph = espeak_TextToPhonemes(&ptr, espeakCHARS_UTF8, espeakPHONEMES_IPA);
        if (!ph) break;
        if (*ph) {
            if (b.len) xtts_sb_putc(&b, ' ');
            /* drop espeak-ng's language-switch marks such as "(en)" */
            for (const char *q = ph; *q; q++) {
                if (*q == '(') {
                    const char *e = q + 1;
                    while ((*e >= 'a' && *e <= 'z') || *e == '-') e++;
                    if (*e == ')' && e > q + 1) { q = e; continue; }
                }
                xtts_sb_putc(&b, *q);
            }
        }
    }
    pthread_mutex_unlock(&espeak_lock);
    if (b.failed) { xtts_sb_free(&b); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
    *ipa = b.s;
    return XTTS_OK;
}

/* ---- worker processes ------------------------------------------------------------
 * Request: int32 lang, uint32 length, text bytes. Reply: uint8 status (0 ok, else an
 * xtts_status), uint32 length, IPA or error message bytes. */

static int write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t n) {
    char *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void worker_loop(xtts_phonemizer *p, int fd) {
    char *text = NULL;
    size_t cap = 0;
    for (;;) {
        int32_t lang;
        uint32_t len;
        if (read_all(fd, &lang, sizeof lang)) break;
        if (lang < 0) { /* a language past XTTS's 17: its code follows (-lang bytes) */
            char code[16];
            if (lang < -15 || read_all(fd, code, (size_t)-lang)) break;
            code[-lang] = 0;
            lang = xtts_lang_intern(code);
            if (lang < 0) break;
        }
        if (read_all(fd, &len, sizeof len)) break;
        if (len + 1 > cap) {
            char *nt = realloc(text, len + 1);
            if (!nt) break;
            text = nt;
            cap = len + 1;
        }
        if (read_all(fd, text, len)) break;
        text[len] = 0;
        char *ipa = NULL;
        xtts_error e;
        xtts_status st = ipa_local(p, text, lang, &ipa, &e);
        const char *out = st ? e.msg : ipa;
        uint8_t code = (uint8_t)st;
        uint32_t olen = (uint32_t)strlen(out);
        int bad = write_all(fd, &code, 1) || write_all(fd, &olen, sizeof olen) || write_all(fd, out, olen);
        free(ipa);
        if (bad) break;
    }
    free(text);
}

/* Start worker i (its slot's fd and pid). The child keeps only its own end. */
static xtts_status spawn_worker(xtts_phonemizer *p, int i, xtts_error *err) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return xtts_error_set(err, XTTS_EIO, "phonemizer: socketpair: %s", strerror(errno));
    fflush(NULL); /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        return xtts_error_set(err, XTTS_EIO, "phonemizer: fork: %s", strerror(e));
    }
    if (pid == 0) {
        /* the worker: only its own end stays open, then serve until EOF */
        close(sv[0]);
        for (int k = 0; k < p->n_workers; k++)
            if (k != i && p->workers[k].fd >= 0) close(p->workers[k].fd);
        p->n_workers = 0;
        worker_loop(p, sv[1]);
        _exit(0);
    }
    close(sv[1]);
    p->workers[i].fd = sv[0];
    p->workers[i].pid = pid;
    return XTTS_OK;
}

/* espeak-ng always runs in worker processes (at least one, also with -j 1): some inputs
 * make libespeak-ng 1.51 crash (a heap use after free in espeak_TextToPhonemes), and a
 * crash must cost one record, not the run. */
xtts_status xtts_phonemizer_start_workers(xtts_phonemizer *p, int n, xtts_error *err) {
    if (p->n_workers) return XTTS_OK;
    if (n < 1) n = 1;
    if (n > MAX_WORKERS) n = MAX_WORKERS;
    for (int i = 0; i < n; i++) {
        xtts_status st = spawn_worker(p, i, err);
        if (st) {
            stop_workers(p);
            return st;
        }
        pthread_mutex_init(&p->workers[i].lock, NULL);
        p->n_workers = i + 1;
    }
    return XTTS_OK;
}

int xtts_phonemizer_workers(const xtts_phonemizer *p) { return p->n_workers; }

int xtts_phonemizer_worker_pid(const xtts_phonemizer *p, int i) {
    return i >= 0 && i < p->n_workers && p->workers[i].fd >= 0 ? (int)p->workers[i].pid : -1;
}

/* One request on worker w (its lock held). 0 with the reply, -1 when the worker is gone. */
static int ask_worker(ph_worker *w, const char *text, uint32_t len, int lang, uint8_t *code, char **out) {
    uint32_t olen = 0;
    *out = NULL;
    /* a language beyond XTTS's 17 goes as minus its code's length, then the code */
    int32_t l32 = lang;
    const char *lcode = lang >= XTTS_N_LANGS ? xtts_lang_code(lang) : NULL;
    if (lcode) l32 = -(int32_t)strlen(lcode);
    if (write_all(w->fd, &l32, sizeof l32) || (lcode && write_all(w->fd, lcode, strlen(lcode))) ||
        write_all(w->fd, &len, sizeof len) || write_all(w->fd, text, len) ||
        read_all(w->fd, code, 1) || read_all(w->fd, &olen, sizeof olen))
        return -1;
    char *o = malloc((size_t)olen + 1);
    if (!o) return -1;
    if (read_all(w->fd, o, olen)) { free(o); return -1; }
    o[olen] = 0;
    *out = o;
    return 0;
}

/* Reap a worker that stopped answering; say how it ended into why. */
static void reap_worker(ph_worker *w, char *why, size_t cap) {
    close(w->fd);
    w->fd = -1;
    int status = 0;
    pid_t r;
    while ((r = waitpid(w->pid, &status, 0)) < 0 && errno == EINTR) {}
    if (r == w->pid && WIFSIGNALED(status)) snprintf(why, cap, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (r == w->pid && WIFEXITED(status)) snprintf(why, cap, "exited with status %d", WEXITSTATUS(status));
    else snprintf(why, cap, "stopped answering");
}

static xtts_status ipa_remote(xtts_phonemizer *p, const char *text, int lang, char **ipa, xtts_error *err) {
    int wi = (omp_in_parallel() ? omp_get_thread_num() : 0) % p->n_workers;
    ph_worker *w = &p->workers[wi];
    size_t tl = strlen(text);
    if (tl > UINT32_MAX - 1) return xtts_error_set(err, XTTS_EINPUT, "text too long for the phonemizer");
    uint8_t code = 0;
    char *out = NULL;
    char why[96] = "";
    xtts_status st = XTTS_OK;
    pthread_mutex_lock(&w->lock);
    /* A worker that dies on a text is replaced and the text tried once more, alone in the
     * new worker (the crash may come from what the old one did before); a second death
     * rejects this text only. */
    int bad = 1;
    for (int attempt = 0; attempt < 2 && bad; attempt++) {
        if (w->fd < 0 && (st = spawn_worker(p, wi, err))) break;
        bad = ask_worker(w, text, (uint32_t)tl, lang, &code, &out);
        if (bad) reap_worker(w, why, sizeof why);
    }
    if (bad && !st && w->fd < 0) st = spawn_worker(p, wi, err); /* ready for the next text */
    pthread_mutex_unlock(&w->lock);
    if (bad) {
        if (st) return st;
        return xtts_error_set(err, XTTS_EINPUT, "espeak-ng failed on this text twice (its worker process %s)", why);
    }
    if (code) {
        xtts_error_set(err, (xtts_status)code, "%s", out);
        free(out);
        return (xtts_status)code;
    }
    *ipa = out;
    return XTTS_OK;
}

xtts_status xtts_phonemizer_ipa(xtts_phonemizer *p, const char *text, int lang, char **ipa, xtts_error *err) {
    *ipa = NULL;
    if (!xtts_phonemizer_has_lang(p, lang))
        return xtts_error_set(err, XTTS_EINPUT, "espeak-ng has no voice for language %s",
                              xtts_lang_code(lang) ? xtts_lang_code(lang) : "?");
    return p->n_workers ? ipa_remote(p, text, lang, ipa, err) : ipa_local(p, text, lang, ipa, err);
}

xtts_status xtts_phonemizer_encode(xtts_phonemizer *p, const char *text, int lang, xtts_ids *out, xtts_error *err) {
    char *ipa;
    xtts_status st = xtts_phonemizer_ipa(p, text, lang, &ipa, err);
    if (st) return st;
    out->n = 0;
    int fail = xtts_ids_push(out, XTTS_BYTES_START) || (lang < XTTS_N_LANGS && xtts_ids_push(out, XTTS_BYTES_LANG0 + lang));
    const uint8_t *s = (const uint8_t *)ipa;
    size_t n = strlen(ipa), i = 0;
    int last_space = 1;
    while (i < n && !fail) {
        int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) break;
        i += (size_t)k;
        if (cp == ' ' || cp == '_') {
            if (!last_space) fail |= xtts_ids_push(out, PH_SPACE);
            last_space = 1;
            continue;
        }
        last_space = 0;
        int id = XTTS_BYTES_UNK;
        for (size_t j = 0; j < N_IPA; j++)
            if (p->cp[j] == cp) { id = PH_FIRST + (int)j; break; }
        fail |= xtts_ids_push(out, id);
    }
    if (out->n && out->ids[out->n - 1] == PH_SPACE) out->n--;
    fail |= xtts_ids_push(out, XTTS_BYTES_STOP);
    free(ipa);
    if (fail) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (out->n <= (lang < XTTS_N_LANGS ? 3u : 2u)) return xtts_error_set(err, XTTS_EINPUT, "espeak-ng produced no phonemes");
    return XTTS_OK;
}
