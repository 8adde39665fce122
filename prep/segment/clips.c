/* clips.c — consecutive placed sentences grouped into clips (segment_internal.h): a clip
 * grows while its next sentence shares its last pause, fits in --max-seconds and keeps the
 * text under the language's character limit; it is cut in that pause, --pad of silence kept
 * on each side, never past the pause's middle. */
#include <stdlib.h>
#include <string.h>

#include "prep/segment/segment_internal.h"
#include "prep/text/normalize/xtts_text.h"

static double cut_before(const seg_pause *p, double pad) {
    double mid = 0.5 * (p->a + p->b), c = p->b - pad;
    return c > mid ? c : mid;
}

static double cut_after(const seg_pause *p, double pad) {
    double mid = 0.5 * (p->a + p->b), c = p->a + pad;
    return c < mid ? c : mid;
}

typedef struct {
    seg_clip *c;
    size_t n, cap;
} clip_list;

/* ---- a long sentence cut at its own pauses ------------------------------------------------ */

#define REF_PAUSE_FRAMES 3   /* a silence in the reference of 0.12 s or more */
#define MAP_TOL_S 0.12       /* how far outside the pause a mapped frame may fall */

static double span_of(const seg_pause *p, int from, int to, double pad) {
    return cut_after(&p[to], pad) - cut_before(&p[from], pad);
}

/* Choose cuts among the candidates for the span from pause `from` to `to`: the longest
 * candidate pause inside it, then each side, until every piece fits. 0, or -1 when not. */
static int choose_cuts(const seg_pause *p, const int *cand, size_t nc, int from, int to, const xtts_segment_options *o,
                       uint8_t *take) {
    double len = span_of(p, from, to, o->pad_seconds);
    if (len <= o->max_seconds) return len >= o->min_seconds ? 0 : -1;
    int best = -1;
    double best_len = -1;
    for (size_t i = 0; i < nc; i++) {
        if (cand[i] <= from || cand[i] >= to) continue;
        double l = p[cand[i]].b - p[cand[i]].a;
        if (l > best_len) best_len = l, best = (int)i;
    }
    if (best < 0) return -1;
    take[best] = 1;
    if (choose_cuts(p, cand, nc, from, cand[best], o, take) || choose_cuts(p, cand, nc, cand[best], to, o, take)) return -1;
    return 0;
}

/* The recording pause (strictly between from and to) that reference frames [a, b) map into. */
static int pause_of(const int32_t *rec_of_ref, size_t a, size_t b, const seg_pause *p, int from, int to) {
    double t0 = rec_of_ref[a] * SEG_FRAME_S, t1 = (rec_of_ref[b - 1] + 1) * SEG_FRAME_S;
    for (int k = from + 1; k < to; k++)
        if (t0 >= p[k].a - MAP_TOL_S && t1 <= p[k].b + MAP_TOL_S && t0 <= p[k].b && t1 >= p[k].a) return k;
    return -1;
}

static void split_one(const char *text, const seg_track *ref, size_t rs, size_t re, const int32_t *rec_of_ref,
                      const seg_pause *pauses, const xtts_segment_options *o, seg_placed *x) {
    size_t marks[64], nm = 0; /* the text's clause marks: the next word's first byte */
    for (size_t i = 0; text[i] && nm < 64; i++)
        if ((text[i] == ',' || text[i] == ';' || text[i] == ':') && text[i + 1] == ' ' && text[i + 2]) marks[nm++] = i + 2;
    while (rs < re && ref->silent[rs]) rs++;
    while (re > rs && ref->silent[re - 1]) re--;
    int cand[64];
    size_t nc = 0, runs = 0;
    size_t cbyte[64];
    for (size_t i = rs; i < re;) {
        if (!ref->silent[i]) { i++; continue; }
        size_t j = i;
        while (j < re && ref->silent[j]) j++;
        if (j - i >= REF_PAUSE_FRAMES) {
            if (runs < nm) {
                int k = pause_of(rec_of_ref, i, j, pauses, x->pause_before, x->pause_after);
                if (k >= 0 && (!nc || k > cand[nc - 1])) cand[nc] = k, cbyte[nc++] = marks[runs];
            }
            runs++;
        }
        i = j;
    }
    if (runs != nm || !nc) return; /* the reference's pauses and the text's marks disagree: not sure where */
    uint8_t take[64] = {0};
    if (choose_cuts(pauses, cand, nc, x->pause_before, x->pause_after, o, take)) return;
    int n = 0;
    for (size_t i = 0; i < nc && n < SEG_MAX_CUTS; i++)
        if (take[i]) x->cut_pause[n] = cand[i], x->cut_byte[n++] = cbyte[i];
    x->n_cuts = n;
}

void xtts_seg_split_long(const xtts_sentences *s, const seg_track *ref, const size_t *ref_start, const size_t *ref_end,
                         const int32_t *rec_of_ref, const seg_pause *pauses, size_t n_pauses,
                         const xtts_segment_options *o, seg_placed *pl) {
    (void)n_pauses;
    for (size_t k = 0; k < s->n; k++) {
        seg_placed *x = &pl[k];
        x->n_cuts = 0;
        if (x->why || x->pause_before < 0 || x->pause_after < 0) continue;
        if (span_of(pauses, x->pause_before, x->pause_after, o->pad_seconds) <= o->max_seconds) continue;
        size_t re = ref_end[k] < ref->n40 ? ref_end[k] : ref->n40;
        split_one(s->s[k].text, ref, ref_start[k], re, rec_of_ref, pauses, o, x);
    }
}

static int push_clip(clip_list *l, seg_clip c) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        seg_clip *n = realloc(l->c, cap * sizeof *n);
        if (!n) return -1;
        l->c = n, l->cap = cap;
    }
    l->c[l->n++] = c;
    return 0;
}

/* Close the clip of sentences [first, last]: written, or its sentences left out when short. */
static int close_clip(clip_list *l, seg_placed *pl, const seg_pause *pauses, size_t first, size_t last,
                      const xtts_segment_options *o) {
    seg_clip c = {first, last, cut_before(&pauses[pl[first].pause_before], o->pad_seconds),
                  cut_after(&pauses[pl[last].pause_after], o->pad_seconds), 1.0, 0, 0};
    if (c.start < 0) c.start = 0;
    for (size_t k = first; k <= last; k++)
        if (pl[k].score < c.score) c.score = pl[k].score;
    if (c.end - c.start < o->min_seconds) {
        for (size_t k = first; k <= last; k++) pl[k].why = "its clip would be shorter than --min-seconds";
        return 0;
    }
    return push_clip(l, c);
}

xtts_status xtts_seg_group(const xtts_sentences *s, seg_placed *pl, const seg_pause *pauses, size_t n_pauses,
                      const xtts_segment_options *o, int char_limit, double rec_seconds, seg_clip **clips,
                      size_t *n_clips, xtts_error *err) {
    (void)n_pauses, (void)rec_seconds;
    clip_list l = {0};
    size_t first = 0, chars = 0;
    int open = 0;
    for (size_t k = 0; k <= s->n; k++) {
        int stands = k < s->n && !pl[k].why;
        size_t len = stands ? xtts_text_char_count(s->s[k].text, strlen(s->s[k].text)) : 0;
        if (stands && pl[k].n_cuts) { /* a long sentence cut at its own pauses: its pieces alone */
            if (open && close_clip(&l, pl, pauses, first, k - 1, o)) goto oom;
            open = 0;
            size_t tl = strlen(s->s[k].text);
            for (int j = 0; j <= pl[k].n_cuts; j++) {
                int from = j ? pl[k].cut_pause[j - 1] : pl[k].pause_before, to = j < pl[k].n_cuts ? pl[k].cut_pause[j] : pl[k].pause_after;
                seg_clip c = {k, k, cut_before(&pauses[from], o->pad_seconds), cut_after(&pauses[to], o->pad_seconds),
                              pl[k].score, j ? pl[k].cut_byte[j - 1] : 0, j < pl[k].n_cuts ? pl[k].cut_byte[j] : tl};
                if (c.start < 0) c.start = 0;
                if (push_clip(&l, c)) goto oom;
            }
            first = k + 1, chars = 0;
            continue;
        }
        if (stands) {
            double alone = cut_after(&pauses[pl[k].pause_after], o->pad_seconds) -
                           cut_before(&pauses[pl[k].pause_before], o->pad_seconds);
            if (alone > o->max_seconds) pl[k].why = "longer than --max-seconds", stands = 0;
            else if ((int)len > char_limit) pl[k].why = "over the language's XTTS character limit", stands = 0;
        }
        if (open && stands && pl[k - 1].pause_after == pl[k].pause_before && k - 1 >= first &&
            !pl[k - 1].why) {
            double dur = cut_after(&pauses[pl[k].pause_after], o->pad_seconds) -
                         cut_before(&pauses[pl[first].pause_before], o->pad_seconds);
            if (dur <= o->max_seconds && (int)(chars + 1 + len) <= char_limit) {
                chars += 1 + len;
                continue;
            }
        }
        if (open && close_clip(&l, pl, pauses, first, k - 1, o)) goto oom;
        open = stands, first = k, chars = len;
    }
    *clips = l.c;
    *n_clips = l.n;
    return XTTS_OK;
oom:
    free(l.c);
    return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
}
