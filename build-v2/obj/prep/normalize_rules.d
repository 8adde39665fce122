build-v2/obj/prep/normalize_rules.o: prep/normalize_rules.c \
 prep/normalize_rules.h
prep/normalize_rules.h:
