// mel.cu — the log-mel of a batch of clips on a CUDA device (kernels/mel_cuda.h).
//
// Steps: every frame of the batch gets a descriptor (its clip, its first sample, where its
// output goes). The clips are then cut into groups of whole clips of about GROUP_FRAMES
// frames, and each group runs on one of two streams, alternately: its samples are packed into
// pinned host memory and copied to the device with its descriptors; chunk by chunk of frames,
// k_frames frames and windows them (reflect padding), the stream's batched cuFFT R2C plan
// (cufftPlanMany) transforms the chunk, and k_mel computes magnitude or power, the sparse mel
// projection and the clamped log for every (frame, channel); whisper presets get a per-clip
// max (k_clip_max) and k_whisper_post; the group's output is copied back into pinned host
// memory. While one stream computes group g, the other copies group g+1 in (and group g-1
// out), and the host packs group g+1 and unpacks group g-1 into the caller's buffers. The
// packing and unpacking copy every sample in and every mel cell out (about 40 GB per 100 h
// of audio at 22,050 Hz), more than one host thread copies at full speed: COPY_THREADS
// threads share them, a clip each at a time (disjoint ranges of the pinned buffers and of the
// caller's outputs).
//
// Races are ruled out by construction: each group owns disjoint ranges of the batch-sized
// buffers (samples, descriptors, output, clip maxima; host and device), the only per-stream
// state is the FFT's scratch (frames, spectrum, plan with its work area), and a stream runs
// its groups in order. One dependency crosses streams: the per-clip cell table is copied in
// once on stream 0 and stream 1 waits for it (an event). The host unpacks group g only after
// synchronizing its stream, and every batch ends with both streams drained.
//
// Every per-element formula is a function of kernels/mel_math.h, the ones the CPU golden
// tests run; the host code here only sizes buffers, fills descriptors and copies.
#include "kernels/mel_cuda.h"
#include "kernels/mel_internal.h"
#include "kernels/mel_math.h"

#include <cuda_runtime.h>
#include <cufft.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// One STFT frame of one clip in the batch.
struct frame_desc {
    long long sample_base;  // clip's first sample in d_samples
    long long n;            // clip length in samples
    long long start;        // first sample of the frame, before reflection (may be < 0)
    long long out_cell;     // d_out index of (channel 0, this frame)
    long long out_stride;   // the clip's frame count: distance between channels in d_out
};

const int THREADS = 256;
const size_t CHUNK_FRAMES = 4096;      // frames per cuFFT execution
const size_t GROUP_FRAMES = 2 * CHUNK_FRAMES;  // a group of clips ends once it has this many frames
const int N_STREAMS = 2;  // the code below names stream 0 and stream 1 where it must
// Macros, not constants: only the host compiler sees the pragmas that use them.
#define COPY_THREADS 4                       // host threads packing a group's samples and unpacking its mels
#define COPY_PARALLEL_MIN ((size_t)1 << 18)  // floats: below this a group is copied by one thread
static_assert(N_STREAMS == 2, "two streams");

// Consecutive clips [k0, k1) whose samples, frames and output cells are the ranges below.
struct group {
    size_t k0, k1, s0, s1, f0, f1;
    long long c0, c1;
};

// frames is (n_frames, n_fft): windowed, reflect-padded frames of the chunk.
__global__ void k_frames(const float *samples, const frame_desc *desc, size_t first_frame, size_t n_frames,
                         int n_fft, const float *window, float *frames) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= n_frames * (size_t)n_fft) return;
    size_t f = idx / n_fft;
    int j = (int)(idx % n_fft);
    frame_desc d = desc[first_frame + f];
    long i = xtts_reflect_index((long)(d.start + j), (long)d.n);
    frames[idx] = samples[d.sample_base + i] * window[j];
}

// spec is (n_frames, n_bins); one thread per (frame, channel) writes the clamped log-mel.
__global__ void k_mel(const cufftComplex *spec, const frame_desc *desc, size_t first_frame, size_t n_frames,
                      int n_bins, int n_mels, const int *fb_first, const int *fb_count, const int *fb_offset,
                      const float *fb_weight, int power, float eps, float floor_value, int log_kind, float *out) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= n_frames * (size_t)n_mels) return;
    size_t f = idx / n_mels;
    int c = (int)(idx % n_mels);
    const cufftComplex *s = spec + f * n_bins + fb_first[c];
    const float *w = fb_weight + fb_offset[c];
    float acc = 0.0f;
    for (int i = 0; i < fb_count[c]; i++) acc += w[i] * xtts_spec_value(s[i].x, s[i].y, power, eps);
    frame_desc d = desc[first_frame + f];
    out[d.out_cell + (long long)c * d.out_stride] = xtts_log_clamp(acc, floor_value, log_kind);
}

// One block per clip: clip_max[k] = max of out[clip_cells[k] .. clip_cells[k+1]).
__global__ void k_clip_max(const float *out, const long long *clip_cells, float *clip_max) {
    __shared__ float s[THREADS];
    long long lo = clip_cells[blockIdx.x], hi = clip_cells[blockIdx.x + 1];
    float m = -INFINITY;
    for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) m = fmaxf(m, out[i]);
    s[threadIdx.x] = m;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + k]);
        __syncthreads();
    }
    if (threadIdx.x == 0) clip_max[blockIdx.x] = s[0];
}

// grid.y = clip.
__global__ void k_whisper_post(float *out, const long long *clip_cells, const float *clip_max) {
    long long lo = clip_cells[blockIdx.y], hi = clip_cells[blockIdx.y + 1];
    float mx = clip_max[blockIdx.y];
    for (long long i = lo + blockIdx.x * (long long)blockDim.x + threadIdx.x; i < hi;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = xtts_whisper_post(out[i], mx);
}

xtts_status cuda_fail(cudaError_t e, const char *what, xtts_error *err) {
    return xtts_error_set(err, e == cudaErrorMemoryAllocation ? XTTS_ENOMEM : XTTS_EIO, "cuda: %s: %s", what,
                          cudaGetErrorString(e));
}

#define CUDA_OK(call)                                                 \
    do {                                                              \
        cudaError_t e_ = (call);                                      \
        if (e_ != cudaSuccess) return cuda_fail(e_, #call, err);      \
    } while (0)

unsigned blocks_for(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

}  // namespace

struct xtts_mel_cuda {
    xtts_mel_params p;
    int device, n_bins, pad_left;
    size_t max_clips, max_samples, max_frames;
    cudaStream_t stream[N_STREAMS];
    cufftHandle plan[N_STREAMS];          // one per stream: a plan's work area is not shared
    bool have_stream[N_STREAMS], have_plan[N_STREAMS], have_event;
    cudaEvent_t cells_in;                 // the clip cell table is on the device (stream 0)
    group *groups;            // (max_clips) host
    size_t *clip_base;        // (max_clips) host: clip k's first sample in h_samples and d_samples
    float *h_samples;         // pinned (max_samples)
    frame_desc *h_desc;       // pinned (max_frames)
    long long *h_clip_cells;  // pinned (max_clips + 1) prefix sums of n_mels * frames
    float *h_clip_max;        // pinned (max_clips)
    float *h_out;             // pinned (max_frames * n_mels), laid out as d_out
    float *d_samples;         // (max_samples)
    frame_desc *d_desc;       // (max_frames)
    long long *d_clip_cells;  // (max_clips + 1), whole batch, copied before the groups
    float *d_clip_max;        // (max_clips)
    float *d_window;          // (n_fft)
    float *d_frames[N_STREAMS];         // (CHUNK_FRAMES, n_fft) per stream
    cufftComplex *d_spec[N_STREAMS];    // (CHUNK_FRAMES, n_bins) per stream
    float *d_out;             // clip after clip, each [n_mels][frames]
    int *d_fb_first, *d_fb_count, *d_fb_offset;  // (n_mels)
    float *d_fb_weight;       // packed nonzero filter weights
};

// The kernel image fits the current device (no "no kernel image" at launch time).
static int kernels_fit(char *why, size_t why_len) {
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, k_mel);
    if (e != cudaSuccess) {
        if (why) snprintf(why, why_len, "no usable kernel image for this device: %s", cudaGetErrorString(e));
        return 0;
    }
    return 1;
}

extern "C" int xtts_cuda_device_usable(int ordinal, char *why, size_t why_len) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        if (why) snprintf(why, why_len, "no CUDA device or driver (%s)", cudaGetErrorString(e));
        return 0;
    }
    if (ordinal < 0 || ordinal >= count) {
        if (why) snprintf(why, why_len, "device %d does not exist (%d CUDA device%s found)", ordinal, count,
                          count == 1 ? "" : "s");
        return 0;
    }
    e = cudaSetDevice(ordinal);
    if (e != cudaSuccess) {
        if (why) snprintf(why, why_len, "cannot use device %d (%s)", ordinal, cudaGetErrorString(e));
        return 0;
    }
    return kernels_fit(why, why_len);
}

extern "C" const char *xtts_cuda_plugin_abi(void) { return XTTS_CUDA_PLUGIN_ABI; }

extern "C" void xtts_mel_cuda_delete(xtts_mel_cuda *m) {
    if (!m) return;
    cudaSetDevice(m->device);
    for (int i = 0; i < N_STREAMS; i++) {
        if (m->have_stream[i]) cudaStreamSynchronize(m->stream[i]);
        if (m->have_plan[i]) cufftDestroy(m->plan[i]);
        if (m->have_stream[i]) cudaStreamDestroy(m->stream[i]);
    }
    if (m->have_event) cudaEventDestroy(m->cells_in);
    void *host[] = {m->h_samples, m->h_desc, m->h_clip_cells, m->h_clip_max, m->h_out};
    for (void *ptr : host) cudaFreeHost(ptr);
    void *dev[] = {m->d_samples, m->d_desc, m->d_clip_cells, m->d_clip_max, m->d_window, m->d_frames[0],
                   m->d_frames[1], m->d_spec[0], m->d_spec[1], m->d_out, m->d_fb_first, m->d_fb_count,
                   m->d_fb_offset, m->d_fb_weight};
    for (void *ptr : dev) cudaFree(ptr);
    free(m->groups);
    free(m->clip_base);
    free(m);
}

static xtts_status setup(xtts_mel_cuda *m, xtts_error *err) {
    const xtts_mel_params &p = m->p;
    CUDA_OK(cudaSetDevice(m->device));
    // Filterbank: dense from the CPU path's function, kept sparse as the CPU path keeps it.
    std::vector<float> dense((size_t)p.n_mels * m->n_bins);
    xtts_status st = xtts_mel_filterbank(&p, dense.data(), err);
    if (st) return st;
    std::vector<int> first(p.n_mels), count(p.n_mels), offset(p.n_mels);
    std::vector<float> weights;
    for (int c = 0; c < p.n_mels; c++) {
        const float *row = dense.data() + (size_t)c * m->n_bins;
        int lo = -1, hi = -1;
        for (int k = 0; k < m->n_bins; k++)
            if (row[k] != 0.0f) { if (lo < 0) lo = k; hi = k; }
        first[c] = lo < 0 ? 0 : lo;
        count[c] = lo < 0 ? 0 : hi - lo + 1;
        offset[c] = (int)weights.size();
        weights.insert(weights.end(), row + first[c], row + first[c] + count[c]);
    }
    if (weights.empty()) weights.push_back(0.0f);
    std::vector<float> window(p.n_fft);
    for (int j = 0; j < p.n_fft; j++) window[j] = xtts_stft_window(j, p.n_fft, p.win_samples);

    m->groups = (group *)calloc(m->max_clips, sizeof(group));
    m->clip_base = (size_t *)calloc(m->max_clips, sizeof(size_t));
    if (!m->groups || !m->clip_base) return xtts_error_set(err, XTTS_ENOMEM, "cuda mel: out of memory");
    CUDA_OK(cudaMallocHost(&m->h_samples, sizeof(float) * m->max_samples));
    CUDA_OK(cudaMallocHost(&m->h_desc, sizeof(frame_desc) * m->max_frames));
    CUDA_OK(cudaMallocHost(&m->h_clip_cells, sizeof(long long) * (m->max_clips + 1)));
    CUDA_OK(cudaMallocHost(&m->h_clip_max, sizeof(float) * m->max_clips));
    CUDA_OK(cudaMallocHost(&m->h_out, sizeof(float) * m->max_frames * p.n_mels));
    CUDA_OK(cudaMalloc(&m->d_samples, sizeof(float) * m->max_samples));
    CUDA_OK(cudaMalloc(&m->d_desc, sizeof(frame_desc) * m->max_frames));
    CUDA_OK(cudaMalloc(&m->d_clip_cells, sizeof(long long) * (m->max_clips + 1)));
    CUDA_OK(cudaMalloc(&m->d_clip_max, sizeof(float) * m->max_clips));
    CUDA_OK(cudaMalloc(&m->d_window, sizeof(float) * p.n_fft));
    CUDA_OK(cudaMalloc(&m->d_out, sizeof(float) * m->max_frames * p.n_mels));
    CUDA_OK(cudaMalloc(&m->d_fb_first, sizeof(int) * p.n_mels));
    CUDA_OK(cudaMalloc(&m->d_fb_count, sizeof(int) * p.n_mels));
    CUDA_OK(cudaMalloc(&m->d_fb_offset, sizeof(int) * p.n_mels));
    CUDA_OK(cudaMalloc(&m->d_fb_weight, sizeof(float) * weights.size()));
    CUDA_OK(cudaMemcpy(m->d_window, window.data(), sizeof(float) * p.n_fft, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(m->d_fb_first, first.data(), sizeof(int) * p.n_mels, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(m->d_fb_count, count.data(), sizeof(int) * p.n_mels, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(m->d_fb_offset, offset.data(), sizeof(int) * p.n_mels, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(m->d_fb_weight, weights.data(), sizeof(float) * weights.size(), cudaMemcpyHostToDevice));

    int n = p.n_fft, nb = m->n_bins;
    for (int i = 0; i < N_STREAMS; i++) {
        CUDA_OK(cudaStreamCreateWithFlags(&m->stream[i], cudaStreamNonBlocking));
        m->have_stream[i] = true;
        CUDA_OK(cudaMalloc(&m->d_frames[i], sizeof(float) * CHUNK_FRAMES * p.n_fft));
        CUDA_OK(cudaMalloc(&m->d_spec[i], sizeof(cufftComplex) * CHUNK_FRAMES * m->n_bins));
        CUDA_OK(cudaMemset(m->d_frames[i], 0, sizeof(float) * CHUNK_FRAMES * p.n_fft));
        cufftResult r = cufftPlanMany(&m->plan[i], 1, &n, &n, 1, n, &nb, 1, nb, CUFFT_R2C, (int)CHUNK_FRAMES);
        if (r != CUFFT_SUCCESS) return xtts_error_set(err, XTTS_EIO, "cuda: cufftPlanMany failed (%d)", (int)r);
        m->have_plan[i] = true;
        r = cufftSetStream(m->plan[i], m->stream[i]);
        if (r != CUFFT_SUCCESS) return xtts_error_set(err, XTTS_EIO, "cuda: cufftSetStream failed (%d)", (int)r);
    }
    CUDA_OK(cudaEventCreateWithFlags(&m->cells_in, cudaEventDisableTiming));
    m->have_event = true;
    // The copies and memsets above ran on the legacy stream, which the non-blocking streams
    // do not wait for: finish them before any batch.
    CUDA_OK(cudaDeviceSynchronize());
    return XTTS_OK;
}

extern "C" xtts_status xtts_mel_cuda_new(const xtts_mel_params *p, int ordinal, size_t max_clips,
                                         size_t max_batch_samples, xtts_mel_cuda **out, xtts_error *err) {
    *out = NULL;
    xtts_status st = xtts_mel_params_check(p, err);
    if (st) return st;
    if (max_clips < 1 || max_clips > 65535 || max_batch_samples < 1 || max_batch_samples > ((size_t)1 << 34))
        return xtts_error_set(err, XTTS_EUSAGE,
                              "cuda mel: batch of %zu clips / %zu samples is outside 1..65535 / 1..2^34", max_clips,
                              max_batch_samples);
    char why[256];
    if (!xtts_cuda_device_usable(ordinal, why, sizeof why))
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "cuda:%d is not usable: %s", ordinal, why);
    xtts_mel_cuda *m = (xtts_mel_cuda *)calloc(1, sizeof *m);
    if (!m) return xtts_error_set(err, XTTS_ENOMEM, "cuda mel: out of memory");
    m->p = *p;
    m->device = ordinal;
    m->n_bins = p->n_fft / 2 + 1;
    m->pad_left = p->center ? p->n_fft / 2 : p->pad_samples;
    m->max_clips = max_clips;
    m->max_samples = max_batch_samples;
    // frames of a clip <= n/hop + 2*pad/hop + 1
    m->max_frames = max_batch_samples / p->hop_samples + max_clips * (2 * (size_t)m->pad_left / p->hop_samples + 2);
    st = setup(m, err);
    if (st) { xtts_mel_cuda_delete(m); return st; }
    *out = m;
    return XTTS_OK;
}

// Group g on stream s: pack its samples into pinned memory, copy its inputs in, run the
// kernels and the FFTs on the stream's scratch, copy its output (and clip maxima) out.
static xtts_status enqueue_group(xtts_mel_cuda *m, const group &g, int si, const float *const *samples,
                                 const size_t *n_samples, xtts_error *err) {
    const xtts_mel_params &p = m->p;
    cudaStream_t s = m->stream[si];
    const long long n_group_clips = (long long)(g.k1 - g.k0);
#pragma omp parallel for num_threads(COPY_THREADS) schedule(dynamic, 1) if (g.s1 - g.s0 >= COPY_PARALLEL_MIN)
    for (long long i = 0; i < n_group_clips; i++) {
        size_t k = g.k0 + (size_t)i;
        memcpy(m->h_samples + m->clip_base[k], samples[k], sizeof(float) * n_samples[k]);
    }
    CUDA_OK(cudaMemcpyAsync(m->d_samples + g.s0, m->h_samples + g.s0, sizeof(float) * (g.s1 - g.s0),
                            cudaMemcpyHostToDevice, s));
    CUDA_OK(cudaMemcpyAsync(m->d_desc + g.f0, m->h_desc + g.f0, sizeof(frame_desc) * (g.f1 - g.f0),
                            cudaMemcpyHostToDevice, s));
    for (size_t f0 = g.f0; f0 < g.f1; f0 += CHUNK_FRAMES) {
        size_t nf = g.f1 - f0 < CHUNK_FRAMES ? g.f1 - f0 : CHUNK_FRAMES;
        k_frames<<<blocks_for(nf * p.n_fft), THREADS, 0, s>>>(m->d_samples, m->d_desc, f0, nf, p.n_fft, m->d_window,
                                                               m->d_frames[si]);
        CUDA_OK(cudaGetLastError());
        cufftResult r = cufftExecR2C(m->plan[si], m->d_frames[si], m->d_spec[si]);
        if (r != CUFFT_SUCCESS) return xtts_error_set(err, XTTS_EIO, "cuda: cufftExecR2C failed (%d)", (int)r);
        k_mel<<<blocks_for(nf * p.n_mels), THREADS, 0, s>>>(
            m->d_spec[si], m->d_desc, f0, nf, m->n_bins, p.n_mels, m->d_fb_first, m->d_fb_count, m->d_fb_offset,
            m->d_fb_weight, p.power, (float)p.mag_eps, (float)p.log_floor, p.log_kind, m->d_out);
        CUDA_OK(cudaGetLastError());
    }
    if (p.whisper_post) {
        unsigned nk = (unsigned)(g.k1 - g.k0);
        k_clip_max<<<nk, THREADS, 0, s>>>(m->d_out, m->d_clip_cells + g.k0, m->d_clip_max + g.k0);
        CUDA_OK(cudaGetLastError());
        k_whisper_post<<<dim3(64, nk), THREADS, 0, s>>>(m->d_out, m->d_clip_cells + g.k0, m->d_clip_max + g.k0);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpyAsync(m->h_clip_max + g.k0, m->d_clip_max + g.k0, sizeof(float) * nk,
                                cudaMemcpyDeviceToHost, s));
    }
    CUDA_OK(cudaMemcpyAsync(m->h_out + g.c0, m->d_out + g.c0, sizeof(float) * (size_t)(g.c1 - g.c0),
                            cudaMemcpyDeviceToHost, s));
    return XTTS_OK;
}

// Group g's output, complete in pinned memory once its stream is synchronized, into the
// caller's [n_mels][stride] buffers.
static void unpack_group(const xtts_mel_cuda *m, const group &g, const size_t *n_frames, float *const *out,
                         const size_t *out_stride, float *pad_values) {
    const xtts_mel_params &p = m->p;
    float floor_log = xtts_mel_pad_value(&p);
    const long long n_group_clips = (long long)(g.k1 - g.k0);
#pragma omp parallel for num_threads(COPY_THREADS) schedule(dynamic, 1) if ((size_t)(g.c1 - g.c0) >= COPY_PARALLEL_MIN)
    for (long long i = 0; i < n_group_clips; i++) {
        size_t k = g.k0 + (size_t)i;
        const float *src = m->h_out + m->h_clip_cells[k];
        for (int c = 0; c < p.n_mels; c++)
            memcpy(out[k] + (size_t)c * out_stride[k], src + (size_t)c * n_frames[k], sizeof(float) * n_frames[k]);
        if (pad_values) pad_values[k] = p.whisper_post ? xtts_whisper_post(floor_log, m->h_clip_max[k]) : floor_log;
    }
}

// Group g is enqueued on stream g % 2; then the host waits for group g-1 (the other stream,
// which holds nothing newer) and unpacks it while the device works on group g. On success
// both streams are drained when this returns: the last two groups are waited for.
static xtts_status run_groups(xtts_mel_cuda *m, size_t n_clips, size_t n_groups, const float *const *samples,
                              const size_t *n_samples, float *const *out, const size_t *out_stride,
                              const size_t *n_frames, float *pad_values, xtts_error *err) {
    // The cell table (k_clip_max, k_whisper_post) spans groups: in once, before any group.
    CUDA_OK(cudaMemcpyAsync(m->d_clip_cells, m->h_clip_cells, sizeof(long long) * (n_clips + 1),
                            cudaMemcpyHostToDevice, m->stream[0]));
    if (n_groups > 1) {  // stream 1 gets work (and so is drained below) only when it has a group
        CUDA_OK(cudaEventRecord(m->cells_in, m->stream[0]));
        CUDA_OK(cudaStreamWaitEvent(m->stream[1], m->cells_in, 0));
    }
    for (size_t g = 0; g <= n_groups; g++) {
        if (g < n_groups) {
            xtts_status st = enqueue_group(m, m->groups[g], (int)(g % N_STREAMS), samples, n_samples, err);
            if (st) return st;
        }
        if (g > 0) {
            CUDA_OK(cudaStreamSynchronize(m->stream[(g - 1) % N_STREAMS]));
            unpack_group(m, m->groups[g - 1], n_frames, out, out_stride, pad_values);
        }
    }
    return XTTS_OK;
}

extern "C" xtts_status xtts_mel_cuda_compute_batch(xtts_mel_cuda *m, size_t n_clips, const float *const *samples,
                                                   const size_t *n_samples, float *const *out,
                                                   const size_t *out_stride, size_t *n_frames, float *pad_values,
                                                   xtts_error *err) {
    const xtts_mel_params &p = m->p;
    if (n_clips > m->max_clips)
        return xtts_error_set(err, XTTS_ERANGE, "cuda mel: %zu clips exceed the batch of %zu", n_clips, m->max_clips);
    size_t total_samples = 0, total_frames = 0;
    for (size_t k = 0; k < n_clips; k++) {
        n_frames[k] = xtts_mel_n_frames(&p, n_samples[k]);
        if (n_frames[k] == 0)
            return xtts_error_set(err, XTTS_EINPUT, "cuda mel: clip %zu: %zu samples are shorter than one frame", k,
                                  n_samples[k]);
        if (out_stride[k] < n_frames[k])
            return xtts_error_set(err, XTTS_ERANGE, "cuda mel: clip %zu: stride %zu < %zu frames", k, out_stride[k],
                                  n_frames[k]);
        total_samples += n_samples[k];
        total_frames += n_frames[k];
    }
    if (total_samples > m->max_samples || total_frames > m->max_frames)
        return xtts_error_set(err, XTTS_ERANGE, "cuda mel: %zu samples exceed the batch of %zu", total_samples,
                              m->max_samples);
    if (n_clips == 0) return XTTS_OK;

    // Describe every frame; cut the clips into groups of about GROUP_FRAMES frames.
    size_t base = 0, f = 0, n_groups = 0;
    long long cells = 0;
    for (size_t k = 0; k < n_clips; k++) {
        if (k == 0 || m->groups[n_groups - 1].f1 - m->groups[n_groups - 1].f0 >= GROUP_FRAMES)
            m->groups[n_groups++] = group{k, k, base, base, f, f, cells, cells};
        m->h_clip_cells[k] = cells;
        m->clip_base[k] = base;
        for (size_t t = 0; t < n_frames[k]; t++, f++) {
            frame_desc &d = m->h_desc[f];
            d.sample_base = (long long)base;
            d.n = (long long)n_samples[k];
            d.start = (long long)t * p.hop_samples - m->pad_left;
            d.out_cell = cells + (long long)t;
            d.out_stride = (long long)n_frames[k];
        }
        base += n_samples[k];
        cells += (long long)n_frames[k] * p.n_mels;
        group &g = m->groups[n_groups - 1];
        g.k1 = k + 1; g.s1 = base; g.f1 = f; g.c1 = cells;
    }
    m->h_clip_cells[n_clips] = cells;

    CUDA_OK(cudaSetDevice(m->device));
    xtts_status st = run_groups(m, n_clips, n_groups, samples, n_samples, out, out_stride, n_frames, pad_values, err);
    if (st) {
        // Nothing may still read the staging buffers when the next batch fills them.
        for (int i = 0; i < N_STREAMS; i++) cudaStreamSynchronize(m->stream[i]);
    }
    return st;
}
