build-v2/obj/xtts-cache-verify.o: cache/xtts-cache-verify.c \
 cache/verify.h common/xtts_common.h formats/manifest.h kernels/mel.h \
 formats/record.h
cache/verify.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
