// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package snapshot is the source of the agent_log receiver for files an
// agent rewrites whole (Gemini CLI chats, Amp threads, Copilot CLI's
// history files): they cannot be tailed by byte offset. Every
// poll_interval it matches the include patterns and re-reads a file when its
// size or modification time changed; the agent's Mapper maps what of it was
// not emitted before. The watermark is per thread (a session, or a subagent
// of one), not per file — the set of keys emitted and the next sequence
// number — kept under <agent>.thread.<thread>, so a thread present in two
// files, and a restart, emit nothing twice.
package snapshot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// Source polls one agent's rewritten files.
type Source struct {
	source.Settings
	mapper  Mapper
	threads *checkpoint.Table[*Thread]
	poller  *source.Loop

	// Touched by the poll goroutine only (and by Stop once it has ended).
	files map[string]*file
	polls int
	// batch gathers the threads read in a poll for fewer deliveries;
	// find lists the directories of the include patterns.
	batch *source.Batch
	find  *finder.Finder
}

// file is what the source knows of one file.
type file struct {
	sig source.FileSig
	// mapped: sig was read and mapped; settled: mapped as settled (nothing
	// held back). badSig is the signature of a file that did not decode:
	// it is reported when it still does not decode unchanged at the next
	// poll (a file caught mid-rewrite decodes then).
	mapped, settled bool
	// refused: a delivery of this read was refused (the receiver stops).
	refused     bool
	badSig      source.FileSig
	reportedSig source.FileSig
	// reported remembers the bad records reported (mapper keys).
	reported map[string]string
	// records seen at the last read, for the counters (mapper's use).
	records, skipped int
	// told: the backfill's progress was told the file has been read.
	told bool
}

// New is the snapshot source of one agent, whose files m maps.
func New(set source.Settings, m Mapper) (*Source, error) {
	find, err := finder.New(set.Include, set.Exclude)
	if err != nil {
		return nil, fmt.Errorf("`%s`: %w", set.Agent, err)
	}
	s := &Source{Settings: set, mapper: m, files: map[string]*file{}, find: find}
	s.batch = source.NewBatch(set.Emitter, set.Checkpoints, set.StorageError)
	s.threads = checkpoint.NewTable(set.Checkpoints, "", checkpoint.Codec[*Thread]{
		Fresh: func(string) *Thread { return &Thread{Emitted: m.NewWatermark()} },
		Marshal: func(th *Thread) ([]byte, error) {
			emitted, err := th.Emitted.MarshalState()
			if err != nil {
				return nil, err
			}
			return json.Marshal(mark{Emitted: emitted, Sequence: th.Seq})
		},
		Unmarshal: func(_ string, b []byte) (*Thread, error) {
			var mk mark
			if err := json.Unmarshal(b, &mk); err != nil {
				return nil, err
			}
			w, err := m.UnmarshalWatermark(mk.Emitted)
			if err != nil {
				return nil, err
			}
			return &Thread{Emitted: w, Seq: mk.Sequence}, nil
		},
	}, set.Life, set.StorageError)
	s.threads.OnForget = func(_ string, probes []string) {
		s.Emitter.Forget(probes...)
	}
	return s, nil
}

// Start polls the files every poll_interval, and when they change (watch),
// and sweeps the threads whose
// files are gone.
func (s *Source) Start(context.Context) error {
	lastSweep := s.Now()
	s.poller = source.StartWatchLoop(s.PollInterval, s.Watcher(s.Include), func(ctx context.Context) {
		s.Poll(ctx, false)
		if now := s.Now(); now.Sub(lastSweep) >= s.SweepInterval() {
			lastSweep = now
			s.sweep(ctx)
		}
	})
	s.Logger.Info("Reading agent session data",
		zap.String("agent", s.Agent), zap.Strings("include", s.Include), zap.Strings("exclude", s.Exclude))
	return nil
}

// sweep forgets threads whose files are all gone, and the files.
func (s *Source) sweep(ctx context.Context) {
	s.threads.Sweep(ctx, source.FileExists)
	for path := range s.files {
		if !source.FileExists(path) {
			delete(s.files, path)
		}
	}
}

// Stop ends polling, then reads once more taking every file as settled: a
// last record held back is emitted rather than left to the next run.
func (s *Source) Stop(ctx context.Context) error {
	if err := s.poller.Halt(ctx); err != nil {
		return err
	}
	err := source.RunUntil(ctx, func() error {
		fctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-ctx.Done():
				cancel()
			case <-fctx.Done():
			}
		}()
		s.Poll(fctx, true)
		return nil
	})
	s.threads.Flush(context.WithoutCancel(ctx))
	return err
}

// Threads is the source's table of threads.
func (s *Source) Threads() *checkpoint.Table[*Thread] { return s.threads }

// Files is the number of files the source knows.
func (s *Source) Files() int { return len(s.files) }

// matches returns the files the include patterns match, in the mapper's
// order. Directories are listed again only when they changed (finder).
func (s *Source) matches() []string {
	out, _ := s.find.Match() // no match is an error to the finder, nothing to read to us
	s.mapper.Sort(out)
	return out
}

// Poll reads the files that changed, and maps again as settled those whose
// last record was held back and that have not changed for the settle
// delay. final takes every file as settled (shutdown).
func (s *Source) Poll(ctx context.Context, final bool) {
	read := s.pollFiles(ctx, final)
	s.batch.Flush(ctx)
	s.tellRead(ctx, read)
}

// tellRead tells the backfill's progress which files have been read to
// their end: a file is read whole, so once it has been mapped as settled
// (nothing held back) and its events delivered, nothing of it is left —
// whether or not the read had anything new to deliver (a logs.json whose
// sessions all have chats, every file after a restart), which no delivery
// would say. Each file is told once.
func (s *Source) tellRead(ctx context.Context, read []string) {
	for _, path := range read {
		if f := s.files[path]; f != nil {
			if f.refused || f.told {
				continue // refused: read again at the next poll
			}
			f.told = true
		}
		s.Emitter.FileRead(ctx, path, true)
	}
}

// pollFiles reads the files that changed (see Poll). It returns the files
// this poll read to their end, and at the first poll those with nothing to
// read (empty, or left out by exclude_older_than): told to the progress
// once the batch is delivered.
func (s *Source) pollFiles(ctx context.Context, final bool) (read []string) {
	first := s.polls == 0
	s.polls++
	now := s.Now()
	for _, path := range s.matches() {
		if ctx.Err() != nil {
			return read
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() == 0 || (s.ExcludeOlderThan > 0 && now.Sub(fi.ModTime()) > s.ExcludeOlderThan) {
			// An empty file is being created: nothing to read yet. An old
			// one is left out.
			if first {
				read = append(read, path)
			}
			continue
		}
		f := s.files[path]
		if f == nil {
			f = &file{}
			s.files[path] = f
		}
		sig := source.SigOf(fi)
		settled := final || now.Sub(fi.ModTime()) >= s.SettleDelay
		if f.mapped && f.sig == sig && (f.settled || !settled) {
			continue
		}
		// History (start_at: end, first poll): recorded as emitted, not sent.
		// File times come from the kernel's coarse clock, a tick behind the
		// clock: a margin keeps a file written just after the start from
		// passing for history.
		skip := first && s.StartAtEnd && fi.ModTime().Before(s.StartedAt.Add(-time.Second))
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		r := &agents.SnapshotRead{
			Path: path, Data: b, ModTime: sig.Mod, Settled: settled || skip, Skip: skip, Now: now, ExcludeOlderThan: s.ExcludeOlderThan,
			SnapshotSink: &fileRead{path: path, skip: skip, src: s, file: f},
		}
		f.refused = false
		reason, err := s.mapper.Read(ctx, r)
		if err != nil {
			if s.badFile(ctx, path, f, sig, b, reason, err) {
				read = append(read, path) // it stays so: read as far as it can be
			}
			continue
		}
		if ctx.Err() != nil {
			return read // stopped mid-file: read again next run
		}
		if !f.refused {
			f.sig, f.mapped, f.settled = sig, true, settled || skip
			if f.settled {
				read = append(read, path)
			}
		}
	}
	return read
}

// badFile reports a file that does not decode once it has stayed so,
// unchanged, for two polls (a file caught mid-rewrite decodes at the next
// one), and once per version of it. It says whether the file was reported
// now.
func (s *Source) badFile(ctx context.Context, path string, f *file, sig source.FileSig, raw []byte, reason string, err error) bool {
	if f.badSig != sig {
		f.badSig = sig
		return false
	}
	if f.reportedSig == sig {
		return false
	}
	f.reportedSig = sig
	ev := agentevent.Event{
		Source:     s.Source,
		EventID:    agentevent.StableID(path, 0, 0),
		Timestamp:  sig.Mod,
		Type:       agentevent.TypeLog,
		Role:       agentevent.RoleSystem,
		Channel:    agentevent.ChannelSystem,
		LogFile:    path,
		Raw:        raw,
		Unparsed:   reason,
		Attributes: map[string]any{agentevent.AttrUnparsedDetail: err.Error()},
	}
	agentevent.Normalize(&ev)
	_ = s.Emitter.Deliver(context.WithoutCancel(ctx), source.Delivery{Path: path, Events: []agentevent.Event{ev}})
	return true
}
