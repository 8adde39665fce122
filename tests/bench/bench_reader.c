/* bench_reader.c — the cache reader's throughput beside its ceiling: fixed-shape batches
 * (batch 32, random order) decoded by 1 and 2 threads, each with its own reader, against
 * bare ZSTD_decompressDCtx of the same records' frames on one thread. Decoded bytes are
 * the records' stored payload (padded tokens + padded mel as stored).
 * Prints one line per measurement:
 *   <what> <batches/s> <decoded MB/s>
 * Usage: bench_reader CACHE_DIR [SECONDS (default 3)]
 * Built and run by scripts/bench_reader.sh. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cache/reader.h"

#define BATCH 32

static uint64_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_reader CACHE_DIR [SECONDS]\n");
        return 1;
    }
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    xtts_cache *c;
    xtts_error e;
    if (xtts_cache_open(argv[1], &c, &e)) {
        xtts_error_print("bench_reader", &e);
        return 2;
    }
    uint64_t n = xtts_cache_count(c);
    if (!n) return 2;
    /* Payload bytes per record, and the frames for the zstd ceiling. */
    uint64_t *payload = malloc(n * sizeof *payload);
    xtts_cache_reader *r0;
    xtts_cache_reader_new(c, &r0, &e);
    size_t total_frames = 0;
    for (uint64_t i = 0; i < n; i++) {
        xtts_record_header h;
        if (xtts_cache_reader_header(r0, i, &h, &e)) {
            xtts_error_print("bench_reader", &e);
            return 2;
        }
        payload[i] = h.payload_bytes;
        total_frames += h.frame_bytes;
    }
    printf("# %llu records, %.1f MB stored, %.1f MB decoded\n", (unsigned long long)n, total_frames / 1e6,
           (double)({ uint64_t s = 0; for (uint64_t i = 0; i < n; i++) s += payload[i]; s; }) / 1e6);

    /* zstd ceiling: one thread, bare decompression of every frame in random order. */
    {
        ZSTD_DCtx *d = ZSTD_createDCtx();
        void *dst = malloc(1 << 26);
        uint64_t s = 7, bytes = 0, recs = 0;
        double t0 = xtts_now_s(), t = 0;
        do {
            for (int k = 0; k < 256; k++) {
                uint64_t i = rng(&s) % n;
                const void *raw;
                size_t len;
                xtts_record_header h;
                xtts_cache_reader_raw(r0, i, &raw, &len, &e);
                xtts_record_parse_header(raw, len, &h, &e);
                const uint8_t *fr = (const uint8_t *)raw + XTTS_RECORD_HEADER_BYTES + h.id_len;
                size_t got = ZSTD_decompressDCtx(d, dst, 1 << 26, fr, h.frame_bytes);
                if (ZSTD_isError(got)) return 3;
                bytes += got;
                recs++;
            }
            t = xtts_now_s() - t0;
        } while (t < seconds);
        printf("zstd_ceiling_1thread %.1f %.1f\n", recs / (double)BATCH / t, bytes / 1e6 / t);
        ZSTD_freeDCtx(d);
        free(dst);
    }
    for (int run = 0; run < 4; run++) {
        int threads = 1 + run % 2;
        xtts_dtype out_dtype = run < 2 ? XTTS_DTYPE_F32 : XTTS_DTYPE_F16;
        uint64_t batches = 0, bytes = 0;
        double t_all = 0;
#pragma omp parallel num_threads(threads) reduction(+ : batches, bytes) reduction(max : t_all)
        {
            xtts_cache_reader *r;
            xtts_batch b;
            xtts_error te;
            xtts_cache_reader_new(c, &r, &te);
            xtts_batch_alloc(c, BATCH, out_dtype, &b, &te);
            uint64_t s = 1234 + (uint64_t)omp_get_thread_num(), idx[BATCH];
#pragma omp barrier
            double t0 = xtts_now_s(), t = 0;
            do {
                for (int k = 0; k < BATCH; k++) idx[k] = rng(&s) % n;
                if (xtts_cache_reader_batch(r, idx, BATCH, &b, &te)) {
                    xtts_error_print("bench_reader", &te);
                    break;
                }
                for (int k = 0; k < BATCH; k++) bytes += payload[idx[k]];
                batches++;
                t = xtts_now_s() - t0;
            } while (t < seconds);
            t_all = t;
            xtts_batch_free(&b);
            xtts_cache_reader_delete(r);
        }
        printf("c_reader_%dthread%s_%s %.1f %.1f\n", threads, threads > 1 ? "s" : "",
               out_dtype == XTTS_DTYPE_F32 ? "fp32out" : "fp16out", batches / t_all, bytes / 1e6 / t_all);
    }
    xtts_cache_reader_delete(r0);
    xtts_cache_close(c);
    free(payload);
    return 0;
}
