/* xtts-melcache — build a fixed-shape, compressed, verified mel cache from a token stream. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xtts_common.h"
#include "formats/record.h"
#include "prep/melcache/melcache.h"

static const char *PROG = "xtts-melcache";

static void usage(FILE *f) {
    fprintf(f,
            "Usage: xtts-melcache --out DIR [OPTIONS] [TOKENS]\n"
            "Read a token stream (from xtts-tokenize; '-' or none = stdin); for each record decode the\n"
            "audio, downmix, resample, compute the log-mel, pad to a fixed shape, compress and store it.\n"
            "\n"
            "  -o, --out DIR             cache directory: new, empty or a cache (resumed when it holds the\n"
            "                            same build); a non-empty folder that is no cache is refused\n"
            "      --preset NAME         xtts (default), hifigan, vits, tacotron2, whisper, linear\n"
            "                            (linear: VITS's linear magnitude spectrogram, 513 bins)\n"
            "      --sample-rate HZ --n-fft N --hop N --win N --n-mels N --fmin HZ --fmax HZ\n"
            "                            override fields of the preset\n"
            "      --max-frames N        pad every mel to N frames (default 1024, whisper 3000); longer is rejected\n"
            "      --buckets A,B,...     pad to the smallest bucket that holds the record instead\n"
            "      --dtype fp16|fp32     stored mel precision (default fp16)\n"
            "      --zstd-level N        1..19 (default 1)\n"
            "      --no-shuffle          store mel bytes as is (default: byte-plane shuffled)\n"
            "      --audio none|int16|flac  also store the waveform the mel was computed from\n"
            "                            (int16: shuffled + zstd; flac: FLAC; default none)\n"
            "      --resampler NAME      soxr (default) or libsamplerate\n"
            "      --resample-quality Q  soxr: quick low mq hq vhq (default hq);\n"
            "                            libsamplerate: sinc_fastest sinc_medium sinc_best linear zoh\n"
            "      --trim-db DB          trim leading/trailing audio quieter than peak-DB (default off)\n"
            "      --val-fraction F      mark a deterministic fraction (hash of id) as validation\n"
            "      --device D            auto (default), cpu, cuda, cuda:N; auto takes cuda:0 only where it\n"
            "                            is estimated faster (few threads, a large build; XTTS_MELCACHE_AUTO)\n"
            "  -j, --threads N           worker threads (default: all cores; alias --jobs)\n"
            "      --shard-size BYTES    bound on a shard (default 1G; suffixes K M G)\n"
            "      --part K/N            build part K of N (the K-th of N blocks of the input); the last part\n"
            "                            to finish joins the parts (or run xtts-cache-merge DIR)\n"
            "      --force               replace a cache built with another configuration (its own files only)\n"
            "      --update              --out holds a finished cache: build TOKENS' cache beside it, carrying\n"
            "                            over records whose content key is unchanged, then put it in its place\n"
            "      --compact             with --update: copy every carried record into new shards (by default\n"
            "                            an update keeps unchanged records in the old cache's shards)\n"
            "      --reuse DIR           copy records with an unchanged content key from the finished cache DIR\n"
            "      --dry-run             with --update or --reuse: say how many records would be reused,\n"
            "                            computed and dropped; write nothing\n"
            "      --rehash              with --update or --reuse: read every audio file for its content key,\n"
            "                            trusting no stat record (by default a file whose device, inode,\n"
            "                            size, modification and change times are unchanged is not read)\n"
            "      --rejects FILE        write 'id<TAB>reason' for every rejected record\n"
            "      --exclude FILE        leave out the records xtts-cache-report's TSV flags (or a list of ids,\n"
            "                            one per line); counted as excluded in the summary\n"
            "      --exclude-flags A,B   the flags of the TSV that exclude a record (default: every flag)\n"
            "      --strict              exit 2 (not 3) when any record is rejected\n"
            "      --progress            progress line even when stderr is not a terminal\n"
            "  -q, --quiet               no per-record rejection lines\n"
            "  -h, --help                this text\n"
            "  -V, --version             version\n"
            "\n"
            "Exit: 0 ok; 1 usage; 2 input or environment error; 3 finished with rejected records.\n"
            "See docs/xtts-melcache.md.\n");
}

static int parse_size(const char *s, uint64_t *out) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0) return -1;
    double mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1024.0, end++;
    else if (*end == 'M' || *end == 'm') mul = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g') mul = 1024.0 * 1024 * 1024, end++;
    if (*end == 'i' || *end == 'B') end++;
    if (*end == 'B') end++;
    if (*end) return -1;
    *out = (uint64_t)(v * mul);
    return *out < 65536 ? -1 : 0;
}

static int parse_buckets(const char *s, xtts_cache_config *c) {
    c->n_buckets = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v <= 0 || v > XTTS_RECORD_MAX_FRAMES || c->n_buckets == XTTS_MAX_BUCKETS) return -1;
        if (c->n_buckets && v <= c->buckets[c->n_buckets - 1]) return -1; /* increasing */
        c->buckets[c->n_buckets++] = (int)v;
        p = end;
        if (*p == ',') p++;
        else if (*p) return -1;
    }
    return c->n_buckets ? 0 : -1;
}

enum {
    O_PRESET = 256, O_SR, O_NFFT, O_HOP, O_WIN, O_NMELS, O_FMIN, O_FMAX, O_MAXF, O_BUCKETS, O_DTYPE, O_ZSTD,
    O_NOSHUF, O_RESAMPLER, O_RQ, O_TRIM, O_VAL, O_DEVICE, O_SHARDSZ, O_PART, O_FORCE, O_REJECTS, O_STRICT,
    O_PROGRESS, O_COMMIT, O_AUDIO, O_UPDATE, O_REUSE, O_DRYRUN, O_COMPACT, O_EXCLUDE, O_EXCLUDE_FLAGS, O_REHASH
};

/* main's answer from a step that may end the program: go on, or exit with the code. */
enum { GO_ON = -1 };

/* What the command line asks for besides the build's options. */
typedef struct {
    const char *preset;
    /* overrides are applied after the preset, whatever their order on the command line */
    xtts_mel_overrides ov;
    const char *rejects_path, *rq;
    int strict, max_frames_given;
    const char *in_name;        /* the token stream, "-" for stdin */
    const char *exclude_path;   /* --exclude */
    uint32_t exclude_flags;     /* --exclude-flags (default every flag) */
} melcache_cli;

#define BAD(...) do { fprintf(stderr, "%s: ", PROG); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

/* One option of the command line: GO_ON, or the exit code (0 after --help and --version). */
static int parse_option(int c, const char *arg, xtts_melcache_options *o, melcache_cli *cli) {
    xtts_mel_overrides *ov = &cli->ov;
    long v;
    double d;
    switch (c) {
    case 'o': o->out_dir = arg; break;
    case O_PRESET: cli->preset = arg; break;
    case O_SR: if (xtts_parse_long(arg, 1000, 384000, &ov->sample_rate)) BAD("--sample-rate %s: expected 1000..384000", arg); break;
    case O_NFFT: if (xtts_parse_long(arg, 16, 65536, &ov->n_fft)) BAD("--n-fft %s: expected 16..65536", arg); break;
    case O_HOP: if (xtts_parse_long(arg, 1, 65536, &ov->hop)) BAD("--hop %s: expected 1..65536", arg); break;
    case O_WIN: if (xtts_parse_long(arg, 1, 65536, &ov->win)) BAD("--win %s: expected 1..65536", arg); break;
    case O_NMELS: if (xtts_parse_long(arg, 1, XTTS_RECORD_MAX_MELS, &ov->n_mels)) BAD("--n-mels %s: expected 1..%d", arg, XTTS_RECORD_MAX_MELS); break;
    case O_FMIN: if (xtts_parse_double(arg, 0, 1e6, &ov->fmin)) BAD("--fmin %s: expected a frequency in Hz", arg); break;
    case O_FMAX: if (xtts_parse_double(arg, 1, 1e6, &ov->fmax)) BAD("--fmax %s: expected a frequency in Hz", arg); break;
    case O_MAXF: if (xtts_parse_long(arg, 1, XTTS_RECORD_MAX_FRAMES, &v)) BAD("--max-frames %s: expected 1..%d", arg, XTTS_RECORD_MAX_FRAMES); o->cfg.max_frames = (int)v; cli->max_frames_given = 1; break;
    case O_BUCKETS: if (parse_buckets(arg, &o->cfg)) BAD("--buckets %s: expected increasing positive integers, e.g. 256,512,1024", arg); break;
    case O_DTYPE: { int t = xtts_dtype_parse(arg); if (t < 0) BAD("--dtype %s: expected fp16 or fp32", arg); o->cfg.dtype = t; break; }
    case O_ZSTD: if (xtts_parse_long(arg, 1, 19, &v)) BAD("--zstd-level %s: expected 1..19", arg); o->cfg.zstd_level = (int)v; break;
    case O_NOSHUF: o->cfg.shuffle = 0; break;
    case O_AUDIO: { int a = xtts_audio_store_parse(arg); if (a < 0) BAD("--audio %s: expected none, int16 or flac", arg); o->cfg.audio = a; break; }
    case O_RESAMPLER:
        if (strcmp(arg, "soxr") && strcmp(arg, "libsamplerate")) BAD("--resampler %s: expected soxr or libsamplerate", arg);
        snprintf(o->cfg.resampler, sizeof o->cfg.resampler, "%s", arg);
        break;
    case O_RQ: cli->rq = arg; break;
    case O_TRIM: if (xtts_parse_double(arg, 1, 200, &d)) BAD("--trim-db %s: expected 1..200", arg); o->cfg.trim_db = d; break;
    case O_VAL: if (xtts_parse_double(arg, 0, 1, &d)) BAD("--val-fraction %s: expected 0..1", arg); o->cfg.val_fraction = d; break;
    case O_DEVICE: o->device = arg; break;
    case 'j': if (xtts_parse_long(arg, 1, 4096, &v)) BAD("-j %s: expected a thread count", arg); o->threads = (int)v; break;
    case O_SHARDSZ: if (parse_size(arg, &o->shard_bytes)) BAD("--shard-size %s: expected bytes >= 64K, e.g. 512M", arg); break;
    case O_PART: {
        long k, n;
        char buf[64];
        snprintf(buf, sizeof buf, "%s", arg);
        char *slash = strchr(buf, '/');
        if (!slash) BAD("--part %s: expected K/N (part K of N, 0 <= K < N)", arg);
        *slash = '\0';
        if (xtts_parse_long(buf, 0, 99999, &k) || xtts_parse_long(slash + 1, 1, 100000, &n) || k >= n)
            BAD("--part %s: expected K/N with 0 <= K < N", arg);
        o->part = (int)k; o->n_parts = (int)n;
        break;
    }
    case O_FORCE: o->force = 1; break;
    case O_UPDATE: o->update = 1; break;
    case O_REUSE: o->reuse_dir = arg; break;
    case O_DRYRUN: o->dry_run = 1; break;
    case O_COMPACT: o->compact = 1; break;
    case O_REHASH: o->rehash = 1; break;
    case O_REJECTS: cli->rejects_path = arg; break;
    case O_EXCLUDE: cli->exclude_path = arg; break;
    case O_EXCLUDE_FLAGS: {
        xtts_error e;
        if (xtts_exclude_parse_flags(arg, &cli->exclude_flags, &e)) BAD("%s", e.msg);
        break;
    }
    case O_STRICT: cli->strict = 1; break;
    case O_PROGRESS: o->progress = 1; break;
    case O_COMMIT: if (xtts_parse_long(arg, 1, 1000000, &v)) BAD("--commit-every %s: expected 1..1000000", arg); o->commit_every = (uint32_t)v; break;
    case 'q': o->quiet = 1; break;
    case 'h': usage(stdout); return 0;
    case 'V': printf("%s %s\n", PROG, XTTS_VERSION); return 0;
    default: xtts_usage_hint(PROG); return 1;
    }
    return GO_ON;
}

/* The command line into o and cli, the mel parameters derived from the preset and the
 * overrides: GO_ON, or the exit code. */
static int parse_args(int argc, char **argv, xtts_melcache_options *o, melcache_cli *cli) {
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'}, {"preset", required_argument, 0, O_PRESET},
        {"sample-rate", required_argument, 0, O_SR}, {"n-fft", required_argument, 0, O_NFFT},
        {"hop", required_argument, 0, O_HOP}, {"win", required_argument, 0, O_WIN},
        {"n-mels", required_argument, 0, O_NMELS}, {"fmin", required_argument, 0, O_FMIN},
        {"fmax", required_argument, 0, O_FMAX}, {"max-frames", required_argument, 0, O_MAXF},
        {"buckets", required_argument, 0, O_BUCKETS}, {"dtype", required_argument, 0, O_DTYPE},
        {"zstd-level", required_argument, 0, O_ZSTD}, {"no-shuffle", no_argument, 0, O_NOSHUF},
        {"resampler", required_argument, 0, O_RESAMPLER}, {"resample-quality", required_argument, 0, O_RQ},
        {"trim-db", required_argument, 0, O_TRIM}, {"val-fraction", required_argument, 0, O_VAL},
        {"device", required_argument, 0, O_DEVICE}, {"jobs", required_argument, 0, 'j'}, {"threads", required_argument, 0, 'j'},
        {"shard-size", required_argument, 0, O_SHARDSZ}, {"part", required_argument, 0, O_PART},
        {"force", no_argument, 0, O_FORCE}, {"rejects", required_argument, 0, O_REJECTS},
        {"strict", no_argument, 0, O_STRICT}, {"progress", no_argument, 0, O_PROGRESS},
        {"commit-every", required_argument, 0, O_COMMIT}, {"quiet", no_argument, 0, 'q'},
        {"audio", required_argument, 0, O_AUDIO}, {"update", no_argument, 0, O_UPDATE},
        {"reuse", required_argument, 0, O_REUSE}, {"dry-run", no_argument, 0, O_DRYRUN},
        {"compact", no_argument, 0, O_COMPACT}, {"rehash", no_argument, 0, O_REHASH},
        {"audio", required_argument, 0, O_AUDIO}, {"exclude", required_argument, 0, O_EXCLUDE},
        {"exclude-flags", required_argument, 0, O_EXCLUDE_FLAGS},
        {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:j:qhV", opts, NULL)) != -1) {
        int rc = parse_option(c, optarg, o, cli);
        if (rc != GO_ON) return rc;
    }
    if (!o->out_dir) BAD("--out DIR is required (try --help)");
    if (argc - optind > 1) BAD("one token stream at most (got %d)", argc - optind);
    if (o->update && o->reuse_dir) BAD("--update takes its records from --out; --reuse is for a build of another --out");
    if (o->dry_run && !o->update && !o->reuse_dir) BAD("--dry-run goes with --update or --reuse DIR");
    if (o->compact && !o->update) BAD("--compact goes with --update");
    if (o->rehash && !o->update && !o->reuse_dir) BAD("--rehash goes with --update or --reuse DIR");
    xtts_error err;
    xtts_error_clear(&err);
    if (xtts_mel_params_derive(cli->preset, &cli->ov, &o->cfg.mel, &err)) { xtts_error_print(PROG, &err); return 1; }
    xtts_melcache_config_finish(&o->cfg, cli->rq, cli->max_frames_given);
    cli->in_name = optind < argc ? argv[optind] : "-";
    return GO_ON;
}

static int run_build(xtts_melcache_options *o, const melcache_cli *cli, xtts_melcache_result *res);

/* The exclude list, then the build: GO_ON, or the exit code. */
static int run(xtts_melcache_options *o, const melcache_cli *cli, xtts_melcache_result *res) {
    const char *in_name = cli->in_name;
    struct stat sb;
    if (strcmp(in_name, "-") && stat(in_name, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: %s: a directory, not a token stream; a dataset folder is read by xtts-tokenize, which "
                "writes the token stream: xtts-tokenize %s | xtts-melcache --out DIR\n", PROG, in_name, in_name);
        return 2;
    }
    if (!strcmp(in_name, "-") && isatty(STDIN_FILENO))
        fprintf(stderr, "%s: reading the token stream from standard input (a terminal): end it with Ctrl-D, stop "
                "with Ctrl-C, or give the file xtts-tokenize wrote: xtts-melcache --out DIR TOKENS\n", PROG);
    xtts_error err;
    xtts_error_clear(&err);
    xtts_exclude *ex = NULL;
    if (cli->exclude_path && xtts_exclude_load(cli->exclude_path, cli->exclude_flags, &ex, &err)) {
        xtts_error_print(PROG, &err);
        return 2;
    }
    o->exclude = ex;
    int rc = run_build(o, cli, res);
    xtts_exclude_free(ex);
    o->exclude = NULL;
    return rc;
}

/* Open the token stream and the rejects file, build, close them: GO_ON, or the exit code. */
static int run_build(xtts_melcache_options *o, const melcache_cli *cli, xtts_melcache_result *res) {
    const char *in_name = cli->in_name;
    FILE *in = strcmp(in_name, "-") == 0 ? stdin : fopen(in_name, "r");
    if (!in) { fprintf(stderr, "%s: %s: cannot open: %m\n", PROG, in_name); return 2; }
    if (cli->rejects_path) {
        o->rejects = fopen(cli->rejects_path, "w");
        if (!o->rejects) { fprintf(stderr, "%s: %s: cannot create: %m\n", PROG, cli->rejects_path); return 2; }
    }
    xtts_error err;
    xtts_error_clear(&err);
    xtts_status st = xtts_melcache_run(o, in, in_name, res, &err);
    if (in != stdin) fclose(in);
    if (o->rejects) { /* a write that failed part way shows in ferror; the last buffer's, in fclose */
        int bad = ferror(o->rejects), e = errno;
        if (fclose(o->rejects) != 0 && !bad) bad = 1, e = errno;
        if (bad && !st) {
            fprintf(stderr, "%s: %s: write failed: %s\n", PROG, cli->rejects_path, strerror(e ? e : EIO));
            return 2;
        }
    }
    if (st) {
        /* one line: where --force helps, the message says so itself (only the code that
         * found the fault knows whether it does) */
        xtts_error_print(PROG, &err);
        return xtts_exit_code(st);
    }
    return GO_ON;
}

/* What an update, a --reuse build or a dry run carried over and computed. */
static void report_reuse(const xtts_melcache_options *o, const xtts_melcache_result *res) {
    char dropped[64] = "";
    if (res->has_dropped) snprintf(dropped, sizeof dropped, ", %llu dropped", (unsigned long long)res->dropped);
    char shared[128] = "";
    if (res->shared)
        snprintf(shared, sizeof shared, "; %llu kept in the old cache's shards (%llu run%s), not copied",
                 (unsigned long long)res->shared, (unsigned long long)res->shared_runs, res->shared_runs == 1 ? "" : "s");
    fprintf(stderr, "%s: %s%llu reused, %llu computed%s%s%s\n", PROG, o->dry_run ? "dry run: " : "",
            (unsigned long long)res->reused, (unsigned long long)res->computed, dropped,
            res->switched ? "; the update replaced the old cache" : "", shared);
    fprintf(stderr, "%s: %llu audio file%s read for content keys, %llu known by their stat records%s\n", PROG,
            (unsigned long long)res->audio_read, res->audio_read == 1 ? "" : "s", (unsigned long long)res->audio_known,
            o->rehash ? " (--rehash)" : "");
    if (res->compacted && !o->dry_run)
        fprintf(stderr, "%s: the update copies every record into new shards (%s)\n", PROG, res->compact_why);
}

/* The summary on stderr; the exit code. */
static int report(const xtts_melcache_options *o, const xtts_melcache_result *res, int strict) {
    if (o->update || o->reuse_dir) report_reuse(o, res);
    if (o->dry_run) return 0;
    fprintf(stderr,
            "%s: %llu records in, %llu selected, %llu stored, %llu rejected, %llu excluded, %.3f h of audio, %.1f s (%s)%s%s\n",
            PROG, (unsigned long long)res->inputs, (unsigned long long)res->selected, (unsigned long long)res->stored,
            (unsigned long long)res->rejected, (unsigned long long)res->excluded, res->audio_seconds / 3600.0, res->wall_seconds, res->device,
            res->resumed_from ? ", resumed" : "", res->merged ? ", parts merged into manifest.json" : "");
    if (res->test_held_out)
        fprintf(stderr, "%s: %llu records of the test split held out of the cache\n", PROG, (unsigned long long)res->test_held_out);
    if (o->cfg.val_fraction > 0 && res->val_by_fraction == 0 && res->split_given < res->inputs)
        fprintf(stderr, "%s: warning: --val-fraction %g selected no record for validation\n", PROG, o->cfg.val_fraction);
    if (res->stored == 0 && res->rejected > 0 && (o->n_parts <= 1 || res->merged)) {
        /* nothing usable was built: not a success with rejections (verify refuses it too) */
        fprintf(stderr, "%s: %s: every record was rejected; the cache holds none (see the reasons above or --rejects)\n",
                PROG, o->out_dir);
        return 2;
    }
    if (res->rejected) return strict ? 2 : 3;
    return 0;
}

int main(int argc, char **argv) {
    xtts_check_stdout_at_exit("xtts-melcache");
    xtts_malloc_for_batch();
    xtts_melcache_options o;
    xtts_melcache_options_defaults(&o);
    melcache_cli cli = {.preset = "xtts", .exclude_flags = XTTS_EXCLUDE_ALL_FLAGS};
    xtts_mel_overrides_defaults(&cli.ov);
    int rc = parse_args(argc, argv, &o, &cli);
    if (rc != GO_ON) return rc;
    xtts_melcache_result res;
    rc = run(&o, &cli, &res);
    if (rc != GO_ON) return rc;
    return report(&o, &res, cli.strict);
}
