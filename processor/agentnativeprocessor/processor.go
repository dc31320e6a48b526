// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"context"
	"fmt"
	"sync"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/redact"
	"github.com/agentotel/agentotel/internal/storagecodec"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/metadata"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/owners"
)

// Record outcomes and drop reasons (telemetry attribute values).
const (
	outcomeMapped   = "mapped"
	outcomeIgnored  = "ignored"
	outcomeUnmapped = "unmapped"
	outcomePassed   = "passed"

	reasonOtherSource = "other_source"
)

const (
	// maxNativeTraces bounds the trace ids of native spans remembered for
	// marking the events of a turn as covered.
	maxNativeTraces = 65536
	// maxLogged bounds the sets of (service, event name) and sessions
	// already logged; past it they start over.
	maxLogged = 4096
)

// nativeProcessor is the one instance the logs and traces pipelines of one
// component id share: the owner table and the covered traces join them.
type nativeProcessor struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	reg    registry

	startOnce    sync.Once
	startErr     error
	shutdownOnce sync.Once

	// mu serializes the batches of both signals: the mappers keep
	// per-session state and the owner table's decisions of a batch are
	// written before the next batch decides.
	mu       sync.Mutex
	mappers  map[agentevent.Source]logMapper
	table    *owners.Table
	client   storage.Client // nil without storage
	traces   *recentSet
	unmapped map[string]bool
	other    map[owners.Key]bool

	recordOpts map[[2]string]metric.MeasurementOption
}

func newNativeProcessor(set processor.Settings, cfg *Config, agents []agentDef) (*nativeProcessor, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	p := &nativeProcessor{
		cfg:        cfg,
		id:         set.ID,
		logger:     set.Logger,
		tel:        tel,
		reg:        registry{agents: agents},
		mappers:    map[agentevent.Source]logMapper{},
		traces:     newRecentSet(maxNativeTraces),
		unmapped:   map[string]bool{},
		other:      map[owners.Key]bool{},
		recordOpts: map[[2]string]metric.MeasurementOption{},
	}
	for _, a := range agents {
		if a.newMapper != nil {
			p.mappers[a.source] = a.newMapper()
		}
	}
	p.table = owners.New(p.policy(), nil, cfg.MaxSessions)
	return p, nil
}

func (p *nativeProcessor) policy() owners.Policy {
	if p.cfg.SessionOwner == OwnerFiles {
		return owners.FilesWin
	}
	return owners.FirstSeen
}

// start opens the storage client (once for both pipelines).
func (p *nativeProcessor) start(ctx context.Context, host component.Host) error {
	p.startOnce.Do(func() {
		if p.cfg.Storage == nil {
			return
		}
		client, err := adapter.GetStorageClient(ctx, host, p.cfg.Storage, p.id)
		if err != nil {
			p.startErr = fmt.Errorf("`storage`: %w", err)
			return
		}
		client = storagecodec.Wrap(client, storagecodec.OtherFormatWarning(p.logger, host, *p.cfg.Storage,
			"the session owners it held are decided anew"))
		p.mu.Lock()
		p.client = client
		p.table = owners.New(p.policy(), client, p.cfg.MaxSessions)
		p.mu.Unlock()
	})
	return p.startErr
}

// shutdown closes the storage client (once for both pipelines).
func (p *nativeProcessor) shutdown(ctx context.Context) error {
	var err error
	p.shutdownOnce.Do(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.client != nil {
			err = p.client.Close(ctx)
			p.client = nil
		}
		p.tel.Shutdown()
	})
	return err
}

func (p *nativeProcessor) countRecord(ctx context.Context, agent agentevent.Source, outcome string) {
	k := [2]string{string(agent), outcome}
	opt, ok := p.recordOpts[k]
	if !ok {
		opt = metric.WithAttributeSet(attribute.NewSet(attribute.String("agent", k[0]), attribute.String("outcome", outcome)))
		p.recordOpts[k] = opt
	}
	p.tel.AgentNativeRecords.Add(ctx, 1, opt)
}

// dropOtherSource counts an event or span of session k that another source
// owns, and logs the session once.
func (p *nativeProcessor) dropOtherSource(ctx context.Context, k owners.Key, o owners.Origin) {
	p.tel.AgentNativeDropped.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reasonOtherSource))))
	if p.other[k] {
		return
	}
	if len(p.other) >= maxLogged {
		clear(p.other)
	}
	p.other[k] = true
	p.logger.Info("Dropping a session's data from a second source: another source owns the session (session_owner)",
		zap.String("agent", k.Source), zap.String("session", k.Session), zap.Stringer("dropped_origin", o),
		zap.String("session_owner", string(p.cfg.SessionOwner)))
}

// logUnmapped logs, once per service and event name, a record its agent's
// mapping could not map.
func (p *nativeProcessor) logUnmapped(rec *agentevent.NativeRecord, err error) {
	k := rec.Service + "\x00" + rec.Name
	if p.unmapped[k] {
		return
	}
	if len(p.unmapped) >= maxLogged {
		clear(p.unmapped)
	}
	p.unmapped[k] = true
	p.logger.Warn("Dropping native log records that cannot be mapped to agent events (logged once per service and event name)",
		zap.String("service", rec.Service), zap.String("event_name", rec.Name), zap.String("scope", rec.Scope), zap.Error(err))
}

// prepareEvent applies the redaction and content settings to a mapped
// event on its way out.
func (p *nativeProcessor) prepareEvent(ev *agentevent.Event) {
	ev.Raw = nil
	if ev.SchemaVersion == "" {
		agentevent.Normalize(ev)
	}
	if !p.cfg.IncludeContent {
		agentevent.StripContent(ev)
	}
	if p.cfg.Redact {
		redact.Event(ev)
	}
}

// recentSet is a set of the n most recently added strings.
type recentSet struct {
	has  map[string]bool
	ring []string
	next int
}

func newRecentSet(n int) *recentSet {
	return &recentSet{has: make(map[string]bool), ring: make([]string, n)}
}

func (s *recentSet) add(v string) {
	if v == "" || s.has[v] {
		return
	}
	if old := s.ring[s.next]; old != "" {
		delete(s.has, old)
	}
	s.ring[s.next] = v
	s.has[v] = true
	s.next = (s.next + 1) % len(s.ring)
}

func (s *recentSet) contains(v string) bool { return v != "" && s.has[v] }
