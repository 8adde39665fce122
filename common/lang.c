/* lang.c — XTTS's 17 language codes, and language tags beyond them (xtts_common.h, "Any
 * language"). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/xtts_common.h"

/* ---- XTTS's 17 ------------------------------------------------------------- */

const char *const xtts_lang_codes[XTTS_N_LANGS] = {"en", "es", "fr", "de", "it", "pt", "pl", "tr", "ru",
                                                   "nl", "cs", "ar", "zh-cn", "hu", "ko", "ja", "hi"};

int xtts_lang_index(const char *code) {
    if (!code) return -1;
    if (!strcasecmp(code, "zh")) return 12;
    for (int i = 0; i < XTTS_N_LANGS; i++)
        if (!strcasecmp(code, xtts_lang_codes[i])) return i;
    return -1;
}

/* ISO 639-1: the alpha-2 column of Debian iso-codes' iso_639-2.json (184 codes), two
 * letters each, sorted. */
static const char iso639_1[] = "aaabaeafakamanarasavayazbabebgbhbibmbnbobrbscacechcocrcscucvcydadedvdzeeeleneoeseteufafffifjfofrfygagdglgngugvhahehihohrhthuhyhziaidieigiiikioisitiujajvkakgkikjkkklkmknkokrkskukvkwkylalblglilnloltlulvmgmhmimkmlmnmrmsmtmynanbndnengnlnnnonrnvnyocojomorospapiplpsptqurmrnrorurwsascsdsesgsiskslsmsnsosqsrssstsusvswtatetgthtitktltntotrtstttwtyugukuruzvevivowawoxhyiyozazhzu";

static int iso639_1_known(const char *two) {
    size_t lo = 0, hi = sizeof iso639_1 / 2;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strncmp(iso639_1 + 2 * mid, two, 2);
        if (!c) return 1;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return 0;
}

static int alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

int xtts_lang_tag_normalize(char *t) {
    size_t n = strlen(t);
    if (n < 2 || n > 15) return 0;
    for (char *p = t; *p; p++) if (*p == '_') *p = '-';
    size_t i = 0;
    for (; t[i] && t[i] != '-'; i++) {
        if (t[i] >= 'A' && t[i] <= 'Z') t[i] = (char)(t[i] - 'A' + 'a');
        if (t[i] < 'a' || t[i] > 'z') return 0;
    }
    if (i < 2 || i > 3) return 0;
    if (i == 2 && !iso639_1_known(t)) return 0;
    if (!strcasecmp(t, "zh-cn") || !strcmp(t, "zh")) { strcpy(t, "zh-cn"); return 1; }
    int sub = 0;
    while (t[i]) {
        size_t s = ++i, k = 0;
        for (; t[i] && t[i] != '-'; i++, k++)
            if (!alnum(t[i])) return 0;
        if (k < 1 || k > 8) return 0;
        for (size_t j = s; j < i; j++) {
            int upper = k == 2 && sub == 0;
            if (upper && t[j] >= 'a' && t[j] <= 'z') t[j] = (char)(t[j] - 'a' + 'A');
            if (!upper && t[j] >= 'A' && t[j] <= 'Z') t[j] = (char)(t[j] - 'A' + 'a');
        }
        sub++;
    }
    return 1;
}

int xtts_lang_tag_valid(const char *tag) {
    char b[16];
    if (!tag || strlen(tag) >= sizeof b) return 0;
    strcpy(b, tag);
    return xtts_lang_tag_normalize(b) && !strcmp(b, tag);
}

static pthread_mutex_t lang_lock = PTHREAD_MUTEX_INITIALIZER;
static char extra_codes[XTTS_MAX_LANGS - XTTS_N_LANGS][16];
static int n_extra; /* written under lang_lock, read with acquire loads */

const char *xtts_lang_code(int id) {
    if (id >= 0 && id < XTTS_N_LANGS) return xtts_lang_codes[id];
    int n = __atomic_load_n(&n_extra, __ATOMIC_ACQUIRE);
    if (id >= XTTS_N_LANGS && id < XTTS_N_LANGS + n) return extra_codes[id - XTTS_N_LANGS];
    return NULL;
}

int xtts_lang_find(const char *tag) {
    if (!tag) return -1;
    for (int i = 0; i < XTTS_N_LANGS; i++)
        if (!strcmp(tag, xtts_lang_codes[i])) return i;
    int n = __atomic_load_n(&n_extra, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (!strcmp(tag, extra_codes[i])) return XTTS_N_LANGS + i;
    return -1;
}

int xtts_lang_intern(const char *tag) {
    if (!xtts_lang_tag_valid(tag)) return -1;
    int id = xtts_lang_find(tag);
    if (id >= 0) return id;
    pthread_mutex_lock(&lang_lock);
    id = xtts_lang_find(tag);
    if (id < 0 && n_extra < XTTS_MAX_LANGS - XTTS_N_LANGS) {
        snprintf(extra_codes[n_extra], sizeof extra_codes[n_extra], "%s", tag);
        __atomic_store_n(&n_extra, n_extra + 1, __ATOMIC_RELEASE);
        id = XTTS_N_LANGS + n_extra - 1;
    }
    pthread_mutex_unlock(&lang_lock);
    return id;
}
