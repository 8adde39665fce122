build-v2/obj/cache/reader.o: cache/reader.c cache/reader.h \
 common/xtts_common.h formats/manifest.h kernels/mel.h formats/record.h
cache/reader.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
