build-v2/obj/xtts-cache-inspect.o: cache/xtts-cache-inspect.c \
 cache/inspect.h cache/reader.h common/xtts_common.h formats/manifest.h \
 kernels/mel.h formats/record.h
cache/inspect.h:
cache/reader.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
