build-v2/obj/prep/n2w_ru.o: prep/n2w_ru.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
