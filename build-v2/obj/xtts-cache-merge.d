build-v2/obj/xtts-cache-merge.o: cache/xtts-cache-merge.c cache/writer.h \
 common/xtts_common.h formats/manifest.h kernels/mel.h
cache/writer.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
