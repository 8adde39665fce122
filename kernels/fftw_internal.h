/* fftw_internal.h — FFTW plans for every kernel that needs one, made and destroyed under the
 * one process-wide lock (FFTW's planner is not thread-safe; executing a plan is), with the
 * library's built-in wisdom (kernels/mel.c holds both). Not installed by `make install`.
 */
#ifndef XTTS_FFTW_INTERNAL_H
#define XTTS_FFTW_INTERNAL_H

#include <fftw3.h>

/* A real-to-complex plan of size n over these buffers (FFTW_DESTROY_INPUT), NULL when FFTW
 * cannot make one. */
fftwf_plan xtts_fftw_plan_r2c(int n, float *in, fftwf_complex *out);
/* NULL is allowed. */
void xtts_fftw_destroy_plan(fftwf_plan plan);

#endif
