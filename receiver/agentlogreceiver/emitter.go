// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/redact"
	"github.com/agentotel/agentotel/internal/textutil"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/progress"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// maxReported bounds the (file, reason) pairs the emitter remembers for its
// rate-limited warnings.
const maxReported = 10_000

// emitter is what every source of an agent hands what it read to
// (source.Emitter): it counts and reports bad records, applies the content
// settings, encodes events as log records and hands them to the next
// consumer, retrying refusals.
//
// The ordering rule: a source commits a read position, watermark or parser
// state only after Deliver returned nil — the next consumer accepted the
// events (or refused them permanently, or there was nothing to send). With
// the agent_span connector, which makes its state durable before
// ConsumeLogs returns, a kill -9 at any moment loses and duplicates
// nothing.
//
// Every event passes through prepare before it leaves: the one place to
// change or drop what is emitted (content settings; redaction).
type emitter struct {
	agent     agent
	cfg       *Config
	next      consumer.Logs
	obsrecv   *receiverhelper.ObsReport
	telemetry *metadata.TelemetryBuilder
	logger    *zap.Logger
	hostname  string
	agentAttr metric.MeasurementOption
	// progress follows the backfill (nil: not followed).
	progress *progress.Progress
	// wait sleeps d or until ctx ends (injected by tests).
	wait func(ctx context.Context, d time.Duration) error
	now  func() time.Time

	// stopping is set when the receiver stops: a refused delivery is then
	// given up at once, uncommitted, instead of waiting to be retried (a
	// source's last read at shutdown would otherwise retry for as long as
	// the next consumer refuses).
	stopping atomic.Bool

	mu       sync.Mutex
	reported map[reportKey]int64 // occurrences after the first, by file and reason
}

type reportKey struct{ path, reason string }

func newEmitter(a agent, cfg *Config, next consumer.Logs, obsrecv *receiverhelper.ObsReport, tb *metadata.TelemetryBuilder,
	logger *zap.Logger, hostname string, clk clock,
) *emitter {
	return &emitter{
		agent: a, cfg: cfg, next: next, obsrecv: obsrecv, telemetry: tb, logger: logger, hostname: hostname,
		agentAttr: metric.WithAttributeSet(attribute.NewSet(attribute.String("agent", a.key))),
		wait:      clk.wait,
		now:       clk.now,
		reported:  map[reportKey]int64{},
	}
}

var _ source.Emitter = (*emitter)(nil)

// Read counts records read from the agent's data.
func (e *emitter) Read(ctx context.Context, n int64) {
	if n > 0 {
		e.telemetry.AgentLogRecordsRead.Add(ctx, n, e.agentAttr)
	}
}

// Bad counts a record that could not be mapped. The first of each reason in
// each file is logged with its line; the others are counted, and summed up
// in the log when the file is forgotten or the receiver stops.
func (e *emitter) Bad(ctx context.Context, path string, line int64, reason string) {
	e.telemetry.AgentLogRecordsUnparsed.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
		attribute.String("agent", e.agent.key), attribute.String("reason", reason))))
	k := reportKey{path, reason}
	e.mu.Lock()
	n, seen := e.reported[k]
	if seen {
		e.reported[k] = n + 1
	} else if len(e.reported) < maxReported {
		e.reported[k] = 0
	}
	e.mu.Unlock()
	if seen {
		return
	}
	e.logger.Warn("Skipping a record that could not be mapped to an agent event (further ones of this file and reason are counted, not logged)",
		zap.String("agent", e.agent.key), zap.String("path", path), zap.Int64("line", line), zap.String("reason", reason))
}

// Forget logs the counts of bad records of files that are gone, and drops
// them.
func (e *emitter) Forget(paths ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, n := range e.reported {
		for _, p := range paths {
			if k.path == p {
				e.logSkipped(k, n)
				delete(e.reported, k)
			}
		}
	}
}

// flushReports logs every count of bad records not logged yet (shutdown).
func (e *emitter) flushReports() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, n := range e.reported {
		e.logSkipped(k, n)
	}
	clear(e.reported)
}

func (e *emitter) logSkipped(k reportKey, n int64) {
	if n > 0 {
		e.logger.Warn("More records of this file could not be mapped and were skipped",
			zap.String("agent", e.agent.key), zap.String("path", k.path), zap.String("reason", k.reason), zap.Int64("count", n))
	}
}

// prepare applies the settings to an event on its way out; false drops it.
// Unparsed events were counted when they were read (see Deliver).
func (e *emitter) prepare(ev *agentevent.Event) bool {
	if ev.Unparsed != "" && !e.cfg.EmitUnparsed {
		return false
	}
	if ev.Source == "" {
		ev.Source = e.agent.Source // service.name comes from it
	}
	if !e.cfg.IncludeContent {
		agentevent.StripContent(ev)
	}
	if !e.cfg.IncludeRaw {
		ev.Raw = nil
	}
	if e.cfg.Redact {
		redact.Event(ev)
	}
	return true
}

// Encode counts the unparsed events of one file's part, prepares the events
// (in place) and encodes those that go out, the last of each session
// flagged agent.read.caught_up when the part is caught up. The readers call
// it concurrently: the records are built where the events were read.
func (e *emitter) Encode(ctx context.Context, p source.Part, events []agentevent.Event) source.Records {
	out := events[:0]
	for i := range events {
		ev := &events[i]
		if ev.Unparsed != "" {
			e.Bad(ctx, textutil.FirstNonEmpty(ev.LogFile, p.Path), ev.LogLine, ev.Unparsed)
		}
		if e.prepare(ev) {
			if len(out) < i {
				out = append(out, *ev)
			} else {
				out = out[:i+1]
			}
		}
	}
	if len(out) == 0 {
		return source.Records{}
	}
	var flagged []int
	if p.CaughtUp {
		flagged = lastOfEachSession(out)
	}
	r := source.Records{Logs: agentevent.EncodeLogsCaughtUp(out, e.hostname, flagged), Count: len(out)}
	if e.progress != nil {
		r.Tally = e.progress.Tally(out)
	}
	return r
}

// Deliver hands the records of d to the next consumer: d.Records, or its
// events encoded part by part (Encode). nil: accepted, refused for good
// (counted and logged), or nothing to send — the source commits.
// source.ErrStopped: the receiver stopped while retrying — the source
// commits nothing.
func (e *emitter) Deliver(ctx context.Context, d source.Delivery) error {
	parts := d.Parts
	if len(parts) == 0 {
		parts = []source.Part{{Path: d.Path, Events: len(d.Events), CaughtUp: d.CaughtUp, From: d.From, To: d.To}}
	}
	var recs source.Records
	if d.Records != nil {
		recs = *d.Records
	} else {
		i := 0
		for _, p := range parts {
			end := min(i+p.Events, len(d.Events))
			recs.Append(e.Encode(ctx, p, d.Events[i:end]))
			i = end
		}
		clear(d.Events) // not kept alive by the array
	}
	if recs.Count > 0 {
		if err := e.consume(ctx, d.Path, recs.Logs, recs.Count); err != nil {
			return err
		}
	}
	if e.progress != nil {
		e.progress.Add(ctx, e.agent.key, recs.Tally)
		for _, p := range parts {
			e.progress.Read(ctx, e.agent.key, p.Path, p.From, p.To, p.CaughtUp)
		}
	}
	return nil
}

// lastOfEachSession is the index of the last event of each session among
// events, in order.
func lastOfEachSession(events []agentevent.Event) []int {
	var flagged []int
	seen := map[string]bool{}
	for j := range slices.Backward(events) {
		if ses := events[j].SessionID; !seen[ses] {
			seen[ses] = true
			flagged = append(flagged, j)
		}
	}
	slices.Reverse(flagged)
	return flagged
}

// FileRead tells the backfill's progress that a file no delivery names has
// been read.
func (e *emitter) FileRead(ctx context.Context, path string, caughtUp bool) {
	if e.progress != nil {
		e.progress.Read(ctx, e.agent.key, path, 0, 0, caughtUp)
	}
}

// consume hands events to the next consumer. A retryable refusal is tried
// again with exponential back-off (retry_on_failure) for as long as
// max_elapsed_time allows (0: until accepted or the receiver stops); a
// permanent refusal, or one that outlasts max_elapsed_time, drops the
// events: counted (otelcol_agent_log_events_dropped) and logged. Every
// refused attempt also counts in otelcol_receiver_refused_log_records.
func (e *emitter) consume(ctx context.Context, path string, logs plog.Logs, count int) error {
	rc := e.cfg.RetryOnFailure
	start := e.now()
	interval := rc.InitialInterval
	for attempt := 1; ; attempt++ {
		// A delivery that has begun is finished even while the receiver
		// stops; only the waits between retries end with ctx.
		octx := e.obsrecv.StartLogsOp(context.WithoutCancel(ctx))
		err := e.next.ConsumeLogs(octx, logs)
		e.obsrecv.EndLogsOp(octx, "agent_event", count, err)
		if err == nil {
			e.telemetry.AgentLogEventsEmitted.Add(ctx, int64(count), e.agentAttr)
			if attempt > 1 {
				e.logger.Info("The next consumer accepted agent events it had refused",
					zap.String("agent", e.agent.key), zap.String("path", path), zap.Int("attempts", attempt))
			}
			return nil
		}
		fields := []zap.Field{zap.String("agent", e.agent.key), zap.String("path", path), zap.Int("events", count), zap.Error(err)}
		switch {
		case consumererror.IsPermanent(err):
			e.logger.Error("The next consumer refused agent events permanently; they are dropped", fields...)
			e.dropped(ctx, count, "permanent")
			return nil
		case !rc.Enabled:
			e.logger.Error("The next consumer refused agent events and retry_on_failure is disabled; they are dropped", fields...)
			e.dropped(ctx, count, "retry_disabled")
			return nil
		case rc.MaxElapsedTime > 0 && e.now().Add(interval).Sub(start) > rc.MaxElapsedTime:
			e.logger.Error("The next consumer kept refusing agent events for retry_on_failure::max_elapsed_time; they are dropped",
				append(fields, zap.Int("attempts", attempt))...)
			e.dropped(ctx, count, "max_elapsed_time")
			return nil
		}
		if attempt == 1 {
			e.logger.Warn("The next consumer refused agent events; the read position is held and the events retried", fields...)
		}
		if e.stopping.Load() || e.wait(ctx, jitter(interval, rc.RandomizationFactor)) != nil {
			e.logger.Warn("Stopped while the next consumer refused agent events; they are read again at the next start",
				fields...)
			return source.ErrStopped
		}
		interval = min(time.Duration(float64(interval)*max(rc.Multiplier, 1)), max(rc.MaxInterval, rc.InitialInterval))
	}
}

// dropped counts events dropped after a refusal, by why.
func (e *emitter) dropped(ctx context.Context, n int, reason string) {
	e.telemetry.AgentLogEventsDropped.Add(ctx, int64(n), metric.WithAttributeSet(attribute.NewSet(
		attribute.String("agent", e.agent.key), attribute.String("reason", reason))))
}

func jitter(d time.Duration, factor float64) time.Duration {
	if factor <= 0 || d <= 0 {
		return d
	}
	delta := factor * float64(d)
	return time.Duration(float64(d) - delta + rand.Float64()*(2*delta+1))
}
