build-v2/obj/cache/verify.o: cache/verify.c cache/verify.h \
 common/xtts_common.h formats/manifest.h kernels/mel.h formats/record.h \
 cache/reader.h prep/audio.h prep/melcache.h
cache/verify.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
cache/reader.h:
prep/audio.h:
prep/melcache.h:
