// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/metadata"
)

var capabilities = processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true})

// NewFactory returns the factory of the agent_native processor.
func NewFactory() processor.Factory {
	return newFactory(defaultAgents)
}

// newFactory is NewFactory with the agent registry given (tests inject
// fake mappings).
func newFactory(agents func() []agentDef) processor.Factory {
	return newSharedFactory(agents).processorFactory()
}

// factory keeps the one processor per component id that its logs and
// traces pipelines share (the otlp receiver's pattern): the owner table
// and the covered traces must be the same for both signals.
type factory struct {
	agents func() []agentDef
	mu     sync.Mutex
	shared map[component.ID]*nativeProcessor
}

func newSharedFactory(agents func() []agentDef) *factory {
	return &factory{agents: agents, shared: map[component.ID]*nativeProcessor{}}
}

func (f *factory) processorFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithLogs(f.createLogs, metadata.LogsStability),
		processor.WithTraces(f.createTraces, metadata.TracesStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{SessionOwner: OwnerFirst, MaxSessions: defaultMaxSessions, Redact: true}
}

func (f *factory) get(set processor.Settings, cfg *Config) (*nativeProcessor, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.shared[set.ID]; ok {
		return p, nil
	}
	p, err := newNativeProcessor(set, cfg, f.agents())
	if err != nil {
		return nil, err
	}
	f.shared[set.ID] = p
	return p, nil
}

// shutdown shuts p down and forgets it: a pipeline rebuilt after a reload
// gets a new one.
func (f *factory) shutdown(id component.ID, p *nativeProcessor) func(context.Context) error {
	return func(ctx context.Context) error {
		f.mu.Lock()
		if f.shared[id] == p {
			delete(f.shared, id)
		}
		f.mu.Unlock()
		return p.shutdown(ctx)
	}
}

func (f *factory) createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := f.get(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs, capabilities,
		processorhelper.WithStart(p.start), processorhelper.WithShutdown(f.shutdown(set.ID, p)))
}

func (f *factory) createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := f.get(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces, capabilities,
		processorhelper.WithStart(p.start), processorhelper.WithShutdown(f.shutdown(set.ID, p)))
}
