build-v2/obj/prep/n2w_en.o: prep/n2w_en.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
