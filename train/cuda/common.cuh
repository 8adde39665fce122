// cuda/common.cuh — what every CUDA layer file of the trainer uses: the launch shapes, the warp
// reductions, the batch as the kernels see it, bf16 rounding, the error macros of the host
// glue, and the deterministic column sum that the bias and layer-norm gradients share.
//
// How the kernels are laid out (docs/xtts-train.md, "On a CUDA device"): an element-wise
// kernel gives each element a thread (THREADS a block); a row-wise operation (layer norm,
// softmax) gives each row to one warp, whose 32 lanes read consecutive elements (coalesced); a
// sum over rows (bias and layer-norm parameter gradients) is done in two deterministic passes,
// partial sums over blocks of rows and then those partials in block order (colsum, below).
// Every launcher takes the stream it runs on and returns without waiting.
#ifndef XTTS_TRAIN_CUDA_COMMON_CUH
#define XTTS_TRAIN_CUDA_COMMON_CUH

#include "common/xtts_common.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace {

const int THREADS = 256;
const int WARPS = THREADS / 32;  // rows a block handles in the row-wise kernels

inline unsigned blocks_for(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }
inline unsigned row_blocks(size_t rows) { return (unsigned)((rows + WARPS - 1) / WARPS); }

typedef __nv_bfloat16 bf16;

__device__ inline float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// the row a warp of a row-wise kernel works on (uniform across the warp), and its lane
__device__ inline size_t warp_row() { return blockIdx.x * (size_t)WARPS + threadIdx.x / 32; }
__device__ inline int lane_id() { return threadIdx.x & 31; }

// a staged batch (train/model.h's xtts_model_batch) with its arrays on the device
struct batch_dev {
    int B, T, text_stride, mel_stride;
    const int *text, *n_text, *n_frames;
    const float *mel;
};

// dst (n) = src rounded to bf16
__global__ void k_to_bf16(bf16 *dst, const float *src, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = __float2bfloat16(src[i]);
}

// Column sums over N rows of C in two deterministic passes. Pass one: block (x, y) sums
// columns 32x.. of the rows of row block y into partial[y*C + c] (threads along x read
// consecutive columns; the 8 threads along y take every 8th row, added in a fixed order).
// With inp, also the layer norm's weight gradient sum of (inp - mean) * rstd * dout.
const int CS_Y = 8;
__global__ void k_colsum_partial(float *pw, float *pb, const float *dout, const float *inp, const float *mean,
                                 const float *rstd, int N, int C, int rows_per) {
    __shared__ float shb[CS_Y][33], shw[CS_Y][33];
    int tx = threadIdx.x, ty = threadIdx.y, c = blockIdx.x * 32 + tx;
    int r0 = blockIdx.y * rows_per, r1 = min(N, r0 + rows_per);
    float sb = 0.0f, sw = 0.0f;
    if (c < C)
        for (int r = r0 + ty; r < r1; r += CS_Y) {
            float d = dout[(size_t)r * C + c];
            sb += d;
            if (inp) sw += (inp[(size_t)r * C + c] - mean[r]) * rstd[r] * d;
        }
    shb[ty][tx] = sb;
    shw[ty][tx] = sw;
    __syncthreads();
    if (ty != 0 || c >= C) return;
    for (int k = 1; k < CS_Y; k++) sb += shb[k][tx], sw += shw[k][tx];
    pb[(size_t)blockIdx.y * C + c] = sb;
    if (pw) pw[(size_t)blockIdx.y * C + c] = sw;
}

// pass two: the partials of each column in row-block order, added into db (and dw)
__global__ void k_colsum_final(float *dw, float *db, const float *pw, const float *pb, int nblocks, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float sb = 0.0f, sw = 0.0f;
    for (int y = 0; y < nblocks; y++) {
        sb += pb[(size_t)y * C + c];
        if (pw) sw += pw[(size_t)y * C + c];
    }
    db[c] += sb;
    if (dw) dw[c] += sw;
}

const int COLSUM_MAX_BLOCKS = 1024;

// The column sums' partials: 2 * COLSUM_MAX_BLOCKS rows of width floats, width the widest
// matrix summed by columns.
struct colsum_buf {
    float *partial;
    size_t width;
};

// column sums of x (N,C) added into db, and with inp (the layer norm's input) the weight
// gradient's sum of (inp - mean) * rstd * x into dw
void colsum(cudaStream_t stream, colsum_buf cs, float *dw, float *db, const float *x, const float *inp,
            const float *mean, const float *rstd, int N, int C) {
    int rows_per = 64;
    if ((N + rows_per - 1) / rows_per > COLSUM_MAX_BLOCKS) rows_per = (N + COLSUM_MAX_BLOCKS - 1) / COLSUM_MAX_BLOCKS;
    int nb = (N + rows_per - 1) / rows_per;
    if (nb == 0) return;
    float *pb = cs.partial, *pw = inp ? cs.partial + (size_t)COLSUM_MAX_BLOCKS * cs.width : nullptr;
    dim3 grid((C + 31) / 32, nb), block(32, CS_Y);
    k_colsum_partial<<<grid, block, 0, stream>>>(pw, pb, x, inp, mean, rstd, N, C, rows_per);
    k_colsum_final<<<blocks_for(C), THREADS, 0, stream>>>(dw, db, pw, pb, nb, C);
}

xtts_status cuda_fail(xtts_error *err, cudaError_t e, const char *what) {
    return xtts_error_set(err, XTTS_EIO, "cuda: %s: %s", what, cudaGetErrorString(e));
}

}  // namespace

// a CUDA or cuBLAS call whose failure returns XTTS_EIO from the calling function (which has err)
#define CU(call, what)                                      \
    do {                                                    \
        cudaError_t e_ = (call);                            \
        if (e_ != cudaSuccess) return cuda_fail(err, e_, what); \
    } while (0)
#define BL(call, what)                                                                        \
    do {                                                                                      \
        cublasStatus_t s_ = (call);                                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                      \
            return xtts_error_set(err, XTTS_EIO, "cublas: %s failed (status %d)", what, (int)s_); \
    } while (0)

#endif
