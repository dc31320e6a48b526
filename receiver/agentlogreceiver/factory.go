// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
)

const (
	defaultStartAt = StartAtBeginning
	// Agent files change at human pace; a poll opens every matched file, and
	// a user's history holds thousands of them.
	defaultPollInterval = time.Second
	// Single transcript lines reach several MB (base64 images, large tool
	// outputs); the buffer grows to this size only when a line needs it.
	defaultMaxLogSize = 256 * 1024 * 1024
	// Files are read in batches of half this number, each file by its own
	// goroutine that holds its lines and events until the batch is handed
	// on: more files at once than cores buys no speed, only memory (which
	// is why it is far below file_log's default).
	defaultMaxConcurrentFiles = 16
	defaultFingerprintSize    = 1000
	// A session is a few KB of parser state, but strings a parser keeps
	// (ids, the working directory) may hold the whole record, or the whole
	// rewritten file, they were decoded from. A user's history holds
	// thousands of files, most of them finished, and a live user writes a
	// few at once: the cap keeps memory from growing with the history.
	defaultMaxTrackedSessions = 100
	defaultForgetAfter        = time.Hour
)

// NewFactory creates the factory of the agent_log receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithLogs(createLogs, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	cfg := &Config{
		StartAt:            defaultStartAt,
		PollInterval:       defaultPollInterval,
		Watch:              true,
		MaxLogSize:         helper.ByteSize(defaultMaxLogSize),
		MaxConcurrentFiles: defaultMaxConcurrentFiles,
		FingerprintSize:    helper.ByteSize(defaultFingerprintSize),
		Redact:             true,
		RetryOnFailure:     defaultRetry(),
		MaxTrackedSessions: defaultMaxTrackedSessions,
		ForgetAfter:        defaultForgetAfter,
	}
	// Every agent is read by default; an optional one whose default location
	// is unknown is skipped at Start.
	for _, a := range registered() {
		a.config(cfg).Enabled = true
	}
	return cfg
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	return newReceiver(set, cfg.(*Config), next, registered())
}

// defaultRetry is retry_on_failure's default: on, never giving up (the
// records are on disk; dropping them would lose them).
func defaultRetry() configretry.BackOffConfig {
	rc := configretry.NewDefaultBackOffConfig()
	rc.InitialInterval = time.Second
	rc.MaxInterval = 30 * time.Second
	rc.MaxElapsedTime = 0
	return rc
}
