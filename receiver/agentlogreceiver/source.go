// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"
)

// sourceKind is the shape of an agent's data, which decides how it is read.
type sourceKind int

const (
	// sourceJSONL: files records are appended to, one JSON object a line
	// (Claude Code, Codex, Pi): read by the tailer (tail.go, source_jsonl.go).
	sourceJSONL sourceKind = iota
	// sourceSnapshot: whole files rewritten in place (Gemini CLI, Amp):
	// re-read on change, emitting what was not emitted (source_snapshot.go).
	sourceSnapshot
	// sourceOpenCode: OpenCode data directories, a JSON tree (≤1.1,
	// source_tree.go) or a SQLite database (≥1.2, source_sqlite.go).
	sourceOpenCode
	// sourceJSONLAndSnapshot: an agent with both (GitHub Copilot CLI:
	// events.jsonl, and older history JSON files rewritten in place). Its
	// include patterns of *.jsonl files go to a JSONL source, the others to
	// a snapshot source with its own storage scope (<agent>.snapshot).
	sourceJSONLAndSnapshot
)

// source is where one agent's records come from. A source finds the
// agent's data, reads what is new, maps it with the agent's parser and
// hands it, one session at a time, to the emitter; it commits its read
// positions through the checkpoint store only after the emitter returned
// nil (see emitter). Sessions live in a sessionTable (checkpoint.go).
type source interface {
	// start begins reading in the background.
	start(ctx context.Context) error
	// stop ends reading. Work under way is finished; a delivery the next
	// consumer keeps refusing is given up, uncommitted. It returns early,
	// with ctx's error, when ctx ends first.
	stop(ctx context.Context) error
}

// sourceSettings is what every source is built from.
type sourceSettings struct {
	agent            agent
	cfg              *Config
	ac               *AgentConfig
	include, exclude []string
	emitter          *emitter
	checkpoints      *checkpoints
	life             lifeCycle
	clock            clock
	logger           *zap.Logger
	host             component.Host
	telemetry        component.TelemetrySettings
	// settleDelay is how long a rewritten file must stay unchanged before
	// its last record is taken as final (Gemini CLI).
	settleDelay time.Duration
	// sweepEvery overrides sweepInterval when set.
	sweepEvery time.Duration
	// startedAt divides history from new data for start_at: end.
	startedAt time.Time
	// readSlots bound the JSONL batches read and delivered at once, across
	// the receiver's agents (tail.go).
	readSlots chan struct{}
}

// storageError reports a failed read or write of the storage.
func (s *sourceSettings) storageError(err error) {
	s.logger.Error("Agent log state storage failed", zap.String("agent", s.agent.key), zap.Error(err))
	componentstatus.ReportStatus(s.host, componentstatus.NewRecoverableErrorEvent(err))
}

// excluded reports whether an exclude pattern matches path.
func (s *sourceSettings) excluded(path string) bool {
	for _, pattern := range s.exclude {
		if ok, _ := doublestar.PathMatch(pattern, path); ok {
			return true
		}
	}
	return false
}

// sweepInterval is how often sessions are checked for being gone.
func (s *sourceSettings) sweepInterval() time.Duration {
	if s.sweepEvery > 0 {
		return s.sweepEvery
	}
	return max(s.cfg.PollInterval, min(s.cfg.ForgetAfter/2, time.Minute))
}

// fileExists is the probe of sessions kept in files.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// loop runs fn at once and then every interval, until halt.
type loop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startLoop(interval time.Duration, fn func(ctx context.Context)) *loop {
	ctx, cancel := context.WithCancel(context.Background())
	l := &loop{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			fn(ctx)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return l
}

// halt ends the loop; a run under way finishes first, unless ctx ends.
func (l *loop) halt(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.cancel()
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sources runs several sources as one (an agent whose data comes in two
// shapes).
type sources []source

func (ss sources) start(ctx context.Context) error {
	for i, s := range ss {
		if err := s.start(ctx); err != nil {
			return errors.Join(err, sources(ss[:i]).stop(ctx))
		}
	}
	return nil
}

func (ss sources) stop(ctx context.Context) error {
	var errs []error
	for _, s := range ss {
		errs = append(errs, s.stop(ctx))
	}
	return errors.Join(errs...)
}

// splitJSONL separates the patterns of JSONL files (tailed) from the others
// (read as snapshots).
func splitJSONL(patterns []string) (jsonl, other []string) {
	for _, p := range patterns {
		if strings.HasSuffix(p, ".jsonl") {
			jsonl = append(jsonl, p)
		} else {
			other = append(other, p)
		}
	}
	return jsonl, other
}

// nopSource reads nothing: an optional agent whose location is unknown.
type nopSource struct{}

func (nopSource) start(context.Context) error { return nil }
func (nopSource) stop(context.Context) error  { return nil }

// runUntil runs fn, returning early with ctx's error when ctx ends first
// (fn then finishes in the background).
func runUntil(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fileSig tells whether a file changed since it was decoded.
type fileSig struct {
	mod  time.Time
	size int64
}

func (s fileSig) String() string { return fmt.Sprintf("%d/%d", s.mod.UnixNano(), s.size) }

func sigOf(fi os.FileInfo) fileSig { return fileSig{mod: fi.ModTime(), size: fi.Size()} }
