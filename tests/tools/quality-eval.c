/* quality-eval — the quality metrics and flags of a dataset straight from its audio, through
 * the project's audio front end (decode, downmix, resample) and kernels/quality.h, without
 * building a cache: the evaluation of the metrics on a corpus with known defects
 * (scripts/dev/quality-corpus.py, scripts/dev/quality-eval.py).
 *
 * Usage: quality-eval [--rate HZ] [--thresholds FILE] METADATA.tsv > flags.tsv
 *   METADATA.tsv: a header row naming the columns id, audio, text and speaker (the tsv
 *   layout xtts-tokenize reads); audio paths are relative to the file's folder.
 * Output: a header row, then per record: id, flags ("-" or names joined by ','), the id of
 * the earlier record with the same audio or "-", the speaker, then the metrics
 * (xtts_quality_tsv_fields).
 * Characters are counted as code points of the text, tokens as its bytes.
 * Exit: 0, 1 usage (a bad thresholds file included), 2 input error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/quality_flags.h"
#include "prep/audio/audio.h"

typedef struct {
    char *id, *audio, *text, *speaker;
} row;

static int column(char **cols, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(cols[i], name) == 0) return i;
    return -1;
}

static int split_tabs(char *line, char **cols, int max) {
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max;) {
        cols[n++] = p;
        char *t = strchr(p, '\t');
        if (!t) break;
        *t = '\0';
        p = t + 1;
    }
    return n;
}

/* Rows of path in *rows (caller frees), their speakers numbered in order of appearance. */
static int read_rows(const char *path, row **rows, size_t *n_rows, uint32_t **speakers) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 2;
    }
    char line[65536], *cols[64];
    int nc = fgets(line, sizeof line, f) ? split_tabs(line, cols, 64) : 0;
    int ci = column(cols, nc, "id"), ca = column(cols, nc, "audio"), ct = column(cols, nc, "text"),
        cs = column(cols, nc, "speaker");
    if (ci < 0 || ca < 0 || ct < 0 || cs < 0) {
        fprintf(stderr, "%s:1: the header must name id, audio, text and speaker\n", path);
        fclose(f);
        return 2;
    }
    size_t cap = 0, n = 0;
    row *r = NULL;
    char **names = NULL;
    size_t n_names = 0;
    uint32_t *spk = NULL;
    while (fgets(line, sizeof line, f)) {
        int k = split_tabs(line, cols, 64);
        if (k <= ci || k <= ca || k <= ct || k <= cs) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            r = realloc(r, cap * sizeof *r);
            spk = realloc(spk, cap * sizeof *spk);
            names = realloc(names, cap * sizeof *names);
        }
        r[n] = (row){strdup(cols[ci]), strdup(cols[ca]), strdup(cols[ct]), strdup(cols[cs])};
        size_t s = 0;
        while (s < n_names && strcmp(names[s], cols[cs]) != 0) s++;
        if (s == n_names) names[n_names++] = r[n].speaker;
        spk[n++] = (uint32_t)s;
    }
    fclose(f);
    free(names);
    *rows = r;
    *n_rows = n;
    *speakers = spk;
    return 0;
}

static uint32_t code_points(const char *s) {
    uint32_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static void print_row(const row *r, uint32_t flags, const char *dup_id, const xtts_quality_metrics *m) {
    char names[256], fields[1024];
    xtts_quality_flags_format(flags, names, sizeof names);
    xtts_quality_tsv_fields(m, fields, sizeof fields);
    printf("%s\t%s\t%s\t%s\t%s\n", r->id, names, dup_id, r->speaker, fields);
}

static int measure_all(const char *meta, const row *rows, size_t n, int rate, xtts_quality_metrics *m) {
    xtts_audio_options ao = {.target_rate = rate};
    xtts_audio *au = NULL;
    xtts_quality_state *qs = NULL;
    xtts_error e;
    if (xtts_audio_new(&ao, &au, &e) || xtts_quality_state_new(&qs, &e)) {
        fprintf(stderr, "quality-eval: %s\n", e.msg);
        return 2;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", meta);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = '\0';
    else strcpy(dir, "./");
    for (size_t i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s%s", rows[i].audio[0] == '/' ? "" : dir, rows[i].audio);
        const float *x;
        size_t ns;
        xtts_audio_info info;
        if (xtts_audio_load(au, path, &x, &ns, &info, &e) ||
            xtts_quality_measure(qs, x, ns, rate, info.source_rate, code_points(rows[i].text),
                                 (uint32_t)strlen(rows[i].text), &m[i], &e)) {
            fprintf(stderr, "quality-eval: %s\n", e.msg);
            return 2;
        }
    }
    xtts_audio_delete(au);
    xtts_quality_state_delete(qs);
    return 0;
}

int main(int argc, char **argv) {
    int rate = 22050;
    const char *thresholds = NULL;
    static const struct option longs[] = {{"rate", 1, 0, 'r'}, {"thresholds", 1, 0, 't'}, {0, 0, 0, 0}};
    for (int c; (c = getopt_long(argc, argv, "", longs, NULL)) != -1;) {
        if (c == 'r') rate = atoi(optarg);
        else if (c == 't') thresholds = optarg;
        else return 1;
    }
    if (optind != argc - 1 || rate < 1000) {
        fprintf(stderr, "usage: quality-eval [--rate HZ] [--thresholds FILE] METADATA.tsv\n");
        return 1;
    }
    xtts_quality_thresholds t;
    xtts_quality_thresholds_defaults(&t);
    xtts_error e;
    if (thresholds && xtts_quality_thresholds_load(thresholds, &t, &e)) {
        fprintf(stderr, "quality-eval: %s\n", e.msg);
        return xtts_exit_code(e.code);
    }
    row *rows;
    size_t n;
    uint32_t *spk;
    int rc = read_rows(argv[optind], &rows, &n, &spk);
    if (rc) return rc;
    xtts_quality_metrics *m = calloc(n ? n : 1, sizeof *m);
    uint32_t *flags = calloc(n ? n : 1, sizeof *flags);
    int64_t *dup = calloc(n ? n : 1, sizeof *dup);
    if ((rc = measure_all(argv[optind], rows, n, rate, m))) return rc;
    if (xtts_quality_flag_all(m, spk, n, &t, flags, dup, &e)) {
        fprintf(stderr, "quality-eval: %s\n", e.msg);
        return 2;
    }
    printf("id\tflags\tdup_of\tspeaker\t%s\n", xtts_quality_tsv_header());
    for (size_t i = 0; i < n; i++) print_row(&rows[i], flags[i], dup[i] >= 0 ? rows[dup[i]].id : "-", &m[i]);
    for (size_t i = 0; i < n; i++) {
        free(rows[i].id);
        free(rows[i].audio);
        free(rows[i].text);
        free(rows[i].speaker);
    }
    free(rows);
    free(spk);
    free(m);
    free(flags);
    free(dup);
    return 0;
}
