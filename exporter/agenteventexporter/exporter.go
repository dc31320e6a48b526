// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/internal/metadata"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// idleCheckInterval is how often sessions are checked against
// session_idle_timeout.
const idleCheckInterval = 10 * time.Second

// Reasons for agent_event_input_errors.
const (
	reasonNotAgentEvent   = "not_agent_event"
	reasonMalformed       = "malformed"
	reasonMalformedRollup = "malformed_rollup"
)

type agentEventExporter struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	// now is the wall clock; tests replace it.
	now func() time.Time
	// stdout is where stdout: true writes; tests replace it.
	stdout io.Writer

	// logs is the format of a logs exporter (nil for canonical_task).
	logs logsFormat
	// canonical maps turn roots for canonical_task (nil for the others).
	canonical *canonicalFormat

	mu       sync.Mutex
	out      sink
	sessions map[sessionKey]*session
	// dirty are the sessions written (or given events to hold) since their
	// last commit.
	dirty map[sessionKey]*session
	// turns are the turn ids of the canonical_task files written last, at
	// most max_open_files of them (the others are in their commit records).
	turns *simplelru.LRU[sessionKey, *turnSet]
	// turnErr is the first error of committing a turn set let go of; the
	// batch that let go of it returns it.
	turnErr error
	warned  map[string]bool // warnings already logged, by kind
	buf     lineBuffer

	formatAttr   metric.MeasurementOption
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	shutdownOnce sync.Once
}

func newExporter(set exporter.Settings, cfg *Config) (*agentEventExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	e := &agentEventExporter{
		cfg:        cfg,
		logger:     set.Logger,
		telemetry:  tb,
		now:        time.Now,
		stdout:     os.Stdout,
		sessions:   map[sessionKey]*session{},
		dirty:      map[sessionKey]*session{},
		warned:     map[string]bool{},
		formatAttr: metric.WithAttributeSet(attribute.NewSet(attribute.String("format", string(cfg.Format)))),
	}
	switch cfg.Format {
	case FormatAgtraceV1:
		e.logs = &agtraceFormat{includeContent: cfg.IncludeContent, includeRaw: cfg.IncludeRaw, report: e.violation}
	case FormatUniversal:
		e.logs = &universalFormat{includeContent: cfg.IncludeContent, includeRaw: cfg.IncludeRaw}
	case FormatAgentManager:
		e.logs = &agentManagerFormat{includeContent: cfg.IncludeContent, idleTimeout: cfg.SessionIdleTimeout, warn: e.validationWarning}
	case FormatCanonicalTask:
		e.canonical = &canonicalFormat{includeContent: cfg.IncludeContent, malformed: e.malformedRollup}
		e.turns, err = simplelru.NewLRU(cfg.MaxOpenFiles, func(_ sessionKey, ts *turnSet) {
			if cerr := e.commitTurns(ts); cerr != nil && e.turnErr == nil {
				e.turnErr = cerr
			}
		})
		if err != nil {
			tb.Shutdown()
			return nil, err
		}
	default:
		tb.Shutdown()
		return nil, fmt.Errorf("unknown format %q", cfg.Format)
	}
	err = tb.RegisterAgentEventOpenFilesCallback(func(_ context.Context, o metric.Int64Observer) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.out != nil {
			o.Observe(int64(e.out.openFiles()))
		}
		return nil
	})
	if err != nil {
		tb.Shutdown()
		return nil, err
	}
	return e, nil
}

func (e *agentEventExporter) start(_ context.Context, host component.Host) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cfg.Stdout {
		e.out = newStreamSink(e.stdout)
	} else {
		dir, err := expandHome(e.cfg.Directory)
		if err != nil {
			return err
		}
		perm := e.cfg.directoryPermissions()
		err = ensureDirectory(dir, e.cfg.CreateDirectory, perm)
		if err != nil {
			return err
		}
		out, err := newDirSink(dir, perm, e.cfg.Fsync, e.cfg.MaxOpenFiles, e.logger)
		if err != nil {
			return err
		}
		out.repair()
		e.out = out
		if e.logs != nil {
			e.recoverSessions(dir)
		}
	}
	if e.logs == nil {
		return nil // canonical_task keeps no sessions
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	e.wg.Go(func() {
		ticker := time.NewTicker(idleCheckInterval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				if err := e.endIdleSessions(false); err != nil {
					e.logger.Error("Writing the end of idle sessions failed", zap.Error(err))
					componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(err))
				}
			}
		}
	})
	return nil
}

// shutdown ends the sessions that are idle by their own timestamps (reading
// history, that is all of them), then flushes and closes every file. It is
// safe before start and idempotent.
func (e *agentEventExporter) shutdown(context.Context) error {
	var err error
	e.shutdownOnce.Do(func() {
		if e.cancel != nil {
			e.cancel()
		}
		e.wg.Wait()
		if e.logs != nil {
			err = e.endIdleSessions(true)
		}
		e.mu.Lock()
		if e.out != nil {
			err = errors.Join(err, e.out.close())
			e.out = nil
		}
		e.mu.Unlock()
		e.telemetry.Shutdown()
	})
	return err
}

// consumeLogs writes the events of a batch, each session's to its file, in
// the order they came.
func (e *agentEventExporter) consumeLogs(ctx context.Context, ld plog.Logs) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.out == nil {
		return errors.New("agent_event exporter is not started")
	}
	now := e.now()
	var errs []error
	replayed := 0
	ds := e.decode(ctx, ld)
	for i := range ds {
		d := &ds[i]
		s := e.session(keyOf(&d.ev))
		if s.handled(&d.ev) {
			replayed++
			continue
		}
		e.dirty[s.key] = s
		s.arrived = now
		switch {
		case !d.ev.Timestamp.IsZero():
		case !s.last.IsZero():
			d.ev.Timestamp = s.last
		case len(s.pending) < maxPending:
			s.pending = append(s.pending, *d)
			continue
		default:
			d.ev.Timestamp = e.fallbackTime(d.observed)
		}
		errs = append(errs, e.writePending(ctx, s, d.ev.Timestamp), e.writeEvent(ctx, s, &d.ev))
	}
	e.countReplayed(ctx, replayed)
	errs = append(errs, e.commit())
	if err := errors.Join(errs...); err != nil {
		return consumererror.NewPermanent(err)
	}
	return nil
}

// commit records, for every session written since its last commit, how far
// its file goes and what it holds (see markState). Until then a crash
// leaves those lines to be removed at the next start, and the receiver,
// which has not seen the batch accepted, delivers it again.
func (e *agentEventExporter) commit() error {
	var errs []error
	for key, s := range e.dirty {
		state, err := sessionState(s)
		if err == nil {
			err = e.out.commit(key, state)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s of %s: %w", key.session, key.agent, err))
		}
	}
	clear(e.dirty)
	errs = append(errs, e.out.flush())
	return errors.Join(errs...)
}

// countReplayed counts the events or turns of a batch that the files
// already held.
func (e *agentEventExporter) countReplayed(ctx context.Context, n int) {
	if n == 0 {
		return
	}
	e.telemetry.AgentEventReplayed.Add(ctx, int64(n), e.formatAttr)
	e.logger.Debug("Skipped what the files already hold (delivered again after a restart or a retry)", zap.Int("items", n))
}

// maxPending bounds the events a session holds while it waits for its
// first timestamp.
const maxPending = 1024

// decode reads the agent events of a batch. Records that are not agent
// events are counted and skipped.
func (e *agentEventExporter) decode(ctx context.Context, ld plog.Logs) []decoded {
	var out []decoded
	skipped, malformed := 0, 0
	var firstBad error
	firstPlace := ""
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		service, _ := rl.Resource().Attributes().Get(agentevent.ResourceServiceName)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				ev, err := agentevent.Decode(lr)
				if errors.Is(err, agentevent.ErrMalformed) {
					if malformed == 0 {
						firstBad, firstPlace = err, agentevent.RecordPlace(lr)
					}
					malformed++
					continue
				}
				if err != nil {
					skipped++
					continue
				}
				if ev.Source == "" && service.Str() != "" {
					ev.Source = agentevent.SourceFromServiceName(service.Str())
				}
				d := decoded{ev: ev}
				if lr.ObservedTimestamp() != 0 {
					d.observed = lr.ObservedTimestamp().AsTime().UTC()
				}
				out = append(out, d)
			}
		}
	}
	if skipped > 0 {
		e.telemetry.AgentEventInputErrors.Add(ctx, int64(skipped), metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reasonNotAgentEvent))))
		e.warnOnce(reasonNotAgentEvent, "Log records that are not agent events (no agent.event.type) are skipped; only the agent_log receiver's records can be written",
			zap.Int("records", skipped))
	}
	if malformed > 0 {
		e.telemetry.AgentEventInputErrors.Add(ctx, int64(malformed), metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reasonMalformed))))
		e.warnOnce(reasonMalformed, "Malformed agent events (a known attribute of the wrong type) are skipped",
			zap.Int("records", malformed), zap.NamedError("first", firstBad), zap.String("first_record", firstPlace))
	}
	return out
}

// keyOf is the session an event belongs to; the agent is named by its
// service.name (claude-code), as everywhere in agentotel.
func keyOf(ev *agentevent.Event) sessionKey {
	return sessionKey{agent: ev.Source.ServiceName(), session: ev.SessionID}
}

// writePending writes the events a session held because they came before
// any event of it with a timestamp (Claude Code's leading summary rows have
// none): they get t, the time of the session's first event. Every format
// requires a time; taking it from the next event rather than from when the
// batch arrived keeps the output the same however the input is batched.
func (e *agentEventExporter) writePending(ctx context.Context, s *session, t time.Time) error {
	var errs []error
	for i := range s.pending {
		ev := &s.pending[i].ev
		ev.Timestamp = t
		if t.IsZero() { // the session ended before any event had a time
			ev.Timestamp = e.fallbackTime(s.pending[i].observed)
		}
		errs = append(errs, e.writeEvent(ctx, s, ev))
	}
	s.pending = nil
	return errors.Join(errs...)
}

// fallbackTime is the time of an event whose session has none at all: when
// the receiver read it, else now.
func (e *agentEventExporter) fallbackTime(observed time.Time) time.Time {
	if !observed.IsZero() {
		return observed
	}
	return e.now().UTC()
}

func (e *agentEventExporter) writeEvent(ctx context.Context, s *session, ev *agentevent.Event) error {
	if ev.Timestamp.After(s.newest) {
		s.newest = ev.Timestamp
	}
	s.last = ev.Timestamp
	e.buf.reset()
	e.logs.event(s, ev, &e.buf)
	s.ended = false
	return e.write(ctx, s.key, &e.buf)
}

// session returns the state of a session, reading back its file the first
// time this process sees it.
func (e *agentEventExporter) session(key sessionKey) *session {
	if s, ok := e.sessions[key]; ok {
		return s
	}
	s := &session{key: key, arrived: e.now()}
	last, state := e.out.resume(key)
	if err := restoreSession(s, state); err != nil {
		e.logger.Warn("Cannot read what a session file's commit record keeps; events delivered again after a crash may be written twice",
			zap.String("agent", key.agent), zap.String("session", key.session), zap.Error(err))
	}
	if last != nil {
		s.resumed = true
		s.newest = e.logs.lineTime(last)
		s.last = s.newest
	}
	e.logs.begin(s, last)
	e.sessions[key] = s
	return s
}

// recoverSessions picks up, at start, the sessions a previous run left
// unfinished: for the formats that close sessions, every session file (one
// left open, not ending with the format's closing lines, is then closed once
// idle even if the agent never writes to it again); for every format, the
// sessions whose commit record holds events waiting for a time (they are
// written when their session ends). Only files named by the session id
// itself are recognized (ids that needed escaping to be a file name, which
// no agent uses, are not).
func (e *agentEventExporter) recoverSessions(dir string) {
	agents, err := os.ReadDir(dir)
	if err != nil {
		e.logger.Warn("Cannot list the output directory; sessions a previous run left unfinished stay so", zap.String("directory", dir), zap.Error(err))
		return
	}
	for _, a := range agents {
		if !a.IsDir() || fileName(a.Name(), unknownAgent) != a.Name() || a.Name() == unknownAgent {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, a.Name()))
		if err != nil {
			e.logger.Warn("Cannot list an output folder; sessions a previous run left unfinished there stay so", zap.String("folder", filepath.Join(dir, a.Name())), zap.Error(err))
			continue
		}
		for _, f := range files {
			name := f.Name()
			if f.IsDir() {
				continue
			}
			data, isData := strings.CutSuffix(name, ".jsonl")
			mark := ""
			if m, ok := strings.CutPrefix(name, "."); ok {
				mark, _ = strings.CutSuffix(m, ".jsonl"+markSuffix)
				if mark == m {
					mark = ""
				}
			}
			id := data
			switch {
			case isData && e.logs.closes():
			case mark != "" && e.logs.closes():
				id = mark // a session with events held but no line yet
			case mark != "":
				id = mark
				m, err := readMark(filepath.Join(dir, a.Name(), name))
				if err != nil || m == nil || !hasPending(m.State) {
					continue
				}
			default:
				continue
			}
			if fileName(id, noSession) != id || id == noSession {
				continue
			}
			e.session(sessionKey{agent: a.Name(), session: id})
		}
	}
}

func (e *agentEventExporter) write(ctx context.Context, key sessionKey, buf *lineBuffer) error {
	if len(buf.lines) == 0 {
		return buf.err
	}
	if err := e.out.write(key, buf.lines); err != nil {
		return fmt.Errorf("session %s of %s: %w", key.session, key.agent, err)
	}
	e.telemetry.AgentEventLinesWritten.Add(ctx, int64(len(buf.lines)), e.formatAttr)
	return buf.err
}

// endIdleSessions writes the closing lines of every session whose newest
// event is older than session_idle_timeout and to which nothing arrived for
// as long (at shutdown, the first condition is enough: history is done).
func (e *agentEventExporter) endIdleSessions(shutdown bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.out == nil {
		return nil
	}
	now := e.now()
	timeout := e.cfg.SessionIdleTimeout
	keys := make([]sessionKey, 0, len(e.sessions))
	for k := range e.sessions {
		keys = append(keys, k)
	}
	// In key order, so that a stream (stdout) is the same from run to run.
	slices.SortFunc(keys, func(a, b sessionKey) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.session, b.session))
	})
	var errs []error
	for _, k := range keys {
		s := e.sessions[k]
		if s.ended || now.Sub(s.newest) < timeout || (!shutdown && now.Sub(s.arrived) < timeout) {
			continue
		}
		errs = append(errs, e.writePending(context.Background(), s, time.Time{}))
		e.buf.reset()
		e.logs.end(s, &e.buf)
		s.ended = true
		e.dirty[s.key] = s
		errs = append(errs, e.write(context.Background(), s.key, &e.buf))
	}
	errs = append(errs, e.commit())
	return errors.Join(errs...)
}

// consumeTraces writes one canonical task event per turn root span.
func (e *agentEventExporter) consumeTraces(ctx context.Context, td ptrace.Traces) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.out == nil {
		return errors.New("agent_event exporter is not started")
	}
	var errs []error
	replayed := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if !isTurnRoot(sp) {
					continue
				}
				key, id := turnOf(rs.Resource(), sp)
				ts := e.turnSet(key)
				if ts.has(id) {
					replayed++
					continue
				}
				e.buf.reset()
				e.canonical.turn(rs.Resource(), sp, &e.buf)
				errs = append(errs, e.write(ctx, key, &e.buf))
				ts.add(id)
				ts.dirty = true
			}
		}
	}
	e.countReplayed(ctx, replayed)
	for _, ts := range e.turns.Values() {
		errs = append(errs, e.commitTurns(ts))
	}
	errs = append(errs, e.takeTurnErr(), e.out.flush())
	if err := errors.Join(errs...); err != nil {
		return consumererror.NewPermanent(err)
	}
	return nil
}

// turnSet returns the turn ids of a canonical_task file, read back from its
// commit record when it is not among the files written last.
func (e *agentEventExporter) turnSet(key sessionKey) *turnSet {
	if ts, ok := e.turns.Get(key); ok {
		return ts
	}
	_, state := e.out.resume(key)
	ts, err := newTurnSet(key, state)
	if err != nil {
		e.logger.Warn("Cannot read the turns a canonical_task file's commit record lists; turns delivered again after a crash may be written twice",
			zap.String("agent", key.agent), zap.String("session", key.session), zap.Error(err))
	}
	e.turns.Add(key, ts) // may let go of another, committing it
	return ts
}

// commitTurns commits a canonical_task file written since its last commit.
func (e *agentEventExporter) commitTurns(ts *turnSet) error {
	if !ts.dirty {
		return nil
	}
	state, err := ts.state()
	if err == nil {
		err = e.out.commit(ts.key, state)
	}
	if err != nil {
		return fmt.Errorf("session %s of %s: %w", ts.key.session, ts.key.agent, err)
	}
	ts.dirty = false
	return nil
}

func (e *agentEventExporter) takeTurnErr() error {
	err := e.turnErr
	e.turnErr = nil
	return err
}

// violation counts an agtrace invariant an event broke, logging the first
// of each rule.
func (e *agentEventExporter) violation(v agentevent.Violation, ev *agentevent.Event) {
	e.telemetry.AgentEventInvariantViolations.Add(context.Background(), 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("rule", v.Rule))))
	e.warnOnce("rule:"+v.Rule, "An event breaks an agtrace invariant; it is written as it is (further ones are only counted)",
		zap.String("rule", v.Rule), zap.String("detail", v.Detail), zap.String("event_id", v.EventID),
		zap.String("session", ev.SessionID), zap.String("file", ev.LogFile), zap.Int64("line", ev.LogLine))
}

// validationWarning counts an agent-manager validation warning, logging the
// first of each kind.
func (e *agentEventExporter) validationWarning(warning string, ev *agentevent.Event) {
	e.telemetry.AgentEventValidationWarnings.Add(context.Background(), 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("warning", warning))))
	e.warnOnce("warning:"+warning, "An agent_manager line raises a validation warning (further ones are only counted)",
		zap.String("warning", warning), zap.String("event_id", ev.EventID),
		zap.String("session", ev.SessionID), zap.String("file", ev.LogFile), zap.Int64("line", ev.LogLine))
}

// malformedRollup counts a turn rollup attribute that is not the JSON the
// connector writes.
func (e *agentEventExporter) malformedRollup(attr string, sp ptrace.Span, err error) {
	e.telemetry.AgentEventInputErrors.Add(context.Background(), 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reasonMalformedRollup))))
	e.warnOnce(reasonMalformedRollup, "A turn rollup attribute is not the expected JSON; the line is written without it (further ones are only counted)",
		zap.String("attribute", attr), zap.String("trace_id", sp.TraceID().String()), zap.Error(err))
}

func (e *agentEventExporter) warnOnce(kind, msg string, fields ...zap.Field) {
	if e.warned[kind] {
		return
	}
	e.warned[kind] = true
	e.logger.Warn(msg, fields...)
}
