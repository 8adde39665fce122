build-v2/obj/tests/test_train_model.o: tests/test_train_model.c \
 train/model.h common/xtts_common.h
train/model.h:
common/xtts_common.h:
