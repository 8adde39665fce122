build-v2/obj/kernels/mel.o: kernels/mel.c kernels/mel.h \
 common/xtts_common.h kernels/mel_fftw_wisdom.h kernels/mel_math.h
kernels/mel.h:
common/xtts_common.h:
kernels/mel_fftw_wisdom.h:
kernels/mel_math.h:
