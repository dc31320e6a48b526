// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentmetricsconnector

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/agentotel/agentotel/connector/agentmetricsconnector/internal/metadata"
	// The agents' service names (agentevent.Source.ServiceName) come
	// from their registered descriptors.
	_ "github.com/agentotel/agentotel/internal/vendors/all"
)

// NewFactory returns the factory of the agent_metrics connector.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		createDefaultConfig,
		connector.WithLogsToMetrics(createLogsToMetrics, metadata.LogsToMetricsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		MetricsFlushInterval: defaultFlushInterval,
		MaxSeries:            defaultMaxSeries,
		MaxSessions:          defaultMaxSessions,
	}
}

func createLogsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Logs, error) {
	return newConnector(set, cfg.(*Config), next)
}
