/* segment_internal.h — the parts of prep/segment/ that only the room itself calls. */
#ifndef XTTS_SEGMENT_INTERNAL_H
#define XTTS_SEGMENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "prep/segment/segment.h"

/* Every signal is analysed at 16 kHz: 10 ms energy frames (512-point FFT, 25 ms window) and
 * 40 ms feature frames (four energy frames' log-mel averaged, cepstra 1..12). */
#define SEG_RATE 16000
#define SEG_HOP 160
#define SEG_NFFT 512
#define SEG_SUB 4 /* energy frames per feature frame */
#define SEG_NMELS 40
#define SEG_DIM 12
#define SEG_FEAT (2 * SEG_DIM) /* cepstra and their slopes */
#define SEG_DELTA_WEIGHT 1.0f
#define SEG_FRAME_S (SEG_HOP * SEG_SUB / (double)SEG_RATE) /* 0.04 */
#define SEG_ENERGY_S (SEG_HOP / (double)SEG_RATE)          /* 0.01 */

/* A growable array that lives in an unlinked temporary file ($TMPDIR, else /tmp) mapped
 * shared, so that the pages the program has passed can be handed back (xtts_seg_spill_trim)
 * and its resident memory stays one window's whatever the recording's length; plain malloc
 * where no temporary file can be made. */
typedef struct {
    void *p;
    size_t cap; /* bytes */
    int fd1;    /* the file's descriptor + 1; 0 none (a zeroed seg_spill is empty) */
    int heap;   /* p is malloc'd (no temporary file could be made) */
} seg_spill;

/* Room for bytes, the contents kept (p may move). 0, or -1 when out of memory or disk. */
int xtts_seg_spill_reserve(seg_spill *s, size_t bytes);
/* Hand back the resident pages (the contents stay in the file and come back when read). */
void xtts_seg_spill_trim(const seg_spill *s);
void xtts_seg_spill_free(seg_spill *s);

/* What one signal becomes. */
typedef struct {
    float *energy_db; /* [n10] frame energy, dB */
    float *cep;       /* [n40][SEG_DIM] cepstra, mean and variance normalized by seg_track_finish */
    uint8_t *silent;  /* [n40] set by seg_track_finish */
    float *feat;      /* [n40][SEG_FEAT] what the DTW compares, set by seg_track_finish */
    size_t n10, n40, cap10, cap40;
    float silence_db; /* the energy threshold seg_track_finish chose */
    seg_spill sp_energy, sp_cep, sp_silent, sp_feat; /* where the arrays above live */
    unsigned n_fed;   /* blocks fed since the last trim */
} seg_track;

void xtts_seg_track_free(seg_track *t);
/* Hand back the track's resident pages (xtts_seg_spill_trim); called as its users walk on. */
void xtts_seg_track_trim(const seg_track *t);
/* Decide the silent frames (energy below a threshold from the track's own levels: a share of
 * the way from its noise floor to its loud frames) and normalize the speech frames' cepstra.
 * clean: the signal is synthetic (its floor is digital silence). Errors: XTTS_ENOMEM. */
xtts_status xtts_seg_track_finish(seg_track *t, int clean, xtts_error *err);

/* A streaming feature extractor: feed 16 kHz samples in any blocks. */
typedef struct seg_features seg_features;
xtts_status xtts_seg_features_new(seg_features **out, xtts_error *err);
void xtts_seg_features_delete(seg_features *f);
/* Start a new signal (drops what is pending). */
void xtts_seg_features_reset(seg_features *f);
xtts_status xtts_seg_features_feed(seg_features *f, const float *x, size_t n, seg_track *t, xtts_error *err);
/* Pad the signal's end with silence so that its last samples make frames. */
xtts_status xtts_seg_features_flush(seg_features *f, seg_track *t, xtts_error *err);

/* ---- the recording ---------------------------------------------------------------------- */

typedef struct {
    int rate, channels;
    int64_t frames;
    double seconds;
} seg_source_info;

/* Decode path in a stream (libsndfile blocks, mixed down, libsoxr to 16 kHz) into t.
 * progress (may be NULL) is called now and then with the seconds decoded.
 * Errors: XTTS_ENOTFOUND, XTTS_EINPUT (not audio, a decode error), XTTS_ENOMEM. */
xtts_status xtts_seg_decode_features(const char *path, seg_features *f, seg_track *t, seg_source_info *info,
                                void (*progress)(void *ctx, double seconds), void *ctx, xtts_error *err);

/* ---- the reference ---------------------------------------------------------------------- */

/* Start espeak-ng (once; from the thread that runs the pairs, before any worker).
 * Errors: XTTS_EIO (espeak-ng cannot start). */
xtts_status xtts_seg_reference_start(xtts_error *err);

/* The reference: each sentence spoken by espeak-ng (text normalized for lang), 0.3 s of
 * silence before, between and after; sentence k's samples span [start[k], end[k]) in 40 ms
 * frames of t. Synthesis is serialized across threads (espeak-ng has one state).
 * Errors: XTTS_EUNSUPPORTED (no espeak-ng voice for lang), XTTS_ENOMEM, XTTS_EIO (espeak-ng
 * cannot start). */
xtts_status xtts_seg_reference(const xtts_sentences *s, const char *lang, seg_features *f, seg_track *t, size_t *start,
                          size_t *end, xtts_error *err);

/* ---- sentences on the recording, and clips ---------------------------------------------- */

#define SEG_MAX_CUTS 8

typedef struct {
    double a, b; /* a pause (silence) in the recording, seconds */
} seg_pause;

typedef struct {
    double speech_start, speech_end; /* seconds in the recording */
    int pause_before, pause_after;   /* indices into the pauses, -1 none */
    double score;
    const char *why; /* why it is left out; NULL when it can be used */
    int n_cuts;      /* a sentence longer than --max-seconds cut at its own pauses: */
    int cut_pause[SEG_MAX_CUTS];     /* the pauses, in order */
    size_t cut_byte[SEG_MAX_CUTS];   /* where its text is cut (the next piece's first byte) */
} seg_placed;

typedef struct {
    size_t first, last; /* sentences [first, last] */
    double start, end;  /* seconds in the source */
    double score;
    size_t text_a, text_b; /* a piece of a cut sentence: its text's bytes [a, b); 0, 0 the whole */
} seg_clip;

/* The pauses of a finished recording track: runs of silent energy frames of min_s or more,
 * with the recording's start and end as pauses when it starts or ends in speech.
 * *out is malloc'd. Errors: XTTS_ENOMEM. */
xtts_status xtts_seg_find_pauses(const seg_track *rec, double min_s, seg_pause **out, size_t *n, xtts_error *err);

/* The DTW's parameters and sequences, for the checks of each sentence. */
typedef struct {
    const xtts_dtw_params *dp;
    const xtts_dtw_seq *ref, *rec;
} seg_align_ctx;

/* Place each sentence on the recording from the DTW's map. */
xtts_status xtts_seg_place(const seg_track *ref, const seg_track *rec, const size_t *ref_start, const size_t *ref_end,
                           size_t n_sent, const int32_t *rec_of_ref, const float *dist, double gap_cost,
                           const seg_pause *pauses, size_t n_pauses, double min_score, const seg_align_ctx *c,
                           seg_placed *out);

/* Group placed sentences into clips. char_limit in code points of the clip's text. */
xtts_status xtts_seg_group(const xtts_sentences *s, seg_placed *pl, const seg_pause *pauses, size_t n_pauses,
                      const xtts_segment_options *o, int char_limit, double rec_seconds, seg_clip **clips,
                      size_t *n_clips, xtts_error *err);

/* Sentences longer than --max-seconds alone: cut at their internal pauses where the alignment
 * is sure of them (pl[k].n_cuts): the reference's internal silences and the text's clause marks
 * (, ; :) agree in number, and each such silence's first and last frames map into one pause of
 * the recording inside the sentence; the longest of those pauses are taken until every piece
 * fits (no piece shorter than --min-seconds). Else the sentence stays as it is (left out). */
void xtts_seg_split_long(const xtts_sentences *s, const seg_track *ref, const size_t *ref_start, const size_t *ref_end,
                         const int32_t *rec_of_ref, const seg_pause *pauses, size_t n_pauses,
                         const xtts_segment_options *o, seg_placed *pl);

/* Write the clips' audio (DIR/wavs/<stem>_NNNN.wav) from the source, re-read in a stream. */
xtts_status xtts_seg_write_wavs(const char *path, const char *out_dir, const char *stem, const seg_clip *clips,
                           size_t n_clips, int sample_rate, xtts_error *err);

#endif
