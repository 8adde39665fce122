/* xtts-segment — long recordings and the text that was read, cut into training clips
 * (docs/xtts-segment.md). Parses options, calls xtts_segment_run(), reports. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xtts_common.h"
#include "prep/segment/segment.h"

static const char usage[] =
    "usage: xtts-segment --out DIR [OPTIONS] AUDIO TEXT\n"
    "       xtts-segment --out DIR [OPTIONS] --pairs LIST.tsv\n"
    "Align a long recording with the text that was read (UTF-8 prose) and cut it into clips at\n"
    "pauses: DIR/wavs/<id>.wav, DIR/metadata.csv (LJSpeech id|text|text, for xtts-tokenize) and\n"
    "DIR/segments.tsv (id, source, start, end, text, score). Text that was not read and speech\n"
    "that is not in the text are left out and named on stderr.\n"
    "\n"
    "  -o, --out DIR           where the clips and lists go (created)\n"
    "  -l, --lang CODE         the text's language (default: detected from the text); a LIST's\n"
    "                          third column wins\n"
    "      --pairs LIST.tsv    many recordings: AUDIO<TAB>TEXT[<TAB>LANG] a line\n"
    "      --min-seconds S     shortest clip (default 2)\n"
    "      --max-seconds S     longest clip (default 11.5; XTTS's GPT trainer drops clips over 11.6 s)\n"
    "      --pad S             silence kept before and after a clip's speech, never past the\n"
    "                          middle of its pause (default 0.2)\n"
    "      --min-score X       leave out sentences whose alignment score is below X (0..1, default 0.6)\n"
    "      --max-chars N       longest clip text in characters (default: the language's XTTS limit)\n"
    "      --sample-rate HZ    the clips' rate (default: the source's)\n"
    "  -j, --threads N         threads: recordings side by side, and a recording's reference\n"
    "                          beside its decoding (default 1)\n"
    "      --progress          the progress line even when stderr is not a terminal\n"
    "  -h, --help              show this help and exit\n"
    "  -V, --version           show the version and exit\n"
    "\n"
    "Exit: 0 done; 3 done with some text or audio left out; 1 usage; 2 a file refused.\n";

static int parse_num(const char *opt, const char *arg, double lo, double hi, double *out) {
    if (xtts_parse_double(arg, lo, hi, out) == 0) return 0;
    fprintf(stderr, "xtts-segment: %s: expected a number in %g..%g, not '%s'\n", opt, lo, hi, arg);
    return 1;
}

static xtts_status read_pairs(const char *list, xtts_segment_pair **pairs, size_t *n, xtts_error *err) {
    char *data = NULL;
    size_t len = 0;
    xtts_status st = xtts_read_file(list, (size_t)64 << 20, &data, &len, err);
    if (!st) st = xtts_segment_pairs_parse(data, len, list, pairs, n, err);
    free(data);
    return st;
}

int main(int argc, char **argv) {
    xtts_check_stdout_at_exit("xtts-segment");
    xtts_segment_options o;
    xtts_segment_options_default(&o);
    const char *pairs_list = NULL;
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},         {"lang", required_argument, NULL, 'l'},
        {"pairs", required_argument, NULL, 'P'},       {"min-seconds", required_argument, NULL, 'm'},
        {"max-seconds", required_argument, NULL, 'M'}, {"pad", required_argument, NULL, 'p'},
        {"min-score", required_argument, NULL, 's'},   {"max-chars", required_argument, NULL, 'c'},
        {"sample-rate", required_argument, NULL, 'r'}, {"threads", required_argument, NULL, 'j'},
        {"progress", no_argument, NULL, 'g'},          {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},           {NULL, 0, NULL, 0}};
    int c;
    double v;
    while ((c = getopt_long(argc, argv, "o:l:j:hV", opts, NULL)) != -1) {
        const char *name = argv[optind - 1];
        switch (c) {
        case 'o': o.out_dir = optarg; break;
        case 'l':
            snprintf(o.lang, sizeof o.lang, "%s", optarg);
            if (strlen(optarg) >= sizeof o.lang || !xtts_lang_tag_normalize(o.lang)) {
                fprintf(stderr, "xtts-segment: --lang: not a language code: '%s'\n", optarg);
                return 1;
            }
            break;
        case 'P': pairs_list = optarg; break;
        case 'm': if (parse_num(name, optarg, 0, 60, &o.min_seconds)) return 1; break;
        case 'M': if (parse_num(name, optarg, 0.5, 600, &o.max_seconds)) return 1; break;
        case 'p': if (parse_num(name, optarg, 0, 2, &o.pad_seconds)) return 1; break;
        case 's': if (parse_num(name, optarg, 0, 1, &o.min_score)) return 1; break;
        case 'c': if (parse_num(name, optarg, 1, 100000, &v)) return 1; o.max_chars = (int)v; break;
        case 'r': if (parse_num(name, optarg, 8000, 192000, &v)) return 1; o.sample_rate = (int)v; break;
        case 'j': if (parse_num(name, optarg, 1, 4096, &v)) return 1; o.threads = (int)v; break;
        case 'g': o.progress = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        case 'V': printf("xtts-segment %s\n", XTTS_VERSION); return 0;
        default: xtts_usage_hint("xtts-segment"); return 1;
        }
    }
    int n_args = argc - optind;
    if ((pairs_list && n_args != 0) || (!pairs_list && n_args != 2)) {
        fprintf(stderr, "xtts-segment: expected AUDIO and TEXT, or --pairs LIST.tsv\n");
        xtts_usage_hint("xtts-segment");
        return 1;
    }
    xtts_error err;
    xtts_error_clear(&err);
    if (xtts_segment_options_check(&o, &err)) {
        xtts_error_print("xtts-segment", &err);
        xtts_usage_hint("xtts-segment");
        return 1;
    }
    xtts_segment_pair one = {0}, *pairs = &one;
    size_t n = 1;
    if (pairs_list) {
        if (read_pairs(pairs_list, &pairs, &n, &err)) {
            xtts_error_print("xtts-segment", &err);
            return 2;
        }
    } else
        one.audio = argv[optind], one.text = argv[optind + 1];
    xtts_segment_stats s;
    xtts_status st = xtts_segment_run(&o, pairs, n, &s, &err);
    if (pairs_list) xtts_segment_pairs_free(pairs, n);
    if (st && s.pairs_refused == 0) xtts_error_print("xtts-segment", &err);
    fprintf(stderr, "xtts-segment: %zu of %zu sentences in %zu clips (%.1f of %.1f s of audio)", s.sentences_written,
            s.sentences, s.clips, s.clip_seconds, s.audio_seconds);
    if (s.sentences_left_out) fprintf(stderr, ", %zu sentences left out", s.sentences_left_out);
    if (s.speech_left_out_seconds > 0) fprintf(stderr, ", %.1f s of speech left out", s.speech_left_out_seconds);
    if (s.pairs_refused) fprintf(stderr, ", %zu of %zu recordings refused", s.pairs_refused, s.pairs);
    fputc('\n', stderr);
    if (st) return st == XTTS_EUSAGE ? 1 : 2;
    return s.sentences_left_out || s.speech_left_out_seconds > 0 ? 3 : 0;
}
