// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadata"
	// The agents' service names (agentevent.Source.ServiceName) come
	// from their registered descriptors.
	_ "github.com/agentotel/agentotel/internal/vendors/all"
)

// NewFactory returns the factory of the agent_span connector.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		createDefaultConfig,
		connector.WithLogsToTraces(createLogsToTraces, metadata.LogsToTracesStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		TurnIdleTimeout:     defaultTurnIdleTimeout,
		MaxOpenToolDuration: defaultMaxOpenToolDuration,
		MaxCachedSessions:   defaultMaxCachedSessions,
		MaxContentLength:    defaultMaxContentLength,
	}
}

func createLogsToTraces(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Traces) (connector.Logs, error) {
	return newConnector(set, cfg.(*Config), next)
}
