// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/internal/metadata"
)

// NewFactory returns the factory of the agent_event exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithLogs(createLogs, metadata.LogsStability),
		exporter.WithTraces(createTraces, metadata.TracesStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		CreateDirectory:      true,
		DirectoryPermissions: defaultDirectoryPermissions,
		MaxOpenFiles:         defaultMaxOpenFiles,
		SessionIdleTimeout:   defaultSessionIdleTimeout,
	}
}

// checkSignal fails the creation of an exporter whose format reads another
// signal than the pipeline it is in.
func checkSignal(set exporter.Settings, cfg *Config, signal pipeline.Signal) error {
	if cfg.Format.signal() == signal {
		return nil
	}
	what, other := "agent events", "canonical_task"
	if cfg.Format.signal() == pipeline.SignalTraces {
		what, other = "turns from the agent_span connector", "agtrace_v1, universal or agent_manager"
	}
	return fmt.Errorf("%s: `format` %s reads %s (%s), so it cannot be in a %s pipeline: put %s in a %s pipeline, or use %s here",
		set.ID, cfg.Format, cfg.Format.signal(), what, signal, set.ID, cfg.Format.signal(), other)
}

func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	if err := checkSignal(set, c, pipeline.SignalLogs); err != nil {
		return nil, err
	}
	e, err := newExporter(set, c)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewLogs(ctx, set, cfg, e.consumeLogs,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
	)
}

func createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	c := cfg.(*Config)
	if err := checkSignal(set, c, pipeline.SignalTraces); err != nil {
		return nil, err
	}
	e, err := newExporter(set, c)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewTraces(ctx, set, cfg, e.consumeTraces,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
	)
}
