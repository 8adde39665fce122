build-v2/obj/tests/test_mel.o: tests/test_mel.c kernels/mel.h \
 common/xtts_common.h kernels/mel_math.h
kernels/mel.h:
common/xtts_common.h:
kernels/mel_math.h:
