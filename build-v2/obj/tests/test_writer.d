build-v2/obj/tests/test_writer.o: tests/test_writer.c cache/writer.h \
 common/xtts_common.h formats/manifest.h kernels/mel.h formats/record.h
cache/writer.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
