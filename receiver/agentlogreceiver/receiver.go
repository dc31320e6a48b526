// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/storagecodec"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/progress"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/watch"
)

// defaultSettleDelay is how long a rewritten file must stay unchanged
// before its last record, which the agent may still be completing, is taken
// as final (Gemini CLI completes its last message in place).
const defaultSettleDelay = 5 * time.Second

// logsReceiver reads every enabled agent's data through one source per
// agent (sources.go), which hands what it reads to the agent's emitter
// (emitter.go); read positions go through the agent's checkpoint.Store.
type logsReceiver struct {
	set       receiver.Settings
	cfg       *Config
	next      consumer.Logs
	agents    []agent
	obsrecv   *receiverhelper.ObsReport
	telemetry *metadata.TelemetryBuilder
	clock     clock
	settle    time.Duration
	sweep     time.Duration // 0: from the settings (see source.Settings.SweepInterval)
	// progressEvery is how often the backfill's progress is logged (and
	// agents gone quiet are taken as done).
	progressEvery time.Duration
	// watchAdd, when set, replaces the adding of a directory watch (tests
	// inject the watch limit with it).
	watchAdd func(w *fsnotify.Watcher, dir string) error
	// readSlots bound the JSONL files being read across agents: two per
	// core and one more, so that the cores stay busy parsing while the
	// batches read wait in their group commit for its delivery (a waiting
	// batch keeps its slot), and the lines and events in memory do not grow
	// with the number of agents and files read at once.
	readSlots chan struct{}

	mu     sync.Mutex // guards the fields below: Start and Shutdown
	client storage.Client
	// blobs keeps the values written whole per agent (see checkpoint.Store).
	blobs    storage.Client
	sources  []source.Source
	emitters []*emitter
	progress *progress.Progress
	shutdown bool
}

var _ receiver.Logs = (*logsReceiver)(nil)

// option changes how a receiver runs (tests inject clocks and delays).
type option func(*logsReceiver)

// withClock sets the receiver's clock.
func withClock(c clock) option { return func(r *logsReceiver) { r.clock = c } }

// withSweepInterval sets how often sessions are checked for being gone.
func withSweepInterval(d time.Duration) option { return func(r *logsReceiver) { r.sweep = d } }

// withProgressInterval sets how often the backfill's progress is logged.
func withProgressInterval(d time.Duration) option {
	return func(r *logsReceiver) { r.progressEvery = d }
}

// withWatchAdd replaces the adding of a directory watch.
func withWatchAdd(add func(w *fsnotify.Watcher, dir string) error) option {
	return func(r *logsReceiver) { r.watchAdd = add }
}

// withSettleDelay sets how long a rewritten file must stay unchanged.
func withSettleDelay(d time.Duration) option { return func(r *logsReceiver) { r.settle = d } }

func newReceiver(set receiver.Settings, cfg *Config, next consumer.Logs, table []agent, opts ...option) (*logsReceiver, error) {
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
	r := &logsReceiver{
		set: set, cfg: cfg, next: next, agents: table, obsrecv: obsrecv, telemetry: tb,
		clock: realClock(), settle: defaultSettleDelay, progressEvery: progress.Interval,
	}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Start resolves the storage extension and each enabled agent's file
// patterns (default locations come from the environment now, not from the
// factory), then starts one source per agent.
func (r *logsReceiver) Start(ctx context.Context, host component.Host) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shutdown {
		return errors.New("the agent_log receiver cannot be started again after Shutdown")
	}
	if err := r.openStorage(ctx, host); err != nil {
		return err
	}

	hostname, err := os.Hostname()
	if err != nil {
		r.set.Logger.Warn("Cannot determine the host name; records carry no host.name", zap.Error(err))
		hostname = ""
	}
	env := agents.ProcessEnv()
	startedAt := r.clock.now()
	r.progress = progress.New(r.set.Logger, r.telemetry, r.cfg.PollInterval, r.settle)
	// The receiver's clock (injected by tests); every agent's backfill is
	// timed from the start.
	r.progress.SetClock(r.clock.now, startedAt, r.progressEvery)
	r.readSlots = make(chan struct{}, 2*runtime.GOMAXPROCS(0)+1)
	for _, a := range r.agents {
		ac := a.config(r.cfg)
		if !ac.Enabled {
			continue
		}
		src, err := r.newSource(ctx, host, a, ac, env, hostname, startedAt)
		if err == nil {
			err = src.Start(ctx)
		}
		if err != nil {
			return errors.Join(err, r.stopLocked(ctx))
		}
		r.sources = append(r.sources, src)
	}
	r.progress.Start()
	return nil
}

// newSource builds the source of one agent, of the kind of its data.
func (r *logsReceiver) newSource(ctx context.Context, host component.Host, a agent, ac *AgentConfig, env agents.Env, hostname string, startedAt time.Time) (source.Source, error) {
	include, exclude, err := resolvePatterns(a, ac, env)
	if a.Optional && errors.Is(err, agents.ErrNoHome) && len(ac.Include) == 0 {
		r.set.Logger.Warn(fmt.Sprintf("The agent's default location is unknown ($HOME is not set); set `%s.include` to read it", a.key),
			zap.String("agent", a.key))
		return source.Nop{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("`%s.include`: %w; set the patterns explicitly", a.key, err)
	}
	em := newEmitter(a, r.cfg, r.next, r.obsrecv, r.telemetry, r.set.Logger, hostname, r.clock)
	r.emitters = append(r.emitters, em)
	em.progress = r.progress // counts what is read, history and live
	if r.cfg.StartAt == StartAtBeginning {
		// The history to read, as it is before any of it is read.
		r.progress.Found(ctx, a.key, historyOf(a.Reader.Kind, include, exclude))
	}
	// scope is the agent's part of the storage, or another part of it.
	scope := func(key string) *checkpoint.Store {
		return checkpoint.New(r.client, key, r.cfg.Storage != nil).WithBlobs(r.blobs, key)
	}
	var group *watch.Group
	if r.cfg.Watch {
		group = &watch.Group{Add: r.watchAdd} // the agent's watch limit is logged once
	}
	set := source.Settings{
		Agent: a.key, Source: a.Source,
		Include: include, Exclude: exclude, ExcludeOlderThan: ac.ExcludeOlderThan,
		PollInterval: r.cfg.PollInterval,
		Watch:        group,
		StartAtEnd:   r.cfg.StartAt == StartAtEnd,
		Emitter:      em,
		Checkpoints:  scope(a.key),
		Life:         checkpoint.LifeCycle{MaxSessions: r.cfg.MaxTrackedSessions, ForgetAfter: r.cfg.ForgetAfter, Now: r.clock.now},
		Now:          r.clock.now,
		Logger:       r.set.Logger,
		Host:         host,
		SettleDelay:  r.settle,
		SweepEvery:   r.sweep,
		StartedAt:    startedAt,
	}
	return buildSource(a, r.cfg, set, r.readSlots, scope)
}

// Shutdown stops every source (read positions are saved) and closes the
// storage client. It returns when ctx ends even if a source has not
// stopped yet. It is safe before Start and when called more than once.
func (r *logsReceiver) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shutdown = true
	return r.stopLocked(ctx)
}

func (r *logsReceiver) stopLocked(ctx context.Context) error {
	if r.progress != nil {
		r.progress.Shutdown()
	}
	for _, e := range r.emitters {
		e.stopping.Store(true)
	}
	errs := make([]error, len(r.sources))
	var wg sync.WaitGroup
	for i, s := range r.sources {
		wg.Go(func() {
			errs[i] = s.Stop(ctx)
		})
	}
	wg.Wait()
	r.sources = nil
	for _, e := range r.emitters {
		e.flushReports()
	}
	r.emitters = nil
	if r.client != nil {
		errs = append(errs, r.client.Close(ctx))
		r.client = nil
	}
	if r.blobs != nil {
		errs = append(errs, r.blobs.Close(ctx))
		r.blobs = nil
	}
	r.telemetry.Shutdown()
	return errors.Join(errs...)
}

// openStorage opens the receiver's two storage clients (see checkpoint.Store).
// Their values are stored compressed (internal/storagecodec): the positions
// and parser states, one per file, are most of a history's storage.
func (r *logsReceiver) openStorage(ctx context.Context, host component.Host) error {
	client, err := adapter.GetStorageClient(ctx, host, r.cfg.Storage, r.set.ID)
	if err != nil {
		return fmt.Errorf("`storage`: %w", err)
	}
	var otherFormat func(string)
	if r.cfg.Storage != nil {
		otherFormat = storagecodec.OtherFormatWarning(r.set.Logger, host, *r.cfg.Storage,
			"its files are read again as new, per start_at")
	}
	r.client = storagecodec.Wrap(client, otherFormat)
	blobs, err := blobClient(ctx, host, r.cfg.Storage, r.set.ID)
	if err != nil {
		return errors.Join(fmt.Errorf("`storage`: %w", err), r.stopLocked(ctx))
	}
	r.blobs = storagecodec.Wrap(blobs, otherFormat)
	return nil
}

// blobClientName names the storage client of the values written whole per
// agent (see checkpoint.Store).
const blobClientName = "positions"

// blobClient is the storage client of the values written whole per agent,
// named blobClientName, from the storage extension as
// adapter.GetStorageClient finds it (component type without underscores).
func blobClient(ctx context.Context, host component.Host, storageID *component.ID, id component.ID) (storage.Client, error) {
	if storageID == nil {
		return storage.NewNopClient(), nil
	}
	ext, ok := host.GetExtensions()[*storageID].(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage extension '%s' not found", storageID)
	}
	typ := strings.ReplaceAll(id.Type().String(), "_", "")
	return ext.GetClient(ctx, component.KindReceiver, component.MustNewIDWithName(typ, id.Name()), blobClientName)
}
