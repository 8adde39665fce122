/* dtw.c — the windowed DTW with gap moves (segment.h).
 *
 * Matching steps are slope-constrained (Sakoe and Chiba's symmetric P=1: one reference frame
 * to one, two or half a recording frame, each frame weighted by its distance), so that a path
 * cannot pick the few frames of wrong speech that happen to look alike. Beside them, gap
 * steps: a recording frame with no reference frame (speech not in the text) or a reference
 * frame with no recording (text not read) costs gap_cost however unlike the frames are, and
 * nothing where both are silent (pauses of other lengths). Every path to (i, j) weighs
 * i + j + 2, so cumulative costs divided by that are comparable between the ends of a window.
 *
 * Windows: window_ref reference frames from the last kept point, over the recording frames
 * they may reach; the path's first half is kept, the next window starts where it ends. One
 * window's backpointers are the only matrix: memory does not grow with the recording.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prep/segment/segment.h"

enum { STEP_DIAG = 0, STEP_REC2 = 1, STEP_REF2 = 2, STEP_GAP_REC = 3, STEP_GAP_REF = 4, STEP_START = 5 };

void xtts_dtw_params_default(xtts_dtw_params *p, int dim) {
    p->dim = dim;
    p->gap_cost = 0.7;
    p->silence_cost = 1.5;
    p->window_ref = 1200;
    p->max_stretch = 2.5;
    p->band = 500;
    p->threads = 1;
    p->trim = NULL, p->trim_ctx = NULL;
}

static inline float frame_distance(const xtts_dtw_params *p, const float *a, int a_silent, const float *b, int b_silent) {
    if (a_silent && b_silent) return 0.f;
    if (a_silent || b_silent) return (float)p->silence_cost;
    float s = 0.f;
    for (int k = 0; k < p->dim; k++) {
        float d = a[k] - b[k];
        s += d * d;
    }
    return sqrtf(s / (float)p->dim);
}

float xtts_dtw_distance(const xtts_dtw_params *p, const float *a, int a_silent, const float *b, int b_silent) {
    return frame_distance(p, a, a_silent, b, b_silent);
}

void xtts_dtw_row_stats(const xtts_dtw_params *p, const xtts_dtw_seq *ref, const xtts_dtw_seq *rec, float *mean,
                        float *scale) {
    size_t speech = 0, pick[256], n = 0;
    for (size_t j = 0; j < rec->n; j++) speech += !rec->silent[j];
    size_t every = speech > 256 ? speech / 256 : 1, k = 0;
    for (size_t j = 0; j < rec->n && n < 256; j++)
        if (!rec->silent[j] && k++ % every == 0) pick[n++] = j;
    for (size_t i = 0; i < ref->n; i++) {
        if (p->trim && (i & 32767) == 32767) p->trim(p->trim_ctx);
        mean[i] = 0, scale[i] = 1;
        if (ref->silent[i] || n < 2) continue;
        double s = 0, sq = 0;
        for (size_t m = 0; m < n; m++) {
            double d = xtts_dtw_distance(p, ref->x + i * (size_t)p->dim, 0, rec->x + pick[m] * (size_t)p->dim, 0);
            s += d, sq += d * d;
        }
        double mu = s / (double)n, var = sq / (double)n - mu * mu;
        mean[i] = (float)mu;
        scale[i] = (float)(1.0 / sqrt(var > 1e-6 ? var : 1e-6));
    }
}

typedef struct {
    const xtts_dtw_params *p;
    const xtts_dtw_seq *ref, *rec;
    size_t q, pr;          /* the window's first reference and recording frames */
    size_t nr, nc;         /* its sizes */
    uint8_t *step;         /* [nr][nc] backpointers */
    double *cost[3];       /* [nc] cumulative costs of rows i-2, i-1, i */
    float *dmat;           /* [nr][nc] distances inside the band */
    size_t end_i, end_j;   /* where the chosen path ends */
    double slope;          /* recording frames per reference frame, the band's centre line */
    size_t band;           /* recording frames either side of it */
} dtw_window;

static inline float cell_dist(const dtw_window *w, size_t i, size_t j) {
    size_t a = w->q + i, b = w->pr + j;
    int dim = w->p->dim;
    float d = frame_distance(w->p, w->ref->x + a * (size_t)dim, w->ref->silent[a], w->rec->x + b * (size_t)dim,
                             w->rec->silent[b]);
    if (!w->ref->row_mean || w->ref->silent[a] || w->rec->silent[b]) return d;
    float z = (d - w->ref->row_mean[a]) * w->ref->row_scale[a] + 3.f;
    return z > 0 ? z / 3.f : 0.f;
}

/* A gap step's cost into (i, j): nothing between silences, else gap_cost. */
static inline double gap_at(const dtw_window *w, size_t i, size_t j) {
    return w->ref->silent[w->q + i] && w->rec->silent[w->pr + j] ? 0.0 : w->p->gap_cost;
}

/* Row i's band: the recording frames [*lo, *hi) around the line of the recording's pace. */
static void band_of(const dtw_window *w, size_t i, size_t *lo, size_t *hi) {
    double centre = (double)i * w->slope;
    *lo = centre > (double)w->band ? (size_t)(centre - (double)w->band) : 0;
    *hi = (size_t)(centre + (double)w->band) + 1;
    if (*hi > w->nc) *hi = w->nc;
    if (*lo >= *hi) *lo = *hi ? *hi - 1 : 0;
}

/* The window's distances inside the band (INFINITY outside), rows side by side on the
 * threads there are: the DP after it is sequential, this is most of the work. */
static void fill_distances(dtw_window *w) {
#pragma omp parallel for schedule(static) num_threads(w->p->threads > 0 ? w->p->threads : 1)
    for (size_t i = 0; i < w->nr; i++) {
        float *d = w->dmat + i * w->nc;
        size_t lo, hi;
        band_of(w, i, &lo, &hi);
        for (size_t j = 0; j < w->nc; j++) d[j] = j >= lo && j < hi ? cell_dist(w, i, j) : INFINITY;
    }
}

/* Fill row i of the window (costs into w->cost[2]) inside its band; outside it, no path. */
static void fill_row(dtw_window *w, size_t i) {
    const double *c2 = w->cost[0], *c1 = w->cost[1];
    double *c0 = w->cost[2];
    const float *d0 = w->dmat + i * w->nc, *d1 = i ? d0 - w->nc : d0;
    uint8_t *st = w->step + i * w->nc;
    size_t lo, hi;
    band_of(w, i, &lo, &hi);
    for (size_t j = 0; j < w->nc; j++) c0[j] = INFINITY, st[j] = STEP_START;
    for (size_t j = lo; j < hi; j++) {
        double d = d0[j], best = INFINITY, gap = gap_at(w, i, j);
        uint8_t s = STEP_START;
        if (i == 0 && j == 0) best = 2 * d;
        if (i > 0 && j > 0 && c1[j - 1] + 2 * d < best) best = c1[j - 1] + 2 * d, s = STEP_DIAG;
        if (i > 0 && j > 1 && c1[j - 2] + 2 * d0[j - 1] + d < best) best = c1[j - 2] + 2 * d0[j - 1] + d, s = STEP_REC2;
        if (i > 1 && j > 0 && c2[j - 1] + 2 * d1[j] + d < best) best = c2[j - 1] + 2 * d1[j] + d, s = STEP_REF2;
        if (j > 0 && c0[j - 1] + gap < best) best = c0[j - 1] + gap, s = STEP_GAP_REC;
        if (i > 0 && c1[j] + gap < best) best = c1[j] + gap, s = STEP_GAP_REF;
        c0[j] = best;
        st[j] = s;
    }
}

/* Rotate the rows after row i is filled. */
static void next_row(dtw_window *w) {
    double *t = w->cost[0];
    w->cost[0] = w->cost[1], w->cost[1] = w->cost[2], w->cost[2] = t;
}

/* Choose the window's end: on the last reference row, or (where the recording runs out in
 * this window) on the last column, the lowest cost per weight. When the recording runs out,
 * every end is charged gap_cost for each frame of the window it leaves unmatched, so that all
 * ends weigh the whole window (else a path that stops early, leaving the reference's hard part
 * out, would look cheapest). */
static void choose_end(dtw_window *w, const double *last_row, const double *last_col) {
    const double g = w->p->gap_cost, whole = (double)(w->nr + w->nc);
    double best = INFINITY;
    for (size_t j = 0; j < w->nc; j++) {
        double c = last_col ? (last_row[j] + (double)(w->nc - 1 - j) * g) / whole : last_row[j] / (double)(w->nr + j + 1);
        if (c < best) best = c, w->end_i = w->nr - 1, w->end_j = j;
    }
    if (!last_col) return;
    for (size_t i = 0; i + 1 < w->nr; i++) {
        double c = (last_col[i] + (double)(w->nr - 1 - i) * g) / whole;
        if (c < best) best = c, w->end_i = i, w->end_j = w->nc - 1;
    }
}

/* Mark cell (i, j) on the path: the row's first recording frame and its distance (gap_cost
 * where the row was reached by a gap step); rows at or past keep only give their entry. */
static void visit(const dtw_window *w, size_t i, size_t j, int gap, size_t keep, int32_t *rec_of_ref, float *dist,
                  size_t *entry) {
    if (i >= keep) {
        if (i == keep) *entry = j;
        return;
    }
    float d = gap ? (float)w->p->gap_cost : cell_dist(w, i, j);
    if (gap && w->ref->silent[w->q + i] && w->rec->silent[w->pr + j]) d = 0.f;
    rec_of_ref[w->q + i] = (int32_t)(w->pr + j);
    dist[w->q + i] = d;
}

/* Trace back from the end; fill rec_of_ref and dist for the window's rows below keep. Returns
 * the recording frame (window-relative) where row keep is entered, when the path reaches it. */
static size_t trace_back(const dtw_window *w, size_t keep, int32_t *rec_of_ref, float *dist) {
    size_t i = w->end_i, j = w->end_j, entry = j;
    for (;;) {
        uint8_t s = w->step[i * w->nc + j];
        visit(w, i, j, s == STEP_GAP_REF || s == STEP_GAP_REC, keep, rec_of_ref, dist, &entry);
        if (s == STEP_START) break;
        if (s == STEP_DIAG) i--, j--;
        else if (s == STEP_REC2) {
            visit(w, i, j - 1, 0, keep, rec_of_ref, dist, &entry);
            i--, j -= 2;
        } else if (s == STEP_REF2) {
            visit(w, i - 1, j, 0, keep, rec_of_ref, dist, &entry);
            i -= 2, j--;
        } else if (s == STEP_GAP_REC) j--;
        else i--;
    }
    return entry;
}

xtts_status xtts_dtw_align(const xtts_dtw_params *p, const xtts_dtw_seq *ref, const xtts_dtw_seq *rec,
                           int32_t *rec_of_ref, float *dist, xtts_error *err) {
    if (!ref->n || !rec->n) return xtts_error_set(err, XTTS_EINPUT, "nothing to align (an empty sequence)");
    size_t wr = p->window_ref < ref->n ? p->window_ref : ref->n;
    size_t wc_max = (size_t)((double)wr * p->max_stretch) + 64;
    dtw_window w = {.p = p, .ref = ref, .rec = rec};
    w.slope = (double)rec->n / (double)ref->n;
    w.slope = w.slope < 0.5 ? 0.5 : w.slope > p->max_stretch ? p->max_stretch : w.slope;
    w.band = p->band;
    w.step = malloc(wr * wc_max);
    for (int k = 0; k < 3; k++) w.cost[k] = malloc(wc_max * sizeof(double));
    w.dmat = malloc(wr * wc_max * sizeof(float));
    double *last_col = malloc(wr * sizeof(double));
    xtts_status st = XTTS_OK;
    if (!w.step || !w.cost[0] || !w.cost[1] || !w.cost[2] || !w.dmat || !last_col) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory (DTW window)"); goto done; }
    for (size_t q = 0, pr = 0;;) {
        w.q = q, w.pr = pr;
        if (p->trim) p->trim(p->trim_ctx);
        w.nr = ref->n - q < wr ? ref->n - q : wr;
        w.nc = rec->n - pr < wc_max ? rec->n - pr : wc_max;
        int final_ref = q + w.nr == ref->n, final_rec = pr + w.nc == rec->n;
        fill_distances(&w);
        for (size_t i = 0; i < w.nr; i++) {
            fill_row(&w, i);
            last_col[i] = w.cost[2][w.nc - 1];
            next_row(&w);
        }
        choose_end(&w, w.cost[1], final_rec ? last_col : NULL);
        if (w.end_i + 1 < w.nr) { /* the recording ran out first: the rest of the text was not read */
            trace_back(&w, w.end_i + 1, rec_of_ref, dist);
            for (size_t i = q + w.end_i + 1; i < ref->n; i++)
                rec_of_ref[i] = (int32_t)(rec->n - 1), dist[i] = (float)p->gap_cost;
            break;
        }
        if (final_ref) {
            trace_back(&w, w.nr, rec_of_ref, dist);
            break;
        }
        size_t keep = w.nr / 2;
        size_t entry = trace_back(&w, keep, rec_of_ref, dist);
        q += keep;
        pr += entry;
    }
done:
    free(w.step);
    for (int k = 0; k < 3; k++) free(w.cost[k]);
    free(w.dmat);
    free(last_col);
    return st;
}

int xtts_dtw_end_costs(const xtts_dtw_params *p, const xtts_dtw_seq *ref, size_t r0, size_t r1, const xtts_dtw_seq *rec,
                       size_t c0, size_t c1, int reversed, double *cost) {
    size_t nr = r1 - r0, nc = c1 - c0;
    if (!nr || !nc) return -1;
    double *c[3];
    float *d[2];
    for (int k = 0; k < 3; k++) c[k] = malloc(nc * sizeof(double));
    for (int k = 0; k < 2; k++) d[k] = malloc(nc * sizeof(float));
    int ret = -1;
    if (!c[0] || !c[1] || !c[2] || !d[0] || !d[1]) goto done;
    dtw_window w = {.p = p, .ref = ref, .rec = rec, .q = 0, .pr = c0, .nr = nr, .nc = nc};
    for (size_t i = 0; i < nr; i++) {
        w.q = reversed ? r1 - 1 - i : r0 + i;
        size_t jmax = 2 * (i + 1) < nc ? 2 * (i + 1) : nc; /* no path reaches further */
        for (size_t j = 0; j < nc; j++) d[1][j] = j < jmax ? cell_dist(&w, 0, j) : INFINITY;
        for (size_t j = 0; j < nc; j++) {
            double best = i == 0 && j == 0 ? 2 * d[1][0] : INFINITY;
            if (j < jmax) {
                if (i > 0 && j > 0 && c[1][j - 1] + 2 * d[1][j] < best) best = c[1][j - 1] + 2 * d[1][j];
                if (i > 0 && j > 1 && c[1][j - 2] + 2 * d[1][j - 1] + d[1][j] < best) best = c[1][j - 2] + 2 * d[1][j - 1] + d[1][j];
                if (i > 1 && j > 0 && c[0][j - 1] + 2 * d[0][j] + d[1][j] < best) best = c[0][j - 1] + 2 * d[0][j] + d[1][j];
            }
            c[2][j] = best;
        }
        double *t = c[0]; c[0] = c[1], c[1] = c[2], c[2] = t;
        float *f = d[0]; d[0] = d[1], d[1] = f;
    }
    for (size_t j = 0; j < nc; j++) cost[j] = c[1][j] / (double)(nr + j + 1);
    ret = 0;
done:
    for (int k = 0; k < 3; k++) free(c[k]);
    for (int k = 0; k < 2; k++) free(d[k]);
    return ret;
}

double xtts_dtw_span_cost(const xtts_dtw_params *p, const xtts_dtw_seq *ref, size_t r0, size_t r1,
                          const xtts_dtw_seq *rec, size_t c0, size_t c1, int reversed) {
    size_t nr = r1 - r0, nc = c1 - c0;
    if (!nr || !nc || nr > 2 * nc + 1 || nc > 2 * nr + 1) return INFINITY;
    double *cost = malloc(nc * sizeof *cost);
    double out = INFINITY;
    if (cost && xtts_dtw_end_costs(p, ref, r0, r1, rec, c0, c1, reversed, cost) == 0) out = cost[nc - 1];
    free(cost);
    return out;
}
