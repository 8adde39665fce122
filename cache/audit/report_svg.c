/* report_svg.c — the pieces of the quality report's HTML page that know nothing of metrics:
 * escaping, base64 for data: URIs, a small mel thumbnail as PNG, a 16-bit WAV, and the inline
 * SVG charts (a histogram, a per-group range strip). Everything is written into the page
 * itself, so it opens from file:// with no network.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/audit/png.h"
#include "cache/audit/report_internal.h"

/* s in at most cap - 1 bytes, cut at a character's start (a cut inside one made the page
 * invalid UTF-8) and marked with "...". */
static void label_cut(char *out, size_t cap, const char *s) {
    size_t n = strlen(s);
    if (n < cap) {
        memcpy(out, s, n + 1);
        return;
    }
    n = cap - 4;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    memcpy(out, s, n);
    memcpy(out + n, "...", 4);
}

void xtts_html_escape(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

void xtts_base64_write(FILE *f, const uint8_t *p, size_t n) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        char o[4] = {tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63], tab[v & 63]};
        fwrite(o, 1, 4, f);
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        fprintf(f, "%c%c==", tab[v >> 18], tab[(v >> 12) & 63]);
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        fprintf(f, "%c%c%c=", tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63]);
    }
}

/* ---- mel thumbnail ---------------------------------------------------------------------------- */

typedef struct {
    const float *mel;
    size_t n_mels, n_frames, stride, w, h;
    double lo, span;
} thumb;

static const uint8_t *thumb_row(void *ctx, size_t y, uint8_t *rgb) {
    const thumb *t = ctx;
    size_t c = t->n_mels - 1 - (y * t->n_mels / t->h);
    for (size_t x = 0; x < t->w; x++) {
        /* the loudest value of the frames this pixel covers, so short events stay visible */
        size_t t0 = x * t->n_frames / t->w, t1 = (x + 1) * t->n_frames / t->w;
        if (t1 <= t0) t1 = t0 + 1;
        float v = -INFINITY;
        for (size_t k = t0; k < t1 && k < t->n_frames; k++)
            if (t->mel[c * t->stride + k] > v) v = t->mel[c * t->stride + k];
        xtts_colormap_rgb(XTTS_CMAP_MAGMA, isfinite(v) ? (v - t->lo) / t->span : 0.0, rgb + 3 * x);
    }
    return rgb;
}

xtts_status xtts_report_png_data_uri(FILE *f, const float *mel, size_t n_mels, size_t n_frames, size_t stride,
                                     size_t w, size_t h, xtts_error *err) {
    if (!n_mels || !n_frames || !w || !h) return xtts_error_set(err, XTTS_EINPUT, "empty mel, nothing to draw");
    xtts_png_options o;
    xtts_png_options_defaults(&o);
    double lo, hi;
    xtts_png_value_range(mel, n_mels, n_frames, stride, &o, &lo, &hi);
    thumb t = {mel, n_mels, n_frames, stride, w, h, lo, hi > lo ? hi - lo : 1};
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = xtts_png_write_rgb_stream(m, "thumbnail", w, h, thumb_row, &t, err);
    if (fclose(m) && !st) st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (!st) {
        fputs("data:image/png;base64,", f);
        xtts_base64_write(f, (const uint8_t *)buf, len);
    }
    free(buf);
    return st;
}

void xtts_report_wav_data_uri(FILE *f, const int16_t *x, size_t n, int rate) {
    /* header and samples in one base64 run: 44 bytes is not a multiple of 3, so encode them
     * together through one buffer of little-endian bytes */
    size_t total = 44 + 2 * n;
    uint8_t *b = malloc(total);
    if (!b) return;
    memcpy(b, "RIFF", 4);
    xtts_put_le32(b + 4, (uint32_t)(36 + 2 * n));
    memcpy(b + 8, "WAVEfmt ", 8);
    xtts_put_le32(b + 16, 16);
    xtts_put_le16(b + 20, 1); /* PCM */
    xtts_put_le16(b + 22, 1); /* mono */
    xtts_put_le32(b + 24, (uint32_t)rate);
    xtts_put_le32(b + 28, (uint32_t)rate * 2);
    xtts_put_le16(b + 32, 2);
    xtts_put_le16(b + 34, 16);
    memcpy(b + 36, "data", 4);
    xtts_put_le32(b + 40, (uint32_t)(2 * n));
    for (size_t i = 0; i < n; i++) xtts_put_le16(b + 44 + 2 * i, (uint16_t)x[i]);
    fputs("data:audio/wav;base64,", f);
    xtts_base64_write(f, b, total);
    free(b);
}

/* ---- charts ----------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void xtts_report_sort(double *v, size_t n) { qsort(v, n, sizeof *v, cmp_double); }

double xtts_report_quantile(const double *sorted, size_t n, double q) {
    if (!n) return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n) return sorted[n - 1];
    return sorted[i] + (pos - (double)i) * (sorted[i + 1] - sorted[i]);
}

/* A readable tick step: 1, 2 or 5 times a power of ten, about span/ticks. */
static double tick_step(double span, int ticks) {
    double raw = span / ticks, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void number(FILE *f, double v) {
    if (fabs(v) < 1e-9) v = 0;
    if (fabs(v) >= 1000) fprintf(f, "%.0f", v);
    else if (fabs(v) >= 10 || v == floor(v)) fprintf(f, "%g", round(v * 10) / 10);
    else fprintf(f, "%.2g", v);
}

#define HW 576 /* chart size in CSS pixels: two side by side fit a 1280 px window */
#define HH 220
#define ML 52 /* margins: left (counts), bottom (values), top (title) */
#define MB 34
#define MT 26

/* Bins of the values inside [lo, hi] (the sorted values' 0.5th..99.5th percentiles, so one far
 * outlier does not squeeze the rest into a bar); those outside are counted in the edge bins. */
void xtts_svg_histogram(FILE *f, const char *title, const char *unit, double *v, size_t n, double mark,
                        const char *mark_label) {
    enum { BINS = 40 };
    fprintf(f, "<figure class=\"chart\"><svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">", HW, HH, HW, HH);
    fprintf(f, "<text x=\"%d\" y=\"16\" class=\"t\">", ML);
    xtts_html_escape(f, title);
    fprintf(f, " (%s)</text>", unit);
    if (n == 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"n\">no measured record</text></svg></figure>\n", ML, HH / 2);
        return;
    }
    xtts_report_sort(v, n);
    double lo = xtts_report_quantile(v, n, 0.005), hi = xtts_report_quantile(v, n, 0.995);
    if (!(hi > lo)) lo -= 0.5, hi += 0.5;
    size_t count[BINS] = {0}, top = 1;
    for (size_t i = 0; i < n; i++) {
        int b = (int)floor((v[i] - lo) / (hi - lo) * BINS);
        count[b < 0 ? 0 : b >= BINS ? BINS - 1 : b]++;
    }
    for (int b = 0; b < BINS; b++) if (count[b] > top) top = count[b];
    double pw = HW - ML - 24, ph = HH - MT - MB, bw = pw / BINS;
    fprintf(f, "<line x1=\"%d\" y1=\"%g\" x2=\"%g\" y2=\"%g\" class=\"ax\"/>", ML, MT + ph, ML + pw, MT + ph);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%g\" class=\"ax\"/>", ML, MT, ML, MT + ph);
    for (int b = 0; b < BINS; b++) {
        double h = ph * (double)count[b] / (double)top;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"hb\"><title>%zu</title></rect>",
                ML + b * bw + 0.5, MT + ph - h, bw - 1, h, count[b]);
    }
    double step = tick_step(hi - lo, 6);
    for (double t = ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step) {
        double x = ML + (t - lo) / (hi - lo) * pw;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" class=\"ax\"/><text x=\"%.1f\" y=\"%g\" class=\"tx\">",
                x, MT + ph, x, MT + ph + 4, x, MT + ph + 16);
        number(f, t);
        fputs("</text>", f);
    }
    double cs = tick_step((double)top, 4);
    for (double c = 0; c <= (double)top; c += cs) {
        double y = MT + ph - ph * c / (double)top;
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"ty\">%.0f</text>", ML - 6, y + 4, c);
    }
    if (isfinite(mark) && mark >= lo && mark <= hi) {
        double x = ML + (mark - lo) / (hi - lo) * pw;
        int right = x > ML + 0.6 * pw; /* the label on the side with room for it */
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%g\" class=\"mk\"/><text x=\"%.1f\" y=\"%d\" class=\"mt\"%s>",
                x, MT, x, MT + ph, right ? x - 3 : x + 3, MT + 10, right ? " text-anchor=\"end\"" : "");
        xtts_html_escape(f, mark_label);
        fputs("</text>", f);
    }
    fprintf(f, "<text x=\"%g\" y=\"%d\" class=\"u\">%zu records, median ", ML + pw, HH - 4, n);
    number(f, xtts_report_quantile(v, n, 0.5));
    fprintf(f, " %s</text></svg></figure>\n", unit);
}

void xtts_svg_strips(FILE *f, const char *title, const char *unit, const xtts_report_strip *s, size_t n) {
    int row = 18, h = MT + 24 + (int)n * row + MB;
    fprintf(f, "<figure class=\"chart\"><svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">", HW, h, HW, h);
    fprintf(f, "<text x=\"8\" y=\"16\" class=\"t\">");
    xtts_html_escape(f, title);
    fprintf(f, " (%s)</text><text x=\"8\" y=\"34\" class=\"n\">bar: 10th to 90th percentile; dot: median</text>", unit);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (s[i].p10 < lo) lo = s[i].p10;
        if (s[i].p90 > hi) hi = s[i].p90;
    }
    if (!n || !isfinite(lo) || !isfinite(hi)) {
        fprintf(f, "<text x=\"8\" y=\"%d\" class=\"n\">no measured record</text></svg></figure>\n", MT + 20);
        return;
    }
    if (!(hi > lo)) lo -= 0.5, hi += 0.5;
    int left = 150;
    double pw = HW - left - 24, y0 = MT + 24;
    for (size_t i = 0; i < n; i++) {
        double y = y0 + (double)i * row + row / 2.0;
        double x1 = left + (s[i].p10 - lo) / (hi - lo) * pw, x2 = left + (s[i].p90 - lo) / (hi - lo) * pw;
        double xm = left + (s[i].median - lo) / (hi - lo) * pw;
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"ty\">", left - 8, y + 4);
        char name[40];
        label_cut(name, sizeof name, s[i].name);
        xtts_html_escape(f, name);
        fprintf(f, "</text><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"rg\"/>", x1, y, x2 > x1 + 1 ? x2 : x1 + 1, y);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" class=\"md\"><title>median ", xm, y);
        number(f, s[i].median);
        fprintf(f, " %s, %zu records</title></circle>", unit, s[i].n);
    }
    double base = y0 + (double)n * row + 4, step = tick_step(hi - lo, 6);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>", left, base, left + pw, base);
    for (double t = ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step) {
        double x = left + (t - lo) / (hi - lo) * pw;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tx\">", x, base + 16);
        number(f, t);
        fputs("</text>", f);
    }
    fputs("</svg></figure>\n", f);
}
