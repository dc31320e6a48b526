// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentmetricsconnector

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

const (
	// defaultFlushInterval is how often the cumulative metrics are emitted
	// (the span_metrics connector's default too).
	defaultFlushInterval = 15 * time.Second
	// defaultMaxSeries caps the data points held: agents × providers ×
	// models × token types stays in the hundreds; a flood of odd model
	// names must not grow memory without bound.
	defaultMaxSeries = 2000
	// defaultMaxSessions caps the sessions whose last event time is kept to
	// measure model-call durations.
	defaultMaxSessions = 10000
)

// Config is the configuration of the agent_metrics connector.
type Config struct {
	// MetricsFlushInterval is how often the metrics are emitted.
	MetricsFlushInterval time.Duration `mapstructure:"metrics_flush_interval"`
	// MaxSeries caps the series held; observations of a new series beyond it
	// are dropped and counted (agent_metrics_input_dropped{reason=series_limit}).
	MaxSeries int `mapstructure:"max_series"`
	// MaxSessions caps the sessions tracked for operation durations; beyond
	// it the least recently seen is forgotten (its next call gets no duration).
	MaxSessions int `mapstructure:"max_sessions"`
	// Exemplars configures exemplars on the histograms.
	Exemplars ExemplarsConfig `mapstructure:"exemplars"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// ExemplarsConfig turns exemplars on. Off by default.
type ExemplarsConfig struct {
	// Enabled adds to each histogram data point the latest observation as an
	// exemplar, with the session (gen_ai.conversation.id) as its filtered
	// attribute: a way from a series to one session without a session label.
	Enabled bool `mapstructure:"enabled"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks every setting and reports all problems at once.
func (c *Config) Validate() error {
	var errs []error
	if c.MetricsFlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("`metrics_flush_interval` must be positive, got %s", c.MetricsFlushInterval))
	}
	if c.MaxSeries <= 0 {
		errs = append(errs, fmt.Errorf("`max_series` must be a positive number, got %d", c.MaxSeries))
	}
	if c.MaxSessions <= 0 {
		errs = append(errs, fmt.Errorf("`max_sessions` must be a positive number, got %d", c.MaxSessions))
	}
	return errors.Join(errs...)
}
