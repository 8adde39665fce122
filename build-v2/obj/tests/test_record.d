build-v2/obj/tests/test_record.o: tests/test_record.c \
 common/xtts_common.h formats/record.h
common/xtts_common.h:
formats/record.h:
