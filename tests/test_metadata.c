/* test_metadata.c — the metadata reader's grammars on buffers (prep/dataset/metadata.h), format
 * recognition, language tags, and the split field of the token stream. Whole trees are
 * tested end to end by tests/e2e/formats_all.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/xtts_common.h"
#include "formats/tokens.h"
#include "prep/dataset/metadata.h"

typedef struct {
    char id[64], audio[256], text[256], speaker[64], lang[16], split[8], reject[200];
} row;

/* Read what the options name into rows; returns the count, or -1 when open fails or -2 when
 * reading stops (err then holds the message). */
static int read_rows_with(const xtts_meta_options *o, row *rows, int max, xtts_error *err, xtts_meta_format *chosen) {
    xtts_meta_reader *r = NULL;
    if (xtts_meta_open(o, &r, err)) return -1;
    if (chosen) *chosen = xtts_meta_reader_format(r);
    int n = 0, rc;
    xtts_meta_entry e;
    while ((rc = xtts_meta_next(r, &e, err)) == 1 && n < max) {
        row *w = &rows[n++];
        snprintf(w->id, sizeof w->id, "%s", e.id);
        snprintf(w->audio, sizeof w->audio, "%s", e.audio);
        snprintf(w->text, sizeof w->text, "%s", e.text);
        snprintf(w->speaker, sizeof w->speaker, "%s", e.speaker);
        snprintf(w->lang, sizeof w->lang, "%s", e.lang);
        snprintf(w->split, sizeof w->split, "%s", e.split);
        snprintf(w->reject, sizeof w->reject, "%s", e.reject ? e.reject : "");
    }
    xtts_meta_close(r);
    return rc < 0 ? -2 : n;
}

/* Read a buffer as format f (the name "/data/x/NAME"), with text_column (NULL: none), into
 * rows; returns the count or -1 when open fails (err then holds the message). */
static int read_rows_col(xtts_meta_format f, const char *name, const char *text, const char *text_column, row *rows, int max,
                         xtts_error *err, xtts_meta_format *chosen) {
    xtts_meta_options o;
    xtts_meta_options_defaults(&o);
    o.path = name;
    o.data = text;
    o.len = strlen(text);
    o.format = f;
    o.quiet = 1;
    o.text_column = text_column;
    int n = read_rows_with(&o, rows, max, err, chosen);
    assert_int_not_equal(n, -2);
    return n;
}

static int read_rows(xtts_meta_format f, const char *name, const char *text, row *rows, int max, xtts_error *err,
                     xtts_meta_format *chosen) {
    return read_rows_col(f, name, text, NULL, rows, max, err, chosen);
}

static void test_ljspeech_uses_the_normalized_column_and_wavs_dir(void **state) {
    (void)state;
    row r[4];
    xtts_error err;
    int n = read_rows(XTTS_META_LJSPEECH, "/data/ljs/metadata.csv",
                      "\xEF\xBB\xBFLJ1|It cost $5.|It cost five dollars.\r\n\nLJ2|Plain.|\nbad\n", r, 4, &err, NULL);
    assert_int_equal(n, 3);
    assert_string_equal(r[0].id, "LJ1");
    assert_string_equal(r[0].text, "It cost five dollars.");
    assert_string_equal(r[1].text, "Plain.");
    assert_non_null(strstr(r[0].audio, "/wavs/LJ1.wav"));
    assert_non_null(strstr(r[2].reject, "expected id|text|normalized_text"));
}

static void test_header_rows_are_never_data(void **state) {
    (void)state;
    row r[2];
    xtts_error err;
    assert_int_equal(read_rows(XTTS_META_LJSPEECH, "m.csv", "audio_file|text|speaker_name\nwavs/a.wav|Hi.|x\n", r, 2, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "header row"));
    assert_int_equal(read_rows(XTTS_META_COQUI, "m.csv", "a|Hi.|x\n", r, 2, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "'audio_file' and 'text'"));
    assert_int_equal(read_rows(XTTS_META_TSV, "m.tsv", "path\ttranscript\nx.wav\thello\n", r, 2, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "m.tsv:1: the header row must name the columns 'audio' and 'text'"));
    assert_int_equal(read_rows(XTTS_META_TSV, "m.tsv", "audio\twav\ttext\n", r, 2, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "name the same field"));
}

static void test_coqui_csv_round_trips_its_column_names(void **state) {
    (void)state;
    row r[3];
    xtts_error err;
    xtts_meta_format f;
    int n = read_rows(XTTS_META_AUTO, "/d/metadata_eval.csv",
                      "audio_file|text|speaker_name|language\nwavs/HO-en-03.wav|Hello.|en-gb plus m seven|en\nwavs/b.wav|x\n", r,
                      3, &err, &f);
    assert_int_equal(f, XTTS_META_COQUI);
    assert_int_equal(n, 2);
    assert_string_equal(r[0].id, "HO-en-03");
    assert_string_equal(r[0].audio, "/d/wavs/HO-en-03.wav");
    assert_string_equal(r[0].text, "Hello.");
    assert_string_equal(r[0].speaker, "en-gb plus m seven");
    assert_string_equal(r[0].lang, "en");
    assert_string_equal(r[0].split, "val");
    assert_non_null(strstr(r[1].reject, "expected 4 |-separated fields, found 2"));
}

static void test_tsv_aliases_fill_every_field(void **state) {
    (void)state;
    row r[3];
    xtts_error err;
    int n = read_rows(XTTS_META_TSV, "/d/l.tsv",
                      "wav\tsentence\tclient_id\tlanguage\tsplit\tid\n/abs/a.wav\tHi.\tann\tpt_br\tdev\tu1\nb.wav\tHo.\tbo\ten\tnope\t\n",
                      r, 3, &err, NULL);
    assert_int_equal(n, 2);
    assert_string_equal(r[0].id, "u1");
    assert_string_equal(r[0].audio, "/abs/a.wav");
    assert_string_equal(r[0].speaker, "ann");
    assert_string_equal(r[0].lang, "pt_br");
    assert_string_equal(r[0].split, "val");
    assert_string_equal(r[1].id, "b");
    assert_non_null(strstr(r[1].reject, "unknown split 'nope'"));
}

static void test_commonvoice_unquotes_csv_style_fields(void **state) {
    (void)state;
    row r[2];
    xtts_error err;
    xtts_meta_format f;
    int n = read_rows(XTTS_META_AUTO, "/cv/sv-SE/test.tsv",
                      "client_id\tpath\tsentence\tlocale\nabc\tcommon_voice_sv-SE_1.mp3\t\"\"\"Hej,\"\" sa hon.\"\tsv-SE\n"
                      "abc\tcommon_voice_sv-SE_2.mp3\t\"Not\" quoted \"CSV\"\tsv-SE\n",
                      r, 2, &err, &f);
    assert_int_equal(f, XTTS_META_COMMONVOICE);
    assert_int_equal(n, 2);
    assert_string_equal(r[0].text, "\"Hej,\" sa hon.");
    assert_string_equal(r[1].text, "\"Not\" quoted \"CSV\"");
    assert_string_equal(r[0].audio, "/cv/sv-SE/clips/common_voice_sv-SE_1.mp3");
    assert_string_equal(r[0].speaker, "abc");
    assert_string_equal(r[0].split, "test");
    assert_string_equal(r[0].id, "common_voice_sv-SE_1");
}

static void test_json_formats_and_their_rejections(void **state) {
    (void)state;
    row r[4];
    xtts_error err;
    xtts_meta_format f;
    int n = read_rows(XTTS_META_AUTO, "/n/manifest.json",
                      "{\"audio_filepath\": \"w/a.wav\", \"text\": \"hi\", \"duration\": 1, \"speaker\": 7, \"lang\": \"de\"}\n"
                      "{\"audio_filepath\": \"w/b.wav\"}\n[1]\n",
                      r, 4, &err, &f);
    assert_int_equal(f, XTTS_META_NEMO);
    assert_int_equal(n, 3);
    assert_string_equal(r[0].audio, "/n/w/a.wav");
    assert_string_equal(r[0].speaker, "7");
    assert_string_equal(r[0].lang, "de");
    assert_non_null(strstr(r[1].reject, "no \"text\""));
    assert_non_null(strstr(r[2].reject, "not a JSON object"));
    n = read_rows(XTTS_META_AUTO, "/l/cuts.jsonl",
                  "{\"id\": \"c1\", \"start\": 0, \"duration\": 2.0, \"supervisions\": [{\"id\": \"s\", \"text\": \"hallo\", "
                  "\"language\": \"German\", \"speaker\": \"k\"}], \"recording\": {\"id\": \"r\", \"duration\": 2.0, \"sources\": "
                  "[{\"type\": \"file\", \"channels\": [0], \"source\": \"/x/r.flac\"}]}}\n"
                  "{\"id\": \"c2\", \"start\": 0.5, \"duration\": 1.0, \"supervisions\": [{\"text\": \"x\"}], \"recording\": "
                  "{\"id\": \"r\", \"duration\": 2.0, \"sources\": [{\"type\": \"file\", \"source\": \"/x/r.flac\"}]}}\n"
                  "{\"id\": \"c3\", \"start\": 0, \"duration\": 2.0, \"supervisions\": [{\"start\": 1.0, \"text\": \"world\"}, "
                  "{\"start\": 0.2, \"text\": \"hello\"}], \"recording\": {\"id\": \"r\", \"duration\": 2.0, \"sources\": "
                  "[{\"type\": \"file\", \"source\": \"/x/r.flac\"}]}}\n",
                  r, 4, &err, &f);
    assert_int_equal(f, XTTS_META_LHOTSE);
    assert_int_equal(n, 3);
    assert_string_equal(r[2].text, "hello world"); /* supervisions joined in time order */
    assert_string_equal(r[0].id, "c1");
    assert_string_equal(r[0].audio, "/x/r.flac");
    assert_string_equal(r[0].lang, "de");
    assert_string_equal(r[0].speaker, "k");
    assert_non_null(strstr(r[1].reject, "a segment (start 0.500 s"));
}

static void test_tree_grammars_on_one_file(void **state) {
    (void)state;
    row r[3];
    xtts_error err;
    /* a LibriTTS .trans.tsv: normalized text by default; a two-column line takes the original */
    int n = read_rows(XTTS_META_LIBRITTS, "/L/dev-clean/84/121/84_121.trans.tsv",
                      "84_121_000008_000000\tIt was 1803.\tIt was eighteen oh three.\n84_121_000008_000001\tOnly one\n", r, 3,
                      &err, NULL);
    assert_int_equal(n, 2);
    assert_string_equal(r[0].text, "It was eighteen oh three.");
    assert_string_equal(r[0].speaker, "84");
    assert_string_equal(r[0].split, "val");
    assert_string_equal(r[0].audio, "/L/dev-clean/84/121/84_121_000008_000000.wav");
    assert_string_equal(r[1].text, "Only one");
    /* an M-AILABS metadata.csv */
    n = read_rows(XTTS_META_MAILABS, "/M/metadata.csv", "b_01_f000001|Text.|Text normalized.\n", r, 3, &err, NULL);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].text, "Text normalized.");
    /* a VCTK transcript: the whole file, CRLF trimmed */
    n = read_rows(XTTS_META_VCTK, "/V/txt/p225/p225_001.txt", "Please call Stella.\r\n", r, 3, &err, NULL);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].text, "Please call Stella.");
    assert_string_equal(r[0].id, "p225_001");
    assert_string_equal(r[0].speaker, "p225");
}

static void test_auto_refuses_when_unsure(void **state) {
    (void)state;
    row r[1];
    xtts_error err;
    assert_int_equal(read_rows(XTTS_META_AUTO, "x.txt", "just some words\n", r, 1, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "cannot tell the dataset format"));
    assert_int_equal(read_rows(XTTS_META_AUTO, "x.txt", "a|b|c|d|e\n", r, 1, &err, NULL), -1);
    assert_int_equal(read_rows(XTTS_META_AUTO, "x.json", "{\"foo\": 1}\n", r, 1, &err, NULL), -1);
    assert_int_equal(read_rows(XTTS_META_AUTO, "x.txt", "", r, 1, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "empty input"));
}

static void test_long_lines_and_nul_bytes_are_rejected_records(void **state) {
    (void)state;
    size_t big = XTTS_META_MAX_LINE + 100;
    char *buf = malloc(big + 64);
    assert_non_null(buf);
    strcpy(buf, "a1|");
    memset(buf + 3, 'x', big);
    strcpy(buf + 3 + big, "|\na2|ok.|\n");
    row r[3];
    xtts_error err;
    int n = read_rows(XTTS_META_LJSPEECH, "m.csv", buf, r, 3, &err, NULL);
    free(buf);
    assert_int_equal(n, 2);
    assert_non_null(strstr(r[0].reject, "line longer than"));
    assert_string_equal(r[1].id, "a2");
    xtts_meta_options o;
    xtts_meta_options_defaults(&o);
    o.path = "m.csv";
    o.data = "a|b\0c|\nd|e|\n";
    o.len = 12;
    o.format = XTTS_META_LJSPEECH;
    xtts_meta_reader *rd;
    assert_int_equal(xtts_meta_open(&o, &rd, &err), XTTS_OK);
    xtts_meta_entry e;
    assert_int_equal(xtts_meta_next(rd, &e, &err), 1);
    assert_non_null(e.reject);
    assert_non_null(strstr(e.reject, "NUL byte"));
    assert_int_equal(xtts_meta_next(rd, &e, &err), 1);
    assert_null(e.reject);
    assert_int_equal(xtts_meta_next(rd, &e, &err), 0);
    xtts_meta_close(rd);
}

static void test_several_text_columns_in_a_header(void **state) {
    (void)state;
    row r[2];
    xtts_error err;
    /* Coqui's formatter reads `text`; `transcription` is not read */
    const char *csv = "audio_file|text|transcription|speaker_name\nwavs/a.wav|The text.|the transcription|ann\n";
    assert_int_equal(read_rows(XTTS_META_AUTO, "/d/metadata_train.csv", csv, r, 2, &err, NULL), 1);
    assert_string_equal(r[0].text, "The text.");
    assert_string_equal(r[0].speaker, "ann");
    assert_string_equal(r[0].split, "train");
    assert_int_equal(read_rows_col(XTTS_META_COQUI, "/d/m.csv", csv, "transcription", r, 2, &err, NULL), 1);
    assert_string_equal(r[0].text, "the transcription");
    /* a field pandas' to_csv quoted (it holds a quote) is read as pandas reads it */
    assert_int_equal(read_rows(XTTS_META_COQUI, "/d/m.csv", "audio_file|text\nwavs/a.wav|\"She said \"\"hi\"\".\"\n", r, 2, &err, NULL), 1);
    assert_string_equal(r[0].text, "She said \"hi\".");
    assert_int_equal(read_rows_col(XTTS_META_COQUI, "/d/m.csv", csv, "trans", r, 2, &err, NULL), -1);
    assert_int_equal(err.code, XTTS_EUSAGE);
    assert_non_null(strstr(err.msg, "/d/m.csv:1: no column 'trans' (--text-column); the header names: audio_file, text, "
                                    "transcription, speaker_name"));
    /* any column of the header, known or not */
    assert_int_equal(read_rows_col(XTTS_META_TSV, "/d/l.tsv", "audio\ttext\tnorm\na.wav\tDr.\tdoctor\n", "norm", r, 2, &err, NULL), 1);
    assert_string_equal(r[0].text, "doctor");
    /* several text columns, none of them `text`: refused, unless one is chosen */
    const char *tsv = "audio\ttranscription\tsentence\na.wav\tone\ttwo\n";
    assert_int_equal(read_rows(XTTS_META_TSV, "/d/l.tsv", tsv, r, 2, &err, NULL), -1);
    assert_int_equal(err.code, XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "columns 'transcription' and 'sentence' both hold a text: choose one with --text-column"));
    assert_int_equal(read_rows_col(XTTS_META_TSV, "/d/l.tsv", tsv, "sentence", r, 2, &err, NULL), 1);
    assert_string_equal(r[0].text, "two");
    /* other fields named twice are still refused */
    assert_int_equal(read_rows(XTTS_META_TSV, "/d/l.tsv", "audio\ttext\ttext\n", r, 2, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "column 'text' named twice"));
}

static void test_text_column_of_fixed_layouts_and_json(void **state) {
    (void)state;
    row r[3];
    xtts_error err;
    const char *ljs = "LJ1|It cost $5.|It cost five dollars.\nLJ2|Plain.|\n";
    assert_int_equal(read_rows_col(XTTS_META_LJSPEECH, "/l/metadata.csv", ljs, "text", r, 3, &err, NULL), 2);
    assert_string_equal(r[0].text, "It cost $5.");
    assert_string_equal(r[1].text, "Plain.");
    assert_int_equal(read_rows_col(XTTS_META_LJSPEECH, "/l/metadata.csv", ljs, "normalized_text", r, 3, &err, NULL), 2);
    assert_string_equal(r[0].text, "It cost five dollars.");
    assert_non_null(strstr(r[1].reject, "no normalized_text"));
    assert_int_equal(read_rows_col(XTTS_META_LJSPEECH, "/l/metadata.csv", ljs, "transcription", r, 3, &err, NULL), -1);
    assert_int_equal(err.code, XTTS_EUSAGE);
    assert_non_null(strstr(err.msg, "no text column 'transcription' in --format ljspeech (--text-column); it has: text, normalized_text"));
    const char *trans = "84_121_000008_000000\tIt was 1803.\tIt was eighteen oh three.\n";
    assert_int_equal(read_rows_col(XTTS_META_LIBRITTS, "/L/dev-clean/84/121/84_121.trans.tsv", trans, "original_text", r, 3, &err,
                                   NULL), 1);
    assert_string_equal(r[0].text, "It was 1803.");
    assert_int_equal(read_rows_col(XTTS_META_VCTK, "/V/txt/p225/p225_001.txt", "Hi.\n", "normalized_text", r, 3, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "it has: text"));
    /* nemo: any key; a line without it is rejected; a key the first record lacks is a usage error */
    const char *nemo = "{\"audio_filepath\": \"a.wav\", \"text\": \"raw 5\", \"normalized_text\": \"raw five\"}\n"
                       "{\"audio_filepath\": \"b.wav\", \"text\": \"only raw\"}\n";
    assert_int_equal(read_rows_col(XTTS_META_AUTO, "/n/m.json", nemo, "normalized_text", r, 3, &err, NULL), 2);
    assert_string_equal(r[0].text, "raw five");
    assert_non_null(strstr(r[1].reject, "no \"normalized_text\" string"));
    assert_int_equal(read_rows_col(XTTS_META_NEMO, "/n/m.json", nemo, "pred_text", r, 3, &err, NULL), -1);
    assert_int_equal(err.code, XTTS_EUSAGE);
    assert_non_null(strstr(err.msg, "/n/m.json:1: no \"pred_text\" string in the first record (--text-column); it has: "
                                    "audio_filepath, text, normalized_text"));
    /* lhotse: a supervision's key, or one of its custom object */
    const char *cut = "{\"id\": \"c1\", \"start\": 0, \"duration\": 2.0, \"supervisions\": [{\"id\": \"s\", \"text\": \"norm\", "
                      "\"custom\": {\"orig_text\": \"Orig!\"}}], \"recording\": {\"id\": \"r\", \"duration\": 2.0, \"sources\": "
                      "[{\"type\": \"file\", \"source\": \"/x/r.flac\"}]}}\n";
    assert_int_equal(read_rows_col(XTTS_META_LHOTSE, "/l/cuts.jsonl", cut, "orig_text", r, 3, &err, NULL), 1);
    assert_string_equal(r[0].text, "Orig!");
    assert_int_equal(read_rows_col(XTTS_META_LHOTSE, "/l/cuts.jsonl", cut, "custom.orig_text", r, 3, &err, NULL), 1);
    assert_string_equal(r[0].text, "Orig!");
    assert_int_equal(read_rows_col(XTTS_META_LHOTSE, "/l/cuts.jsonl", cut, "custom.text", r, 3, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "it has: id, text, custom, custom.orig_text"));
}

/* name in dir, holding text */
static void put_file(const char *dir, const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_dataset_folders(void **state) {
    (void)state;
    char dir[] = "/tmp/xtts_test_folder_XXXXXX";
    assert_non_null(mkdtemp(dir));
    xtts_meta_options o;
    xtts_meta_options_defaults(&o);
    o.path = dir;
    o.quiet = 1;
    row r[4];
    xtts_error err;
    xtts_meta_format f;
    /* none of the metadata files: refused, naming what was looked for */
    assert_int_equal(read_rows_with(&o, r, 4, &err, NULL), -1);
    assert_int_equal(err.code, XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "no dataset metadata found: looked for metadata_train.csv, metadata_eval.csv"));
    /* metadata.csv: LJSpeech's */
    put_file(dir, "metadata.csv", "LJ1|One.|\n");
    assert_int_equal(read_rows_with(&o, r, 4, &err, &f), 1);
    assert_int_equal(f, XTTS_META_LJSPEECH);
    assert_string_equal(r[0].split, "");
    char want[256];
    snprintf(want, sizeof want, "%s/wavs/LJ1.wav", dir);
    assert_string_equal(r[0].audio, want);
    /* Coqui's split files win over metadata.csv, read in order, each with its header and split */
    put_file(dir, "metadata_train.csv", "audio_file|text|speaker_name\nwavs/a.wav|Train one.|s\nwavs/b.wav|Train two.|s\n");
    put_file(dir, "metadata_eval.csv", "audio_file|speaker_name|text\nwavs/c.wav|s|Eval one.\n");
    assert_int_equal(read_rows_with(&o, r, 4, &err, &f), 3);
    assert_int_equal(f, XTTS_META_COQUI);
    assert_string_equal(r[0].text, "Train one.");
    assert_string_equal(r[1].split, "train");
    assert_string_equal(r[2].id, "c");
    assert_string_equal(r[2].text, "Eval one.");
    assert_string_equal(r[2].split, "val");
    /* a --text-column the second file lacks stops the read there */
    o.text_column = "text";
    put_file(dir, "metadata_eval.csv", "audio_file|speaker_name|sentence\nwavs/c.wav|s|Eval one.\n");
    assert_int_equal(read_rows_with(&o, r, 4, &err, NULL), -2);
    assert_int_equal(err.code, XTTS_EUSAGE);
    assert_non_null(strstr(err.msg, "metadata_eval.csv:1: no column 'text'"));
    /* the formats that read one file other than ljspeech and coqui refuse a folder */
    o.text_column = NULL;
    o.format = XTTS_META_TSV;
    assert_int_equal(read_rows_with(&o, r, 4, &err, NULL), -1);
    assert_non_null(strstr(err.msg, "is a directory; --format tsv reads a file"));
    const char *names[] = {"metadata.csv", "metadata_train.csv", "metadata_eval.csv"};
    for (size_t i = 0; i < 3; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void test_language_tags(void **state) {
    (void)state;
    char t[32];
    strcpy(t, "en_us"); assert_true(xtts_lang_tag_normalize(t)); assert_string_equal(t, "en-US");
    strcpy(t, "ZH-CN"); assert_true(xtts_lang_tag_normalize(t)); assert_string_equal(t, "zh-cn");
    strcpy(t, "zh"); assert_true(xtts_lang_tag_normalize(t)); assert_string_equal(t, "zh-cn");
    strcpy(t, "yue"); assert_true(xtts_lang_tag_normalize(t));
    strcpy(t, "sr-Latn"); assert_true(xtts_lang_tag_normalize(t)); assert_string_equal(t, "sr-latn");
    strcpy(t, "xx"); assert_false(xtts_lang_tag_normalize(t)); /* not an ISO 639-1 code */
    strcpy(t, "e"); assert_false(xtts_lang_tag_normalize(t));
    strcpy(t, "en-"); assert_false(xtts_lang_tag_normalize(t));
    strcpy(t, "english"); assert_false(xtts_lang_tag_normalize(t));
    assert_true(xtts_lang_tag_valid("sw"));
    assert_false(xtts_lang_tag_valid("EN"));
    int sw = xtts_lang_intern("sw");
    assert_true(sw >= XTTS_N_LANGS);
    assert_int_equal(xtts_lang_intern("sw"), sw);
    assert_string_equal(xtts_lang_code(sw), "sw");
    assert_int_equal(xtts_lang_intern("de"), 3);
    assert_int_equal(xtts_lang_intern("EN"), -1);
}

static void test_token_stream_split_field(void **state) {
    (void)state;
    char path[] = "/tmp/xtts_test_metadata_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w+");
    xtts_tokens_header h;
    xtts_tokens_header_defaults(&h);
    strcpy(h.tokenizer, "bytes");
    strcpy(h.vocab_hash, "sha256:0000000000000000000000000000000000000000000000000000000000000000");
    h.vocab_size = 288;
    strcpy(h.lang_mode, "sw");
    xtts_error err;
    assert_int_equal(xtts_tokens_header_set(&h, "fields", "split", &err), XTTS_OK);
    assert_int_equal(xtts_tokens_write_header(f, &h, &err), XTTS_OK);
    int32_t ids[3] = {1, 100, 2};
    char *buf = NULL;
    size_t cap = 0, len;
    xtts_tokens_record a = {.id = "a", .speaker = "", .lang = "sw", .audio_path = "/a.wav", .text = "x", .tokens = ids, .n_tokens = 3, .split = "val"};
    assert_int_equal(xtts_tokens_format_record(&a, &buf, &cap, &len, &err), XTTS_OK);
    fwrite(buf, 1, len, f);
    a.split = "";
    a.id = "b";
    assert_int_equal(xtts_tokens_format_record(&a, &buf, &cap, &len, &err), XTTS_OK);
    fwrite(buf, 1, len, f);
    a.split = "holdout";
    assert_int_equal(xtts_tokens_format_record(&a, &buf, &cap, &len, &err), XTTS_EINPUT);
    free(buf);
    rewind(f);
    xtts_tokens_reader *r;
    assert_int_equal(xtts_tokens_reader_open(f, "t", &r, &err), XTTS_OK);
    xtts_tokens_record rec;
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_string_equal(rec.split, "val");
    assert_string_equal(rec.lang, "sw");
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_string_equal(rec.split, "");
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 0);
    xtts_tokens_reader_close(r);
    fclose(f);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ljspeech_uses_the_normalized_column_and_wavs_dir),
        cmocka_unit_test(test_header_rows_are_never_data),
        cmocka_unit_test(test_coqui_csv_round_trips_its_column_names),
        cmocka_unit_test(test_tsv_aliases_fill_every_field),
        cmocka_unit_test(test_commonvoice_unquotes_csv_style_fields),
        cmocka_unit_test(test_json_formats_and_their_rejections),
        cmocka_unit_test(test_tree_grammars_on_one_file),
        cmocka_unit_test(test_auto_refuses_when_unsure),
        cmocka_unit_test(test_long_lines_and_nul_bytes_are_rejected_records),
        cmocka_unit_test(test_several_text_columns_in_a_header),
        cmocka_unit_test(test_text_column_of_fixed_layouts_and_json),
        cmocka_unit_test(test_dataset_folders),
        cmocka_unit_test(test_language_tags),
        cmocka_unit_test(test_token_stream_split_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
