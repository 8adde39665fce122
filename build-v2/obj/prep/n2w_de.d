build-v2/obj/prep/n2w_de.o: prep/n2w_de.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
