build-v2/obj/tests/test_common.o: tests/test_common.c \
 common/xtts_common.h
common/xtts_common.h:
