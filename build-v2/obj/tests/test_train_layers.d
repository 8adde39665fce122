build-v2/obj/tests/test_train_layers.o: tests/test_train_layers.c \
 train/model.h common/xtts_common.h
train/model.h:
common/xtts_common.h:
