// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadata"
	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/storagecodec"
)

// tickInterval is how often open turns are checked against the idle timeout.
const tickInterval = time.Second

// Reasons for agent_span_input_dropped.
const (
	dropNotAgentEvent = "not_agent_event"
	dropDuplicateSpan = "duplicate_span"
	dropNoTurn        = "no_turn"
	dropReplayed      = "replayed"
	dropMalformed     = "malformed"
	dropAfterTurn     = "after_turn"
	dropNativeCovered = "native_covered"
)

type agentSpanConnector struct {
	cfg       *Config
	set       connector.Settings
	next      consumer.Traces
	telemetry *metadata.TelemetryBuilder
	// now is the wall clock; tests replace it.
	now func() time.Time

	// mu serializes every pass over the assembler: add, close, emit, save.
	mu      sync.Mutex
	asm     *assembler
	client  storage.Client // nil without storage
	started bool

	warnMu sync.Mutex
	warned map[string]bool // drop reasons already logged

	host         component.Host
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	shutdownOnce sync.Once
}

var _ connector.Logs = (*agentSpanConnector)(nil)

func newConnector(set connector.Settings, cfg *Config, next consumer.Traces) (*agentSpanConnector, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	c := &agentSpanConnector{
		cfg:       cfg,
		set:       set,
		next:      next,
		telemetry: tb,
		now:       time.Now,
		asm:       newAssembler(cfg.TurnIdleTimeout, spanmodel.MapOptions{IncludeContent: cfg.IncludeContent, MaxContentLength: cfg.MaxContentLength}),
		warned:    map[string]bool{},
	}
	c.asm.rules.maxOpenTool = cfg.MaxOpenToolDuration
	err = tb.RegisterAgentSpanOpenTurnsCallback(func(_ context.Context, o metric.Int64Observer) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		o.Observe(int64(c.asm.openUnits()))
		return nil
	})
	if err != nil {
		tb.Shutdown()
		return nil, err
	}
	return c, nil
}

func (*agentSpanConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start reads the saved state back (with storage) and starts the ticker
// that closes idle turns.
func (c *agentSpanConnector) Start(ctx context.Context, host component.Host) error {
	c.host = host
	if c.cfg.Storage != nil {
		client, err := adapter.GetStorageClient(ctx, host, c.cfg.Storage, c.set.ID)
		if err != nil {
			return fmt.Errorf("`storage`: %w", err)
		}
		// Values are stored compressed (internal/storagecodec): a record
		// per session is most of a history's storage.
		client = storagecodec.Wrap(client, storagecodec.OtherFormatWarning(c.set.Logger, host, *c.cfg.Storage,
			"the turns it held are not resumed"))
		c.mu.Lock()
		err = c.asm.saved.loadAll(context.Background(), client, func(key string, err error) {
			// A record this version cannot read is not worth refusing to
			// start for: its turns are lost, the rest goes on.
			c.set.Logger.Warn("Ignoring a saved state record this version cannot read", zap.String("key", key), zap.Error(err))
		}, c.cfg.MaxCachedSessions, c.now())
		c.mu.Unlock()
		if err != nil {
			_ = client.Close(ctx)
			return fmt.Errorf("read saved state: %w", err)
		}
		c.client = client
	}
	c.mu.Lock()
	c.started = true
	c.mu.Unlock()

	tickCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Go(func() {
		t := time.NewTicker(tickInterval)
		defer t.Stop()
		for {
			select {
			case <-tickCtx.Done():
				return
			case <-t.C:
				c.tick(tickCtx)
			}
		}
	})
	return nil
}

// ConsumeLogs ingests agent events and emits every turn they complete.
//
// Ordering (the crash guarantee, with storage): the events are added and
// the complete turns closed in memory; the spans are handed to the next
// consumer; then every change is written to storage in one batch; only then
// does ConsumeLogs return, and only then does the receiver commit its read
// positions. A crash before the write leaves the saved state and the read
// positions as they were before the batch: the batch is read again and
// produces the same spans. If the next consumer refuses the spans, the
// changes are dropped from memory and the error returned, so the batch
// comes again too. The one window left is a crash after the next consumer
// took the spans and before the write ends: the batch is then emitted again,
// with the same ids.
func (c *agentSpanConnector) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	buf := hostedPool.Get().(*[]hosted)
	evs := (*buf)[:0]
	if n := ld.LogRecordCount(); cap(evs) < n {
		evs = make([]hosted, 0, n)
	}
	defer func() {
		// The events' strings share memory with ld: not kept past the call.
		clear(evs)
		*buf = evs[:0]
		hostedPool.Put(buf)
	}()
	notEvents, malformed, nativeCovered := 0, 0, 0
	var firstBad error
	firstPlace := ""
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		host := ""
		if v, ok := rls.At(i).Resource().Attributes().Get(agentevent.ResourceHostName); ok {
			host = v.AsString()
		}
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				evs = append(evs, hosted{})
				covered, err := decodeRecord(lrs.At(k), host, &evs[len(evs)-1])
				if err != nil || covered {
					evs[len(evs)-1] = hosted{} // not kept in the pool either
					evs = evs[:len(evs)-1]
				}
				if errors.Is(err, agentevent.ErrMalformed) {
					if malformed == 0 {
						firstBad, firstPlace = err, agentevent.RecordPlace(lrs.At(k))
					}
					malformed++
					continue
				}
				if err != nil {
					notEvents++
					continue
				}
				if covered {
					nativeCovered++
				}
			}
		}
	}
	c.dropped(ctx, dropNotAgentEvent, notEvents, "log records that are not agent events were ignored")
	c.dropped(ctx, dropNativeCovered, nativeCovered, "events of turns the agent's own spans cover (agent_native) were not turned into a second trace")
	c.dropped(ctx, dropMalformed, malformed, "malformed agent events were skipped", zap.NamedError("first", firstBad), zap.String("first_record", firstPlace))

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	replays := 0
	var late []agentevent.Event
	for i := range evs {
		h := &evs[i]
		switch c.addRecord(h, now) {
		case replayed:
			replays++
		case lateResult:
			late = append(late, h.ev)
		}
	}
	if err := c.asm.saved.takeLoadErr(); err != nil {
		return errors.Join(fmt.Errorf("read saved state: %w", err), c.rollback(ctx))
	}
	out := c.asm.close(now, false)
	out.replays, out.lateResults = replays, late
	return c.emitAndSave(ctx, out)
}

// hosted is a decoded event, with the host of its resource and the
// reader's caught-up flag of its record.
type hosted struct {
	ev       agentevent.Event
	host     string
	caughtUp bool
}

// decodeRecord decodes a record into h, the per-record work of ConsumeLogs
// before it takes the lock. covered is an event of a turn that agent_native
// saw the agent's own spans of: they are its trace, a second one is not
// built.
func decodeRecord(lr plog.LogRecord, host string, h *hosted) (covered bool, err error) {
	if h.ev, err = agentevent.Decode(lr); err != nil {
		return false, err
	}
	if covered, _ = h.ev.Attributes[agentevent.AttrNativeCovered].(bool); covered {
		return true, nil
	}
	h.host, h.caughtUp = host, agentevent.CaughtUp(lr)
	return false, nil
}

// addRecord adds a decoded event, the per-record work of ConsumeLogs under
// the lock (the turns it completes close after the whole request).
func (c *agentSpanConnector) addRecord(h *hosted, now time.Time) addResult {
	res := c.asm.ingest(&h.ev, h.host, now)
	c.asm.store.noteRead(sessKey{Source: h.ev.Source, Session: agentevent.TreeSession(&h.ev)}, h.ev.LogFile, h.caughtUp)
	return res
}

// hostedPool holds the slices ConsumeLogs decodes a request's events into,
// emptied after each call: an event is hundreds of bytes, and a slice grown
// anew per call would cost a backfill as much as the turns built of them.
var hostedPool = sync.Pool{New: func() any { return new([]hosted) }}

// emitAndSave hands out to the next consumer, then saves every change (with
// storage). Called with mu held.
func (c *agentSpanConnector) emitAndSave(ctx context.Context, out closed) error {
	if err := c.asm.saved.takeLoadErr(); err != nil {
		return errors.Join(fmt.Errorf("read saved state: %w", err), c.rollback(ctx))
	}
	if err := c.emit(ctx, out); err != nil {
		err = errors.Join(err, c.rollback(ctx))
		if c.client == nil {
			// Nothing to go back to: the pass is kept (see rollback).
			c.countDropped(ctx, out)
		}
		return err
	}
	if c.client == nil {
		c.asm.store.pruneCaughtUp() // as flush does with storage
		c.asm.saved.committed()
		c.asm.evictor.evict(c.cfg.MaxCachedSessions)
		c.countDropped(ctx, out)
		return nil
	}
	ops, err := c.asm.saved.flush()
	if err == nil && len(ops) > 0 {
		// A pass that changed nothing durable (most ticks) writes nothing:
		// an empty batch is a write transaction of its own in a storage
		// such as file_storage.
		err = c.client.Batch(ctx, ops...)
	}
	if err != nil {
		// Memory is not to run ahead of storage: the batch is dropped as if
		// refused, and comes again from the receiver (the spans it gave go
		// out again then, with the same ids).
		c.asm.saved.unflush()
		return errors.Join(fmt.Errorf("save state: %w", err), c.rollback(ctx))
	}
	c.asm.saved.committed()
	c.asm.evictor.evict(c.cfg.MaxCachedSessions)
	c.countDropped(ctx, out)
	return nil
}

// rollback forgets the unsaved changes (with storage; without, there is
// nothing to go back to and the spans count as emitted).
func (c *agentSpanConnector) rollback(ctx context.Context) error {
	if c.client == nil {
		c.asm.saved.committed()
		return nil
	}
	return c.asm.saved.rollback(ctx, c.client)
}

// tick closes the turns that went idle.
func (c *agentSpanConnector) tick(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.asm.close(c.now(), false)
	if err := c.emitAndSave(ctx, out); err != nil {
		c.set.Logger.Error("Failed to emit closed turns", zap.Error(err))
		if c.host != nil {
			componentstatus.ReportStatus(c.host, componentstatus.NewRecoverableErrorEvent(err))
		}
	}
}

// countDropped counts (and logs) what the pass dropped, once the pass is
// kept: a batch refused downstream, or whose state could not be saved,
// comes again from the receiver and drops the same again.
func (c *agentSpanConnector) countDropped(ctx context.Context, out closed) {
	c.dropped(ctx, dropReplayed, out.replays, "events already emitted were delivered again and skipped")
	for i := range out.lateResults {
		ev := &out.lateResults[i]
		c.telemetry.AgentSpanLateToolResults.Add(ctx, 1)
		c.set.Logger.Warn("A tool result came after its turn went out with the call in_progress (max_open_tool_duration or the next prompt closed it); it is not emitted",
			zap.String("session", ev.SessionID), zap.String("tool_call_id", ev.ToolCallID), zap.String("tool", ev.ToolName),
			zap.String("record", fmt.Sprintf("%s:%d", ev.LogFile, ev.LogLine)))
	}
	c.dropped(ctx, dropDuplicateSpan, out.duplicates, "spans already emitted were not emitted again (late events of a closed turn)")
	c.dropped(ctx, dropNoTurn, out.noTurn, "events before any prompt of their thread were dropped: no turn followed them")
	rows := 0
	for _, at := range out.afterTurn {
		rows += at.rows
		c.set.Logger.Debug("Rows of a turn that went out already made no span and were dropped",
			zap.String("source", string(at.key.Thread.Source)), zap.String("session", at.key.Thread.Session),
			zap.String("agent_id", at.key.Thread.Agent), zap.String("prompt", at.key.Prompt),
			zap.String("first_event", at.first), zap.Int("count", at.rows))
	}
	c.dropped(ctx, dropAfterTurn, rows, "rows of turns that went out already made no span of their own and were dropped (set the log level to debug for each)")
}

func (c *agentSpanConnector) emit(ctx context.Context, out closed) error {
	if out.spans == 0 {
		return nil
	}
	if err := c.next.ConsumeTraces(ctx, out.traces); err != nil {
		return err
	}
	for _, st := range out.statuses {
		c.telemetry.AgentSpanTurnsEmitted.Add(ctx, 1, metric.WithAttributes(attribute.String("turn_status", st)))
	}
	c.telemetry.AgentSpanSpansEmitted.Add(ctx, int64(out.spans))
	if c.set.Logger.Core().Enabled(zap.DebugLevel) {
		for _, g := range out.units {
			c.set.Logger.Debug("Turn emitted", zap.String("source", string(g.key.Thread.Source)),
				zap.String("session", g.key.Thread.Session), zap.String("agent_id", g.key.Thread.Agent),
				zap.String("prompt", g.key.Prompt), zap.Stringer("reason", g.reason))
		}
	}
	return nil
}

// dropped counts n dropped items and logs the reason the first time.
func (c *agentSpanConnector) dropped(ctx context.Context, reason string, n int, msg string, fields ...zap.Field) {
	if n == 0 {
		return
	}
	c.telemetry.AgentSpanInputDropped.Add(ctx, int64(n), metric.WithAttributes(attribute.String("reason", reason)))
	c.warnMu.Lock()
	first := !c.warned[reason]
	c.warned[reason] = true
	c.warnMu.Unlock()
	if first {
		c.set.Logger.Warn(msg+" (logged once; see otelcol_agent_span_input_dropped)", append([]zap.Field{zap.String("reason", reason), zap.Int("count", n)}, fields...)...)
	}
}

// Shutdown stops the ticker and emits what is complete. Without storage it
// then emits the open turns as in_progress; with storage they are saved
// already and continue after the next start. It is safe before Start and
// more than once.
func (c *agentSpanConnector) Shutdown(ctx context.Context) error {
	var err error
	c.shutdownOnce.Do(func() {
		if c.cancel != nil {
			c.cancel()
		}
		c.wg.Wait()
		defer c.telemetry.Shutdown()

		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.started {
			return
		}
		now := c.now()
		err = c.emitAndSave(ctx, c.asm.close(now, false))
		if c.client == nil {
			err = errors.Join(err, c.emitAndSave(ctx, c.asm.close(now, true)))
			return
		}
		err = errors.Join(err, c.client.Close(ctx))
	})
	return err
}
