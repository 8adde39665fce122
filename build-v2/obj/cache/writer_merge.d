build-v2/obj/cache/writer_merge.o: cache/writer_merge.c cache/writer.h \
 common/xtts_common.h formats/manifest.h kernels/mel.h \
 cache/writer_internal.h
cache/writer.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
cache/writer_internal.h:
