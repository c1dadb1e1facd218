# karat: analytical roofline and design-space explorer for LLM decode.
# Targets: all (default), run, test, bench, docs, install, clean.  See README.md.

CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror \
           -Wno-format-truncation -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla \
           -Isrc -DKARAT_DATADIR='"$(CURDIR)"'
# The three Debian libraries link statically (their -dev packages ship the
# archives): resolving GSL's symbols at every start cost a quarter of a
# millisecond, a tenth of a what-if query.
LDLIBS  = -fopenmp -Wl,-Bstatic -linih -lcsv -lgsl -lgslcblas -Wl,-Bdynamic -lm -lpthread

VERSION := 0.9.0
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null)
KARAT_VERSION := $(VERSION)$(if $(GIT_REV), (git $(GIT_REV)))
PREFIX  ?= /usr/local
DESTDIR ?=

B       := build
LIB_SRC := $(wildcard src/base/*.c src/io/*.c src/sparse/*.c src/model/*.c src/hw/*.c src/workload/*.c src/cost/*.c src/sched/*.c src/solve/*.c src/zoo/*.c src/valid/*.c src/study/*.c src/kernels/*.c)
# The validation kernels are tuned for the machine they run on.
KERNEL_CFLAGS = -O3 -march=native -mprefer-vector-width=512 -ffast-math -ffp-contract=fast -fopenmp
CLI_SRC := $(wildcard src/cli/*.c)
TST_SRC := $(wildcard tests/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o)
TST_OBJ := $(TST_SRC:%.c=$(B)/%.o)
HDRS    := $(wildcard src/*.h src/*/*.h src/*/*.def tests/*.h)

.PHONY: all run test bench sanitize memcheck clean deps deps-test install uninstall fuzz docs FORCE
all: $(B)/karat

$(B)/.deps-build:
	@scripts/deps.sh build
	@mkdir -p $(B) && touch $@
$(B)/.deps-test:
	@scripts/deps.sh test
	@mkdir -p $(B) && touch $@

$(B)/%.o: %.c $(HDRS) | $(B)/.deps-build
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(CFLAGS) -c $< -o $@

# Test objects include Criterion's headers: install it before compiling them.
$(TST_OBJ): | $(B)/.deps-test

# The version string, rewritten only when it changes (main.o depends on it).
$(B)/.version: FORCE | $(B)/.deps-build
	@echo '$(KARAT_VERSION)' | cmp -s - $@ || echo '$(KARAT_VERSION)' > $@
$(B)/src/cli/main.o: $(B)/.version
$(B)/src/cli/main.o: CFLAGS += -DKARAT_VERSION='"$(KARAT_VERSION)"'
FORCE:

$(B)/src/cli/bench_run.o: CFLAGS += -DKARAT_KERNEL_FLAGS='"$(KERNEL_CFLAGS)"'
# The evaluator runs a solve's samples on threads (design.threads).
$(B)/src/solve/eval.o: CFLAGS += -fopenmp

$(B)/src/kernels/%.o: src/kernels/%.c $(HDRS) | $(B)/.deps-build
	@mkdir -p $(dir $@)
	@echo "  CC    $< (kernel flags)"
	@$(CC) $(CFLAGS) $(KERNEL_CFLAGS) -c $< -o $@

# The roofline checks test for NaN: no fast-math there.
$(B)/src/kernels/roofcheck.o: src/kernels/roofcheck.c $(HDRS) | $(B)/.deps-build
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(CFLAGS) -c $< -o $@

# The archive is rebuilt from scratch, and whenever the list of objects
# changes: a source removed or renamed leaves no stale member behind.
$(B)/lib.objs: FORCE
	@mkdir -p $(B)
	@echo '$(LIB_OBJ)' | cmp -s - $@ || echo '$(LIB_OBJ)' > $@

$(B)/libkarat.a: $(LIB_OBJ) $(B)/lib.objs
	@rm -f $@
	@ar rcs $@ $(LIB_OBJ)

$(B)/karat: $(CLI_OBJ) $(B)/libkarat.a
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(B)/libkarat.a $(LDLIBS)

$(B)/karat-tests: $(TST_OBJ) $(B)/libkarat.a | $(B)/.deps-test
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) -o $@ $(TST_OBJ) $(B)/libkarat.a -lcriterion $(LDLIBS)

$(B)/bench_ops: bench/bench_ops.c bench/bench_util.h $(B)/libkarat.a $(HDRS)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) -DBENCH_CFLAGS='"$(filter-out -DKARAT_DATADIR%,$(CFLAGS))"' -o $@ $< $(B)/libkarat.a $(LDLIBS)

# The main job: the studies (results/STUDY*.csv, .md, .png), then the
# figures' data.  Each figure's titles come from its CSVs (plots/figures.ini),
# and each figure's design point from an answer, not from a number here:
# - the timeline: DeepSeek-V3.2 on gpu-karat's own answer under OFMS+CMR,
#   and naive at that batch and micro-batch count;
# - the step-time CDF: the headline study's best GPU + KARAT configuration
#   for DeepSeek-V3.2 on agentic, and GPU-only on as many GPUs;
# - the operator roofline: one step of DeepSeek-V3.2 at that same KARAT
#   answer's batch and GPUs, at a context of 128K (assumed: a long-context
#   decode step; the roofline shows each operator's intensity).
POINT := --model deepseek-v3.2 --workload agentic
# KARAT's best for DeepSeek-V3.2 on agentic: its GPUs, devices and batch
BEST  := awk -F, '$$2 == "deepseek-v3.2" && $$4 == "agentic" && $$5 == "gpu-karat" && $$6 == "best" { print $$7, $$8, $$10 }' results/headline.csv
run: $(B)/karat
	$(B)/karat run
	$(B)/karat validate
	$(B)/karat solve $(POINT) --system gpu-karat --timeline results/timeline-ofms-cmr.csv --format csv > results/timeline-answer.csv
	$(B)/karat query $(POINT) --system gpu-karat --schedule naive --timeline results/timeline-naive.csv \
		$$(awk -F, 'NR == 2 { print "--batch", $$7, "--microbatches", $$6 }' results/timeline-answer.csv) > /dev/null
	$(B)/karat sweep sweeps/ablation.ini -j 2 --output results/ablation.csv
	$(B)/karat sweep sweeps/ablation-ep.ini -j 2 --output results/ablation-ep.csv
	$(B)/karat sweep sweeps/sensitivity.ini -j 2 --output results/sensitivity.csv
	$(B)/karat sweep sweeps/tbt-batch.ini -j 2 --output results/tbt-batch.csv
	$(BEST) > results/best-point.txt && test -s results/best-point.txt
	$(B)/karat solve $(POINT) --system gpu-karat --step-times results/steps-gpu-karat.csv \
		$$(awk '{ print "--set system.gpus=" $$1, "--set system.memdevs=" $$2 }' results/best-point.txt) > /dev/null
	$(B)/karat solve $(POINT) --system gpu-only --step-times results/steps-gpu-only.csv \
		$$(awk '{ print "--set system.gpus=" $$1 }' results/best-point.txt) > /dev/null
	$(B)/karat ops --model deepseek-v3.2 --hw h200 --context 128K --roofline results/roofline-h200.csv \
		$$(awk '{ print "--batch", $$3, "--gpus", $$1 }' results/best-point.txt) > /dev/null
	$(B)/karat ops --model deepseek-v3.2 --hw karat --context 128K --roofline results/roofline-karat.csv \
		$$(awk '{ print "--batch", $$3, "--gpus", $$1 }' results/best-point.txt) > /dev/null
	$(B)/karat plot timeline ablation sensitivity tbt-batch pareto cdf ops-roofline

test: $(B)/karat $(B)/karat-tests
	scripts/check-chain.sh $(B)
	KARAT_BIN=$(CURDIR)/$(B)/karat $(B)/karat-tests -j2

$(B)/bench_solve: bench/bench_solve.c bench/bench_util.h $(B)/libkarat.a $(HDRS)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) -o $@ $< $(B)/libkarat.a $(LDLIBS)

bench: $(B)/bench_ops $(B)/bench_solve $(B)/karat
	$(B)/bench_ops $(CURDIR)/$(B)/karat
	$(B)/bench_solve $(CURDIR)/$(B)/karat

# Every test under AddressSanitizer and UBSan (leaks included), in its own
# build folder.  GCC's bounds warnings misfire on sanitised code, so they
# are off there.
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -Wno-array-bounds -Wno-stringop-overflow
sanitize:
	$(MAKE) B=build-san CC="$(CC) $(SAN)" build-san/karat build-san/karat-tests
	ASAN_OPTIONS=detect_leaks=1 KARAT_BIN=$(CURDIR)/build-san/karat build-san/karat-tests -j2

# valgrind's memcheck on a fixed set of commands (scripts/memcheck.sh): any
# uninitialised read, invalid access or definite leak fails it.
memcheck: $(B)/karat
	@scripts/deps.sh memcheck
	scripts/memcheck.sh $(B)/karat

# Fuzzing: one libFuzzer target per loader (fuzz/fuzz.c), the library
# without the CPU kernels, built by clang with ASan and UBSan in
# build-fuzz/; each runs FUZZ_TIME seconds on a seed corpus of the
# project's own files (scripts/fuzz.sh), then build-fuzz/fuzz-report.txt
# says what was found.
FUZZ_TIME    ?= 60
FUZZ_LIB_TARGETS := ini model device link system workload trace units algo override valid sched design
FUZZ_CLI_TARGETS := sweep study shard plot
FUZZ_TARGETS := $(FUZZ_LIB_TARGETS) $(FUZZ_CLI_TARGETS)
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
                -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Isrc -DKARAT_DATADIR='"$(CURDIR)"'
FUZZ_OBJ     := $(filter-out build-fuzz/src/kernels/%,$(LIB_SRC:%.c=build-fuzz/%.o))
FUZZ_CLI_OBJ := $(filter-out build-fuzz/src/cli/bench_run.o build-fuzz/src/cli/cmd_bench.o \
                 build-fuzz/src/cli/cmd_calibrate.o,$(CLI_SRC:%.c=build-fuzz/%.o))
# the CLI's main becomes karat_main beside libFuzzer's own
build-fuzz/src/cli/main.o: FUZZ_FLAGS += -Dmain=karat_main -DKARAT_VERSION='"fuzz"' -DKARAT_NO_SIGNALS
build-fuzz/src/cli/cmd_bench_stub.o: fuzz/cmd_bench_stub.c $(HDRS) | build-fuzz/.deps
	@mkdir -p $(dir $@)
	@clang $(FUZZ_FLAGS) -c $< -o $@
build-fuzz/.deps:
	@scripts/deps.sh fuzz
	@mkdir -p build-fuzz && touch $@
build-fuzz/%.o: %.c $(HDRS) | build-fuzz/.deps
	@mkdir -p $(dir $@)
	@echo "  CLANG $<"
	@clang $(FUZZ_FLAGS) -c $< -o $@
$(FUZZ_LIB_TARGETS:%=build-fuzz/fuzz-%): build-fuzz/fuzz-%: fuzz/fuzz.c $(FUZZ_OBJ) $(HDRS)
	@echo "  LINK  $@"
	@clang $(FUZZ_FLAGS) -fsanitize=fuzzer -DFUZZ_$* -o $@ fuzz/fuzz.c $(FUZZ_OBJ) \
		-linih -lcsv -lgsl -lgslcblas -lm -lpthread
$(FUZZ_CLI_TARGETS:%=build-fuzz/fuzz-%): build-fuzz/fuzz-%: fuzz/fuzz.c $(FUZZ_OBJ) $(FUZZ_CLI_OBJ) \
		build-fuzz/src/cli/cmd_bench_stub.o $(HDRS)
	@echo "  LINK  $@"
	@clang $(FUZZ_FLAGS) -fsanitize=fuzzer -DFUZZ_$* -o $@ fuzz/fuzz.c $(FUZZ_CLI_OBJ) \
		build-fuzz/src/cli/cmd_bench_stub.o $(FUZZ_OBJ) -linih -lcsv -lgsl -lgslcblas -lm -lpthread
.SECONDARY: $(FUZZ_OBJ) $(FUZZ_CLI_OBJ)
fuzz: $(FUZZ_TARGETS:%=build-fuzz/fuzz-%)
	@scripts/fuzz.sh $(FUZZ_TIME) $(FUZZ_TARGETS)

# karat in $(PREFIX)/bin, its data (models, hw, workloads, plots, validation, studies, sweeps) in
# $(PREFIX)/share/karat, where the installed binary looks for it
# (KARAT_HOME overrides).  DESTDIR stages a package.
DATA_DIRS := models hw workloads plots validation studies sweeps
install: $(B)/karat
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/karat $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/karat $(DESTDIR)$(PREFIX)/bin/karat
	cp -R $(DATA_DIRS) $(DESTDIR)$(PREFIX)/share/karat/
	install -m 644 karat.1 $(DESTDIR)$(PREFIX)/share/man/man1/karat.1
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/karat $(DESTDIR)$(PREFIX)/share/man/man1/karat.1
	rm -rf $(DESTDIR)$(PREFIX)/share/karat

# The reference the binary generates (docs/formats.md, karat.1; tests fail
# when they differ from it), and the README's figures: make run's, copied
# to docs/img/ with the checksum of each CSV they were drawn from
# (docs/img/SOURCES; a test fails when results/ holds other data).
DOC_FIGS := headline:headline.csv cdf:steps-gpu-only.csv,steps-gpu-karat.csv \
            ablation:ablation.csv,ablation-ep.csv tbt-batch:tbt-batch.csv pareto:tbt-batch.csv \
            sensitivity:sensitivity.csv ops-roofline:roofline-h200.csv,roofline-karat.csv \
            timeline:timeline-naive.csv,timeline-ofms-cmr.csv validation:validation.csv \
            axes:axes.csv reconcile:reconcile.csv uncertainty:uncertainty.csv,uncertainty-drivers.csv
docs: $(B)/karat
	$(B)/karat help formats > docs/formats.md.tmp && mv docs/formats.md.tmp docs/formats.md
	$(B)/karat help man > karat.1.tmp && mv karat.1.tmp karat.1
	@[ -f results/headline.png ] || { echo "make docs: run make run first (no results/headline.png)" >&2; exit 1; }
	@mkdir -p docs/img && : > docs/img/SOURCES.tmp
	@for f in $(DOC_FIGS); do \
		name=$${f%%:*}; csvs=$${f#*:}; \
		cp results/$$name.png docs/img/$$name.png || exit 1; \
		for c in $$(echo $$csvs | tr , ' '); do \
			echo "$$name.png $$c $$(cksum < results/$$c | cut -d' ' -f1,2)" >> docs/img/SOURCES.tmp; \
		done; \
	done
	@{ echo '# Results'; echo; \
	   echo 'Generated by `make docs` from the `results/STUDY.md` that `karat run` writes:'; \
	   echo 'every number here is the current binary'"'"'s.'; echo; \
	   cat results/headline.md; echo; cat results/axes.md; echo; cat results/reconcile.md; echo; cat results/uncertainty.md; echo; cat results/training-free.md; echo; \
	   echo '## validation: the model against published kernel timings'; echo; \
	   echo 'Mean absolute error of each table `karat validate` prices (`results/validation.csv`);'; \
	   echo 'role `fit`: a shipped value is fitted on it, `check`: none is (out of sample).'; echo; \
	   echo '| table | role | rows | mean abs. error |'; echo '|---|---|---:|---:|'; \
	   awk -F, 'NR > 1 { a = ($$19 < 0 ? -$$19 : $$19); n[$$1]++; e[$$1] += a; t++; s += a; rn[$$NF]++; re[$$NF] += a; role[$$1] = $$NF; if (!(($$1) in o)) o[$$1] = ++k } \
	            END { for (f in o) r[o[f]] = f; for (i = 1; i <= k; i++) printf "| `%s` | %s | %d | %.1f%% |\n", r[i], role[r[i]], n[r[i]], e[r[i]] / n[r[i]]; \
	                  printf "| all | | %d | %.1f%% |\n", t, s / t; \
	                  if (rn["fit"]) printf "| in sample | fit | %d | %.1f%% |\n", rn["fit"], re["fit"] / rn["fit"]; \
	                  if (rn["check"]) printf "| out of sample | check | %d | %.1f%% |\n", rn["check"], re["check"] / rn["check"] }' results/validation.csv; } > docs/results.md.tmp
	@for s in headline.md axes.md reconcile.md uncertainty.md training-free.md validation.csv; do \
		echo "results.md $$s $$(cksum < results/$$s | cut -d' ' -f1,2)" >> docs/img/SOURCES.tmp; \
	done
	@mv docs/results.md.tmp docs/results.md && mv docs/img/SOURCES.tmp docs/img/SOURCES
	@echo "make docs: docs/formats.md, docs/results.md, karat.1 and docs/img/ written"

clean:
	rm -rf $(B) build-san build-fuzz
