// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer"
	fcattrs "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// reasonLineTooLong is the unparsed reason of a line of max_log_size bytes or
// more; the parsers' own reasons (malformed_json, unknown_type, ...) come
// with their events.
const reasonLineTooLong = "line_too_long"

// tailer reads one agent's session files: fileconsumer finds and tails them,
// emit turns each batch of lines into events through the file's parser.
type tailer struct {
	r        *logsReceiver
	host     component.Host
	agent    agent
	hostname string
	manager  *fileconsumer.Manager
	// store holds fileconsumer's read positions and the parser states, under
	// keys prefixed with the agent key.
	store operator.Persister
	// persist is false without a storage extension: nothing outlives the
	// process, so parser states are not serialized at all.
	persist bool
	// agentAttr is the `agent` attribute of the self-telemetry.
	agentAttr metric.MeasurementOption

	mu    sync.Mutex
	files map[string]*sessionFile
}

// sessionFile is the parsing state of one file path. fileconsumer reads a
// file from one goroutine at a time; mu makes that an invariant rather than
// an assumption.
type sessionFile struct {
	mu     sync.Mutex
	path   string
	loaded bool // parser state restored from storage (or found absent)
	parser parser
	// firstLine is the sha256 of line 1 once seen: a file read again from
	// offset 0 with a different first line is a new file at an old path.
	firstLine string
}

// savedState is what the storage holds per file, next to fileconsumer's
// read positions.
type savedState struct {
	FirstLine string `json:"first_line_sha256,omitempty"`
	Parser    []byte `json:"parser"`
}

func newTailer(r *logsReceiver, host component.Host, a agent, hostname string) *tailer {
	return &tailer{
		r:         r,
		host:      host,
		agent:     a,
		hostname:  hostname,
		store:     scopedStore(r.client, a.key),
		persist:   r.cfg.Storage != nil,
		agentAttr: metric.WithAttributeSet(attribute.NewSet(attribute.String("agent", a.key))),
		files:     map[string]*sessionFile{},
	}
}

// splitLines splits on "\n" only (transcripts contain raw U+2028 and
// U+0085) and never returns an unterminated last line: it is still being
// written and is read once its "\n" arrives.
func splitLines(data []byte, _ bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	return 0, nil, nil
}

// emit is fileconsumer's callback for a batch of complete lines of one file.
// lastRecordNumber is the 1-based number of the batch's last line; offsets[i+1]
// is the file position just after line i.
func (t *tailer) emit(ctx context.Context, lines [][]byte, attrs map[string]any, lastRecordNumber int64, offsets []int64) error {
	// A batch that has begun is finished even while the receiver stops:
	// fileconsumer commits its offsets once emit returns, so the events and
	// the parser state must go out too.
	ctx = context.WithoutCancel(ctx)
	path, _ := attrs[fcattrs.LogFilePath].(string)
	f := t.file(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	t.load(ctx, f)

	maxLen := int(t.r.cfg.MaxLogSize)
	firstLineNo := lastRecordNumber - int64(len(lines)) + 1
	events := make([]agentevent.Event, 0, len(lines))
	for i, line := range lines {
		lineNo := firstLineNo + int64(i)
		offset := lineOffset(offsets, i, len(line))
		if len(line) >= maxLen {
			// fileconsumer cut the line at max_log_size and skips the rest.
			t.bad(ctx, path, lineNo, reasonLineTooLong)
			if t.r.cfg.EmitUnparsed {
				events = append(events, t.unparsedEvent(path, lineNo, offset, reasonLineTooLong))
			}
			continue
		}
		if offset == 0 {
			t.checkIdentity(f, line)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank line: nothing to map, nothing wrong
		}
		for _, ev := range f.parser.Parse(line, lineNo, offset) {
			if ev.Unparsed != "" {
				t.bad(ctx, path, lineNo, ev.Unparsed)
				if !t.r.cfg.EmitUnparsed {
					continue
				}
			}
			if ev.Source == "" {
				ev.Source = t.agent.source // service.name comes from it
			}
			if !t.r.cfg.IncludeContent {
				agentevent.StripContent(&ev)
			}
			if !t.r.cfg.IncludeRaw {
				ev.Raw = nil
			}
			events = append(events, ev)
		}
	}
	t.r.telemetry.AgentLogRecordsRead.Add(ctx, int64(len(lines)), t.agentAttr)
	if len(events) > 0 {
		t.consume(ctx, path, events)
	}
	t.save(ctx, f)
	return nil
}

// unparsedEvent stands for a line the parser never saw (cut at
// max_log_size), for emit_unparsed. Its time is when it was read.
func (t *tailer) unparsedEvent(path string, lineNo, offset int64, reason string) agentevent.Event {
	ev := agentevent.Event{
		Source:    t.agent.source,
		EventID:   agentevent.StableID(path, offset, 0),
		Timestamp: time.Now(),
		Type:      agentevent.TypeLog,
		Role:      agentevent.RoleSystem,
		Channel:   agentevent.ChannelSystem,
		LogFile:   path,
		LogLine:   lineNo,
		Unparsed:  reason,
	}
	agentevent.Normalize(&ev)
	return ev
}

// lineOffset is the byte offset where line i of a batch starts. The line and
// its "\n" end at offsets[i+1]; offsets[i], the end of the previous token,
// would be off after an over-long line, whose skipped tail it does not count.
func lineOffset(offsets []int64, i, length int) int64 {
	if i+1 < len(offsets) {
		return offsets[i+1] - int64(length) - 1
	}
	return offsets[i]
}

// file returns the state of a path, creating it on first sight.
func (t *tailer) file(path string) *sessionFile {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.files[path]
	if !ok {
		f = &sessionFile{path: path, parser: t.agent.newParser(path)}
		t.files[path] = f
	}
	return f
}

func (t *tailer) stateKey(path string) string { return "parser." + path }

// load restores the parser state of a file saved by an earlier run, once.
func (t *tailer) load(ctx context.Context, f *sessionFile) {
	if f.loaded {
		return
	}
	f.loaded = true
	if !t.persist {
		return
	}
	b, err := t.store.Get(ctx, t.stateKey(f.path))
	if err != nil {
		t.storageError(fmt.Errorf("read parser state of %s: %w", f.path, err))
		return
	}
	if b == nil {
		return
	}
	var s savedState
	if err = json.Unmarshal(b, &s); err == nil {
		err = f.parser.UnmarshalState(s.Parser)
	}
	if err != nil {
		// Lines fileconsumer has not committed are then parsed without the
		// context of the turn they belong to; nothing is lost.
		t.r.set.Logger.Warn("Discarding unreadable parser state; the file continues with a fresh parser",
			zap.String("agent", t.agent.key), zap.String("path", f.path), zap.Error(err))
		f.parser = t.agent.newParser(f.path)
		return
	}
	f.firstLine = s.FirstLine
}

// save stores the parser state after each batch, so that a restart continues
// mid-file and mid-turn. It is saved before fileconsumer commits the batch's
// offsets, so after a crash fileconsumer may replay lines the parser has
// seen: the parser drops those.
func (t *tailer) save(ctx context.Context, f *sessionFile) {
	if !t.persist {
		return
	}
	ps, err := f.parser.MarshalState()
	if err != nil {
		t.storageError(fmt.Errorf("serialize parser state of %s: %w", f.path, err))
		return
	}
	b, err := json.Marshal(savedState{FirstLine: f.firstLine, Parser: ps})
	if err == nil {
		err = t.store.Set(ctx, t.stateKey(f.path), b)
	}
	if err != nil {
		t.storageError(fmt.Errorf("save parser state of %s: %w", f.path, err))
	}
}

// checkIdentity starts a fresh parser when a path is read from offset 0 with
// a different first line than before: the file was replaced. The same first
// line means a replay of the same file, which the parser drops itself.
func (t *tailer) checkIdentity(f *sessionFile, line []byte) {
	sum := sha256.Sum256(line)
	h := hex.EncodeToString(sum[:])
	if f.firstLine != "" && f.firstLine != h {
		t.r.set.Logger.Info("Session file was replaced; reading it as a new file",
			zap.String("agent", t.agent.key), zap.String("path", f.path))
		f.parser = t.agent.newParser(f.path)
	}
	f.firstLine = h
}

func (t *tailer) consume(ctx context.Context, path string, events []agentevent.Event) {
	logs := agentevent.EncodeLogs(events, t.hostname)
	ctx = t.r.obsrecv.StartLogsOp(ctx)
	err := t.r.next.ConsumeLogs(ctx, logs)
	t.r.obsrecv.EndLogsOp(ctx, "jsonl", len(events), err)
	if err != nil {
		// fileconsumer has moved past these lines; durability downstream
		// belongs to the exporters' sending queues.
		t.r.set.Logger.Error("Next consumer refused agent events; they are dropped",
			zap.String("agent", t.agent.key), zap.String("path", path), zap.Int("events", len(events)), zap.Error(err))
		return
	}
	t.r.telemetry.AgentLogEventsEmitted.Add(ctx, int64(len(events)), t.agentAttr)
}

// bad counts a record that could not be mapped and reports it once; the
// record is skipped and the file read on.
func (t *tailer) bad(ctx context.Context, path string, lineNo int64, reason string) {
	t.r.telemetry.AgentLogRecordsUnparsed.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
		attribute.String("agent", t.agent.key), attribute.String("reason", reason))))
	t.r.set.Logger.Warn("Skipping a record that could not be mapped to an agent event",
		zap.String("agent", t.agent.key), zap.String("path", path), zap.Int64("line", lineNo), zap.String("reason", reason))
}

func (t *tailer) storageError(err error) {
	t.r.set.Logger.Error("Agent log state storage failed", zap.String("agent", t.agent.key), zap.Error(err))
	componentstatus.ReportStatus(t.host, componentstatus.NewRecoverableErrorEvent(err))
}
