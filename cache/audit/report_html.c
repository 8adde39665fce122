/* report_html.c — the quality report as one self-contained HTML page (report.h): styles inline,
 * charts as inline SVG, mel pictures and audio as data: URIs, no script, nothing fetched, so
 * the page opens from file:// anywhere. Laid out for a window of 1280 pixels or more.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/audit/report.h"
#include "cache/audit/report_internal.h"

static const char *const FLAG_MEANING[XTTS_QUALITY_N_FLAGS] = {
    "a long silence before the speech",
    "a long silence after the speech",
    "speech already under way at the first sample (speech band): the start may be cut",
    "speech still under way at the last sample (speech band): the end may be cut",
    "samples at full scale",
    "noise loud next to the speech (low signal-to-noise ratio)",
    "no energy in the upper band: the source had a lower sample rate",
    "speech level very low",
    "the same samples as an earlier record",
    "speaking rate far from the speaker's own",
    "too short to measure",
    "a DC offset in the samples",
};

static const char CSS[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#1d2329;"
    "background:#f6f7f9;margin:0}main{max-width:1240px;margin:0 auto;padding:18px 20px 40px}"
    "h1{font-size:24px;margin:4px 0 2px}h2{font-size:19px;margin:28px 0 10px;border-bottom:2px solid #d8dde3;"
    "padding-bottom:4px}h3{font-size:16px;margin:20px 0 6px}.sub{color:#59636e;margin:0 0 14px}"
    ".cards{display:flex;gap:12px;flex-wrap:wrap}.card{background:#fff;border:1px solid #d8dde3;border-radius:8px;"
    "padding:10px 16px;min-width:150px}.card b{display:block;font-size:22px}.card span{color:#59636e}"
    "table{border-collapse:collapse;background:#fff;border:1px solid #d8dde3}th,td{padding:4px 10px;"
    "border-bottom:1px solid #e6e9ed;text-align:left;vertical-align:middle}th{background:#eef1f4}"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.share{background:#e9edf1;width:160px;height:10px;"
    "border-radius:5px}.share i{display:block;height:10px;background:#c2410c;border-radius:5px}"
    ".grid{display:flex;flex-wrap:wrap;gap:12px}.chart{margin:0;background:#fff;border:1px solid #d8dde3;"
    "border-radius:8px;padding:6px}svg text{font:12px system-ui,'DejaVu Sans',sans-serif;fill:#1d2329}"
    "svg .t{font-weight:600;font-size:13px}svg .tx{text-anchor:middle;fill:#59636e}svg .ty{text-anchor:end;"
    "fill:#59636e}svg .u{text-anchor:end;fill:#59636e}svg .n{fill:#59636e}svg .ax{stroke:#8a949e;stroke-width:1}"
    "svg .hb{fill:#3b82c4}svg .mk{stroke:#c2410c;stroke-width:2;stroke-dasharray:4 3}svg .mt{fill:#c2410c}"
    "svg .rg{stroke:#3b82c4;stroke-width:6;stroke-linecap:round;opacity:.55}svg .md{fill:#1e3a5f}"
    "img.mel{display:block;border-radius:3px;image-rendering:auto}audio{width:230px;height:32px}"
    "code{font-size:13px}.none{color:#59636e;font-style:italic}.id{max-width:260px;overflow-wrap:anywhere}";

static void page_head(xtts_report *r, FILE *f) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "img-src data:; media-src data:\"><title>Quality report: ", f);
    xtts_html_escape(f, xtts_cache_dir(r->cache));
    fprintf(f, "</title><style>%s</style></head><body><main>\n<h1>Dataset quality report</h1><p class=\"sub\">", CSS);
    xtts_html_escape(f, xtts_cache_dir(r->cache));
    fprintf(f, " &middot; xtts-cache-report %s</p>\n", XTTS_VERSION);
}

static void card(FILE *f, const char *value, const char *label) {
    fprintf(f, "<div class=\"card\"><b>%s</b><span>%s</span></div>", value, label);
}

static void page_summary(xtts_report *r, FILE *f) {
    char v[64];
    size_t with = 0;
    for (size_t s = 0; s < r->n_speakers; s++) with += r->spk[s].records > 0;
    fputs("<div class=\"cards\">", f);
    snprintf(v, sizeof v, "%llu", (unsigned long long)r->n), card(f, v, "records");
    snprintf(v, sizeof v, "%.2f h", r->seconds / 3600), card(f, v, "of audio");
    snprintf(v, sizeof v, "%zu", with), card(f, v, "speakers");
    snprintf(v, sizeof v, "%llu", (unsigned long long)r->flagged), card(f, v, "records flagged");
    snprintf(v, sizeof v, "%.2f h", (r->seconds - r->flagged_seconds) / 3600), card(f, v, "left if they are dropped");
    snprintf(v, sizeof v, "%llu", (unsigned long long)r->too_short), card(f, v, "too short to measure");
    fputs("</div>\n", f);
    for (int fl = 0; fl < XTTS_QUALITY_N_FLAGS; fl++) {
        const char *note = xtts_report_dataset_note(r, fl);
        if (note)
            fprintf(f, "<p class=\"sub\"><code>%s</code> on %.0f %% of records: %s</p>\n", xtts_quality_flag_name(fl),
                    100.0 * (double)r->flag_records[fl] / (double)r->n, note);
    }
    fputs("<h2>Flags</h2><table><tr><th>flag</th><th>what it means</th><th class=\"n\">records</th>"
          "<th class=\"n\">hours</th><th class=\"n\">share</th><th></th></tr>\n", f);
    for (int fl = 0; fl < XTTS_QUALITY_N_FLAGS; fl++) {
        double share = r->n ? 100.0 * (double)r->flag_records[fl] / (double)r->n : 0;
        const char *name = xtts_quality_flag_name(fl);
        if (r->flag_records[fl]) fprintf(f, "<tr><td><a href=\"#flag-%s\"><code>%s</code></a></td>", name, name);
        else fprintf(f, "<tr><td><code>%s</code></td>", name);
        fprintf(f, "<td>%s</td><td class=\"n\">%llu</td><td class=\"n\">%.3f</td>"
                "<td class=\"n\">%.1f%%</td><td><div class=\"share\"><i style=\"width:%.1f%%\"></i></div></td></tr>\n",
                FLAG_MEANING[fl], (unsigned long long)r->flag_records[fl], r->flag_seconds[fl] / 3600, share, share);
    }
    const xtts_quality_thresholds *t = &r->opt.thresholds;
    fprintf(f, "</table>\n<p class=\"sub\">Thresholds: lead_silence_s %g, trail_silence_s %g, cut_edge_db %g, "
            "clip_fraction %g, snr_db %g, bandwidth_fraction %g, too_quiet_dbfs %g, dc_offset %g, rate_k %g, "
            "rate_min_spread %g, rate_min_speech_s %g, rate_min_records %d (xtts-cache-report --thresholds FILE).</p>\n",
            t->lead_silence_s, t->trail_silence_s, t->cut_edge_db, t->clip_fraction, t->snr_db, t->bandwidth_fraction,
            t->too_quiet_dbfs, t->dc_offset, t->rate_k, t->rate_min_spread, t->rate_min_speech_s, t->rate_min_records);
}

/* ---- distributions -------------------------------------------------------------------------- */

enum { D_DURATION, D_RATE, D_SNR, D_LEVEL, D_BANDWIDTH, D_LEAD };

/* The values of one distribution over the records that have it, into v; their count. */
static size_t dist_values(const xtts_report *r, int what, double *v) {
    size_t n = 0;
    for (uint64_t i = 0; i < r->n; i++) {
        const xtts_quality_metrics *m = &r->m[i];
        int measured = m->status == XTTS_QUALITY_MEASURED;
        double x = NAN;
        if (what == D_DURATION) x = m->duration_s;
        else if (what == D_RATE && measured && m->n_chars && m->speech_s >= r->opt.thresholds.rate_min_speech_s) x = m->chars_per_s;
        else if (what == D_SNR && measured) x = m->snr_db;
        else if (what == D_LEVEL && measured) x = m->active_dbfs;
        else if (what == D_BANDWIDTH && measured) x = m->bandwidth_hz;
        else if (what == D_LEAD && measured) x = m->lead_silence_s;
        if (isfinite(x)) v[n++] = x;
    }
    return n;
}

static int cmp_records_desc(const void *a, const void *b, void *ctx) {
    const xtts_report *r = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (r->spk[x].records != r->spk[y].records) return r->spk[x].records > r->spk[y].records ? -1 : 1;
    return (x > y) - (x < y);
}

/* Speaker ids with records, the most records first; their count. */
static size_t speakers_by_size(const xtts_report *r, uint32_t *order) {
    size_t n = 0;
    for (size_t s = 0; s < r->n_speakers; s++)
        if (r->spk[s].records) order[n++] = (uint32_t)s;
    qsort_r(order, n, sizeof *order, cmp_records_desc, (void *)r);
    return n;
}

static void speaker_strips(xtts_report *r, FILE *f, const uint32_t *order, size_t n) {
    enum { MAX_STRIPS = 30 };
    xtts_report_strip strips[MAX_STRIPS];
    char names[MAX_STRIPS][64];
    size_t k = 0;
    for (size_t j = 0; j < n && k < MAX_STRIPS; j++) {
        const xtts_report_speaker *s = &r->spk[order[j]];
        if (!s->rate_n) continue;
        const char *name = xtts_report_speaker_name(r, order[j], names[k], sizeof names[k]);
        strips[k] = (xtts_report_strip){name, s->rate_p10, s->rate_median, s->rate_p90, s->rate_n};
        k++;
    }
    char title[96];
    snprintf(title, sizeof title, "Speaking rate per speaker%s", n > MAX_STRIPS ? ", the 30 with the most records" : "");
    xtts_svg_strips(f, title, "characters/s", strips, k);
}

static xtts_status page_distributions(xtts_report *r, FILE *f, xtts_error *err) {
    double *v = malloc((r->n ? r->n : 1) * sizeof *v);
    uint32_t *order = malloc((r->n_speakers ? r->n_speakers : 1) * sizeof *order);
    if (!v || !order) {
        free(v);
        free(order);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    const xtts_quality_thresholds *t = &r->opt.thresholds;
    double nyquist = xtts_cache_get_config(r->cache)->mel.sample_rate / 2.0;
    char lab[5][64];
    snprintf(lab[0], sizeof lab[0], "low_snr below %g dB", t->snr_db);
    snprintf(lab[1], sizeof lab[1], "too_quiet below %g dBFS", t->too_quiet_dbfs);
    snprintf(lab[2], sizeof lab[2], "upsampled below %.0f Hz", t->bandwidth_fraction * nyquist);
    snprintf(lab[3], sizeof lab[3], "lead_silence above %g s", t->lead_silence_s);
    fputs("<h2>Distributions</h2><div class=\"grid\">\n", f);
    xtts_svg_histogram(f, "Duration", "s", v, dist_values(r, D_DURATION, v), NAN, "");
    xtts_svg_histogram(f, "Speaking rate", "characters/s", v, dist_values(r, D_RATE, v), NAN, "");
    xtts_svg_histogram(f, "Signal-to-noise ratio", "dB", v, dist_values(r, D_SNR, v), t->snr_db, lab[0]);
    xtts_svg_histogram(f, "Speech level", "dBFS", v, dist_values(r, D_LEVEL, v), t->too_quiet_dbfs, lab[1]);
    xtts_svg_histogram(f, "Bandwidth", "Hz", v, dist_values(r, D_BANDWIDTH, v), t->bandwidth_fraction * nyquist, lab[2]);
    xtts_svg_histogram(f, "Silence before the speech", "s", v, dist_values(r, D_LEAD, v), t->lead_silence_s, lab[3]);
    size_t ns = speakers_by_size(r, order);
    if (ns > 1) speaker_strips(r, f, order, ns);
    fputs("</div>\n", f);
    free(v);
    free(order);
    return XTTS_OK;
}

static void num_cell(FILE *f, double v, int digits) {
    if (isfinite(v)) fprintf(f, "<td class=\"n\">%.*f</td>", digits, v);
    else fputs("<td class=\"n\">&ndash;</td>", f);
}

static xtts_status page_speakers(xtts_report *r, FILE *f, xtts_error *err) {
    enum { MAX_ROWS = 300 };
    uint32_t *order = malloc((r->n_speakers ? r->n_speakers : 1) * sizeof *order);
    if (!order) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    size_t n = speakers_by_size(r, order);
    fputs("<h2>Speakers</h2><table><tr><th>speaker</th><th class=\"n\">records</th><th class=\"n\">hours</th>"
          "<th class=\"n\">flagged</th><th class=\"n\">flagged h</th><th class=\"n\">left h</th>"
          "<th class=\"n\">median chars/s</th><th class=\"n\">median SNR dB</th><th class=\"n\">median level dBFS</th>"
          "<th>most frequent flag</th></tr>\n", f);
    for (size_t j = 0; j < n && j < MAX_ROWS; j++) {
        const xtts_report_speaker *s = &r->spk[order[j]];
        char name[256];
        fputs("<tr><td>", f);
        xtts_html_escape(f, xtts_report_speaker_name(r, order[j], name, sizeof name));
        fprintf(f, "</td><td class=\"n\">%llu</td>", (unsigned long long)s->records);
        num_cell(f, s->seconds / 3600, 3);
        fprintf(f, "<td class=\"n\">%llu</td>", (unsigned long long)s->flagged);
        num_cell(f, s->flagged_seconds / 3600, 3);
        num_cell(f, (s->seconds - s->flagged_seconds) / 3600, 3);
        num_cell(f, s->rate_median, 1);
        num_cell(f, s->snr_median, 1);
        num_cell(f, s->level_median, 1);
        int top = -1;
        for (int fl = 0; fl < XTTS_QUALITY_N_FLAGS; fl++)
            if (s->flag_records[fl] && (top < 0 || s->flag_records[fl] > s->flag_records[top])) top = fl;
        if (top >= 0) fprintf(f, "<td><code>%s</code> (%llu)</td></tr>\n", xtts_quality_flag_name(top), (unsigned long long)s->flag_records[top]);
        else fputs("<td class=\"none\">none</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (n > MAX_ROWS) fprintf(f, "<p class=\"sub\">%zu more speakers: the JSON and the TSV list them all.</p>\n", n - MAX_ROWS);
    free(order);
    return XTTS_OK;
}

/* ---- the worst records of each flag ------------------------------------------------------------ */

/* What a flag's records are ranked by, as text for one record. */
static void flag_value(xtts_report *r, int fl, uint64_t i, char *out, size_t cap) {
    const xtts_quality_metrics *m = &r->m[i];
    const xtts_report_speaker *s = &r->spk[r->speaker[i]];
    switch (fl) {
    case XTTS_QFLAG_LEAD_SILENCE: snprintf(out, cap, "%.2f s of silence first", m->lead_silence_s); break;
    case XTTS_QFLAG_TRAIL_SILENCE: snprintf(out, cap, "%.2f s of silence last", m->trail_silence_s); break;
    case XTTS_QFLAG_CUT_START: snprintf(out, cap, "first %s at %.1f dB of the speech level", m->version == 1 ? "20 ms" : "2.5 ms", m->start_edge_db); break;
    case XTTS_QFLAG_CUT_END: snprintf(out, cap, "last %s at %.1f dB of the speech level", m->version == 1 ? "20 ms" : "2.5 ms", m->end_edge_db); break;
    case XTTS_QFLAG_CLIPPED: snprintf(out, cap, "%.3f%% of samples at full scale", 100.0 * m->clip_fraction); break;
    case XTTS_QFLAG_LOW_SNR: snprintf(out, cap, "SNR %.1f dB", m->snr_db); break;
    case XTTS_QFLAG_UPSAMPLED:
        snprintf(out, cap, "bandwidth %.0f Hz (source %u Hz)", m->bandwidth_hz, m->native_rate);
        break;
    case XTTS_QFLAG_TOO_QUIET: snprintf(out, cap, "speech at %.1f dBFS", m->active_dbfs); break;
    case XTTS_QFLAG_RATE_OUTLIER:
        snprintf(out, cap, "%.1f chars/s (speaker median %.1f)", m->chars_per_s, isfinite(s->rate_median) ? s->rate_median : 0.0);
        break;
    case XTTS_QFLAG_TOO_SHORT: snprintf(out, cap, "%.3f s", m->duration_s); break;
    case XTTS_QFLAG_DC_OFFSET: snprintf(out, cap, "DC offset %.4f", m->dc_offset); break;
    default: out[0] = '\0';
    }
}

/* The k worst records of flag fl (severity descending, then index), into top; their count. */
static size_t worst_records(const xtts_report *r, int fl, uint64_t *top, double *sev, size_t k) {
    size_t n = 0;
    for (uint64_t i = 0; i < r->n; i++) {
        if (!(r->flags[i] & (1u << fl))) continue;
        double s = xtts_report_severity(r, fl, i);
        if (!isfinite(s)) s = 0;
        if (n == k && !(s > sev[n - 1])) continue;
        size_t j = n < k ? n++ : n - 1;
        while (j > 0 && s > sev[j - 1]) {
            sev[j] = sev[j - 1];
            top[j] = top[j - 1];
            j--;
        }
        sev[j] = s;
        top[j] = i;
    }
    return n;
}

typedef struct {
    float *mel;
    size_t mel_cap;
    int32_t *tokens;
    size_t tokens_cap;
    int16_t *wave;
    size_t wave_cap;
    size_t audio_left; /* waveform bytes the page may still embed */
} media_bufs;

/* The record's mel picture, and its player when the cache stores the waveform (while the
 * page's audio budget lasts), as two table cells. */
static xtts_status record_media(xtts_report *r, uint64_t i, media_bufs *b, FILE *f, xtts_error *err) {
    const xtts_cache_config *cfg = xtts_cache_get_config(r->cache);
    size_t C = (size_t)cfg->mel.n_mels, T = xtts_cache_max_frames(r->cache), K = (size_t)cfg->max_tokens;
    b->mel = xtts_renew(b->mel, &b->mel_cap, C * T, sizeof(float));
    b->tokens = xtts_renew(b->tokens, &b->tokens_cap, K, sizeof(int32_t));
    if (!b->mel || !b->tokens) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_record_header h;
    xtts_status st = xtts_cache_reader_get(r->reader, i, &h, b->tokens, K, b->mel, XTTS_DTYPE_F32, C, T, err);
    if (st) return st;
    fputs("<td>", f);
    if (h.n_frames) {
        fputs("<img class=\"mel\" width=\"240\" height=\"64\" alt=\"mel spectrogram\" src=\"", f);
        if ((st = xtts_report_png_data_uri(f, b->mel, C, h.n_frames, T, 240, 64, err))) return st;
        fputs("\">", f);
    }
    fputs("</td><td>", f);
    size_t bytes = 44 + 2 * (size_t)h.n_samples;
    if (h.audio == XTTS_AUDIO_NONE) {
        fputs("<span class=\"none\">no waveform stored</span>", f);
    } else if (bytes > b->audio_left) {
        fputs("<span class=\"none\">audio left out (page size)</span>", f);
    } else {
        b->wave = xtts_renew(b->wave, &b->wave_cap, h.n_samples ? h.n_samples : 1, sizeof(int16_t));
        if (!b->wave) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        if ((st = xtts_cache_reader_wave(r->reader, i, b->wave, 0, h.n_samples, err))) return st;
        fputs("<audio controls preload=\"none\" src=\"", f);
        xtts_report_wav_data_uri(f, b->wave, h.n_samples, cfg->mel.sample_rate);
        fputs("\"></audio>", f);
        b->audio_left -= bytes;
    }
    fputs("</td>", f);
    return XTTS_OK;
}

static xtts_status flag_section(xtts_report *r, int fl, media_bufs *b, uint64_t *top, double *sev, FILE *f,
                                xtts_error *err) {
    size_t k = worst_records(r, fl, top, sev, r->opt.worst_per_flag);
    fprintf(f, "<h3 id=\"flag-%s\"><code>%s</code>: %llu record%s", xtts_quality_flag_name(fl), xtts_quality_flag_name(fl),
            (unsigned long long)r->flag_records[fl], r->flag_records[fl] == 1 ? "" : "s");
    if (r->flag_records[fl] > k) fprintf(f, ", the %zu worst", k);
    fputs("</h3><table><tr><th>#</th><th>id</th><th>speaker</th><th class=\"n\">s</th><th>why</th><th>mel</th>"
          "<th>listen</th></tr>\n", f);
    for (size_t j = 0; j < k; j++) {
        uint64_t i = top[j];
        char id[XTTS_RECORD_MAX_ID + 1], why[160], spk[256];
        xtts_status st = xtts_report_record_id(r, i, id, sizeof id, err);
        if (st) return st;
        flag_value(r, fl, i, why, sizeof why);
        if (fl == XTTS_QFLAG_DUP_AUDIO && r->dup_of[i] >= 0) {
            char first[XTTS_RECORD_MAX_ID + 1];
            if ((st = xtts_report_record_id(r, (uint64_t)r->dup_of[i], first, sizeof first, err))) return st;
            snprintf(why, sizeof why, "same audio as %.120s", first);
        }
        fprintf(f, "<tr><td class=\"n\">%zu</td><td class=\"id\">", j + 1);
        xtts_html_escape(f, id);
        fputs("</td><td>", f);
        xtts_html_escape(f, xtts_report_speaker_name(r, r->speaker[i], spk, sizeof spk));
        fprintf(f, "</td><td class=\"n\">%.2f</td><td>", r->m[i].duration_s);
        xtts_html_escape(f, why);
        fputs("</td>", f);
        if ((st = record_media(r, i, b, f, err))) return st;
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    return XTTS_OK;
}

static xtts_status page_worst(xtts_report *r, FILE *f, xtts_error *err) {
    size_t k = r->opt.worst_per_flag ? r->opt.worst_per_flag : 1;
    uint64_t *top = malloc(k * sizeof *top);
    double *sev = malloc(k * sizeof *sev);
    media_bufs b = {.audio_left = r->opt.audio_budget_bytes};
    xtts_status st = top && sev ? XTTS_OK : xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (!st) fputs("<h2>Worst records per flag</h2>\n", f);
    if (!st && !r->flagged) fputs("<p class=\"none\">No record is flagged.</p>\n", f);
    for (int fl = 0; !st && fl < XTTS_QUALITY_N_FLAGS; fl++)
        if (r->flag_records[fl]) st = flag_section(r, fl, &b, top, sev, f, err);
    free(top);
    free(sev);
    free(b.mel);
    free(b.tokens);
    free(b.wave);
    return st;
}

xtts_status xtts_report_html(xtts_report *r, FILE *f, xtts_error *err) {
    page_head(r, f);
    page_summary(r, f);
    xtts_status st = page_distributions(r, f, err);
    if (!st) st = page_speakers(r, f, err);
    if (!st) st = page_worst(r, f, err);
    if (st) return st;
    fputs("</main></body></html>\n", f);
    if (fflush(f) || ferror(f)) return xtts_error_set(err, XTTS_EIO, "HTML: write failed");
    return XTTS_OK;
}
