/* run.c — the spine of xtts-segment (segment.h): for each pair, the text's sentences, the
 * reference and the recording's features (side by side), the DTW, the sentences placed, the
 * clips grouped and written; then metadata.csv and segments.tsv in the pairs' order. */
#include <ctype.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/strbuf.h"
#include "prep/segment/segment_internal.h"
#include "prep/text/langid/langid.h"
#include "prep/text/normalize/xtts_text.h"

#define MAX_TEXT_BYTES ((size_t)256 << 20)

void xtts_segment_options_default(xtts_segment_options *o) {
    memset(o, 0, sizeof *o);
    o->min_seconds = 2.0, o->max_seconds = 11.5, o->pad_seconds = 0.2, o->min_score = 0.6;
    o->threads = 1;
}

xtts_status xtts_segment_options_check(const xtts_segment_options *o, xtts_error *err) {
    if (!o->out_dir || !*o->out_dir) return xtts_error_set(err, XTTS_EUSAGE, "--out DIR is required");
    if (o->min_seconds < 0 || o->max_seconds <= o->min_seconds)
        return xtts_error_set(err, XTTS_EUSAGE, "--min-seconds %g and --max-seconds %g: need 0 <= min < max", o->min_seconds,
                              o->max_seconds);
    if (o->pad_seconds < 0 || o->pad_seconds > 2) return xtts_error_set(err, XTTS_EUSAGE, "--pad must be 0..2 seconds");
    if (o->min_score < 0 || o->min_score > 1) return xtts_error_set(err, XTTS_EUSAGE, "--min-score must be 0..1");
    if (o->sample_rate && (o->sample_rate < 8000 || o->sample_rate > 192000))
        return xtts_error_set(err, XTTS_EUSAGE, "--sample-rate must be 8000..192000");
    if (o->threads < 1) return xtts_error_set(err, XTTS_EUSAGE, "-j must be 1 or more");
    return XTTS_OK;
}

/* One pair's state through its steps. */
typedef struct {
    const xtts_segment_options *o;
    const xtts_segment_pair *pair;
    const char *stem;
    char lang[16];
    xtts_sentences sent;
    seg_track ref, rec;
    size_t *ref_start, *ref_end;
    seg_source_info info;
    seg_pause *pauses;
    size_t n_pauses;
    seg_placed *placed;
    seg_clip *clips;
    size_t n_clips;
    xtts_sb meta, tsv; /* this pair's rows */
    int left_out;
} pair_run;

static void pair_free(pair_run *r) {
    xtts_sentences_free(&r->sent);
    xtts_seg_track_free(&r->ref);
    xtts_seg_track_free(&r->rec);
    free(r->ref_start);
    free(r->ref_end);
    free(r->pauses);
    free(r->placed);
    free(r->clips);
    xtts_sb_free(&r->meta);
    xtts_sb_free(&r->tsv);
}

/* The text file: read, checked, split; the language chosen. */
static xtts_status read_text(pair_run *r, xtts_error *err) {
    char *text = NULL;
    size_t len = 0, skip = 0;
    xtts_status st = xtts_read_file(r->pair->text, MAX_TEXT_BYTES, &text, &len, err);
    if (st) return st;
    if (!(st = xtts_segment_text_check(text, len, r->pair->text, &skip, err)))
        st = xtts_sentences_split(text + skip, len - skip, &r->sent, err);
    if (!st && r->sent.no_sentence_end)
        fprintf(stderr, "xtts-segment: %s: no sentence end (. ! ? \xe2\x80\xa6 \xe3\x80\x82) anywhere: each line is taken as a sentence\n",
                r->pair->text);
    const char *lang = r->pair->lang[0] ? r->pair->lang : r->o->lang;
    if (!st && lang[0]) snprintf(r->lang, sizeof r->lang, "%s", lang);
    else if (!st) {
        xtts_langid_result lr;
        xtts_langid_detect(text + skip, len - skip < 20000 ? len - skip : 20000, &lr);
        if (lr.lang < 0) st = xtts_error_set(err, XTTS_EINPUT, "%s: cannot tell the text's language; give --lang", r->pair->text);
        else snprintf(r->lang, sizeof r->lang, "%s", xtts_lang_codes[lr.lang]);
    }
    free(text);
    if (!st) {
        r->ref_start = calloc(r->sent.n + 1, sizeof *r->ref_start);
        r->ref_end = calloc(r->sent.n + 1, sizeof *r->ref_end);
        r->placed = calloc(r->sent.n + 1, sizeof *r->placed);
        if (!r->ref_start || !r->ref_end || !r->placed) st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    return st;
}

/* The reference and the recording's features, side by side when a second thread is free. */
static xtts_status analyse(pair_run *r, int threads, xtts_error *err) {
    xtts_error e1 = {0}, e2 = {0};
    xtts_status s1 = XTTS_OK, s2 = XTTS_OK;
#pragma omp parallel sections num_threads(threads > 1 ? 2 : 1)
    {
#pragma omp section
        {
            seg_features *f = NULL;
            s1 = xtts_seg_features_new(&f, &e1);
            if (!s1) s1 = xtts_seg_decode_features(r->pair->audio, f, &r->rec, &r->info, NULL, NULL, &e1);
            if (!s1) s1 = xtts_seg_track_finish(&r->rec, 0, &e1);
            xtts_seg_features_delete(f);
        }
#pragma omp section
        {
            seg_features *f = NULL;
            s2 = xtts_seg_features_new(&f, &e2);
            if (!s2) s2 = xtts_seg_reference(&r->sent, r->lang, f, &r->ref, r->ref_start, r->ref_end, &e2);
            if (!s2) s2 = xtts_seg_track_finish(&r->ref, 1, &e2);
            xtts_seg_features_delete(f);
        }
    }
    if (s1) { *err = e1; return s1; }
    if (s2) { *err = e2; return s2; }
    size_t speech = 0;
    for (size_t i = 0; i < r->rec.n40; i++) speech += !r->rec.silent[i];
    xtts_seg_track_trim(&r->rec);
    xtts_seg_track_trim(&r->ref);
    if (speech * SEG_FRAME_S < 0.5)
        return xtts_error_set(err, XTTS_EINPUT, "%s: no speech found in %.1f s of audio", r->pair->audio, r->info.seconds);
    return XTTS_OK;
}

/* What the DTW and the placing walk over: handed back as they walk on. */
typedef struct {
    const seg_track *ref, *rec;
    seg_spill sp[4]; /* map, dist, row_mean, row_scale: one value per reference frame */
} walk_mem;

static void walk_trim(void *ctx) {
    const walk_mem *m = ctx;
    xtts_seg_track_trim(m->ref);
    xtts_seg_track_trim(m->rec);
    for (int k = 0; k < 4; k++) xtts_seg_spill_trim(&m->sp[k]);
}

/* DTW, pauses, sentences placed, clips grouped. */
static xtts_status align_pair(pair_run *r, int threads, xtts_error *err) {
    xtts_dtw_params dp;
    xtts_dtw_params_default(&dp, SEG_FEAT);
    dp.threads = threads;
    walk_mem mem = {.ref = &r->ref, .rec = &r->rec};
    dp.trim = walk_trim, dp.trim_ctx = &mem;
    size_t nb = (r->ref.n40 ? r->ref.n40 : 1) * 4;
    xtts_status st = XTTS_OK;
    for (int k = 0; k < 4 && !st; k++)
        if (xtts_seg_spill_reserve(&mem.sp[k], nb)) st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    int32_t *map = mem.sp[0].p;
    float *dist = mem.sp[1].p, *row_mean = mem.sp[2].p, *row_scale = mem.sp[3].p;
    xtts_dtw_seq ref = {r->ref.feat, r->ref.silent, r->ref.n40, NULL, NULL}, rec = {r->rec.feat, r->rec.silent, r->rec.n40, NULL, NULL};
    if (!st) {
        xtts_dtw_row_stats(&dp, &ref, &rec, row_mean, row_scale);
        ref.row_mean = row_mean, ref.row_scale = row_scale;
    }
    if (!st) st = xtts_dtw_align(&dp, &ref, &rec, map, dist, err);
    walk_trim(&mem);
    if (!st) st = xtts_seg_find_pauses(&r->rec, 0.1, &r->pauses, &r->n_pauses, err);
    if (!st)
        st = xtts_seg_place(&r->ref, &r->rec, r->ref_start, r->ref_end, r->sent.n, map, dist, dp.gap_cost, r->pauses,
                       r->n_pauses, r->o->min_score, &(seg_align_ctx){&dp, &ref, &rec}, r->placed);
    int limit = r->o->max_chars ? r->o->max_chars : xtts_text_char_limit(r->lang);
    if (!st)
        xtts_seg_split_long(&r->sent, &r->ref, r->ref_start, r->ref_end, map, r->pauses, r->n_pauses, r->o, r->placed);
    if (!st)
        st = xtts_seg_group(&r->sent, r->placed, r->pauses, r->n_pauses, r->o, limit, r->info.seconds, &r->clips,
                       &r->n_clips, err);
    for (int k = 0; k < 4; k++) xtts_seg_spill_free(&mem.sp[k]);
    xtts_seg_track_trim(&r->ref);
    xtts_seg_track_trim(&r->rec);
    return st;
}

/* The first words of a sentence, for messages. */
static void sentence_head(const char *s, char *out, size_t cap) {
    size_t n = strlen(s);
    if (n < cap - 4) { snprintf(out, cap, "%s", s); return; }
    size_t k = cap - 4;
    while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80) k--;
    snprintf(out, cap, "%.*s...", (int)k, s);
}

/* A clip's text: its sentences joined by spaces, '|' (the csv's separator) and tabs as spaces. */
static void clip_text(const pair_run *r, const seg_clip *c, xtts_sb *sb) {
    if (c->text_b) { /* a piece of a cut sentence, without the space before its cut */
        const char *t = r->sent.s[c->first].text;
        size_t b = c->text_b;
        while (b > c->text_a && t[b - 1] == ' ') b--;
        for (size_t i = c->text_a; i < b; i++) xtts_sb_putc(sb, t[i] == '|' || t[i] == '\t' ? ' ' : t[i]);
        return;
    }
    for (size_t k = c->first; k <= c->last; k++) {
        if (k > c->first) xtts_sb_putc(sb, ' ');
        for (const char *p = r->sent.s[k].text; *p; p++) xtts_sb_putc(sb, *p == '|' || *p == '\t' ? ' ' : *p);
    }
}

/* The rows of metadata.csv and segments.tsv for this pair's clips. */
static void clip_rows(pair_run *r) {
    xtts_sb text = {0};
    for (size_t k = 0; k < r->n_clips; k++) {
        const seg_clip *c = &r->clips[k];
        xtts_sb_clear(&text);
        clip_text(r, c, &text);
        char id[600], num[160];
        snprintf(id, sizeof id, "%s_%04zu", r->stem, k + 1);
        xtts_sb_puts(&r->meta, id);
        xtts_sb_putc(&r->meta, '|');
        xtts_sb_puts(&r->meta, xtts_sb_cstr(&text));
        xtts_sb_putc(&r->meta, '|');
        xtts_sb_puts(&r->meta, xtts_sb_cstr(&text));
        xtts_sb_putc(&r->meta, '\n');
        xtts_sb_puts(&r->tsv, id);
        xtts_sb_putc(&r->tsv, '\t');
        for (const char *p = r->pair->audio; *p; p++) xtts_sb_putc(&r->tsv, *p == '\t' || *p == '\n' ? ' ' : *p);
        snprintf(num, sizeof num, "\t%.3f\t%.3f\t", c->start, c->end);
        xtts_sb_puts(&r->tsv, num);
        xtts_sb_puts(&r->tsv, xtts_sb_cstr(&text));
        snprintf(num, sizeof num, "\t%.3f\n", c->score);
        xtts_sb_puts(&r->tsv, num);
    }
    xtts_sb_free(&text);
}

/* Name what was left out: each sentence, and each stretch of speech in no clip. */
static void report_left_out(pair_run *r, xtts_segment_stats *stats) {
    char head[96];
    for (size_t k = 0; k < r->sent.n; k++) {
        if (!r->placed[k].why) continue;
        sentence_head(r->sent.s[k].text, head, sizeof head);
        fprintf(stderr, "xtts-segment: %s:%d: left out (%s; score %.2f): \"%s\"\n", r->pair->text, r->sent.s[k].line,
                r->placed[k].why, r->placed[k].score, head);
        r->left_out = 1;
#pragma omp atomic
        stats->sentences_left_out++;
    }
    const seg_track *t = &r->rec;
    size_t c = 0, i = 0;
    size_t trimmed = 0;
    while (i < t->n10) {
        if (i - trimmed >= 65536) trimmed = i, xtts_seg_track_trim(t);
        double ts = i * SEG_ENERGY_S;
        while (c < r->n_clips && r->clips[c].end <= ts) c++;
        if ((c < r->n_clips && r->clips[c].start <= ts) || t->energy_db[i] < t->silence_db) { i++; continue; }
        size_t j = i, speech = 0, quiet = 0;
        for (; j < t->n10 && quiet < 100; j++) {
            double tj = j * SEG_ENERGY_S;
            if (c < r->n_clips && r->clips[c].start <= tj) break;
            if (t->energy_db[j] >= t->silence_db) speech++, quiet = 0;
            else quiet++;
        }
        if (speech * SEG_ENERGY_S >= 0.3) {
            fprintf(stderr, "xtts-segment: %s: %.2f-%.2f s: speech left out (not in the text, or its text left out)\n",
                    r->pair->audio, ts, (j - quiet) * SEG_ENERGY_S);
            r->left_out = 1;
#pragma omp atomic
            stats->speech_left_out_seconds += speech * SEG_ENERGY_S;
        }
        i = j;
    }
}

static xtts_status segment_pair(pair_run *r, int threads, xtts_segment_stats *stats, xtts_error *err) {
    xtts_status st = read_text(r, err);
    if (!st) st = analyse(r, threads, err);
    if (!st) st = align_pair(r, threads, err);
    if (!st) st = xtts_seg_write_wavs(r->pair->audio, r->o->out_dir, r->stem, r->clips, r->n_clips, r->o->sample_rate, err);
    if (st) return st;
    clip_rows(r);
    report_left_out(r, stats);
    if (r->meta.failed || r->tsv.failed) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    double secs = 0;
    for (size_t k = 0; k < r->n_clips; k++) secs += r->clips[k].end - r->clips[k].start;
    size_t written = 0;
    for (size_t k = 0; k < r->n_clips; k++) /* a cut sentence counts once, with its first piece */
        if (!r->clips[k].text_b || !r->clips[k].text_a) written += r->clips[k].last - r->clips[k].first + 1;
#pragma omp critical
    {
        stats->sentences += r->sent.n;
        stats->sentences_written += written;
        stats->clips += r->n_clips;
        stats->audio_seconds += r->info.seconds;
        stats->clip_seconds += secs;
    }
    return XTTS_OK;
}

/* Clip ids' stems: the audio's file name without its extension, letters, digits, '-', '_'
 * and '.' kept (others become '_'); a stem that two pairs share gets the pair's number. */
static char **make_stems(const xtts_segment_pair *pairs, size_t n) {
    char **stems = calloc(n, sizeof *stems);
    if (!stems) return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *b = strrchr(pairs[i].audio, '/');
        b = b ? b + 1 : pairs[i].audio;
        const char *dot = strrchr(b, '.');
        size_t len = dot && dot > b ? (size_t)(dot - b) : strlen(b);
        if (len > 200) len = 200;
        stems[i] = malloc(len + 24);
        if (!stems[i]) return stems;
        for (size_t k = 0; k < len; k++) {
            unsigned char ch = (unsigned char)b[k];
            stems[i][k] = isalnum(ch) || ch == '-' || ch == '_' || ch == '.' ? (char)ch : '_';
        }
        stems[i][len] = 0;
        if (!len) strcpy(stems[i], "clip");
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (i != j && stems[i] && stems[j] && !strncmp(stems[i], stems[j], 200) && strlen(stems[i]) <= 200) {
                size_t l = strlen(stems[i]);
                snprintf(stems[i] + l, 24, "-%zu", i + 1);
                break;
            }
    return stems;
}

/* metadata.csv and segments.tsv from every pair's rows, in the pairs' order. */
static xtts_status write_lists(const xtts_segment_options *o, pair_run *runs, size_t n, xtts_error *err) {
    xtts_sb meta = {0}, tsv = {0};
    xtts_sb_puts(&tsv, "id\tsource\tstart\tend\ttext\tscore\n");
    xtts_sb_reserve(&meta, 0);
    for (size_t i = 0; i < n; i++) {
        if (runs[i].meta.len) xtts_sb_putn(&meta, runs[i].meta.s, runs[i].meta.len);
        if (runs[i].tsv.len) xtts_sb_putn(&tsv, runs[i].tsv.s, runs[i].tsv.len);
    }
    char path[4096];
    xtts_status st = meta.failed || tsv.failed ? xtts_error_set(err, XTTS_ENOMEM, "out of memory") : XTTS_OK;
    if (!st) {
        xtts_path_join(path, sizeof path, o->out_dir, "metadata.csv");
        st = xtts_write_file_atomic(path, meta.s, meta.len, err);
    }
    if (!st) {
        xtts_path_join(path, sizeof path, o->out_dir, "segments.tsv");
        st = xtts_write_file_atomic(path, tsv.s, tsv.len, err);
    }
    xtts_sb_free(&meta);
    xtts_sb_free(&tsv);
    return st;
}

/* The worse of two outcomes: a stopped run over a refused file over success. */
static int outcome_rank(xtts_status s) { return s == XTTS_OK ? 0 : s == XTTS_EINPUT || s == XTTS_ENOTFOUND || s == XTTS_EUNSUPPORTED ? 1 : 2; }

xtts_status xtts_segment_run(const xtts_segment_options *o, const xtts_segment_pair *pairs, size_t n_pairs,
                             xtts_segment_stats *stats, xtts_error *err) {
    memset(stats, 0, sizeof *stats);
    stats->pairs = n_pairs;
    char wavs[4096];
    xtts_path_join(wavs, sizeof wavs, o->out_dir, "wavs");
    struct stat sb;
    if (stat(o->out_dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) /* not "DIR/wavs: cannot create directory: Not a directory" */
        return xtts_error_set(err, XTTS_EINPUT, "%s: --out names a file, not a directory", o->out_dir);
    xtts_status st = xtts_mkdir_p(wavs, err);
    if (!st) st = xtts_seg_reference_start(err);
    if (st) return st;
    pair_run *runs = calloc(n_pairs, sizeof *runs);
    char **stems = make_stems(pairs, n_pairs);
    if (!runs || !stems) { free(runs); free(stems); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
    xtts_progress prog;
    xtts_progress_init(&prog, "xtts-segment", o->progress);
    int threads = o->threads, outer = n_pairs > 1 ? (threads < (int)n_pairs ? threads : (int)n_pairs) : 1;
    size_t done = 0;
    xtts_status worst = XTTS_OK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(outer)
    for (size_t i = 0; i < n_pairs; i++) {
        pair_run *r = &runs[i];
        r->o = o, r->pair = &pairs[i], r->stem = stems[i] ? stems[i] : "clip";
        xtts_error e = {0};
        xtts_status s = segment_pair(r, outer > 1 ? 1 : threads, stats, &e);
#pragma omp critical
        {
            if (s) {
                xtts_error_print("xtts-segment", &e);
                stats->pairs_refused++;
                if (outcome_rank(s) > outcome_rank(worst)) worst = s, *err = e;
            }
            done++;
            char extra[96];
            snprintf(extra, sizeof extra, "%.0f s of audio, %zu clips", stats->audio_seconds, stats->clips);
            xtts_progress_update(&prog, done, n_pairs, extra);
        }
    }
    char extra[96];
    snprintf(extra, sizeof extra, "%.0f s of audio, %zu clips", stats->audio_seconds, stats->clips);
    xtts_progress_finish(&prog, done, n_pairs, extra);
    st = outcome_rank(worst) == 2 ? worst : write_lists(o, runs, n_pairs, err);
    if (!st) st = worst;
    for (size_t i = 0; i < n_pairs; i++) {
        pair_free(&runs[i]);
        free(stems[i]);
    }
    free(runs);
    free(stems);
    return st;
}
