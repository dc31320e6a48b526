// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
)

// A snapshot source reads files an agent rewrites whole (Gemini CLI chats,
// Amp threads, Copilot CLI's history files): they cannot be tailed by byte
// offset. Every
// poll_interval it matches the include patterns and re-reads a file when its
// size or modification time changed; the agent's snapshotMapper maps what
// of it was not emitted before. The watermark is per thread (a session, or
// a subagent of one), not per file — the set of keys emitted and the next
// sequence number — kept under <agent>.thread.<thread>, so a thread present
// in two files, and a restart, emit nothing twice.

// snapshotMapper is the agent-specific part of a snapshot source.
type snapshotMapper interface {
	// sort puts the matched files in the order they are read.
	sort(paths []string)
	// read maps one file. It hands each thread's new events to r.deliver
	// and reports records that could not be decoded to r.bad. An error says
	// the file does not decode as a whole (it may have been caught
	// mid-rewrite; it is reported if it stays so); reason is the unparsed
	// reason then.
	read(ctx context.Context, r *snapshotRead) (reason string, err error)
	// newWatermark returns an empty watermark; unmarshalWatermark restores
	// one.
	newWatermark() watermark
	unmarshalWatermark(b []byte) (watermark, error)
}

// watermark is the set of keys (message ids, ...) a thread has emitted.
type watermark interface {
	Add(keys []string)
	MarshalState() ([]byte, error)
}

// snapshotThread is the state of one thread.
type snapshotThread struct {
	emitted watermark
	seq     int64 // the last agent.event.sequence used
}

type snapshotMark struct {
	Emitted  json.RawMessage `json:"emitted"`
	Sequence int64           `json:"sequence"`
}

// threadResult is what a mapper made of one thread of a file.
type threadResult struct {
	events []agentevent.Event
	// emitted are the keys of the events, added to the watermark once the
	// next consumer accepted them.
	emitted []string
	// caughtUp: nothing of the thread is held back.
	caughtUp bool
}

// snapshotRead is one read of one file, as its mapper sees it.
type snapshotRead struct {
	src     *snapshotSource
	path    string
	data    []byte
	sig     fileSig
	settled bool // unchanged for the settle delay (or shutting down)
	skip    bool // history under start_at: end: recorded as emitted, not sent
	now     time.Time
	file    *snapshotFile
}

// deliver maps one thread with its watermark (fn) and puts the result in
// the source's batch; the watermark moves only once the next consumer
// accepted the batch. false: the receiver is stopping, nothing was
// committed.
func (r *snapshotRead) deliver(ctx context.Context, thread string, fn func(th *snapshotThread) threadResult) bool {
	s := r.src
	key := threadKey(thread)
	// A thread read twice in a poll (a chat under two directories) maps
	// the second time with the first's watermark committed.
	if s.batch.holds(key) && !s.batch.flush(ctx) {
		return false
	}
	t := s.threads.acquire(ctx, key, r.path)
	res := fn(t.state)
	if len(res.emitted) == 0 && len(res.events) == 0 {
		s.threads.release(t)
		return true
	}
	// The keys kept in the watermark are copied: a decoded string shares
	// the memory of the whole file it was read from.
	for i, k := range res.emitted {
		res.emitted[i] = strings.Clone(k)
	}
	if r.skip {
		t.state.seq += int64(len(res.events))
		t.state.emitted.Add(res.emitted)
		s.threads.commit(ctx, t)
		s.threads.release(t)
		return true
	}
	f := r.file
	return s.batch.add(ctx, key, r.path, res.events, res.caughtUp, func(accepted bool) *storage.Operation {
		if !accepted {
			f.mapped, f.refused = false, true // read again
			return nil
		}
		t.state.seq += int64(len(res.events))
		t.state.emitted.Add(res.emitted)
		return s.threads.commitOp(t)
	}, func() { s.threads.release(t) })
}

// peek returns a thread's watermark, without a delivery.
func (r *snapshotRead) peek(ctx context.Context, thread string) *snapshotThread {
	key := threadKey(thread)
	if r.src.batch.holds(key) {
		r.src.batch.flush(ctx)
	}
	t := r.src.threads.acquire(ctx, key)
	defer r.src.threads.release(t)
	return t.state
}

// bad counts and reports a record of the file that could not be decoded.
func (r *snapshotRead) bad(ctx context.Context, line int64, reason string) {
	r.src.emitter.bad(ctx, r.path, line, reason)
}

// reportOnce says whether a bad record (by key) with this signature is new;
// it is then remembered for as long as the file is known.
func (r *snapshotRead) reportOnce(key, signature string) bool {
	if r.file.reported == nil {
		r.file.reported = map[string]string{}
	}
	if r.file.reported[key] == signature {
		return false
	}
	r.file.reported[key] = signature
	return true
}

// snapshotSource polls one agent's rewritten files.
type snapshotSource struct {
	sourceSettings
	mapper  snapshotMapper
	threads *sessionTable[*snapshotThread]
	poller  *loop

	// Touched by the poll goroutine only (and by stop once it has ended).
	files map[string]*snapshotFile
	polls int
	// batch gathers the threads read in a poll for fewer deliveries;
	// find lists the directories of the include patterns.
	batch *sessionBatch
	find  *finder.Finder
}

// snapshotFile is what the source knows of one file.
type snapshotFile struct {
	sig fileSig
	// mapped: sig was read and mapped; settled: mapped as settled (nothing
	// held back). badSig is the signature of a file that did not decode:
	// it is reported when it still does not decode unchanged at the next
	// poll (a file caught mid-rewrite decodes then).
	mapped, settled bool
	// refused: a delivery of this read was refused (the receiver stops).
	refused     bool
	badSig      fileSig
	reportedSig fileSig
	// reported remembers the bad records reported (mapper keys).
	reported map[string]string
	// records seen at the last read, for the counters (mapper's use).
	records, skipped int
	// told: the backfill's progress was told the file has been read.
	told bool
}

func newSnapshotSource(set sourceSettings) (*snapshotSource, error) {
	find, err := finder.New(set.include, set.exclude)
	if err != nil {
		return nil, fmt.Errorf("`%s`: %w", set.agent.key, err)
	}
	m := set.agent.newSnapshot()
	s := &snapshotSource{sourceSettings: set, mapper: m, files: map[string]*snapshotFile{}, find: find}
	s.batch = newSessionBatch(set.emitter, set.checkpoints, set.storageError)
	s.threads = newSessionTable(set.checkpoints, "", sessionCodec[*snapshotThread]{
		fresh: func(string) *snapshotThread { return &snapshotThread{emitted: m.newWatermark()} },
		marshal: func(th *snapshotThread) ([]byte, error) {
			emitted, err := th.emitted.MarshalState()
			if err != nil {
				return nil, err
			}
			return json.Marshal(snapshotMark{Emitted: emitted, Sequence: th.seq})
		},
		unmarshal: func(_ string, b []byte) (*snapshotThread, error) {
			var mk snapshotMark
			if err := json.Unmarshal(b, &mk); err != nil {
				return nil, err
			}
			w, err := m.unmarshalWatermark(mk.Emitted)
			if err != nil {
				return nil, err
			}
			return &snapshotThread{emitted: w, seq: mk.Sequence}, nil
		},
	}, set.life, set.storageError)
	s.threads.onForget = func(_ string, probes []string) {
		s.emitter.forget(probes...)
	}
	return s, nil
}

func (s *snapshotSource) start(ctx context.Context) error {
	lastSweep := s.clock.now()
	s.poller = startLoop(s.cfg.PollInterval, func(ctx context.Context) {
		s.poll(ctx, false)
		if now := s.clock.now(); now.Sub(lastSweep) >= s.sweepInterval() {
			lastSweep = now
			s.sweep(ctx)
		}
	})
	s.logger.Info("Reading agent session data",
		zap.String("agent", s.agent.key), zap.Strings("include", s.include), zap.Strings("exclude", s.exclude))
	return nil
}

// sweep forgets threads whose files are all gone, and the files.
func (s *snapshotSource) sweep(ctx context.Context) {
	s.threads.sweep(ctx, fileExists)
	for path := range s.files {
		if !fileExists(path) {
			delete(s.files, path)
		}
	}
}

// stop ends polling, then reads once more taking every file as settled: a
// last record held back is emitted rather than left to the next run.
func (s *snapshotSource) stop(ctx context.Context) error {
	if err := s.poller.halt(ctx); err != nil {
		return err
	}
	err := runUntil(ctx, func() error {
		fctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-ctx.Done():
				cancel()
			case <-fctx.Done():
			}
		}()
		s.poll(fctx, true)
		return nil
	})
	s.threads.flush(context.WithoutCancel(ctx))
	return err
}

// matches returns the files the include patterns match, in the mapper's
// order. Directories are listed again only when they changed (finder).
func (s *snapshotSource) matches() []string {
	out, _ := s.find.Match() // no match is an error to the finder, nothing to read to us
	s.mapper.sort(out)
	return out
}

// poll reads the files that changed, and maps again as settled those whose
// last record was held back and that have not changed for the settle
// delay. final takes every file as settled (shutdown).
func (s *snapshotSource) poll(ctx context.Context, final bool) {
	read := s.pollFiles(ctx, final)
	s.batch.flush(ctx)
	s.tellRead(ctx, read)
}

// tellRead tells the backfill's progress which files have been read to
// their end: a file is read whole, so once it has been mapped as settled
// (nothing held back) and its events delivered, nothing of it is left —
// whether or not the read had anything new to deliver (a logs.json whose
// sessions all have chats, every file after a restart), which no delivery
// would say. Each file is told once.
func (s *snapshotSource) tellRead(ctx context.Context, read []string) {
	p := s.emitter.progress
	if p == nil {
		return
	}
	for _, path := range read {
		if f := s.files[path]; f != nil {
			if f.refused || f.told {
				continue // refused: read again at the next poll
			}
			f.told = true
		}
		p.Read(ctx, s.agent.key, path, 0, 0, true)
	}
}

// pollFiles reads the files that changed (see poll). It returns the files
// this poll read to their end, and at the first poll those with nothing to
// read (empty, or left out by exclude_older_than): told to the progress
// once the batch is delivered.
func (s *snapshotSource) pollFiles(ctx context.Context, final bool) (read []string) {
	first := s.polls == 0
	s.polls++
	now := s.clock.now()
	for _, path := range s.matches() {
		if ctx.Err() != nil {
			return
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() == 0 || (s.ac.ExcludeOlderThan > 0 && now.Sub(fi.ModTime()) > s.ac.ExcludeOlderThan) {
			// An empty file is being created: nothing to read yet. An old
			// one is left out.
			if first {
				read = append(read, path)
			}
			continue
		}
		f := s.files[path]
		if f == nil {
			f = &snapshotFile{}
			s.files[path] = f
		}
		sig := sigOf(fi)
		settled := final || now.Sub(fi.ModTime()) >= s.settleDelay
		if f.mapped && f.sig == sig && (f.settled || !settled) {
			continue
		}
		// History (start_at: end, first poll): recorded as emitted, not sent.
		// File times come from the kernel's coarse clock, a tick behind the
		// clock: a margin keeps a file written just after the start from
		// passing for history.
		skip := first && s.cfg.StartAt == StartAtEnd && fi.ModTime().Before(s.startedAt.Add(-time.Second))
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		r := &snapshotRead{src: s, path: path, data: b, sig: sig, settled: settled || skip, skip: skip, now: now, file: f}
		f.refused = false
		reason, err := s.mapper.read(ctx, r)
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
func (s *snapshotSource) badFile(ctx context.Context, path string, f *snapshotFile, sig fileSig, raw []byte, reason string, err error) bool {
	if f.badSig != sig {
		f.badSig = sig
		return false
	}
	if f.reportedSig == sig {
		return false
	}
	f.reportedSig = sig
	ev := agentevent.Event{
		Source:     s.agent.source,
		EventID:    agentevent.StableID(path, 0, 0),
		Timestamp:  sig.mod,
		Type:       agentevent.TypeLog,
		Role:       agentevent.RoleSystem,
		Channel:    agentevent.ChannelSystem,
		LogFile:    path,
		Raw:        raw,
		Unparsed:   reason,
		Attributes: map[string]any{"agent.unparsed.detail": err.Error()},
	}
	agentevent.Normalize(&ev)
	_ = s.emitter.deliver(context.WithoutCancel(ctx), delivery{path: path, events: []agentevent.Event{ev}})
	return true
}
