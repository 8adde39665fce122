/* xtts-cache-inspect — summary, length histograms and statistics of a cache; one record's
 * mel as .npy or PNG (docs/xtts-cache-inspect.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/audit/inspect.h"
#include "cache/store/read/reader.h"

static const char *usage_text =
    "usage: xtts-cache-inspect [OPTIONS] DIR\n"
    "Print a cache's summary (records, hours, configuration, shards, rejects) with frame\n"
    "and token length histograms, or export one record's mel.\n"
    "\n"
    "  --id ID          select the record with this utterance id\n"
    "  --index N        select the record at global index N\n"
    "  --npy FILE       write the selected record's unpadded mel, float32 [n_mels, frames]\n"
    "  --png FILE       write it as a spectrogram figure: time axis in seconds, frequency\n"
    "                   axis in Hz (mel-spaced), colour bar in the stored units, a title\n"
    "  --bare           with --png: the mel's pixels alone (no axes, title or colour bar)\n"
    "  --wav FILE       write its stored waveform as a 16-bit mono WAV file (caches built\n"
    "                   with --audio int16 or flac)\n"
    "  --colormap NAME  viridis (default), magma or gray\n"
    "  --scale N        pixels per frame and per mel channel (default: at least 800 x 320\n"
    "                   pixels of mel in the figure, 1 with --bare)\n"
    "  --width W, --height H   size of the mel's area in pixels (override --scale)\n"
    "  --range LO:HI    map values LO..HI to the colormap (default: the mel's min..max)\n"
    "  --stats          print the per-channel mel mean and std of the manifest\n"
    "  --no-lengths     skip the length histograms (they read every record's header)\n"
    "  --json           print the summary (or the selected record) as JSON\n"
    "  -h, --help       this text\n"
    "  -V, --version    print the version\n"
    "FILE may be '-' for stdout. Exit status: 0 success, 1 usage error, 2 the cache or\n"
    "the record could not be read.\n";

static int fail(xtts_error *e) {
    xtts_error_print("xtts-cache-inspect", e);
    return xtts_exit_code(e->code);
}

typedef struct {
    const char *dir, *id, *npy, *png, *wav;
    long index;
    int stats, lengths, json;
    xtts_png_options po;
} args_t;

/* Options into a; returns -1 to go on, else the exit status (0 for --help/--version). */
static int parse_args(int argc, char **argv, args_t *a) {
    enum { O_ID = 256, O_INDEX, O_NPY, O_PNG, O_CMAP, O_SCALE, O_WIDTH, O_HEIGHT, O_RANGE, O_STATS, O_NOLEN, O_JSON,
           O_WAV, O_BARE };
    static const struct option opts[] = {
        {"id", required_argument, 0, O_ID},        {"index", required_argument, 0, O_INDEX},
        {"npy", required_argument, 0, O_NPY},      {"png", required_argument, 0, O_PNG},
        {"colormap", required_argument, 0, O_CMAP}, {"scale", required_argument, 0, O_SCALE},
        {"width", required_argument, 0, O_WIDTH},  {"height", required_argument, 0, O_HEIGHT},
        {"range", required_argument, 0, O_RANGE},  {"stats", no_argument, 0, O_STATS},
        {"no-lengths", no_argument, 0, O_NOLEN},   {"json", no_argument, 0, O_JSON},
        {"help", no_argument, 0, 'h'},             {"version", no_argument, 0, 'V'},
        {"wav", required_argument, 0, O_WAV},      {"bare", no_argument, 0, O_BARE},
        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->index = -1;
    a->lengths = 1;
    xtts_png_options_defaults(&a->po);
    long v;
    int c;
    while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
        switch (c) {
        case O_ID: a->id = optarg; break;
        case O_INDEX:
            if (xtts_parse_long(optarg, 0, (long)(~0UL >> 1), &a->index)) {
                fprintf(stderr, "xtts-cache-inspect: --index: '%s' is not an index\n", optarg);
                return 1;
            }
            break;
        case O_NPY: a->npy = optarg; break;
        case O_PNG: a->png = optarg; break;
        case O_WAV: a->wav = optarg; break;
        case O_CMAP:
            if ((v = xtts_colormap_parse(optarg)) < 0) {
                fprintf(stderr, "xtts-cache-inspect: --colormap: '%s' is not viridis, magma or gray\n", optarg);
                return 1;
            }
            a->po.cmap = (xtts_colormap)v;
            break;
        case O_SCALE:
        case O_WIDTH:
        case O_HEIGHT:
            if (xtts_parse_long(optarg, 1, 20000, &v)) {
                fprintf(stderr, "xtts-cache-inspect: '%s' is not a size in 1..20000\n", optarg);
                return 1;
            }
            if (c == O_SCALE) a->po.scale = (int)v;
            else if (c == O_WIDTH) a->po.width = (int)v;
            else a->po.height = (int)v;
            break;
        case O_RANGE: {
            char *colon = strchr(optarg, ':');
            if (colon) *colon = '\0';
            if (!colon || xtts_parse_double(optarg, -1e30, 1e30, &a->po.vmin) ||
                xtts_parse_double(colon + 1, -1e30, 1e30, &a->po.vmax) || !(a->po.vmax > a->po.vmin)) {
                fprintf(stderr, "xtts-cache-inspect: --range wants LO:HI with LO < HI\n");
                return 1;
            }
            a->po.fixed_range = 1;
            break;
        }
        case O_STATS: a->stats = 1; break;
        case O_NOLEN: a->lengths = 0; break;
        case O_JSON: a->json = 1; break;
        case O_BARE: a->po.bare = 1; break;
        case 'V': printf("xtts-cache-inspect %s\n", XTTS_VERSION); return 0;
        case 'h': fputs(usage_text, stdout); return 0;
        default: xtts_usage_hint("xtts-cache-inspect"); return 1;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "xtts-cache-inspect: expected one cache directory\n");
        xtts_usage_hint("xtts-cache-inspect");
        return 1;
    }
    if (a->id && a->index >= 0) {
        fprintf(stderr, "xtts-cache-inspect: --id and --index are exclusive\n");
        return 1;
    }
    if ((a->npy || a->png || a->wav) && !a->id && a->index < 0) {
        fprintf(stderr, "xtts-cache-inspect: --npy, --png and --wav need --id or --index\n");
        return 1;
    }
    if ((a->npy && !strcmp(a->npy, "-")) + (a->png && !strcmp(a->png, "-")) + (a->wav && !strcmp(a->wav, "-")) > 1) {
        fprintf(stderr, "xtts-cache-inspect: only one of --npy, --png and --wav can go to stdout\n");
        return 1;
    }
    a->dir = argv[optind];
    return -1;
}

/* the summary (text or JSON); 2 when a shard or record could not be read */
static int show_summary(xtts_cache *cache, const args_t *a) {
    xtts_error e;
    xtts_error_clear(&e);
    unsigned what = (a->lengths ? XTTS_INSPECT_LENGTHS : 0) | (a->json ? XTTS_INSPECT_JSON : 0) |
                    (a->json && a->stats ? XTTS_INSPECT_STATS : 0);
    uint64_t unreadable;
    if (xtts_inspect_print_summary(stdout, cache, what, &unreadable, &e)) return fail(&e);
    if (!a->json && a->stats) xtts_inspect_print_stats(stdout, cache);
    int rc = 0;
    for (size_t i = 0; i < xtts_cache_n_shards(cache); i++) {
        xtts_cache_shard sh;
        xtts_cache_shard_get(cache, i, &sh);
        if (sh.status) {
            fprintf(stderr, "xtts-cache-inspect: %s\n", sh.error);
            rc = 2;
        }
    }
    if (unreadable) rc = 2;
    return rc;
}

/* the selected record: every section checked, then exported and/or described */
static int show_record(xtts_cache *cache, const args_t *a) {
    xtts_error e;
    xtts_error_clear(&e);
    xtts_cache_reader *r;
    if (xtts_cache_reader_new(cache, &r, &e)) return fail(&e);
    int rc = 0;
    uint64_t idx = (uint64_t)a->index;
    const xtts_cache_config *cfg = xtts_cache_get_config(cache);
    size_t C = (size_t)cfg->mel.n_mels, T = xtts_cache_max_frames(cache), K = (size_t)cfg->max_tokens;
    float *mel = malloc(C * T * sizeof *mel);
    int32_t *tok = malloc(K * sizeof *tok);
    xtts_record_header h;
    if (!mel || !tok) {
        xtts_error_set(&e, XTTS_ENOMEM, "out of memory");
        rc = fail(&e);
    } else if (a->id && xtts_cache_reader_find(r, a->id, &idx, &e)) {
        rc = fail(&e);
    } else if (xtts_cache_reader_get(r, idx, &h, tok, K, mel, XTTS_DTYPE_F32, C, T, &e) ||
               xtts_cache_reader_check(r, idx, &e)) { /* every section, before exporting anything */
        rc = fail(&e);
    } else {
        if (a->npy && xtts_npy_write_f32(a->npy, mel, h.n_mels, h.n_frames, T, &e)) rc = fail(&e);
        xtts_inspect_record ir = {idx, &h, tok, NULL, NULL};
        if (!rc && a->png && xtts_inspect_write_png(a->png, cache, &ir, mel, T, &a->po, &e)) rc = fail(&e);
        if (!rc && a->wav) {
            int16_t *w = malloc((h.n_samples ? h.n_samples : 1) * sizeof *w);
            if (!w) xtts_error_set(&e, XTTS_ENOMEM, "out of memory");
            if (!w || xtts_cache_reader_wave(r, idx, w, 0, h.n_samples, &e) ||
                xtts_wav_write_i16(a->wav, w, h.n_samples, cfg->mel.sample_rate, &e))
                rc = fail(&e);
            free(w);
        }
        const char *text = "", *norm = "";
        if (!rc && h.version >= 2 && xtts_cache_reader_text(r, idx, &text, NULL, &norm, NULL, &e)) rc = fail(&e);
        int to_stdout = (a->npy && !strcmp(a->npy, "-")) || (a->png && !strcmp(a->png, "-")) ||
                        (a->wav && !strcmp(a->wav, "-"));
        FILE *f = to_stdout ? stderr : stdout;
        ir.text = text;
        ir.norm = norm;
        if (!rc && a->json && !to_stdout) {
            xtts_inspect_print_record_json(stdout, cache, &ir);
        } else if (!rc && !a->npy && !a->png && !a->wav) {
            xtts_inspect_print_record(f, cache, &ir);
        }
    }
    free(mel);
    free(tok);
    xtts_cache_reader_delete(r);
    return rc;
}

int main(int argc, char **argv) {
    xtts_cache_guard_faults(); /* damaged shards become errors, not signals */
    xtts_check_stdout_at_exit("xtts-cache-inspect");
    args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    xtts_error e;
    xtts_error_clear(&e);
    xtts_cache *cache;
    /* Tolerant: a summary of a damaged cache is still useful; record reads report faults. */
    if (xtts_cache_open_ex(a.dir, XTTS_CACHE_OPEN_TOLERANT, &cache, &e)) return fail(&e);
    rc = !a.id && a.index < 0 ? show_summary(cache, &a) : show_record(cache, &a);
    xtts_cache_close(cache);
    return rc;
}
