/* reference.c — the synthesized reference: every sentence, normalized as xtts-tokenize
 * normalizes it (--normalize spoken), spoken by espeak-ng, resampled to 16 kHz and framed
 * (segment_internal.h). espeak-ng keeps one state per process: synthesis holds a lock. */
#include <espeak-ng/speak_lib.h>
#include <pthread.h>
#include <soxr.h>
#include <stdlib.h>
#include <string.h>

#include "prep/segment/segment_internal.h"
#include "prep/text/normalize/normalize.h"

/* espeak-ng voice per XTTS language (xtts_lang_codes order), as the phoneme tokenizer picks. */
static const char *const voice_of_lang[XTTS_N_LANGS] = {"en-us", "es", "fr", "de", "it", "pt-br", "pl", "tr", "ru",
                                                        "nl", "cs", "ar", "cmn", "hu", "ko", "ja", "hi"};

static pthread_mutex_t espeak_lock = PTHREAD_MUTEX_INITIALIZER;
static int espeak_rate = 0; /* 0 before the first start, -1 when it failed */

typedef struct {
    short *x;
    size_t n, cap;
    int failed;
} synth_buf;

static int on_synth(short *wav, int n, espeak_EVENT *ev) {
    synth_buf *b = ev ? (synth_buf *)ev->user_data : NULL;
    if (!b || !wav || n <= 0) return 0;
    if (b->n + (size_t)n > b->cap) {
        size_t c = b->cap ? b->cap : 1 << 16;
        while (c < b->n + (size_t)n) c *= 2;
        short *x = realloc(b->x, c * sizeof *x);
        if (!x) { b->failed = 1; return 1; }
        b->x = x, b->cap = c;
    }
    memcpy(b->x + b->n, wav, (size_t)n * sizeof *wav);
    b->n += (size_t)n;
    return 0;
}

/* Under the lock, on the speaker thread: choose lang's voice. */
static xtts_status start_voice(const char *lang, xtts_error *err) {
    int li = xtts_lang_index(lang);
    const char *voice = li >= 0 ? voice_of_lang[li] : lang;
    if (espeak_SetVoiceByName(voice) != EE_OK)
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "espeak-ng has no voice for language '%s'", lang);
    espeak_SetParameter(espeakRATE, 165, 0);
    return XTTS_OK;
}

/* espeak-ng is used from one thread only, its own: calls from other threads, even one at a
 * time, corrupt its state (measured: "Bad data" from its dictionary, a double free). A
 * request is one sentence; espeak_lock keeps one text's requests together. */
static struct {
    pthread_mutex_t m;
    pthread_cond_t asked, answered;
    const char *lang, *say;
    synth_buf *buf;
    xtts_error *err;
    xtts_status st;
    int pending, fresh;
} speaker = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, NULL, NULL, XTTS_OK, 0, 0};

static void *speaker_main(void *arg) {
    (void)arg;
    int rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL, espeakINITIALIZE_DONT_EXIT);
    if (rate > 0) espeak_SetSynthCallback(on_synth);
    pthread_mutex_lock(&speaker.m);
    espeak_rate = rate > 0 ? rate : -1;
    pthread_cond_broadcast(&speaker.answered);
    for (;;) {
        while (!speaker.pending) pthread_cond_wait(&speaker.asked, &speaker.m);
        speaker.st = start_voice(speaker.lang, speaker.err);
        if (!speaker.st)
            espeak_Synth(speaker.say, strlen(speaker.say) + 1, 0, POS_CHARACTER, 0, espeakCHARS_UTF8, NULL, speaker.buf);
        speaker.pending = 0;
        pthread_cond_broadcast(&speaker.answered);
    }
    return NULL;
}

xtts_status xtts_seg_reference_start(xtts_error *err) {
    static int started = 0;
    pthread_mutex_lock(&speaker.m);
    if (!started) {
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        started = pthread_create(&t, &at, speaker_main, NULL) == 0 ? 1 : -1;
        pthread_attr_destroy(&at);
        if (started < 0) espeak_rate = -1;
    }
    while (espeak_rate == 0) pthread_cond_wait(&speaker.answered, &speaker.m);
    int rate = espeak_rate;
    pthread_mutex_unlock(&speaker.m);
    return rate < 0 ? xtts_error_set(err, XTTS_EIO, "espeak-ng cannot start (is espeak-ng-data installed?)") : XTTS_OK;
}

/* Have the speaker thread say one sentence into b. */
static xtts_status speak(const char *lang, const char *say, int fresh, synth_buf *b, xtts_error *err) {
    pthread_mutex_lock(&speaker.m);
    speaker.lang = lang, speaker.say = say, speaker.buf = b, speaker.err = err, speaker.fresh = fresh, speaker.pending = 1;
    pthread_cond_signal(&speaker.asked);
    while (speaker.pending) pthread_cond_wait(&speaker.answered, &speaker.m);
    xtts_status st = speaker.st;
    pthread_mutex_unlock(&speaker.m);
    return st;
}

/* The words espeak-ng is to say for one sentence (malloc'd). */
static char *spoken_text(const char *s, const char *lang) {
    int li = xtts_lang_index(lang);
    char *out = NULL;
    unsigned flags = 0;
    xtts_normalize_options no = {.lowercase = 0, .expand = 1, .mode = XTTS_NORM_SPOKEN};
    if (li >= 0 && xtts_normalize(s, strlen(s), li, &no, &out, &flags, NULL) == XTTS_OK) return out;
    if (xtts_normalize_basic(s, strlen(s), &out, NULL) == XTTS_OK) return out;
    return strdup(s);
}

/* Append n samples of 16 kHz silence. */
static xtts_status add_silence(seg_features *f, seg_track *t, size_t n, xtts_error *err) {
    float z[1600] = {0};
    for (; n; ) {
        size_t k = n < 1600 ? n : 1600;
        xtts_status st = xtts_seg_features_feed(f, z, k, t, err);
        if (st) return st;
        n -= k;
    }
    return XTTS_OK;
}

/* One sentence: synthesize (the caller holds the lock), resample, feed. */
static xtts_status add_sentence(const char *text, const char *lang, int fresh, synth_buf *b, float **fx, size_t *fcap,
                                seg_features *f, seg_track *t, xtts_error *err) {
    char *say = spoken_text(text, lang);
    if (!say) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    b->n = 0, b->failed = 0;
    xtts_status st = espeak_rate > 0 ? speak(lang, say, fresh, b, err)
                                     : xtts_error_set(err, XTTS_EIO, "espeak-ng cannot start (is espeak-ng-data installed?)");
    int rate = espeak_rate;
    free(say);
    if (st) return st;
    if (b->failed) return xtts_error_set(err, XTTS_ENOMEM, "out of memory (synthesis)");
    if (!b->n) return XTTS_OK;
    size_t m = (size_t)((double)b->n * SEG_RATE / rate) + 64, done = 0;
    if (m + b->n > *fcap) {
        free(*fx);
        *fcap = m + b->n;
        *fx = malloc(*fcap * sizeof **fx);
        if (!*fx) { *fcap = 0; return xtts_error_set(err, XTTS_ENOMEM, "out of memory (synthesis)"); }
    }
    float *in = *fx + m;
    for (size_t i = 0; i < b->n; i++) in[i] = b->x[i] / 32768.f;
    soxr_quality_spec_t q = soxr_quality_spec(SOXR_MQ, 0);
    if (soxr_oneshot(rate, SEG_RATE, 1, in, b->n, NULL, *fx, m, &done, NULL, &q, NULL))
        return xtts_error_set(err, XTTS_EINPUT, "resampling the reference failed");
    return xtts_seg_features_feed(f, *fx, done, t, err);
}

xtts_status xtts_seg_reference(const xtts_sentences *s, const char *lang, seg_features *f, seg_track *t, size_t *start,
                          size_t *end, xtts_error *err) {
    synth_buf b = {0};
    float *fx = NULL;
    size_t fcap = 0;
    xtts_seg_features_reset(f);
    xtts_status st = add_silence(f, t, SEG_RATE * 3 / 10, err);
    /* one text's sentences together. espeak-ng's output still varies by a few samples from
     * call to call (its wave generator's state carries over): a sentence near a threshold
     * may be decided differently from run to run (docs/xtts-segment.md) */
    pthread_mutex_lock(&espeak_lock);
    for (size_t k = 0; k < s->n && !st; k++) {
        start[k] = t->n10 / SEG_SUB;
        st = add_sentence(s->s[k].text, lang, k == 0, &b, &fx, &fcap, f, t, err);
        end[k] = (t->n10 + SEG_SUB - 1) / SEG_SUB;
        if (!st) st = add_silence(f, t, SEG_RATE * 3 / 10, err);
    }
    pthread_mutex_unlock(&espeak_lock);
    if (!st) st = xtts_seg_features_flush(f, t, err);
    free(b.x);
    free(fx);
    return st;
}
