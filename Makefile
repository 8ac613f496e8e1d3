# teamkit — make demo: install and run the dispatch loop; make test: every test.
GO      ?= go
GOBIN   := $(shell $(GO) env GOBIN)
ifeq ($(GOBIN),)
GOBIN   := $(shell $(GO) env GOPATH)/bin
endif

# The version --version prints: the tag or commit of this checkout.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS := -X github.com/teamkit/teamkit/internal/command.version=$(VERSION)
# urfave/cli's man-page renderer (go-md2man, blackfriday) stays out of the
# commands: only make docs (internal/docgen) renders man pages.
TAGS    := urfave_cli_no_docs

# The real agent CLIs the built-in types are tested with (TestAgents), at the
# versions the README names, in a cache outside the repository.
CACHE_HOME ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)
AGENT_CLIS_DIR ?= $(CACHE_HOME)/teamkit/agent-clis
AGENT_CLIS := @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 @google/gemini-cli@0.61.0 opencode-ai@1.18.33

.PHONY: install demo test bench bench-agents fuzz docs agent-clis release

# CGO_ENABLED=0, as make release: static binaries, which start without the
# dynamic loader and libc (net would otherwise link them for its resolver).
install:
	CGO_ENABLED=0 $(GO) install -tags $(TAGS) -ldflags "$(LDFLAGS)" ./cmd/...

# Man pages (docs/man) and bash/zsh/fish completions (completions/), made
# from the commands' definitions; TestGeneratedDocs checks they are current.
docs:
	$(GO) run ./scripts/gendocs

demo: install
	PATH="$(GOBIN):$$PATH" sh scripts/demo.sh

# Everything, then the race detector on the packages with concurrent code
# (modernc's SQLite is slow under -race, so -short skips the multi-process
# tests there: they already ran, and their concurrency is between processes).
# testsummary shows what failed and closes each run with what passed and
# what was skipped, and why, and names a test that hung (still running at
# -timeout). -timeout 30m: on a busy machine the root package (its
# end-to-end scripts and the cross-build) took more than go test's default
# 10m, and it takes 6 on 2 idle cores; a hang ends the run well inside CI's
# 90 minutes. -parallel 4 on 2 cores: most end-to-end scripts wait
# (on agents, parks, leases) more than they compute, and the root
# package's script, agent and cross-build tests run side by side.
test:
	$(GO) vet ./...
	$(GO) build -o /dev/null ./scripts/testsummary
	$(GO) test -count=1 -timeout 30m -parallel 4 -json ./... | $(GO) run ./scripts/testsummary -label "go test ./..."
	$(GO) test -count=1 -race -short -json ./pkg/mailbox/ ./pkg/escalate/ ./pkg/spawn/ ./pkg/github/... ./pkg/slack/... ./internal/command/ ./internal/cmd/inbox/ ./internal/cmd/spawn/ ./pkg/launch/ | $(GO) run ./scripts/testsummary -label "go test -race -short"

# The six commands, and teamkit-postgres (inbox, stale and ready run it for a
# postgres:// mailbox), for every platform teamkit supports, in
# dist/<os>-<arch>/, with dist/SHA256SUMS (the list matches TestCrossBuild).
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 freebsd/amd64
COMMANDS  := inbox stale ready spawn ask resume teamkit-postgres
release:
	rm -rf dist
	set -e; for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		for c in $(COMMANDS); do \
			CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -tags $(TAGS) -ldflags "$(LDFLAGS)" \
				-o dist/$$os-$$arch/$$c$$ext ./cmd/$$c; \
		done; \
	done
	cd dist && find . -type f ! -name SHA256SUMS | sort | xargs sha256sum > SHA256SUMS

# The figures in docs/BENCHMARKS.md come from these.
bench: install
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./pkg/mailbox/
	bash scripts/bench.sh
	PATH="$(GOBIN):$$PATH" $(GO) run ./scripts/benchhandshake -n 30
	PATH="$(GOBIN):$$PATH" $(GO) run ./scripts/benchwait -n 50 -idle 20s -runs 30

# Spawn-to-ready of each built-in AI type with its real CLI, and a resume
# pass re-spawning 4 of them, one at a time and side by side, with the model
# taking 2s a turn (docs/BENCHMARKS.md).
bench-agents: install agent-clis
	PATH="$(GOBIN):$$PATH" $(GO) run ./scripts/benchhandshake -agents claude,codex,gemini,opencode -n 5 -clis "$(AGENT_CLIS_DIR)/node_modules/.bin"
	PATH="$(GOBIN):$$PATH" $(GO) run ./scripts/benchhandshake -agents claude,codex,gemini,opencode -resume -n 4 -latency 2s -clis "$(AGENT_CLIS_DIR)/node_modules/.bin"

# Idempotent: does nothing when these versions are installed already.
agent-clis:
	sh scripts/agent-clis.sh "$(AGENT_CLIS_DIR)" $(AGENT_CLIS)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzWrap -fuzztime 60s ./pkg/fence/
