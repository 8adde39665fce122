build-v2/obj/tests/test_langid.o: tests/test_langid.c \
 common/xtts_common.h prep/langid.h prep/normalize.h
common/xtts_common.h:
prep/langid.h:
prep/normalize.h:
