// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
	"github.com/agentotel/agentotel/internal/agentevent"
)

// tickInterval is how often open turns are checked against the idle timeout.
const tickInterval = time.Second

// Reasons for agent_span_input_dropped.
const (
	dropNotAgentEvent = "not_agent_event"
	dropDuplicateSpan = "duplicate_span"
	dropNoTurn        = "no_turn"
)

type agentSpanConnector struct {
	cfg       *Config
	set       connector.Settings
	next      consumer.Traces
	telemetry *metadata.TelemetryBuilder
	// now is the wall clock; tests replace it.
	now func() time.Time

	mu      sync.Mutex
	asm     *assembler
	client  storage.Client // nil without storage
	started bool
	warned  map[string]bool // drop reasons already logged

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
		asm:       newAssembler(cfg.TurnIdleTimeout, mapOptions{includeContent: cfg.IncludeContent, maxContentLength: cfg.MaxContentLength}),
		warned:    map[string]bool{},
	}
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

// Start restores the saved state (with storage) and starts the ticker that
// closes idle turns.
func (c *agentSpanConnector) Start(ctx context.Context, host component.Host) error {
	c.host = host
	if c.cfg.Storage != nil {
		client, err := storageClient(ctx, host, *c.cfg.Storage, c.set.ID)
		if err != nil {
			return err
		}
		b, err := client.Get(ctx, stateKey)
		if err != nil {
			_ = client.Close(ctx)
			return fmt.Errorf("read saved state: %w", err)
		}
		if b != nil {
			c.mu.Lock()
			err = c.asm.restore(b)
			if err != nil {
				// A state this version cannot read is not worth refusing to
				// start for: say so and begin afresh.
				c.set.Logger.Warn("Ignoring saved state", zap.Error(err))
				c.asm = newAssembler(c.cfg.TurnIdleTimeout, c.asm.opts)
			}
			c.mu.Unlock()
			// Drop it from storage: after a crash, replaying an old state would
			// emit turns twice; losing the open turns is the lesser harm.
			if err := client.Delete(ctx, stateKey); err != nil {
				_ = client.Close(ctx)
				return fmt.Errorf("clear saved state: %w", err)
			}
		}
		c.client = client
	}
	c.mu.Lock()
	c.started = true
	c.mu.Unlock()

	tickCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
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
	}()
	return nil
}

func storageClient(ctx context.Context, host component.Host, id, self component.ID) (storage.Client, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("`storage`: extension %q not found", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("`storage`: extension %q is not a storage extension", id)
	}
	return se.GetClient(ctx, component.KindConnector, self, "")
}

// ConsumeLogs ingests agent events and emits every turn they complete.
func (c *agentSpanConnector) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	type hosted struct {
		ev   agentevent.Event
		host string
	}
	var evs []hosted
	notEvents := 0
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
				ev, err := agentevent.Decode(lrs.At(k))
				if err != nil {
					notEvents++
					continue
				}
				evs = append(evs, hosted{ev, host})
			}
		}
	}

	c.mu.Lock()
	now := c.now()
	for _, h := range evs {
		c.asm.add(h.ev, h.host, now)
	}
	out := c.asm.close(now, false)
	c.mu.Unlock()

	c.dropped(ctx, dropNotAgentEvent, notEvents, "log records that are not agent events were ignored")
	return c.emit(ctx, out)
}

// tick closes the turns that went idle.
func (c *agentSpanConnector) tick(ctx context.Context) {
	c.mu.Lock()
	out := c.asm.close(c.now(), false)
	c.mu.Unlock()
	if err := c.emit(ctx, out); err != nil {
		c.set.Logger.Error("Failed to emit closed turns", zap.Error(err))
		if c.host != nil {
			componentstatus.ReportStatus(c.host, componentstatus.NewRecoverableErrorEvent(err))
		}
	}
}

func (c *agentSpanConnector) emit(ctx context.Context, out closed) error {
	c.dropped(ctx, dropDuplicateSpan, out.duplicates, "spans already emitted were not emitted again (late or repeated events of a closed turn)")
	c.dropped(ctx, dropNoTurn, out.noTurn, "events before any prompt of their thread were dropped: no turn followed them")
	for _, st := range out.statuses {
		c.telemetry.AgentSpanTurnsEmitted.Add(ctx, 1, metric.WithAttributes(attribute.String("turn_status", st)))
	}
	if out.spans == 0 {
		return nil
	}
	c.telemetry.AgentSpanSpansEmitted.Add(ctx, int64(out.spans))
	return c.next.ConsumeTraces(ctx, out.traces)
}

// dropped counts n dropped items and logs the reason the first time.
func (c *agentSpanConnector) dropped(ctx context.Context, reason string, n int, msg string) {
	if n == 0 {
		return
	}
	c.telemetry.AgentSpanInputDropped.Add(ctx, int64(n), metric.WithAttributes(attribute.String("reason", reason)))
	c.mu.Lock()
	first := !c.warned[reason]
	c.warned[reason] = true
	c.mu.Unlock()
	if first {
		c.set.Logger.Warn(msg+" (logged once; see otelcol_agent_span_input_dropped)", zap.String("reason", reason), zap.Int("count", n))
	}
}

// Shutdown stops the ticker, then saves the open turns (with storage) or
// emits them as in_progress (without). It is safe before Start and more
// than once.
func (c *agentSpanConnector) Shutdown(ctx context.Context) error {
	var err error
	c.shutdownOnce.Do(func() {
		if c.cancel != nil {
			c.cancel()
		}
		c.wg.Wait()
		defer c.telemetry.Shutdown()

		c.mu.Lock()
		started := c.started
		c.mu.Unlock()
		if !started {
			return
		}
		now := c.now()
		c.mu.Lock()
		out := c.asm.close(now, false)
		c.mu.Unlock()
		err = c.emit(ctx, out)

		if c.client == nil {
			c.mu.Lock()
			out = c.asm.close(now, true)
			c.mu.Unlock()
			err = errors.Join(err, c.emit(ctx, out))
			return
		}
		c.mu.Lock()
		b, merr := c.asm.marshal()
		c.mu.Unlock()
		if merr == nil {
			merr = c.client.Set(ctx, stateKey, b)
		}
		if merr != nil {
			err = errors.Join(err, fmt.Errorf("save state: %w", merr))
		}
		err = errors.Join(err, c.client.Close(ctx))
	})
	return err
}
