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
#define PACE_SPREAD 1.3    /* a sentence's length ratio within the reader's pace times or over this */
#define STRAY_SPEECH_S 0.8
#define CONTIGUOUS_SLACK 0.1 /* share of its evidence a sentence may give up to start where the last one ended */
#define MIN_MATCH 0.15     /* share of a sentence's frames the map matched, below which it was not read */
#define SURE_FRAMES 60.0   /* spoken reference frames (2.4 s) from which a margin is trusted fully */
#define ORDER_MARGIN 0.2   /* reversed minus forward cost that scores 1 */ /* speech between two neighbours' pauses: more is speech not in the text */

xtts_status xtts_seg_find_pauses(const seg_track *rec, double min_s, seg_pause **out, size_t *n, xtts_error *err) {
    size_t cap = 256;
    seg_pause *p = malloc(cap * sizeof *p);
    if (!p) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    *n = 0;
    double end_s = (double)rec->n10 * SEG_ENERGY_S;
    if (rec->n10 && rec->energy_db[0] >= rec->silence_db) p[(*n)++] = (seg_pause){0, 0};
    size_t min_frames = (size_t)ceil(min_s / SEG_ENERGY_S);
    for (size_t i = 0, trimmed = 0; i < rec->n10;) {
        if (i - trimmed >= 65536) trimmed = i, xtts_seg_track_trim(rec);
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

/* The best span for reference frames [rs, re) starting after pause `start`: over the pauses
 * where it may end (its reference length times MIN_RATIO..MAX_RATIO later), the one where its
 * sounds match best in their order against reversed (the reversed reference has the same
 * sounds in the wrong order, so wrong speech scores about as well both ways). Sets *end and
 * *margin (reversed minus forward cost per weight) and returns the margin times the path's
 * weight, -INFINITY when none. */
static double best_end(const seg_align_ctx *c, const double ratio[2], size_t rs, size_t re, const seg_pause *pauses,
                       size_t n_pauses, int start, int *end, double *margin) {
    double b = pauses[start].b, dur = (double)(re - rs) * SEG_FRAME_S;
    size_t c0 = b <= 0 ? 0 : (size_t)(b / SEG_FRAME_S), c1 = c0 + (size_t)(ratio[1] * (double)(re - rs)) + 2;
    if (c1 > c->rec->n) c1 = c->rec->n;
    double best = -INFINITY;
    *end = -1;
    if (c1 <= c0 + 1) return best;
    double *fwd = malloc(2 * (c1 - c0) * sizeof *fwd), *rev = fwd ? fwd + (c1 - c0) : NULL;
    if (!fwd || xtts_dtw_end_costs(c->dp, c->ref, rs, re, c->rec, c0, c1, 0, fwd) ||
        xtts_dtw_end_costs(c->dp, c->ref, rs, re, c->rec, c0, c1, 1, rev)) {
        free(fwd);
        return best;
    }
    for (size_t k = (size_t)start + 1; k < n_pauses; k++) {
        double a = pauses[k].a;
        if (a < b + ratio[0] * dur) continue;
        if (a > b + ratio[1] * dur) break;
        size_t j = (size_t)ceil(a / SEG_FRAME_S);
        if (j <= c0) continue;
        j -= c0 + 1;
        if (j >= c1 - c0 || !isfinite(fwd[j])) continue;
        /* the margin per weight times the square root of the weight (the margin's noise falls
         * as that grows): a span that leaves out a quiet word of its own scores less, and one
         * that takes in speech of another does not gain by its length alone */
        double m = (rev[j] - fwd[j]) * sqrt((double)(re - rs + j + 1));
        if (m > best) best = m, *end = (int)k, *margin = rev[j] - fwd[j];
    }
    free(fwd);
    return best;
}

/* The pauses a sentence may start after: the two nearest the map's start t0 (by their ends). */
static size_t start_candidates(const seg_pause *p, size_t n, double t0, int out[2]) {
    double d0 = PAUSE_TOL_S * 4, d1 = PAUSE_TOL_S * 4;
    out[0] = out[1] = -1;
    for (size_t k = 0; k < n; k++) {
        double d = t0 >= p[k].a && t0 <= p[k].b ? 0 : fabs(p[k].b - t0);
        if (d < d0) d1 = d0, out[1] = out[0], d0 = d, out[0] = (int)k;
        else if (d < d1) d1 = d, out[1] = (int)k;
    }
    if (out[0] < 0) return 0;
    return out[1] >= 0 ? 2 : 1;
}

static double speech_between(const seg_track *rec, double a, double b);

static void place_one(const seg_align_ctx *c, const seg_track *ref, const seg_track *rec, size_t st, size_t en, const int32_t *rec_of_ref,
                      const float *dist, double gap, const seg_pause *pauses, size_t n_pauses, double min_score,
                      int prev_end, const double ratio[2], seg_placed *o) {
    memset(o, 0, sizeof *o);
    o->pause_before = o->pause_after = -1;
    size_t rs = st, re = en;
    while (rs < re && ref->silent[rs]) rs++;
    while (re > rs && ref->silent[re - 1]) re--;
    if (rs == re) { o->why = "nothing to say in it"; return; }
    o->score = sentence_score(ref, rs, re, dist, gap);
    double t0 = rec_of_ref[rs] * SEG_FRAME_S, t1 = (rec_of_ref[re - 1] + 1) * SEG_FRAME_S;
    o->speech_start = t0, o->speech_end = t1;
    int starts[3];
    size_t ns = o->score < MIN_MATCH ? 0 : start_candidates(pauses, n_pauses, t0, starts);
    if (prev_end >= 0 && (ns < 1 || starts[0] != prev_end) && (ns < 2 || starts[1] != prev_end)) starts[ns++] = prev_end;
    if (!ns) { o->why = "not found in the audio"; return; }
    double best = -INFINITY, total[3], margin[3], chosen = 0;
    int ends[3];
    for (size_t k = 0; k < ns; k++) {
        ends[k] = -1;
        total[k] = best_end(c, ratio, rs, re, pauses, n_pauses, starts[k], &ends[k], &margin[k]);
        if (ends[k] >= 0 && total[k] > best) best = total[k], chosen = margin[k], o->pause_before = starts[k], o->pause_after = ends[k];
    }
    /* reading goes on where the last sentence stopped: its pause wins when nearly as good,
     * unless speech of its own length (STRAY_SPEECH_S or more) lies between it and the best
     * start: that speech may be the reader's or not in the text, and taking it or leaving it
     * could attach or cut; the sentence is left out */
    int best_start = o->pause_before;
    for (size_t k = 0; k < ns; k++)
        if (starts[k] == prev_end && ends[k] >= 0 && starts[k] != best_start && total[k] >= best - CONTIGUOUS_SLACK * fabs(best)) {
            double a = pauses[starts[k]].b, b = pauses[best_start].b;
            if (speech_between(rec, a < b ? a : b, a < b ? b : a) >= STRAY_SPEECH_S) {
                o->why = "speech at its start may not be its own (its placements disagree)";
                o->score = 0;
                return;
            }
            chosen = margin[k], o->pause_before = starts[k], o->pause_after = ends[k];
        }
    if (o->pause_before < 0 || o->pause_after < 0) { o->why = "no pause at its start or end in the audio"; return; }
    o->speech_start = pauses[o->pause_before].b, o->speech_end = pauses[o->pause_after].a;
    /* a short sentence's margin rests on few frames: it must be larger to count as much */
    double sure = sqrt((double)(re - rs) / SURE_FRAMES), sc = chosen / ORDER_MARGIN * (sure < 1 ? sure : 1);
    o->score = sc < 0 ? 0 : sc > 1 ? 1 : sc;
    if (getenv("XTTS_SEGMENT_DEBUG"))
        fprintf(stderr, "debug: ref %zu-%zu map %.2f-%.2f placed %.2f-%.2f margin %.3f\n", rs, re, t0, t1,
                o->speech_start, o->speech_end, chosen);
    if (getenv("XTTS_SEGMENT_DEBUG"))
        for (size_t k = 0; k < ns; k++)
            fprintf(stderr, "debug:   start %.2f end %.2f margin %.3f total %.3f\n", pauses[starts[k]].b,
                    ends[k] >= 0 ? pauses[ends[k]].a : -1.0, ends[k] >= 0 ? margin[k] : 0, total[k]);
    if (o->score < min_score) o->why = "its words are not in the audio's order (score below --min-score)";
}

/* Seconds of speech (non-silent energy frames) in the recording between a and b. */
static double speech_between(const seg_track *rec, double a, double b) {
    size_t i = a <= 0 ? 0 : (size_t)(a / SEG_ENERGY_S), j = (size_t)(b / SEG_ENERGY_S);
    if (j > rec->n10) j = rec->n10;
    size_t n = 0;
    for (; i < j; i++) n += rec->energy_db[i] >= rec->silence_db;
    return (double)n * SEG_ENERGY_S;
}

/* The median of recording over reference speech length among the sentences placed surely
 * (score 0.8 or more), 0 when fewer than three are. */
static double reader_pace(const seg_track *ref, const size_t *ref_start, const size_t *ref_end, const seg_placed *pl,
                          size_t n) {
    double *r = malloc((n + 1) * sizeof *r);
    size_t m = 0;
    for (size_t k = 0; r && k < n; k++) {
        if (pl[k].why || pl[k].score < 0.8) continue;
        size_t rs = ref_start[k], re = ref_end[k] < ref->n40 ? ref_end[k] : ref->n40;
        while (rs < re && ref->silent[rs]) rs++;
        while (re > rs && ref->silent[re - 1]) re--;
        if (re > rs) r[m++] = (pl[k].speech_end - pl[k].speech_start) / ((double)(re - rs) * SEG_FRAME_S);
    }
    double pace = 0;
    if (m >= 3) {
        for (size_t i = 1; i < m; i++)
            for (size_t j = i; j > 0 && r[j - 1] > r[j]; j--) { double t = r[j]; r[j] = r[j - 1], r[j - 1] = t; }
        pace = r[m / 2];
    }
    free(r);
    return pace;
}

/* The text's first sentence takes in a little speech before it (a quiet first word under the
 * silence threshold's pause), and its last one a little after it: no other sentence can own it. */
static void extend_to_ends(const seg_track *rec, const seg_pause *pauses, size_t n_pauses, seg_placed *pl, size_t n) {
    if (!n || !n_pauses) return;
    seg_placed *f = &pl[0], *l = &pl[n - 1];
    if (!f->why && f->pause_before > 0 && speech_between(rec, 0, f->speech_start) < STRAY_SPEECH_S)
        f->pause_before = 0, f->speech_start = pauses[0].b;
    double end = (double)rec->n10 * SEG_ENERGY_S;
    if (!l->why && l->pause_after >= 0 && (size_t)l->pause_after + 1 < n_pauses &&
        speech_between(rec, l->speech_end, end) < STRAY_SPEECH_S)
        l->pause_after = (int)n_pauses - 1, l->speech_end = pauses[n_pauses - 1].a;
}

/* Neighbours that both stand must agree: the same pause between them, or a stretch between
 * their pauses that is silence or long enough to be speech of its own. */
static void check_neighbours(const seg_track *rec, seg_placed *pl, size_t n) {
    for (size_t k = 0; k < n; k++) {
        if ((k & 63) == 63) xtts_seg_track_trim(rec);
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
                      const seg_pause *pauses, size_t n_pauses, double min_score, const seg_align_ctx *c,
                      seg_placed *out) {
    /* twice: first with any plausible length, then with this reader's pace (the median
     * length ratio of the sentences placed surely), so that a sentence that was not read
     * cannot stretch over speech of another length */
    double ratio[2] = {MIN_RATIO, MAX_RATIO};
    for (int pass = 0; pass < 2; pass++) {
        int prev_end = -1;
        for (size_t k = 0; k < n_sent; k++) {
            if (c->dp->trim && (k & 63) == 63) c->dp->trim(c->dp->trim_ctx);
            place_one(c, ref, rec, ref_start[k], ref_end[k] < ref->n40 ? ref_end[k] : ref->n40, rec_of_ref, dist, gap_cost,
                      pauses, n_pauses, min_score, prev_end, ratio, &out[k]);
            if (!out[k].why) prev_end = out[k].pause_after;
        }
        double pace = reader_pace(ref, ref_start, ref_end, out, n_sent);
        if (pace <= 0) break;
        ratio[0] = pace / PACE_SPREAD, ratio[1] = pace * PACE_SPREAD;
    }
    extend_to_ends(rec, pauses, n_pauses, out, n_sent);
    check_neighbours(rec, out, n_sent);
    return XTTS_OK;
}
