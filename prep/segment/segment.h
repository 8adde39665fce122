/* segment.h — long recordings to training clips (xtts-segment, docs/xtts-segment.md).
 *
 * A recording and the text that was read are aligned without any acoustic model: the text is
 * split into sentences (sentences.c), normalized as xtts-tokenize normalizes it and spoken by
 * espeak-ng into a reference (reference.c); both signals become the same features, cepstra of
 * our own log-mel kernel (features.c, the recording decoded in a stream, decode.c); a windowed
 * DTW with gap moves (dtw.c) maps every reference frame to the recording in linear time and a
 * window's memory; the sentences get their spans, pauses and scores from that map (align.c);
 * consecutive sentences are grouped into clips cut in the middle of pauses (clips.c) and
 * written (writer.c). run.c is the spine over one pair and over a list of pairs.
 */
#ifndef XTTS_SEGMENT_H
#define XTTS_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options and the run --------------------------------------------------------------- */

typedef struct {
    const char *out_dir;    /* DIR: wavs/, metadata.csv, segments.tsv */
    char lang[16];          /* "" = detect from the text (prep/text/langid) */
    double min_seconds;     /* shortest clip written (default 2) */
    double max_seconds;     /* longest clip written (default 11.5: XTTS's GPT trainer drops > 11.6 s) */
    double pad_seconds;     /* silence kept before and after the speech of a clip, bounded by the pause's middle (0.2) */
    double min_score;       /* sentences scored below are left out (default 0.5) */
    int sample_rate;        /* clips' rate; 0 = the source's */
    int max_chars;          /* 0 = the language's XTTS character limit */
    int threads;            /* -j */
    int progress;           /* force the progress line */
    int verbose;            /* name every sentence's decision on stderr */
} xtts_segment_options;

/* The defaults above. */
void xtts_segment_options_default(xtts_segment_options *o);
/* XTTS_EUSAGE with the offending option named. */
xtts_status xtts_segment_options_check(const xtts_segment_options *o, xtts_error *err);

/* One recording and its text. lang may be "" (then the options' or detected). */
typedef struct {
    char *audio;
    char *text;
    char lang[16];
    int line; /* in the pairs list; 0 for a pair from the command line */
} xtts_segment_pair;

typedef struct {
    size_t pairs, pairs_refused;
    size_t sentences, sentences_written, sentences_left_out;
    size_t clips;
    double audio_seconds, clip_seconds, speech_left_out_seconds;
} xtts_segment_stats;

/* Segment every pair into o->out_dir (created). Messages about what was left out and about
 * refused files go to stderr, one line each, as they are found. Returns XTTS_OK when the run
 * finished (stats say what was left out: the program's exit 3), or the status of the first
 * file refused (XTTS_EINPUT, XTTS_ENOTFOUND, XTTS_EIO: the other pairs are still done) or of
 * a failure that stopped the run (XTTS_EIO writing DIR, XTTS_ENOMEM), with its message. */
xtts_status xtts_segment_run(const xtts_segment_options *o, const xtts_segment_pair *pairs, size_t n_pairs,
                             xtts_segment_stats *stats, xtts_error *err);

/* ---- the pairs list -------------------------------------------------------------------- */

/* Parse a pairs list (AUDIO<TAB>TEXT[<TAB>LANG] a line; blank lines and lines starting '#'
 * skipped; relative paths as given). name is used in messages. *pairs is malloc'd; free with
 * xtts_segment_pairs_free. Errors: XTTS_EINPUT (a line without two fields, an empty field, a
 * bad language tag, a NUL byte, invalid UTF-8), XTTS_ENOMEM. */
xtts_status xtts_segment_pairs_parse(const char *data, size_t len, const char *name, xtts_segment_pair **pairs,
                                     size_t *n, xtts_error *err);
/* NULL is allowed. */
void xtts_segment_pairs_free(xtts_segment_pair *pairs, size_t n);

/* ---- sentences ------------------------------------------------------------------------- */

typedef struct {
    char *text;    /* the sentence as written, white space collapsed to single spaces */
    int line;      /* line of its first character in the text file (1-based) */
    int paragraph; /* index of its paragraph (blank lines separate paragraphs) */
} xtts_sentence;

typedef struct {
    xtts_sentence *s;
    size_t n, cap;
    int no_sentence_end; /* the text had no sentence end at all: its lines were taken as sentences */
} xtts_sentences;

/* Check that text (len bytes) is a text file we read: UTF-8 (a UTF-8 BOM is skipped), no NUL,
 * some letters. name is used in messages. *skip is the BOM's length. Errors: XTTS_EINPUT
 * naming the line and byte of invalid UTF-8 (and UTF-16 when it looks like it), or "no text". */
xtts_status xtts_segment_text_check(const char *text, size_t len, const char *name, size_t *skip, xtts_error *err);

/* Split UTF-8 text into sentences: ends at . ! ? … and 。！？ (with closing quotes and
 * brackets that follow), not after abbreviations (Mr. Dr. e.g. i.e. etc. inside a sentence,
 * single initials), not inside numbers (3.14, 1,000.5) or inside ellipses followed by a lower
 * case word; a paragraph break (a blank line) always ends one; hard-wrapped lines do not.
 * A text with no sentence end at all is split at its line ends (out->no_sentence_end).
 * Errors: XTTS_ENOMEM. */
xtts_status xtts_sentences_split(const char *text, size_t len, xtts_sentences *out, xtts_error *err);
/* NULL is allowed. */
void xtts_sentences_free(xtts_sentences *s);

/* ---- the windowed DTW ------------------------------------------------------------------ */

typedef struct {
    int dim;              /* feature dimension */
    double gap_cost;      /* cost of a frame left unmatched (a step whose distance is higher) */
    double silence_cost;  /* distance between a silent frame and a speech frame */
    size_t window_ref;    /* reference frames per window; half of it is kept each time */
    double max_stretch;   /* recording frames a window may span per reference frame */
    size_t band;          /* recording frames either side of the line of the recording's pace
                             (its length over the reference's) that a path may use */
    int threads;          /* threads computing a window's distances */
    void (*trim)(void *ctx); /* may be NULL: called as the DTW walks on (each window), so that
                                the caller can hand back the memory of the frames passed */
    void *trim_ctx;
} xtts_dtw_params;

void xtts_dtw_params_default(xtts_dtw_params *p, int dim);

/* A feature sequence: n frames of dim floats (frame-major), and per frame 1 when silent
 * (silent frames match each other at distance 0, speech at silence_cost). */
typedef struct {
    const float *x;
    const uint8_t *silent;
    size_t n;
    /* reference only, may be NULL: per frame, the mean and the inverse spread of its distances
     * to the other sequence's speech (xtts_dtw_row_stats); a speech distance d becomes
     * max(0, (d - mean) * scale + 3) / 3, so that how well a frame matches is judged against how
     * well it matches anything (a synthetic frame far from all real speech is not a gap) */
    const float *row_mean, *row_scale;
} xtts_dtw_seq;

/* Fill mean[ref->n] and scale[ref->n] for ref against up to 256 speech frames of rec spread
 * over it (silent reference frames get 0 and 1). */
void xtts_dtw_row_stats(const xtts_dtw_params *p, const xtts_dtw_seq *ref, const xtts_dtw_seq *rec, float *mean,
                        float *scale);

/* Align ref to rec, both from their first frames: rec_of_ref[i] gets the recording frame of
 * reference frame i on the best path, dist[i] the distance there (gap_cost where the frame was
 * left unmatched). Windows of p->window_ref reference frames over the recording frames they
 * may reach (max_stretch times as many), the first half of each path kept: O(ref x window)
 * time, memory of one window. Errors: XTTS_ENOMEM, XTTS_EINPUT (an empty sequence). */
xtts_status xtts_dtw_align(const xtts_dtw_params *p, const xtts_dtw_seq *ref, const xtts_dtw_seq *rec,
                           int32_t *rec_of_ref, float *dist, xtts_error *err);

/* The cost per weight of the best slope-constrained path (no gap steps) from the start to the
 * end of both reference frames [r0, r1) and recording frames [c0, c1); with reversed, the
 * reference frames are taken from last to first. Whether a reference matches a stretch of
 * recording in the order of its sounds: the reversed reference has the same sounds in the
 * wrong order. INFINITY when the lengths differ by more than twice (no such path) or when out
 * of memory. */
double xtts_dtw_span_cost(const xtts_dtw_params *p, const xtts_dtw_seq *ref, size_t r0, size_t r1,
                          const xtts_dtw_seq *rec, size_t c0, size_t c1, int reversed);

/* The same from the start of both, for every end on the recording: cost[j] (j < c1 - c0) is
 * the cost per weight of the best path from (r0, c0) to the reference's last frame and
 * recording frame c0 + j (INFINITY where none reaches). 0, or -1 when out of memory or empty. */
int xtts_dtw_end_costs(const xtts_dtw_params *p, const xtts_dtw_seq *ref, size_t r0, size_t r1, const xtts_dtw_seq *rec,
                       size_t c0, size_t c1, int reversed, double *cost);

/* Distance of two frames as the DTW measures it (silence rules included). */
float xtts_dtw_distance(const xtts_dtw_params *p, const float *a, int a_silent, const float *b, int b_silent);

#ifdef __cplusplus
}
#endif
#endif
