build-v2/obj/cache/writer.o: cache/writer.c cache/writer.h \
 common/xtts_common.h formats/manifest.h kernels/mel.h \
 cache/writer_internal.h formats/record.h
cache/writer.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
cache/writer_internal.h:
formats/record.h:
