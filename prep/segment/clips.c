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
                  cut_after(&pauses[pl[last].pause_after], o->pad_seconds), 1.0};
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
