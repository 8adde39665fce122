/* align.c — sentences on the recording: the pauses of the recording, and each sentence's
 * span between two of them, its score and, when it cannot be used, why (segment_internal.h).
 *
 * The DTW maps the reference's frames to the recording's; a sentence's first and last spoken
 * frames land near where the reader started and stopped saying it. The cut is not put there
 * but in the nearest pause of the recording itself (so speech is never cut), and two
 * neighbours must agree on the pause between them (else a word could sit in the wrong clip).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/segment/segment_internal.h"

#define PAUSE_TOL_S 0.35   /* how far the map may miss a sentence's pause */
#define MIN_RATIO 0.45     /* recording / reference length of a sentence's speech */
#define MAX_RATIO 2.3
#define STRAY_SPEECH_S 0.8 /* speech between two neighbours' pauses: more is speech not in the text */

xtts_status xtts_seg_find_pauses(const seg_track *rec, double min_s, seg_pause **out, size_t *n, xtts_error *err) {
    size_t cap = 256;
    seg_pause *p = malloc(cap * sizeof *p);
    if (!p) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    *n = 0;
    double end_s = (double)rec->n10 * SEG_ENERGY_S;
    if (rec->n10 && rec->energy_db[0] >= rec->silence_db) p[(*n)++] = (seg_pause){0, 0};
    size_t min_frames = (size_t)ceil(min_s / SEG_ENERGY_S);
    for (size_t i = 0; i < rec->n10;) {
        if (rec->energy_db[i] >= rec->silence_db) { i++; continue; }
        size_t j = i;
        while (j < rec->n10 && rec->energy_db[j] < rec->silence_db) j++;
        if (j - i >= min_frames || i == 0 || j == rec->n10) {
            if (*n + 2 > cap) {
                cap *= 2;
                seg_pause *np = realloc(p, cap * sizeof *np);
                if (!np) { free(p); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
                p = np;
            }
            double a = i == 0 ? 0 : i * SEG_ENERGY_S + 0.016, b = j == rec->n10 ? end_s : (j - 1) * SEG_ENERGY_S + 0.016;
            if (b > a) p[(*n)++] = (seg_pause){a, b};
        }
        i = j;
    }
    if (rec->n10 && rec->energy_db[rec->n10 - 1] >= rec->silence_db) p[(*n)++] = (seg_pause){end_s, end_s};
    *out = p;
    return XTTS_OK;
}

/* The pause whose end (want_end) or start lies nearest t, within PAUSE_TOL_S; -1 if none. */
static int nearest_pause(const seg_pause *p, size_t n, double t, int want_end) {
    int best = -1;
    double bd = PAUSE_TOL_S;
    for (size_t k = 0; k < n; k++) {
        double edge = want_end ? p[k].b : p[k].a;
        /* t inside the pause counts as on its edge */
        double d = t >= p[k].a && t <= p[k].b ? 0 : fabs(edge - t);
        if (d < bd || (d == bd && best < 0)) bd = d, best = (int)k;
    }
    return best;
}

/* Score of a sentence's spoken reference frames [rs, re): 1 where the map's distance is a
 * good match, 0 where the frame was left unmatched, linear between. */
static double sentence_score(const seg_track *ref, size_t rs, size_t re, const float *dist, double gap) {
    const double good = 0.6 * gap;
    double s = 0;
    size_t n = 0;
    for (size_t i = rs; i < re; i++) {
        if (ref->silent[i]) continue;
        double v = (gap - dist[i]) / (gap - good);
        s += v < 0 ? 0 : v > 1 ? 1 : v;
        n++;
    }
    return n ? s / (double)n : 0;
}

static void place_one(const seg_track *ref, size_t st, size_t en, const int32_t *rec_of_ref, const float *dist,
                      double gap, const seg_pause *pauses, size_t n_pauses, double min_score, seg_placed *o) {
    memset(o, 0, sizeof *o);
    o->pause_before = o->pause_after = -1;
    size_t rs = st, re = en;
    while (rs < re && ref->silent[rs]) rs++;
    while (re > rs && ref->silent[re - 1]) re--;
    if (rs == re) { o->why = "nothing to say in it"; return; }
    o->score = sentence_score(ref, rs, re, dist, gap);
    if (getenv("XTTS_SEGMENT_DEBUG")) {
        double m = 0;
        size_t n = 0;
        for (size_t i = rs; i < re; i++)
            if (!ref->silent[i]) m += dist[i], n++;
        fprintf(stderr, "debug: ref %zu-%zu -> rec %.2f-%.2f, mean distance %.3f, score %.2f\n", rs, re,
                rec_of_ref[rs] * SEG_FRAME_S, (rec_of_ref[re - 1] + 1) * SEG_FRAME_S, n ? m / n : 0, o->score);
    }
    double t0 = rec_of_ref[rs] * SEG_FRAME_S, t1 = (rec_of_ref[re - 1] + 1) * SEG_FRAME_S;
    o->speech_start = t0, o->speech_end = t1;
    if (o->score < min_score) { o->why = "not found in the audio (score below --min-score)"; return; }
    o->pause_before = nearest_pause(pauses, n_pauses, t0, 1);
    o->pause_after = nearest_pause(pauses, n_pauses, t1, 0);
    if (o->pause_before < 0 || o->pause_after < 0) { o->why = "no pause at its start or end in the audio"; return; }
    o->speech_start = pauses[o->pause_before].b, o->speech_end = pauses[o->pause_after].a;
    double ratio = (o->speech_end - o->speech_start) / ((double)(re - rs) * SEG_FRAME_S);
    if (o->speech_end <= o->speech_start || ratio < MIN_RATIO || ratio > MAX_RATIO)
        o->why = "its audio is too short or too long for its text";
}

/* Seconds of speech (non-silent energy frames) in the recording between a and b. */
static double speech_between(const seg_track *rec, double a, double b) {
    size_t i = a <= 0 ? 0 : (size_t)(a / SEG_ENERGY_S), j = (size_t)(b / SEG_ENERGY_S);
    if (j > rec->n10) j = rec->n10;
    size_t n = 0;
    for (; i < j; i++) n += rec->energy_db[i] >= rec->silence_db;
    return (double)n * SEG_ENERGY_S;
}

/* Neighbours that both stand must agree: the same pause between them, or a stretch between
 * their pauses that is silence or long enough to be speech of its own. */
static void check_neighbours(const seg_track *rec, seg_placed *pl, size_t n) {
    for (size_t k = 0; k < n; k++) {
        if (pl[k].why) continue;
        size_t m = k + 1;
        while (m < n && pl[m].why) m++;
        if (m == n) break;
        seg_placed *x = &pl[k], *y = &pl[m];
        if (x->pause_after == y->pause_before) continue;
        const char *why = NULL;
        if (x->pause_after > y->pause_before) why = "its pause disagrees with its neighbour's";
        else {
            double s = speech_between(rec, x->speech_end, y->speech_start);
            if (s > 0.05 && s < STRAY_SPEECH_S) why = "a word between it and its neighbour belongs to neither";
        }
        if (why) x->why = y->why = why;
    }
}

xtts_status xtts_seg_place(const seg_track *ref, const seg_track *rec, const size_t *ref_start, const size_t *ref_end,
                      size_t n_sent, const int32_t *rec_of_ref, const float *dist, double gap_cost,
                      const seg_pause *pauses, size_t n_pauses, double min_score, seg_placed *out) {
    for (size_t k = 0; k < n_sent; k++)
        place_one(ref, ref_start[k], ref_end[k] < ref->n40 ? ref_end[k] : ref->n40, rec_of_ref, dist, gap_cost, pauses,
                  n_pauses, min_score, &out[k]);
    check_neighbours(rec, out, n_sent);
    return XTTS_OK;
}
