# compile.mk: compiles every C file under $(SRC) into an object in the
# current folder (make -f compile.mk -C OUT SRC=DIR). Used by sc-compile.
# SPDX-License-Identifier: MIT
SRCS := $(sort $(shell find $(SRC) -name '*.c'))
OBJS := $(subst /,_,$(patsubst $(SRC)/%.c,%.o,$(SRCS)))
CFLAGS := -std=c11 -O2 -w -I$(SRC) -I/usr/include/lua5.4

all: $(OBJS)

define one
$(subst /,_,$(patsubst $(SRC)/%.c,%.o,$(1))): $(1)
	gcc $$(CFLAGS) -c -o $$@ $$<
endef
$(foreach s,$(SRCS),$(eval $(call one,$(s))))
