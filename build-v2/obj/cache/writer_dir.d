build-v2/obj/cache/writer_dir.o: cache/writer_dir.c \
 cache/writer_internal.h common/xtts_common.h
cache/writer_internal.h:
common/xtts_common.h:
