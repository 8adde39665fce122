/* bench_reader.c — the cache reader's throughput beside its ceiling: fixed-shape batches
 * (batch 32, random order) decoded by 1 and 2 threads, each with its own reader, against
 * bare ZSTD_decompressDCtx of the same records' frames (version 2: the tokens and mel sections'
 * frames, the ones a batch decodes; default decompression context,
 * so zstd checks each frame's content checksum as the reader does) on 1 and 2 threads.
 *
 * Accounting, the same for both sides: decoded bytes are the records' stored payload
 * (padded tokens + padded mel as stored), counted for every record read. The ceiling
 * times only ZSTD_decompressDCtx: the frames' addresses are looked up before the clock
 * starts. The reader's time includes everything a training loop pays: the LMDB lookup,
 * both CRC-32 checks, decompression, the plane join and dtype conversion, and filling
 * the fixed-shape batch (mel columns up to the cache's max_frames, tokens up to
 * max_tokens), which writes more bytes than the payload (column "out MB/s"). So a
 * second reference, zstd_plus_batch_write, adds to the bare decompression a memset of
 * the batch slot the record would fill (tokens and mel as the output dtype): the bytes
 * any reader has to write, at memset's speed. The reader cannot beat it.
 *
 * The configurations run in ROUNDS alternated rounds of SECONDS/ROUNDS each; each line
 * gives medians over the rounds, and the median of the per-round ratios to the 1-thread
 * reference with the same thread count (the ratio within a round is steadier than the
 * absolute figures on a shared machine). Prints one line per configuration:
 *   <what> <batches/s> <decoded MB/s> <% of zstd_ceiling, same threads> <out MB/s>
 *   <% of zstd_plus_batch_write, same threads and output dtype>
 * Usage: bench_reader CACHE_DIR [SECONDS (default 3)] [ROUNDS (default 5)] [reader-fp32]
 * (reader-fp32: only the c_reader_*_fp32out lines, for bench/reader.sh to alternate
 * with the Python package's runs).
 * Built and run by bench/reader.sh. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cache/store/read/reader.h"

#define BATCH 32
#define FRAMES_PER 2
#define MAX_ROUNDS 64

enum { CEIL1, CEIL2, W32_1, W32_2, W16_1, W16_2, F32_1, F32_2, F16_1, F16_2, N_CONF };
static const char *conf_name[N_CONF] = {
    "zstd_ceiling_1thread",          "zstd_ceiling_2threads",
    "zstd_plus_batch_write_1thread_fp32out", "zstd_plus_batch_write_2threads_fp32out",
    "zstd_plus_batch_write_1thread_fp16out", "zstd_plus_batch_write_2threads_fp16out",
    "c_reader_1thread_fp32out",      "c_reader_2threads_fp32out",
    "c_reader_1thread_fp16out",      "c_reader_2threads_fp16out"};

static uint64_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    uint64_t n;
    uint64_t *payload;       /* stored payload bytes per record */
    const uint8_t **frame;   /* zstd frames per record, FRAMES_PER slots (in the map, valid while r0
                                lives): version 1 its one frame, version 2 its tokens and mel
                                sections (the ones a batch decodes); unused slots have 0 bytes */
    size_t *frame_bytes;
    size_t max_payload;
    xtts_cache *c;
} bench;

/* One measurement: batches/s, payload bytes/s and batch bytes written/s. */
typedef struct {
    double batches, bytes, out;
} rate;

/* Bare decompression; with write >= 0 also a memset of the batch slot (output dtype
 * write) the record would fill. */
static rate run_ceiling(const bench *B, int threads, int write, double seconds, uint64_t seed) {
    uint64_t recs = 0, bytes = 0, out_bytes = 0;
    double t_all = 0;
    int fail = 0;
#pragma omp parallel num_threads(threads) reduction(+ : recs, bytes, out_bytes, fail) reduction(max : t_all)
    {
        ZSTD_DCtx *d = ZSTD_createDCtx();
        void *dst = malloc(B->max_payload ? B->max_payload : 1);
        xtts_batch b;
        xtts_error te;
        if (!d || !dst || xtts_batch_init(B->c, BATCH, write == XTTS_DTYPE_F16 ? XTTS_DTYPE_F16 : XTTS_DTYPE_F32, &b, &te))
            exit(2);
        size_t mel_slot = b.n_mels * b.max_frames * xtts_dtype_size(b.mel_dtype), tok_slot = b.max_tokens * 4;
        uint64_t s = seed + 977 * (uint64_t)omp_get_thread_num();
#pragma omp barrier
        double t0 = xtts_now_s(), t = 0;
        do {
            for (int k = 0; k < BATCH; k++) {
                uint64_t i = rng(&s) % B->n;
                for (int f = 0; f < FRAMES_PER; f++) {
                    if (!B->frame_bytes[FRAMES_PER * i + f]) continue;
                    size_t got = ZSTD_decompressDCtx(d, dst, B->max_payload, B->frame[FRAMES_PER * i + f],
                                                     B->frame_bytes[FRAMES_PER * i + f]);
                    if (ZSTD_isError(got)) fail = 1;
                }
                if (write >= 0) {
                    memset((uint8_t *)b.tokens + k * tok_slot, k, tok_slot);
                    memset((uint8_t *)b.mel + k * mel_slot, k, mel_slot);
                    out_bytes += tok_slot + mel_slot;
                }
                bytes += B->payload[i];
                recs++;
            }
            t = xtts_now_s() - t0;
        } while (t < seconds && !fail);
        t_all = t;
        ZSTD_freeDCtx(d);
        free(dst);
        xtts_batch_free(&b);
    }
    if (fail) {
        fprintf(stderr, "bench_reader: a frame did not decompress\n");
        exit(3);
    }
    return (rate){recs / (double)BATCH / t_all, bytes / t_all, out_bytes / t_all};
}

static rate run_reader(const bench *B, int threads, xtts_dtype out_dtype, double seconds, uint64_t seed) {
    uint64_t batches = 0, bytes = 0, out_bytes = 0;
    double t_all = 0;
    int fail = 0;
#pragma omp parallel num_threads(threads) reduction(+ : batches, bytes, out_bytes, fail) reduction(max : t_all)
    {
        xtts_cache_reader *r;
        xtts_batch b;
        xtts_error te;
        if (xtts_cache_reader_new(B->c, &r, &te) || xtts_batch_init(B->c, BATCH, out_dtype, &b, &te)) {
            xtts_error_print("bench_reader", &te);
            exit(2);
        }
        size_t per_batch = BATCH * (b.max_tokens * 4 + b.n_mels * b.max_frames * xtts_dtype_size(out_dtype));
        uint64_t s = seed + 977 * (uint64_t)omp_get_thread_num(), idx[BATCH];
#pragma omp barrier
        double t0 = xtts_now_s(), t = 0;
        do {
            for (int k = 0; k < BATCH; k++) idx[k] = rng(&s) % B->n;
            if (xtts_cache_reader_batch(r, idx, BATCH, &b, &te)) {
                xtts_error_print("bench_reader", &te);
                fail = 1;
                break;
            }
            for (int k = 0; k < BATCH; k++) bytes += B->payload[idx[k]];
            out_bytes += per_batch;
            batches++;
            t = xtts_now_s() - t0;
        } while (t < seconds);
        t_all = t;
        xtts_batch_free(&b);
        xtts_cache_reader_delete(r);
    }
    if (fail) exit(3);
    return (rate){batches / t_all, bytes / t_all, out_bytes / t_all};
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_reader CACHE_DIR [SECONDS] [ROUNDS] [reader-fp32]\n");
        return 1;
    }
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    if (rounds < 1) rounds = 1;
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    int only_reader = argc > 4 && !strcmp(argv[4], "reader-fp32");
    bench B = {0};
    xtts_error e;
    if (xtts_cache_open(argv[1], &B.c, &e)) {
        xtts_error_print("bench_reader", &e);
        return 2;
    }
    B.n = xtts_cache_count(B.c);
    if (!B.n) return 2;
    B.payload = malloc(B.n * sizeof *B.payload);
    B.frame = calloc(B.n * FRAMES_PER, sizeof *B.frame);
    B.frame_bytes = calloc(B.n * FRAMES_PER, sizeof *B.frame_bytes);
    xtts_cache_reader *r0;
    if (!B.payload || !B.frame || !B.frame_bytes || xtts_cache_reader_new(B.c, &r0, &e)) return 2;
    uint64_t total_frames = 0, total_payload = 0;
    for (uint64_t i = 0; i < B.n; i++) {
        xtts_record_header h;
        const void *raw;
        size_t len;
        if (xtts_cache_reader_raw(r0, i, &raw, &len, &e) || xtts_record_parse_header(raw, len, &h, &e)) {
            xtts_error_print("bench_reader", &e);
            return 2;
        }
        B.payload[i] = h.payload_bytes;
        if (h.version == 1) {
            B.frame[FRAMES_PER * i] = (const uint8_t *)raw + XTTS_RECORD_HEADER_BYTES + h.id_len;
            B.frame_bytes[FRAMES_PER * i] = h.frame_bytes;
        } else {
            for (int f = 0; f < FRAMES_PER && f < h.n_sections; f++) { /* sections 0, 1: tokens, mel */
                B.frame[FRAMES_PER * i + f] = (const uint8_t *)raw + h.sections[f].offset;
                B.frame_bytes[FRAMES_PER * i + f] = h.sections[f].stored_bytes;
            }
        }
        if (h.payload_bytes > B.max_payload) B.max_payload = h.payload_bytes;
        total_frames += h.frame_bytes;
        total_payload += h.payload_bytes;
    }
    printf("# %llu records, %.1f MB stored, %.1f MB decoded; %d alternated rounds of %.2f s per line, medians\n",
           (unsigned long long)B.n, total_frames / 1e6, total_payload / 1e6, rounds, seconds / rounds);
    printf("# what batches/s decoded_MB/s %%_of_zstd_ceiling out_MB/s %%_of_zstd_plus_batch_write\n");
    static double bps[N_CONF][MAX_ROUNDS], mbs[N_CONF][MAX_ROUNDS], pct[N_CONF][MAX_ROUNDS], out[N_CONF][MAX_ROUNDS],
        pctw[N_CONF][MAX_ROUNDS];
    double slice = seconds / rounds;
    for (int k = 0; k < rounds; k++) {
        uint64_t seed = 1234 + 7919 * (uint64_t)k;
        rate rr[N_CONF];
        for (int th = 1; th <= 2; th++) {
            int o = th - 1; /* the 2-thread configuration follows the 1-thread one */
            if (only_reader) { /* the fp32 reader lines only: ratios are to themselves */
                rr[F32_1 + o] = run_reader(&B, th, XTTS_DTYPE_F32, slice, seed);
                rr[CEIL1 + o] = rr[W32_1 + o] = rr[W16_1 + o] = rr[F16_1 + o] = rr[F32_1 + o];
                continue;
            }
            rr[CEIL1 + o] = run_ceiling(&B, th, -1, slice, seed);
            rr[W32_1 + o] = run_ceiling(&B, th, XTTS_DTYPE_F32, slice, seed);
            rr[F32_1 + o] = run_reader(&B, th, XTTS_DTYPE_F32, slice, seed);
            rr[W16_1 + o] = run_ceiling(&B, th, XTTS_DTYPE_F16, slice, seed);
            rr[F16_1 + o] = run_reader(&B, th, XTTS_DTYPE_F16, slice, seed);
        }
        for (int j = 0; j < N_CONF; j++) {
            int o = j % 2; /* every 2-thread configuration has an odd index */
            int w = j == F32_1 + o || j == W32_1 + o ? W32_1 + o : W16_1 + o;
            bps[j][k] = rr[j].batches;
            mbs[j][k] = rr[j].bytes / 1e6;
            pct[j][k] = 100.0 * rr[j].bytes / rr[CEIL1 + o].bytes;
            out[j][k] = rr[j].out / 1e6;
            pctw[j][k] = 100.0 * rr[j].bytes / rr[w].bytes;
        }
    }
    for (int j = 0; j < N_CONF; j++) {
        if (only_reader && j != F32_1 && j != F32_2) continue;
        printf("%s %.1f %.1f %.1f", conf_name[j], median(bps[j], rounds), median(mbs[j], rounds),
               median(pct[j], rounds));
        if (j < W32_1) printf(" - -\n");
        else printf(" %.1f %.1f\n", median(out[j], rounds), median(pctw[j], rounds));
    }
    xtts_cache_reader_delete(r0);
    xtts_cache_close(B.c);
    free(B.payload);
    free(B.frame);
    free(B.frame_bytes);
    return 0;
}
