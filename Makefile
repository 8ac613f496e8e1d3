# teamkit — make demo: install and run the dispatch loop; make test: every test.
GO      ?= go
GOBIN   := $(shell $(GO) env GOBIN)
ifeq ($(GOBIN),)
GOBIN   := $(shell $(GO) env GOPATH)/bin
endif

.PHONY: install demo test bench fuzz

install:
	$(GO) install ./cmd/...

demo: install
	PATH="$(GOBIN):$$PATH" sh scripts/demo.sh

# Everything, then the race detector on the concurrent code only (modernc's
# SQLite is slow under -race).
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race -run 'Concurren|Race|Drain' ./pkg/mailbox/

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2x ./pkg/mailbox/
	sh scripts/bench.sh

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzWrap -fuzztime 60s ./pkg/fence/
