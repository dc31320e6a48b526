// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
)

// logsReceiver tails the session files of every enabled agent, one
// fileconsumer per agent, and emits their events to the next consumer.
type logsReceiver struct {
	set       receiver.Settings
	cfg       *Config
	next      consumer.Logs
	agents    []agent
	obsrecv   *receiverhelper.ObsReport
	telemetry *metadata.TelemetryBuilder

	mu       sync.Mutex // guards the fields below: Start and Shutdown
	client   storage.Client
	tailers  []*tailer
	readers  []snapshotReader
	shutdown bool
}

var _ receiver.Logs = (*logsReceiver)(nil)

func newReceiver(set receiver.Settings, cfg *Config, next consumer.Logs, table []agent) (*logsReceiver, error) {
	obsrecv, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              "file",
		LongLivedCtx:           true,
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &logsReceiver{set: set, cfg: cfg, next: next, agents: table, obsrecv: obsrecv, telemetry: tb}, nil
}

// Start resolves the storage extension and each enabled agent's file
// patterns (default locations come from the environment now, not from the
// factory), then starts tailing.
func (r *logsReceiver) Start(ctx context.Context, host component.Host) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shutdown {
		return errors.New("the agent_log receiver cannot be started again after Shutdown")
	}
	client, err := storageClient(ctx, host, r.cfg.Storage, r.set.ID)
	if err != nil {
		return fmt.Errorf("`storage`: %w", err)
	}
	r.client = client

	hostname, err := os.Hostname()
	if err != nil {
		r.set.Logger.Warn("Cannot determine the host name; records carry no host.name", zap.Error(err))
		hostname = ""
	}
	env := processEnvironment()
	for _, a := range r.agents {
		ac := a.config(r.cfg)
		if !ac.Enabled {
			continue
		}
		if a.start != nil {
			rd, err := a.start(r, host, a, ac, env, hostname)
			if err != nil {
				return errors.Join(fmt.Errorf("`%s.include`: %w; set the patterns explicitly", a.key, err), r.stopLocked(ctx))
			}
			r.readers = append(r.readers, rd)
			continue
		}
		t, err := r.startTailer(ctx, host, a, ac, env, hostname)
		if a.optional && errors.Is(err, errNoHome) && len(ac.Include) == 0 {
			r.set.Logger.Warn("The agent's default location is unknown ($HOME is not set); set its `include` to read it",
				zap.String("agent", a.key))
			continue
		}
		if err != nil {
			return errors.Join(err, r.stopLocked(ctx))
		}
		r.tailers = append(r.tailers, t)
	}
	return nil
}

func (r *logsReceiver) startTailer(ctx context.Context, host component.Host, a agent, ac *AgentConfig, env environment, hostname string) (*tailer, error) {
	include, exclude, err := resolvePatterns(a, ac, env)
	if err != nil {
		return nil, fmt.Errorf("`%s.include`: %w; set the patterns explicitly", a.key, err)
	}
	t := newTailer(r, host, a, hostname)
	fc := tailConfig(r.cfg, ac, include, exclude)
	m, err := fc.Build(r.set.TelemetrySettings, t.emit, fileconsumer.WithSplitFunc(splitLines))
	if err != nil {
		return nil, fmt.Errorf("`%s`: %w", a.key, err)
	}
	t.manager = m
	if err := m.Start(t.store); err != nil {
		return nil, fmt.Errorf("start reading %s files: %w", a.key, err)
	}
	r.set.Logger.Info("Reading agent session files",
		zap.String("agent", a.key), zap.Strings("include", include), zap.Strings("exclude", exclude))
	return t, nil
}

// tailConfig is the fileconsumer configuration of one agent: its files, the
// receiver's tailing settings, and what the parsers rely on, fixed.
func tailConfig(cfg *Config, ac *AgentConfig, include, exclude []string) fileconsumer.Config {
	fc := fileconsumer.NewConfig()
	fc.Include = include
	fc.Exclude = exclude
	fc.ExcludeOlderThan = ac.ExcludeOlderThan
	fc.StartAt = string(cfg.StartAt)
	fc.PollInterval = cfg.PollInterval
	fc.MaxConcurrentFiles = cfg.MaxConcurrentFiles
	fc.FingerprintSize = cfg.FingerprintSize
	fc.MaxLogSize = cfg.MaxLogSize
	// A line of max_log_size or more is cut to one token and the rest of it
	// skipped, so line numbers stay right; tailer.emit reports the token.
	fc.MaxLogSizeBehavior = fileconsumer.MaxLogSizeBehaviorTruncate
	// The read buffer must not start larger than max_log_size: truncation
	// only happens when the buffer has grown to exactly max_log_size, and a
	// bigger buffer would wedge the file on "log entry too large".
	fc.InitialBufferSize = min(fc.InitialBufferSize, cfg.MaxLogSize)
	// Bytes as written: no decoding, no whitespace trimming (nop encoding),
	// lines split on "\n" only by splitLines.
	fc.Encoding = "nop"
	// Never emit a partial last line: the agents terminate every record with
	// "\n", so an unterminated line is still being written.
	fc.FlushPeriod = 0
	fc.IncludeFileName = false
	fc.IncludeFilePath = true
	return *fc
}

// Shutdown stops tailing (read positions are saved) and closes the storage
// client. It is safe before Start and when called more than once.
func (r *logsReceiver) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shutdown = true
	return r.stopLocked(ctx)
}

func (r *logsReceiver) stopLocked(ctx context.Context) error {
	var errs []error
	for _, t := range r.tailers {
		errs = append(errs, t.manager.Stop())
	}
	r.tailers = nil
	for _, rd := range r.readers {
		errs = append(errs, rd.stop())
	}
	r.readers = nil
	if r.client != nil {
		errs = append(errs, r.client.Close(ctx))
		r.client = nil
	}
	r.telemetry.Shutdown()
	return errors.Join(errs...)
}

// scopedStore is the part of the storage client one agent uses: fileconsumer's
// read positions and the parser states, under keys prefixed with the agent key.
func scopedStore(client storage.Client, agentKey string) operator.Persister {
	return operator.NewScopedPersister(agentKey, client)
}
