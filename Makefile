# make demo: study `demo` (slo-cascade, 40 trials) on the embedded SQLite
#   default, ./optimize.db; run again, it leaves an existing `demo` as it is
#   (--if-absent: finished, it shows the report; interrupted, it runs on to
#   40) and never deletes one.
# make test: vet, every test and a few seconds of each API fuzz target (a few
#   minutes on 2 cores).
# make bench: benchmarks and long quality studies (see BENCHMARKS.md).
GO      ?= go
BIN     := bin/optimize
BASELINE_FLAGS := --workload orthogonal-slo --seeds 42,43,44 --num-instances 8 \
	--routing-policy weighted --routing-scorers prefix-affinity:3,queue-depth:2,kv-utilization:2 \
	--long-prefill-token-threshold 256

.PHONY: all build demo baseline test bench fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/optimize

demo: build
	./$(BIN) study create slo-cascade --trials 40 --name demo --if-absent
	@echo
	@echo "study demo is ready; the README's quick start goes on with it:"
	@echo "  $(BIN) study show demo                 # the report again"
	@echo "  $(BIN) study report demo -o demo.html  # one page with the pictures"
	@echo "  $(BIN) serve                           # the dashboard on http://127.0.0.1:8080/"

baseline: build
	./$(BIN) simulate $(BASELINE_FLAGS)

# The API's fuzz targets (internal/server/fuzz_test.go) run 2,000 inputs
# each here (a count, not a duration: a busy machine slows the run but
# never cuts it short), for longer under make bench and make fuzz; go test
# alone runs their seeds.
SERVER_FUZZ := FuzzWorkloadName FuzzCreateStudyRequest

test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...
	for f in $(SERVER_FUZZ); do $(GO) test ./internal/server -run '^$$' -fuzz "^$$f$$" -fuzztime 2000x || exit 1; done

# The search-quality studies (TPE against random, studies/quality_search_test.go;
# our samplers side by side with Debian's python3-optuna driving evaluate,
# internal/cli/samplers_quality_test.go) are built only with the quality tag,
# so make test never sees them.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m ./...
	for f in $(SERVER_FUZZ); do $(GO) test ./internal/server -run '^$$' -fuzz "^$$f$$" -fuzztime 120s || exit 1; done
	$(GO) vet -tags quality ./studies
	$(GO) test -tags quality ./studies -run '^(TestTPEAgainstRandom|TestHypervolumeBySampler|TestHistoryBoundQuality|TestJointSLORecord|TestCapacityJointAgainstTheGrid|TestPDSplitAgainstTheGrid|TestCapacityPDServingByWorkload)$$' -count=1 -v -timeout 60m
	$(GO) vet -tags quality ./internal/cli
	$(GO) test -tags quality ./internal/cli -run '^(TestCalibrateFitLlama2HoldsOut|TestSamplersAgainstOptuna)$$' -count=1 -v -timeout 60m

fuzz:
	$(GO) test ./simcore/kv -run '^$$' -fuzz FuzzAllocator -fuzztime 60s
	$(GO) test ./simcore/kv -run '^$$' -fuzz FuzzMatchesReference -fuzztime 60s
	for f in $(SERVER_FUZZ); do $(GO) test ./internal/server -run '^$$' -fuzz "^$$f$$" -fuzztime 60s || exit 1; done

clean:
	rm -rf bin
