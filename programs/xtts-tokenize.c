/* xtts-tokenize — transcript list to token stream (docs/xtts-tokenize.md). Parses options,
 * calls xtts_tokenize_run(), reports. */
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xtts_common.h"
#include "prep/text/normalize/normalize.h"
#include "prep/tokenize/tokenize_run.h"

static const char usage[] =
    "usage: xtts-tokenize [OPTIONS] [METADATA]\n"
    "Read a transcript list (default stdin) and write the token stream (formats/tokens.md) on stdout.\n"
    "\n"
    "  -f, --format NAME          auto (default: recognised from the path and first lines, and said\n"
    "                             on stderr), ljspeech, tsv, coqui, vctk, libritts, commonvoice,\n"
    "                             mailabs, nemo, lhotse (docs/datasets.md). METADATA is a file or a\n"
    "                             dataset directory (a tree, or a folder with metadata.csv, or with\n"
    "                             metadata_train.csv and metadata_eval.csv read as train and val);\n"
    "                             ljspeech: id|text|normalized_text, audio <dir>/wavs/<id>.wav;\n"
    "                             tsv: a header row naming audio and text columns (and id,\n"
    "                             speaker, lang, split; aliases in docs/datasets.md)\n"
    "      --audio-dir DIR        ljspeech: audio at DIR/<id>.wav; others: relative paths resolve here\n"
    "      --text normalized|original  libritts: which transcript (default normalized)\n"
    "      --vctk-mic mic1|mic2   VCTK 0.92 (wav48_silence_trimmed): which microphone (default mic1)\n"
    "      --text-column NAME     the text where a layout has several: a header column (default the\n"
    "                             one named text), text or normalized_text (ljspeech), original_text\n"
    "                             (libritts), a JSON key (nemo, lhotse)\n"
    "  -l, --lang CODE|auto       force a language, or detect per record (default auto; a language\n"
    "                             field in the input wins over detection). Any language the\n"
    "                             tokenizer serves (bytes: any ISO 639 code; phonemes: espeak-ng's\n"
    "                             voices; an XTTS vocabulary: its [xx] tokens); detection covers\n"
    "                             en es fr de it pt pl tr ru nl cs ar zh-cn hu ko ja hi\n"
    "      --val-list FILE        ids (one a line) of the val split\n"
    "      --test-list FILE       ids (one a line) of the test split\n"
    "  -t, --tokenizer NAME       bytes (default, built in), bpe (needs --vocab), phonemes (espeak-ng)\n"
    "      --vocab FILE           tokenizer.json for --tokenizer bpe (--vocab alone implies bpe)\n"
    "      --max-tokens N         reject records with more than N ids (default 512)\n"
    "      --max-chars auto|N     reject records longer than XTTS's character limit of their\n"
    "                             language (auto: en 250, de 253, fr 273, es 239, it 213, pt 203,\n"
    "                             pl 224, zh 82, ar 166, cs 186, ru 182, nl 251, tr 226, ja 71,\n"
    "                             hu 224, ko 95, others 250) or than N characters (code points of\n"
    "                             the text as given); without it they are counted in the summary\n"
    "      --normalize MODE       xtts: Coqui XTTS's own text cleaning (default with an XTTS\n"
    "                             vocabulary); spoken: our reading of numbers, abbreviations and\n"
    "                             symbols (default otherwise); none: Unicode and whitespace only\n"
    "      --unify                xtts: NFC, quotes, dashes, ellipses and invisible characters\n"
    "                             unified before Coqui's steps, as spoken and none do (changes ids)\n"
    "      --no-expand            same as --normalize none\n"
    "      --allow-unk            keep records whose ids hold [UNK] (XTTS vocabularies reject them)\n"
    "      --lowercase yes|no     override the tokenizer's choice\n"
    "      --part K/N             only records whose index i has i % N == K (alias --shard)\n"
    "  -j, --threads N            worker threads (output is the same whatever N is)\n"
    "      --rejects FILE         write one 'id<TAB>reason' line per rejected record\n"
    "      --exclude FILE         leave out the records xtts-cache-report's TSV flags (or a list of\n"
    "                             ids, one per line); counted as excluded in the summary\n"
    "      --exclude-flags A,B    the flags of the TSV that exclude a record (default: every flag)\n"
    "      --strict               exit 2 instead of 3 when any record is rejected\n"
    "  -q, --quiet                no per-record reject lines on stderr\n"
    "  -v, --verbose              a warning line per record over XTTS's character limit\n"
    "      --keep-text            add the original transcript as a 7th field (stored by xtts-melcache)\n"
    "      --progress             show the progress line even when stderr is not a terminal\n"
    "  -h, --help, -V, --version\n"
    "\n"
    "Exit: 0 ok, 1 usage, 2 input or environment error, 3 finished with rejected records.\n";

/* main's answer from a step that may end the program: go on, or exit with the code. */
enum { GO_ON = -1 };

/* What the command line asks for besides the run's options. */
typedef struct {
    const char *tokenizer, *vocab; /* tokenizer NULL: bpe with a vocab, else bytes */
    int strict, allow_unk;
    const char *exclude_path;      /* --exclude */
    uint32_t exclude_flags;        /* --exclude-flags (default every flag) */
} tokenize_cli;

/* One option of the command line: GO_ON, or the exit code (0 after --help and --version). */
static int parse_option(int c, char *arg, xtts_tokenize_options *o, tokenize_cli *cli) {
    long v;
    switch (c) {
    case 'f':
    {
        int f = xtts_meta_format_parse(arg);
        if (f == -2) { fprintf(stderr, "xtts-tokenize: --format must be one of: %s\n", xtts_meta_format_list()); return 1; }
        o->format = (xtts_meta_format)f;
        break;
    }
    case 1001: o->val_list = arg; break;
    case 1002: o->test_list = arg; break;
    case 1003:
        if (!strcmp(arg, "original")) o->original_text = 1;
        else if (!strcmp(arg, "normalized")) o->original_text = 0;
        else { fprintf(stderr, "xtts-tokenize: --text must be normalized or original\n"); return 1; }
        break;
    case 1004:
        if (strcmp(arg, "mic1") && strcmp(arg, "mic2")) { fprintf(stderr, "xtts-tokenize: --vctk-mic must be mic1 or mic2\n"); return 1; }
        o->vctk_mic = arg;
        break;
    case 1008: o->text_column = arg; break;
    case 'a': o->audio_dir = arg; break;
    case 'l':
        /* checked against the tokenizer by xtts_tokenize_run */
        o->lang = -1;
        o->lang_tag = strcmp(arg, "auto") ? arg : NULL;
        break;
    case 't': cli->tokenizer = arg; break;
    case 1005: cli->vocab = arg; break;
    case 'm':
        if (xtts_parse_long(arg, 1, 1 << 20, &v)) { fprintf(stderr, "xtts-tokenize: --max-tokens must be in 1..1048576\n"); return 1; }
        o->max_tokens = (int)v;
        break;
    case 1006:
        if (!strcmp(arg, "auto")) o->max_chars = -1;
        else if (xtts_parse_long(arg, 1, 1 << 20, &v)) { fprintf(stderr, "xtts-tokenize: --max-chars must be auto or in 1..1048576\n"); return 1; }
        else o->max_chars = (int)v;
        break;
    case 1007: o->unify = 1; break;
    case 'E': o->expand = 0; break;
    case 'N':
        if (!strcmp(arg, "xtts")) o->normalize = XTTS_NORM_XTTS;
        else if (!strcmp(arg, "spoken")) o->normalize = XTTS_NORM_SPOKEN;
        else if (!strcmp(arg, "none")) o->normalize = XTTS_NORM_NONE;
        else { fprintf(stderr, "xtts-tokenize: --normalize must be xtts, spoken or none\n"); return 1; }
        break;
    case 'U': cli->allow_unk = 1; break;
    case 'L':
        if (!strcmp(arg, "yes")) o->lowercase = 1;
        else if (!strcmp(arg, "no")) o->lowercase = 0;
        else { fprintf(stderr, "xtts-tokenize: --lowercase must be yes or no\n"); return 1; }
        break;
    case 's': {
        char *slash = strchr(arg, '/');
        long k, n;
        if (!slash) { fprintf(stderr, "xtts-tokenize: --part must be K/N\n"); return 1; }
        *slash = 0;
        if (xtts_parse_long(arg, 0, 1 << 20, &k) || xtts_parse_long(slash + 1, 1, 1 << 20, &n) || k >= n) {
            fprintf(stderr, "xtts-tokenize: --part K/N needs 0 <= K < N\n");
            return 1;
        }
        o->shard_k = (int)k;
        o->shard_n = (int)n;
        break;
    }
    case 'j':
        if (xtts_parse_long(arg, 1, 1024, &v)) { fprintf(stderr, "xtts-tokenize: -j must be in 1..1024\n"); return 1; }
        o->threads = (int)v;
        break;
    case 'r': o->rejects_path = arg; break;
    case 'S': cli->strict = 1; break;
    case 'q': o->quiet = 1; break;
    case 'v': o->verbose = 1; break;
    case 'K': o->keep_text = 1; break;
    case 'P': o->progress = 1; break;
    case 1009: cli->exclude_path = arg; break;
    case 1010: {
        xtts_error e;
        if (xtts_exclude_parse_flags(arg, &cli->exclude_flags, &e)) {
            fprintf(stderr, "xtts-tokenize: %s\n", e.msg);
            return 1;
        }
        break;
    }
    case 'h': fputs(usage, stdout); return 0;
    case 'V': printf("xtts-tokenize %s\n", XTTS_VERSION); return 0;
    default: xtts_usage_hint("xtts-tokenize"); return 1;
    }
    return GO_ON;
}

/* The command line into o and cli: GO_ON, or the exit code. */
static int parse_args(int argc, char **argv, xtts_tokenize_options *o, tokenize_cli *cli) {
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'}, {"audio-dir", required_argument, 0, 'a'},
        {"lang", required_argument, 0, 'l'},   {"tokenizer", required_argument, 0, 't'},
        {"vocab", required_argument, 0, 1005}, {"max-tokens", required_argument, 0, 'm'},
        {"no-expand", no_argument, 0, 'E'},    {"lowercase", required_argument, 0, 'L'},
        {"shard", required_argument, 0, 's'},  {"part", required_argument, 0, 's'},
        {"threads", required_argument, 0, 'j'}, {"val-list", required_argument, 0, 1001},
        {"test-list", required_argument, 0, 1002}, {"text", required_argument, 0, 1003},
        {"vctk-mic", required_argument, 0, 1004}, {"max-chars", required_argument, 0, 1006},
        {"unify", no_argument, 0, 1007},       {"verbose", no_argument, 0, 'v'},
        {"rejects", required_argument, 0, 'r'}, {"strict", no_argument, 0, 'S'},
        {"quiet", no_argument, 0, 'q'},        {"progress", no_argument, 0, 'P'},
        {"normalize", required_argument, 0, 'N'}, {"allow-unk", no_argument, 0, 'U'},
        {"help", no_argument, 0, 'h'},         {"version", no_argument, 0, 'V'},
        {"keep-text", no_argument, 0, 'K'},    {"text-column", required_argument, 0, 1008},
        {"exclude", required_argument, 0, 1009}, {"exclude-flags", required_argument, 0, 1010},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "f:l:t:j:qvhV", longopts, NULL)) != -1) {
        int rc = parse_option(c, optarg, o, cli);
        if (rc != GO_ON) return rc;
    }
    if (optind + 1 < argc) { fprintf(stderr, "xtts-tokenize: one METADATA file at most\n"); xtts_usage_hint("xtts-tokenize"); return 1; }
    if (optind < argc) o->input = argv[optind];
    return GO_ON;
}

/* The tokenizer the options name (--vocab alone names bpe), the run over it to standard output,
 * the tokenizer closed. */
static xtts_status run(xtts_tokenize_options *o, const tokenize_cli *cli, xtts_tokenize_stats *s, xtts_error *err) {
    xtts_tokenizer *tok = NULL;
    xtts_exclude *ex = NULL;
    const char *name = cli->tokenizer ? cli->tokenizer : cli->vocab ? "bpe" : "bytes";
    xtts_status st = cli->exclude_path ? xtts_exclude_load(cli->exclude_path, cli->exclude_flags, &ex, err) : XTTS_OK;
    if (!st) st = xtts_tokenizer_open(name, cli->vocab, &tok, err);
    if (st) {
        xtts_exclude_free(ex);
        return st;
    }
    o->exclude = ex;
    st = xtts_tokenizer_set_threads(tok, o->threads, err);
    if (!st) {
        xtts_tokenizer_set_allow_unk(tok, cli->allow_unk);
        o->tok = tok;
        st = xtts_tokenize_run(o, stdout, s, err);
        if (st && ferror(stdout)) xtts_stdout_error_reported(); /* the error printed is that one */
    }
    xtts_tokenizer_close(tok);
    xtts_exclude_free(ex);
    o->exclude = NULL;
    return st;
}

/* The summary on stderr; the exit code. */
static int report(const xtts_tokenize_stats *s, const xtts_tokenize_options *o, const tokenize_cli *cli) {
    int strict = cli->strict;
    fprintf(stderr, "xtts-tokenize: %zu records read, %zu written, %zu rejected", s->selected, s->written, s->rejected);
    if (cli->exclude_path) fprintf(stderr, ", %zu excluded", s->excluded);
    fprintf(stderr, ", %zu over XTTS's character limit of their language", s->over_char_limit);
    if (s->over_char_limit && !o->verbose && !o->max_chars) fputs(" (-v names them, --max-chars auto rejects them)", stderr);
    if (s->majority_lang >= 0)
        fprintf(stderr, ", majority language %s (%zu records decided by the dataset/speaker prior)", xtts_lang_codes[s->majority_lang], s->lang_fallback);
    fputc('\n', stderr);
    if (s->digits_kept)
        fprintf(stderr, "xtts-tokenize: warning: %zu records in languages without number expansion kept their digits\n", s->digits_kept);
    if (s->rejected) return strict ? 2 : 3;
    return 0;
}

int main(int argc, char **argv) {
    xtts_check_stdout_at_exit("xtts-tokenize");
    /* many small per-record buffers: keep freed memory instead of trimming the heap each time */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    xtts_tokenize_options o;
    xtts_tokenize_options_defaults(&o);
    tokenize_cli cli = {.tokenizer = NULL, .exclude_flags = XTTS_EXCLUDE_ALL_FLAGS};
    int rc = parse_args(argc, argv, &o, &cli);
    if (rc != GO_ON) return rc;
    if ((!o.input || !strcmp(o.input, "-")) && isatty(STDIN_FILENO))
        fputs("xtts-tokenize: reading the metadata from standard input (a terminal): end it with Ctrl-D, stop with "
              "Ctrl-C, or give a metadata file or dataset folder: xtts-tokenize [OPTIONS] METADATA\n",
              stderr);
    xtts_error err;
    xtts_tokenize_stats s;
    xtts_status st = run(&o, &cli, &s, &err);
    if (st) {
        xtts_error_print("xtts-tokenize", &err);
        return xtts_exit_code(st);
    }
    return report(&s, &o, &cli);
}
