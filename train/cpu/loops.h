/* cpu/loops.h — one copy of the trainer's CPU loops: the layer files of train/cpu/ in order,
 * and the copy's table of them (train/cpu_loops_internal.h). One file per layer kind, each a
 * forward/backward pair (or the loss's one pass, or the optimizer's passes) with the shapes in
 * comments, in the manner of llm.c's train_gpt2.c:
 *   sums.h       sums in a fixed order (what the layers reduce with)
 *   encoder.h    tokens, positions and the mel frame projection in
 *   layernorm.h  layer normalization
 *   matmul.h     the blocked matrix product and the linear layer (bias included)
 *   attention.h  causal multi-head self-attention
 *   gelu.h       GELU and the residual sum, element by element
 *   loss.h       the mel L1 and stop BCE, with their gradient
 *   adamw.h      the gradient norm, clipping and AdamW over all the parameters
 * and the XTTS GPT's (train/xtts_gpt_model.c):
 *   groupnorm.h  group norm of the conditioning encoder
 *   mha.h        multi-head attention over strided views, causal and key masks
 *   crossentropy.h  cross-entropy with ignored rows, with its gradient
 *   perceiver.h  the perceiver resampler's GEGLU and RMS norm
 * The per-element math they share with the CUDA kernels is train/train_math.h.
 *
 * Not a header of declarations: train/cpu_loops.c compiles this text once per instruction set
 * (x86-64-v4, x86-64-v3, the baseline; train/cpu_level.h), each time under its own
 * `#pragma GCC target` and with LOOPS_NAME naming that copy's functions, and the trainer runs
 * the widest copy the CPU has. Everything in the layer files is static and renamed per copy
 * (each file lists its own names at its top); types, enums and constants shared by the copies
 * are defined once, under a guard of the file that owns them.
 *
 * Every copy computes the same bits, so the instruction set changes the speed only:
 *  - no expression is contracted into a fused multiply-add (ISO C mode, -std=c17: gcc's
 *    default there is -ffp-contract=off), except the matrix product's terms, which are one
 *    fused multiply-add each in every copy: the FMA instruction where the copy has it, an exact
 *    emulation where it has not (fma_emulated, train/cpu/matmul.h);
 *  - sums run in an order fixed by the data's shape: SUM_LANES running sums whatever the
 *    register width, added pairwise (train/cpu/sums.h);
 *  - the matrix product skips the zero terms of a triangular operand by blocks of TRI_ROWS rows,
 *    which every copy's tile height divides, so every copy adds the same terms.
 *
 * A new layer kind: a file here with its names (LOOPS_NAME) and its pair, included below in
 * the order of use (a file may call only those above it), and its functions added to
 * xtts_cpu_loops (train/cpu_loops_internal.h) and to the table at the end, in the same order.
 */

#define loops LOOPS_NAME(loops)

/* The per-element math that the CUDA kernels share (train/train_math.h), compiled into this
 * copy too, under this copy's names: a function of another instruction set than its caller's
 * is not inlined, and these run once per element. */
#define xtts_exp LOOPS_NAME(xtts_exp)
#define xtts_tanh LOOPS_NAME(xtts_tanh)
#define xtts_gelu LOOPS_NAME(xtts_gelu)
#define xtts_gelu_grad LOOPS_NAME(xtts_gelu_grad)
#define xtts_softplus LOOPS_NAME(xtts_softplus)
#define xtts_sigmoid LOOPS_NAME(xtts_sigmoid)
#define xtts_bce_logits LOOPS_NAME(xtts_bce_logits)
#define xtts_bce_logits_grad LOOPS_NAME(xtts_bce_logits_grad)
#define xtts_adamw_update LOOPS_NAME(xtts_adamw_update)
#undef XTTS_TRAIN_MATH_H
#include "train/train_math.h"

#include "train/cpu/sums.h"
#include "train/cpu/encoder.h"
#include "train/cpu/layernorm.h"
#include "train/cpu/matmul.h"
#include "train/cpu/attention.h"
#include "train/cpu/gelu.h"
#include "train/cpu/loss.h"
#include "train/cpu/adamw.h"
#include "train/cpu/groupnorm.h"
#include "train/cpu/mha.h"
#include "train/cpu/crossentropy.h"
#include "train/cpu/perceiver.h"

/* ---- this copy's table ------------------------------------------------------------------ */

static const xtts_cpu_loops loops = {
    encoder_forward,  encoder_backward,  layernorm_forward, layernorm_backward,
    matmul_forward,   matmul_backward,   attention_forward, attention_backward,
    gelu_forward,     gelu_backward,     residual_forward,  mel_stop_loss_forward_backward,
    grad_norm,        scale_values,      adamw_step,
    groupnorm_forward, groupnorm_backward, mha_forward,   mha_backward, crossentropy_forward_backward,
    geglu_forward,    geglu_backward,    rmsnorm_forward,   rmsnorm_backward,
};
