/* xtts-cache-verify — check a cache directory and print its content digest
 * (docs/xtts-cache-verify.md). Exit 0 only when every check holds; 2 otherwise. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cache/store/read/reader.h"
#include "cache/audit/verify.h"
#include "prep/melcache/recompute.h" /* a program may use every layer */

static const char *usage_text =
    "usage: xtts-cache-verify [OPTIONS] DIR\n"
    "Check a cache: manifest against shards, every record's header, checksums, shape,\n"
    "lengths and values, ids, speaker and language tables and counts, and the quality\n"
    "metrics when the cache stores them; print every fault, a summary and\n"
    "'digest: <sha256>' over all records' decoded contents in index order.\n"
    "\n"
    "  --deep           also check padding, token ids against the vocabulary, and the\n"
    "                   manifest's totals and mel statistics against the records\n"
    "  --recompute N    recompute N random records from their source audio and compare\n"
    "  --seed S         which records --recompute picks (default 1)\n"
    "  --tolerance X    largest absolute difference --recompute accepts\n"
    "  --json           print the report as one JSON object instead of text\n"
    "  --progress       show a progress line on stderr even when it is not a terminal\n"
    "  -h, --help       this text\n"
    "  -V, --version    print the version\n"
    "Exit status: 0 all checks hold; 1 usage error; 2 a fault was found or the cache\n"
    "could not be read.\n";

typedef struct {
    int json;
    json_t *faults;
} out_ctx;

static void on_fault(void *ctx, const xtts_verify_fault *f) {
    out_ctx *o = ctx;
    if (o->json) {
        json_t *j = json_pack("{s:s, s:I, s:s, s:s}", "shard", f->shard, "index", (json_int_t)f->index, "id", f->id,
                              "message", f->message);
        if (j) json_array_append_new(o->faults, j);
        return;
    }
    printf("fault: ");
    if (f->shard[0]) printf("%s: ", f->shard);
    if (f->index >= 0) printf("index %lld: ", (long long)f->index);
    if (f->id[0]) printf("id '%s': ", f->id);
    printf("%s\n", f->message);
    fflush(stdout);
}

/* main's answer from a step that may end the program: go on, or exit with the code. */
enum { GO_ON = -1 };

/* The command line into vo and oc, the cache directory into *dir: GO_ON, or the exit code. */
static int parse_args(int argc, char **argv, xtts_verify_options *vo, out_ctx *oc, const char **dir) {
    static const struct option opts[] = {
        {"deep", no_argument, 0, 'd'},           {"recompute", required_argument, 0, 'r'},
        {"seed", required_argument, 0, 's'},     {"tolerance", required_argument, 0, 't'},
        {"json", no_argument, 0, 'j'},           {"progress", no_argument, 0, 'p'},
        {"help", no_argument, 0, 'h'},           {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};
    int c;
    long v;
    double dv;
    while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
        switch (c) {
        case 'd': vo->deep = 1; break;
        case 'r':
            if (xtts_parse_long(optarg, 0, 1000000000L, &v)) {
                fprintf(stderr, "xtts-cache-verify: --recompute: '%s' is not a count\n", optarg);
                return 1;
            }
            vo->recompute = (uint64_t)v;
            break;
        case 's':
            if (xtts_parse_long(optarg, 0, (long)(~0UL >> 1), &v)) {
                fprintf(stderr, "xtts-cache-verify: --seed: '%s' is not a number\n", optarg);
                return 1;
            }
            vo->seed = (uint64_t)v;
            break;
        case 't':
            if (xtts_parse_double(optarg, 0, 1e9, &dv)) {
                fprintf(stderr, "xtts-cache-verify: --tolerance: '%s' is not a number\n", optarg);
                return 1;
            }
            vo->recompute_tol = dv;
            break;
        case 'j': oc->json = 1; break;
        case 'p': vo->progress = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V': printf("xtts-cache-verify %s\n", XTTS_VERSION); return 0;
        default: xtts_usage_hint("xtts-cache-verify"); return 1;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "xtts-cache-verify: expected one cache directory\n");
        xtts_usage_hint("xtts-cache-verify");
        return 1;
    }
    *dir = argv[optind];
    return GO_ON;
}

/* --json: the report and the faults collected as one object. */
static void report_json(const char *dir, const xtts_verify_options *vo, const xtts_verify_report *rep, int ok,
                        json_t *faults) {
    json_t *j = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:b, s:o}",
                          "dir", dir, "ok", ok, "records", (json_int_t)rep->manifest_records, "records_checked",
                          (json_int_t)rep->records_checked, "records_ok", (json_int_t)rep->records_ok, "shards",
                          (json_int_t)rep->shards, "shards_ok", (json_int_t)rep->shards_ok, "faults",
                          (json_int_t)rep->faults, "train", (json_int_t)rep->train, "val", (json_int_t)rep->val,
                          "frames", (json_int_t)rep->frames, "tokens", (json_int_t)rep->tokens, "ids",
                          (json_int_t)rep->ids, "digest", rep->digest, "digest_complete", rep->digest_complete,
                          "fault_list", faults);
    json_object_set_new(j, "codes_dirs", json_integer((json_int_t)rep->codes_dirs));
    json_object_set_new(j, "codes_records", json_integer((json_int_t)rep->codes_records));
    if (j && vo->recompute) {
        json_object_set_new(j, "recomputed", json_integer((json_int_t)rep->recomputed));
        json_object_set_new(j, "recompute_failed", json_integer((json_int_t)rep->recompute_failed));
        json_object_set_new(j, "recompute_max_abs", json_real(rep->recompute_max_abs));
    }
    if (j) {
        json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
        putchar('\n');
        json_decref(j);
    }
}

/* The summary after the fault lines: the counts when the cache could be read, the digest,
 * the result. */
static void report_text(const char *dir, const xtts_verify_options *vo, const xtts_verify_report *rep,
                        xtts_status st, int ok) {
    printf("cache: %s\n", dir);
    if (st == XTTS_OK || rep->shards) {
        printf("shards: %llu listed, %llu readable\n", (unsigned long long)rep->shards,
               (unsigned long long)rep->shards_ok);
        printf("records: %llu in manifest, %llu decoded, %llu without fault\n",
               (unsigned long long)rep->manifest_records, (unsigned long long)rep->records_checked,
               (unsigned long long)rep->records_ok);
        printf("ids: %llu\n", (unsigned long long)rep->ids);
        printf("splits: train %llu, val %llu\n", (unsigned long long)rep->train, (unsigned long long)rep->val);
        printf("frames: %llu, tokens: %llu\n", (unsigned long long)rep->frames, (unsigned long long)rep->tokens);
        if (rep->codes_dirs)
            printf("audio codes: %llu directories, %llu records' codes whole, %llu entries\n",
                   (unsigned long long)rep->codes_dirs, (unsigned long long)rep->codes_records,
                   (unsigned long long)rep->codes_entries);
        if (vo->recompute)
            printf("recomputed: %llu, failed %llu, largest difference %g\n", (unsigned long long)rep->recomputed,
                   (unsigned long long)rep->recompute_failed, rep->recompute_max_abs);
    }
    printf("faults: %llu\n", (unsigned long long)rep->faults);
    if (rep->digest_complete) printf("digest: %s\n", rep->digest);
    else if (!rep->digest[0]) printf("digest: none (the cache could not be read)\n");
    else printf("digest: %s (incomplete: not every record could be read)\n", rep->digest);
    printf("result: %s\n", ok ? "OK" : "FAILED");
}

int main(int argc, char **argv) {
    xtts_cache_guard_faults(); /* damaged shards become errors, not signals */
    xtts_check_stdout_at_exit("xtts-cache-verify");
    xtts_verify_options vo;
    xtts_verify_options_defaults(&vo);
    vo.recompute_fn = xtts_recompute_record;
    out_ctx oc = {0, NULL};
    const char *dir;
    int rc = parse_args(argc, argv, &vo, &oc, &dir);
    if (rc != GO_ON) return rc;
    if (oc.json && !(oc.faults = json_array())) return 2;
    vo.on_fault = on_fault;
    vo.ctx = &oc;
    xtts_verify_report rep;
    xtts_error err;
    xtts_error_clear(&err);
    xtts_status st = xtts_verify_cache(dir, &vo, &rep, &err);
    int ok = st == XTTS_OK && rep.faults == 0;
    if (oc.json) report_json(dir, &vo, &rep, ok, oc.faults);
    else report_text(dir, &vo, &rep, st, ok);
    return ok ? 0 : 2;
}
