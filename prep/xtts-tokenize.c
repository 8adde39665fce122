/* xtts-tokenize — transcript list to token stream (docs/xtts-tokenize.md). Parses options,
 * calls xtts_tokenize_run(), reports. */
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xtts_common.h"
#include "prep/tokenize_run.h"

static const char usage[] =
    "usage: xtts-tokenize [OPTIONS] [METADATA]\n"
    "Read a transcript list (default stdin) and write the token stream (formats/tokens.md) on stdout.\n"
    "\n"
    "  -f, --format ljspeech|tsv  ljspeech (default): id|text|normalized_text; the third column is\n"
    "                             used when present and non-empty, else the second. Audio at\n"
    "                             <metadata dir>/wavs/<id>.wav. tsv: a header row naming the columns,\n"
    "                             audio and text required, id speaker lang optional\n"
    "      --audio-dir DIR        ljspeech: audio at DIR/<id>.wav; tsv: relative paths resolve here\n"
    "  -l, --lang CODE|auto       force a language, or detect per record (default auto; a tsv lang\n"
    "                             column wins over detection). Codes: en es fr de it pt pl tr ru nl\n"
    "                             cs ar zh-cn hu ko ja hi\n"
    "  -t, --tokenizer NAME       bytes (default, built in), bpe (needs --vocab), phonemes (espeak-ng)\n"
    "      --vocab FILE           tokenizer.json for --tokenizer bpe\n"
    "      --max-tokens N         reject records with more than N ids (default 512)\n"
    "      --no-expand            do not expand numbers, abbreviations and symbols\n"
    "      --lowercase yes|no     override the tokenizer's choice\n"
    "      --shard K/N            only records whose index i has i % N == K\n"
    "  -j, --threads N            worker threads (output is the same whatever N is)\n"
    "      --rejects FILE         write one 'id<TAB>reason' line per rejected record\n"
    "      --strict               exit 2 instead of 3 when any record is rejected\n"
    "  -q, --quiet                no per-record reject lines on stderr\n"
    "      --progress             show the progress line even when stderr is not a terminal\n"
    "  -h, --help, -V, --version\n"
    "\n"
    "Exit: 0 ok, 1 usage, 2 input or environment error, 3 finished with rejected records.\n";

int main(int argc, char **argv) {
    xtts_check_stdout_at_exit("xtts-tokenize");
    /* many small per-record buffers: keep freed memory instead of trimming the heap each time */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    xtts_tokenize_opts o;
    xtts_tokenize_opts_init(&o);
    const char *tokenizer = "bytes", *vocab = NULL;
    int strict = 0;
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'}, {"audio-dir", required_argument, 0, 'a'},
        {"lang", required_argument, 0, 'l'},   {"tokenizer", required_argument, 0, 't'},
        {"vocab", required_argument, 0, 'v'},  {"max-tokens", required_argument, 0, 'm'},
        {"no-expand", no_argument, 0, 'E'},    {"lowercase", required_argument, 0, 'L'},
        {"shard", required_argument, 0, 's'},  {"threads", required_argument, 0, 'j'},
        {"rejects", required_argument, 0, 'r'}, {"strict", no_argument, 0, 'S'},
        {"quiet", no_argument, 0, 'q'},        {"progress", no_argument, 0, 'P'},
        {"help", no_argument, 0, 'h'},         {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};
    int c;
    long v;
    while ((c = getopt_long(argc, argv, "f:l:t:j:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (!strcmp(optarg, "ljspeech")) o.format = XTTS_META_LJSPEECH;
            else if (!strcmp(optarg, "tsv")) o.format = XTTS_META_TSV;
            else { fprintf(stderr, "xtts-tokenize: --format must be ljspeech or tsv\n"); return 1; }
            break;
        case 'a': o.audio_dir = optarg; break;
        case 'l':
            if (!strcmp(optarg, "auto")) o.lang = -1;
            else if ((o.lang = xtts_lang_index(optarg)) < 0) {
                fprintf(stderr, "xtts-tokenize: --lang %s is not an XTTS language (en es fr de it pt pl tr ru nl cs ar zh-cn hu ko ja hi, or auto)\n", optarg);
                return 1;
            }
            break;
        case 't': tokenizer = optarg; break;
        case 'v': vocab = optarg; break;
        case 'm':
            if (xtts_parse_long(optarg, 1, 1 << 20, &v)) { fprintf(stderr, "xtts-tokenize: --max-tokens must be in 1..1048576\n"); return 1; }
            o.max_tokens = (int)v;
            break;
        case 'E': o.expand = 0; break;
        case 'L':
            if (!strcmp(optarg, "yes")) o.lowercase = 1;
            else if (!strcmp(optarg, "no")) o.lowercase = 0;
            else { fprintf(stderr, "xtts-tokenize: --lowercase must be yes or no\n"); return 1; }
            break;
        case 's': {
            char *slash = strchr(optarg, '/');
            long k, n;
            if (!slash) { fprintf(stderr, "xtts-tokenize: --shard must be K/N\n"); return 1; }
            *slash = 0;
            if (xtts_parse_long(optarg, 0, 1 << 20, &k) || xtts_parse_long(slash + 1, 1, 1 << 20, &n) || k >= n) {
                fprintf(stderr, "xtts-tokenize: --shard K/N needs 0 <= K < N\n");
                return 1;
            }
            o.shard_k = (int)k;
            o.shard_n = (int)n;
            break;
        }
        case 'j':
            if (xtts_parse_long(optarg, 1, 1024, &v)) { fprintf(stderr, "xtts-tokenize: -j must be in 1..1024\n"); return 1; }
            o.threads = (int)v;
            break;
        case 'r': o.rejects_path = optarg; break;
        case 'S': strict = 1; break;
        case 'q': o.quiet = 1; break;
        case 'P': o.progress = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        case 'V': printf("xtts-tokenize %s\n", XTTS_VERSION); return 0;
        default: fputs(usage, stderr); return 1;
        }
    }
    if (optind + 1 < argc) { fprintf(stderr, "xtts-tokenize: one METADATA file at most\n%s", usage); return 1; }
    if (optind < argc) o.input = argv[optind];

    xtts_error err;
    xtts_tokenizer *tok = NULL;
    xtts_status st = xtts_tokenizer_open(tokenizer, vocab, &tok, &err);
    if (st) { xtts_error_print("xtts-tokenize", &err); return xtts_exit_code(st); }
    st = xtts_tokenizer_set_threads(tok, o.threads, &err);
    if (st) { xtts_error_print("xtts-tokenize", &err); xtts_tokenizer_free(tok); return xtts_exit_code(st); }
    o.tok = tok;
    xtts_tokenize_stats s;
    st = xtts_tokenize_run(&o, stdout, &s, &err);
    xtts_tokenizer_free(tok);
    if (st) { xtts_error_print("xtts-tokenize", &err); return xtts_exit_code(st); }
    fprintf(stderr, "xtts-tokenize: %zu records read, %zu written, %zu rejected", s.selected, s.written, s.rejected);
    if (s.majority_lang >= 0)
        fprintf(stderr, ", majority language %s (%zu unsure records given it)", xtts_lang_codes[s.majority_lang], s.lang_fallback);
    fputc('\n', stderr);
    if (s.digits_kept)
        fprintf(stderr, "xtts-tokenize: warning: %zu records in languages without number expansion kept their digits\n", s.digits_kept);
    if (s.rejected) return strict ? 2 : 3;
    return 0;
}
