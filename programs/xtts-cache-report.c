/* xtts-cache-report — the dataset quality report of a cache from its stored metrics
 * (docs/xtts-cache-report.md). Parses options, calls cache/audit/report.h, reports. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cache/store/read/reader.h"
#include "cache/audit/report.h"
#include "common/xtts_common.h"

static const char *PROG = "xtts-cache-report";

static const char usage_text[] =
    "usage: xtts-cache-report [OPTIONS] DIR\n"
    "The dataset quality report of a cache, from the quality metrics xtts-melcache stored with\n"
    "every record: a summary on stdout (records and hours per flag and per speaker, and what is\n"
    "left when the flagged records are dropped), and on request a TSV, JSON and an HTML page.\n"
    "\n"
    "      --tsv FILE         one line per record: id, flags (comma-separated, or -), the earlier\n"
    "                         record of the same audio (or -), speaker, metrics; what --exclude of\n"
    "                         xtts-tokenize and xtts-melcache reads ('-': stdout)\n"
    "      --json FILE        the summary and every record as one JSON object ('-': stdout)\n"
    "      --html FILE        one self-contained page: distributions, speakers, and each flag's worst\n"
    "                         records with their mel and, with a stored waveform, a player\n"
    "      --thresholds FILE  'key = value' lines over the default thresholds (docs/quality.md)\n"
    "      --worst N          records per flag on the HTML page (default 20, at most 1000)\n"
    "      --progress         a progress line on stderr even when it is not a terminal\n"
    "  -q, --quiet            no summary on stdout\n"
    "  -h, --help             this text\n"
    "  -V, --version          print the version\n"
    "Exit: 0 ok; 1 usage error (also a bad thresholds file); 2 the cache cannot be read, has no\n"
    "metrics, or a record's metrics are missing or damaged.\n";

enum { GO_ON = -1 };

typedef struct {
    const char *dir, *tsv, *json, *html, *thresholds;
    int quiet;
    xtts_report_options ro;
} report_cli;

#define BAD(...) do { fprintf(stderr, "%s: ", PROG); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); xtts_usage_hint(PROG); return 1; } while (0)

static int parse_args(int argc, char **argv, report_cli *cli) {
    static const struct option opts[] = {
        {"tsv", required_argument, 0, 't'},        {"json", required_argument, 0, 'j'},
        {"html", required_argument, 0, 'H'},       {"thresholds", required_argument, 0, 'T'},
        {"worst", required_argument, 0, 'w'},      {"progress", no_argument, 0, 'p'},
        {"quiet", no_argument, 0, 'q'},            {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},          {0, 0, 0, 0}};
    int c;
    long v;
    while ((c = getopt_long(argc, argv, "qhV", opts, NULL)) != -1) {
        switch (c) {
        case 't': cli->tsv = optarg; break;
        case 'j': cli->json = optarg; break;
        case 'H': cli->html = optarg; break;
        case 'T': cli->thresholds = optarg; break;
        case 'w': if (xtts_parse_long(optarg, 1, 1000, &v)) BAD("--worst %s: expected 1..1000", optarg); cli->ro.worst_per_flag = (size_t)v; break;
        case 'p': cli->ro.progress = 1; break;
        case 'q': cli->quiet = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V': printf("%s %s\n", PROG, XTTS_VERSION); return 0;
        default: xtts_usage_hint(PROG); return 1;
        }
    }
    if (optind + 1 != argc) BAD("one cache directory expected (got %d)", argc - optind);
    cli->dir = argv[optind];
    int to_stdout = (cli->tsv && !strcmp(cli->tsv, "-")) + (cli->json && !strcmp(cli->json, "-")) +
                    (cli->html && !strcmp(cli->html, "-"));
    if (to_stdout > 1) BAD("only one of --tsv, --json and --html can write to standard output");
    if (to_stdout) cli->quiet = 1; /* stdout holds that file alone */
    if (cli->thresholds) {
        xtts_error e;
        xtts_status st = xtts_quality_thresholds_load(cli->thresholds, &cli->ro.thresholds, &e);
        if (st) {
            xtts_error_print(PROG, &e);
            return st == XTTS_EUSAGE ? 1 : 2;
        }
    }
    return GO_ON;
}

typedef xtts_status (*writer_fn)(xtts_report *r, FILE *f, xtts_error *err);

/* One output file (atomically: a temporary file renamed into place), or stdout for "-". */
static xtts_status write_out(xtts_report *r, const char *path, writer_fn fn, xtts_error *err) {
    if (!strcmp(path, "-")) return fn(r, stdout, err);
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return xtts_error_set(err, XTTS_ERANGE, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return xtts_error_set(err, XTTS_EIO, "%s: cannot write: %m", tmp);
    xtts_status st = fn(r, f, err);
    if (fclose(f) && !st) st = xtts_error_set(err, XTTS_EIO, "%s: write failed", tmp);
    if (!st && rename(tmp, path)) st = xtts_error_set(err, XTTS_EIO, "%s: cannot rename into place: %m", path);
    if (st) {
        remove(tmp);
        if (err && !strstr(err->msg, path)) {
            char m[XTTS_ERRMSG_MAX];
            snprintf(m, sizeof m, "%s", err->msg);
            xtts_error_set(err, st, "%s: %s", path, m);
        }
    }
    return st;
}

int main(int argc, char **argv) {
    xtts_check_stdout_at_exit(PROG);
    report_cli cli = {0};
    xtts_report_options_defaults(&cli.ro);
    int rc = parse_args(argc, argv, &cli);
    if (rc != GO_ON) return rc;
    xtts_cache_guard_faults();
    xtts_error err;
    xtts_error_clear(&err);
    xtts_report *r = NULL;
    xtts_status st = xtts_report_open(cli.dir, &cli.ro, &r, &err);
    if (!st && !cli.quiet) st = xtts_report_summary(r, stdout, &err);
    if (!st && cli.tsv) st = write_out(r, cli.tsv, xtts_report_tsv, &err);
    if (!st && cli.json) st = write_out(r, cli.json, xtts_report_json, &err);
    if (!st && cli.html) st = write_out(r, cli.html, xtts_report_html, &err);
    xtts_report_close(r);
    if (st) {
        xtts_error_print(PROG, &err);
        return st == XTTS_EUSAGE ? 2 : xtts_exit_code(st);
    }
    return 0;
}
