build-v2/obj/prep/n2w_es.o: prep/n2w_es.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
