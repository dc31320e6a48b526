// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package progress follows the history backfill of the agent_log receiver
// per agent and reports it, in the log and as self-telemetry.
package progress

import (
	"context"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/matcher"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/textutil"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
)

// Interval is how often the backfill's progress is logged while it runs.
const Interval = 10 * time.Second

// Progress follows the history backfill per agent and reports it, in the
// log and as self-telemetry: what was Found at start, how far reading is
// (files and bytes, MB/s, time left) at a steady interval, and one summary
// when an agent's history has been read (sessions, turns, tool calls, failed
// tools, tokens, elapsed). The readers call found once per agent at start,
// then for each batch of a file Add with its events' Tally and Read with
// the positions it spans (in that order: the batch that completes the
// history is then in the summary).
//
// An agent's backfill is done when every file found at start has been read
// to the size it had then, or, for files an earlier run has already read
// (the tailer resumes them at their stored position and may have nothing
// new to read), when nothing more has been read for quietAfter.
//
// Durations are wall-clock from the receiver's start (begin) to the moment
// an agent is known to be done — for one that went quiet, when the quiet
// is noticed, not when it last read: the all-agents line comes when the
// last agent is done and must not claim less time than has passed.
type Progress struct {
	logger     *zap.Logger
	telemetry  *metadata.TelemetryBuilder
	now        func() time.Time
	interval   time.Duration
	quietAfter time.Duration
	// quietCheck is how often agents are checked for having gone quiet,
	// between the progress lines.
	quietCheck time.Duration
	seed       maphash.Seed // of the session id hashes
	// begin is the receiver's start (the first found, unless set).
	begin time.Time

	mu     sync.Mutex
	agents map[string]*agentProgress
	order  []string // agents in the order found
	total  bool     // the all-agents summary was logged
	stop   chan struct{}
	wg     sync.WaitGroup
}

// agentProgress is one agent's backfill.
type agentProgress struct {
	key  string
	attr metric.MeasurementOption

	start      time.Time
	lastRead   time.Time
	doneAt     time.Time
	filesFound int
	bytesFound int64
	// files are the files found at start not yet read to the size they had
	// then, by a hash of their path: the paths themselves would be one more
	// copy of every path of the history (the tailer holds its own), kept
	// for the length of the backfill.
	files     map[uint64]fileProgress
	filesRead int
	bytesRead int64 // bytes actually read (not those skipped by a resume)

	unmeasured bool // read as a whole, not file by file
	// sessions are the distinct sessions read during the backfill, by a
	// hash of their id: an id decoded from a record may share the memory of
	// the whole record (or file) it came from, which a set of the ids
	// themselves would keep alive for the length of the backfill.
	sessions     map[uint64]struct{}
	sessionCount int // len(sessions), kept once they are dropped
	turns        int64
	toolCalls    int64
	toolFails    int64
	tokens       int64
}

// fileProgress is one file of the history: its size at start, and the read
// position reached (-1: none of it read yet).
type fileProgress struct {
	size, read int64
}

// New follows a backfill read every pollInterval, whose rewritten files
// are taken as final after settle.
func New(logger *zap.Logger, tb *metadata.TelemetryBuilder, pollInterval, settle time.Duration) *Progress {
	return &Progress{
		logger:     logger,
		telemetry:  tb,
		now:        time.Now,
		interval:   Interval,
		quietAfter: max(10*pollInterval, settle+2*time.Second, 3*time.Second),
		quietCheck: time.Second,
		seed:       maphash.MakeSeed(),
		agents:     map[string]*agentProgress{},
		stop:       make(chan struct{}),
	}
}

// SetClock times the backfill by now from begin (the receiver's start: every
// agent's backfill is timed from there), and logs its progress every
// interval.
func (p *Progress) SetClock(now func() time.Time, begin time.Time, interval time.Duration) {
	p.now, p.begin, p.interval = now, begin, interval
}

// Done tells whether every agent found has read its history.
func (p *Progress) Done() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.agents {
		if a.doneAt.IsZero() {
			return false
		}
	}
	return len(p.agents) > 0
}

// Found records the history an agent has to read: its files and their sizes
// now. An agent without history is done at once. A history whose reading is
// not followed file by file (OpenCode's data directories: one database, or
// a tree of many small files per session) is reported without a share done
// or time left, and is done when it goes quiet.
func (p *Progress) Found(ctx context.Context, agent string, h History) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.begin.IsZero() {
		p.begin = p.now()
	}
	a := &agentProgress{
		key:      agent,
		attr:     metric.WithAttributeSet(attribute.NewSet(attribute.String("agent", agent))),
		start:    p.begin,
		files:    make(map[uint64]fileProgress, len(h.sizes)),
		sessions: map[uint64]struct{}{},
	}
	a.lastRead = a.start
	a.filesFound, a.bytesFound = h.files, h.bytes
	for path, size := range h.sizes {
		a.filesFound++
		a.bytesFound += size
		if !h.unmeasured {
			a.files[maphash.String(p.seed, path)] = fileProgress{size: size, read: -1}
		}
	}
	a.unmeasured = h.unmeasured
	p.agents[agent] = a
	p.order = append(p.order, agent)
	p.telemetry.AgentLogBackfillFiles.Record(ctx, int64(a.filesFound), a.attr)
	p.telemetry.AgentLogBackfillBytes.Record(ctx, a.bytesFound, a.attr)
	if a.filesFound == 0 {
		// Nothing to read (the agent is not installed, or has no history
		// yet): done, without a line.
		p.finishLocked(ctx, a, a.start)
		return
	}
	unit := "session file"
	if a.unmeasured {
		unit = "file"
	}
	p.logger.Info(fmt.Sprintf("%s: found %s (%s) of history to read", agent, textutil.PluralGrouped(int64(a.filesFound), unit), FormatBytes(a.bytesFound)),
		zap.String("agent", agent), zap.Int("files", a.filesFound), zap.Int64("bytes", a.bytesFound))
}

// Read records that path has been read from position from up to position to
// (0, 0 for a source that does not read by position), and whether it has
// been read to its end (caughtUp).
func (p *Progress) Read(ctx context.Context, agent, path string, from, to int64, caughtUp bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.agents[agent]
	if a == nil || !a.doneAt.IsZero() {
		return
	}
	a.lastRead = p.now()
	key := maphash.String(p.seed, path)
	f, ok := a.files[key]
	size := f.size
	if !ok {
		return // a file created after the start (live, not history), or part of an unmeasured history
	}
	if caughtUp {
		to = size // nothing left but, perhaps, a line still being written
	}
	prev := f.read
	if prev < 0 {
		prev = from // a resumed file: what lies before its first batch was read by an earlier run
	}
	to = min(to, size)
	if to > prev {
		a.bytesRead += to - prev
		p.telemetry.AgentLogBackfillBytesRead.Add(ctx, to-prev, a.attr)
	}
	f.read = max(prev, to)
	a.files[key] = f
	if to >= size {
		delete(a.files, key)
		a.filesRead++
		p.telemetry.AgentLogBackfillFilesRead.Add(ctx, 1, a.attr)
		if len(a.files) == 0 {
			p.finishLocked(ctx, a, a.lastRead) // lastRead is now
		}
	}
}

// Tally is what a batch of events adds to an agent's summary: counted where
// the events are encoded (Tally), added once they are accepted (Add).
type Tally struct {
	Turns, ToolCalls, ToolFails, Tokens int64
	// Sessions are the hashes of the batch's session ids (runs of one
	// session counted once).
	Sessions []uint64
}

// Merge adds o to t.
func (t *Tally) Merge(o Tally) {
	t.Turns += o.Turns
	t.ToolCalls += o.ToolCalls
	t.ToolFails += o.ToolFails
	t.Tokens += o.Tokens
	t.Sessions = append(t.Sessions, o.Sessions...)
}

// Tally counts what events hold. It may be called from several goroutines.
func (p *Progress) Tally(events []agentevent.Event) Tally {
	var t Tally
	last := ""
	for i := range events {
		ev := &events[i]
		if ev.Unparsed != "" {
			continue
		}
		switch {
		case ev.Type == agentevent.TypeUserMessage && ev.AgentID == "" && !ev.IsSidechain:
			t.Turns++
		case ev.Type == agentevent.TypeToolCall:
			t.ToolCalls++
		case ev.Type == agentevent.TypeToolResult && ev.ToolStatus == agentevent.ToolError:
			t.ToolFails++
		}
		if ev.TokensTotal != nil {
			t.Tokens += *ev.TokensTotal
		} else {
			t.Tokens += agentevent.Value(ev.TokensInput) + agentevent.Value(ev.TokensOutput)
		}
		if ev.SessionID != "" && ev.SessionID != last {
			t.Sessions = append(t.Sessions, maphash.String(p.seed, ev.SessionID))
			last = ev.SessionID
		}
	}
	return t
}

// Add counts a tally of one agent's events.
func (p *Progress) Add(ctx context.Context, agent string, t Tally) {
	p.mu.Lock()
	a := p.agents[agent]
	if a != nil && a.doneAt.IsZero() {
		for _, h := range t.Sessions {
			a.sessions[h] = struct{}{}
		}
		a.turns += t.Turns
		a.toolCalls += t.ToolCalls
		a.toolFails += t.ToolFails
		a.tokens += t.Tokens
	}
	p.mu.Unlock()
	attr := metric.WithAttributeSet(attribute.NewSet(attribute.String("agent", agent)))
	if a != nil {
		attr = a.attr
	}
	if t.Turns > 0 {
		p.telemetry.AgentLogTurns.Add(ctx, t.Turns, attr)
	}
	if t.ToolCalls > 0 {
		p.telemetry.AgentLogToolCalls.Add(ctx, t.ToolCalls, attr)
	}
	if t.ToolFails > 0 {
		p.telemetry.AgentLogToolCallsFailed.Add(ctx, t.ToolFails, attr)
	}
	if t.Tokens > 0 {
		p.telemetry.AgentLogTokens.Add(ctx, t.Tokens, attr)
	}
}

// Start logs the progress every interval until shutdown, and finishes the
// agents gone quiet every quietCheck in between.
func (p *Progress) Start() {
	step := min(p.quietCheck, p.interval)
	every := max(int(p.interval/step), 1) // ticks per progress line
	p.wg.Go(func() {
		t := time.NewTicker(step)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-p.stop:
				return
			case <-t.C:
				var done bool
				if n%every == 0 {
					done = p.tick(context.Background())
				} else {
					done = p.finishQuiet(context.Background())
				}
				if done {
					return
				}
			}
		}
	})
}

// finishQuiet finishes the agents that have gone quiet, without a progress
// line. It reports whether every agent is done.
func (p *Progress) finishQuiet(ctx context.Context) (allDone bool) {
	return p.sweep(ctx, false)
}

// Shutdown stops the logging, saying how far the history of each agent
// still reading it got; safe to call more than once and before start.
func (p *Progress) Shutdown() {
	p.mu.Lock()
	select {
	case <-p.stop:
	default:
		close(p.stop)
		for _, key := range p.order {
			a := p.agents[key]
			if !a.doneAt.IsZero() {
				continue
			}
			a.doneAt = p.now() // nothing more to report
			if a.unmeasured {
				p.logger.Info(fmt.Sprintf("%s: stopped while reading its history (%s so far)", a.key, textutil.PluralGrouped(int64(len(a.sessions)), "session")),
					zap.String("agent", a.key))
				continue
			}
			done := a.bytesFound - a.remainingLocked()
			p.logger.Info(fmt.Sprintf("%s: stopped with %s of %s of history read; the rest is read at the next start (with storage: from where it stopped)",
				a.key, FormatBytes(done), FormatBytes(a.bytesFound)),
				zap.String("agent", a.key), zap.Int64("bytes_read", done), zap.Int64("bytes", a.bytesFound))
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// tick logs one progress line per agent still reading its history, and
// finishes the agents that have gone quiet. It reports whether every agent
// is done (nothing more to report).
func (p *Progress) tick(ctx context.Context) (allDone bool) {
	return p.sweep(ctx, true)
}

// sweep finishes the agents that have gone quiet and, with logProgress, logs
// a progress line for each agent still reading. It reports whether every
// agent is done.
func (p *Progress) sweep(ctx context.Context, logProgress bool) (allDone bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	allDone = true
	for _, key := range p.order {
		a := p.agents[key]
		if !a.doneAt.IsZero() {
			continue
		}
		if now.Sub(a.lastRead) >= p.quietAfter {
			p.finishLocked(ctx, a, now) // known done now
			continue
		}
		allDone = false
		if logProgress {
			p.logProgressLocked(a, now)
		}
	}
	return allDone
}

func (p *Progress) logProgressLocked(a *agentProgress, now time.Time) {
	elapsed := now.Sub(a.start)
	if a.unmeasured {
		p.logger.Info(fmt.Sprintf("%s: reading, %s and %s so far", a.key, textutil.PluralGrouped(int64(len(a.sessions)), "session"), textutil.PluralGrouped(int64(int(a.turns)), "turn")),
			zap.String("agent", a.key), zap.Int("sessions", len(a.sessions)), zap.Int64("turns", a.turns), zap.Duration("elapsed", elapsed))
		return
	}
	done := a.bytesFound - a.remainingLocked()
	pct := 0.0
	if a.bytesFound > 0 {
		pct = 100 * float64(done) / float64(a.bytesFound)
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(a.bytesRead) / elapsed.Seconds()
	}
	left := "unknown"
	var leftDur time.Duration
	if rate > 0 {
		leftDur = time.Duration(float64(a.remainingLocked()) / rate * float64(time.Second))
		left = "about " + FormatDuration(leftDur)
	}
	p.logger.Info(fmt.Sprintf("%s: %s/%s files, %s of %s (%.0f%%), %s/s, %s left",
		a.key, textutil.Grouped(int64(a.filesRead)), textutil.Grouped(int64(a.filesFound)), FormatBytes(done), FormatBytes(a.bytesFound), pct, FormatBytes(int64(rate)), left),
		zap.String("agent", a.key), zap.Int("files_read", a.filesRead), zap.Int("files", a.filesFound),
		zap.Int64("bytes_read", done), zap.Int64("bytes", a.bytesFound),
		zap.Float64("mb_per_s", rate/1e6), zap.Duration("eta", leftDur))
}

// remainingLocked is the history still to read: the unread part of each file.
func (a *agentProgress) remainingLocked() int64 {
	var n int64
	for _, f := range a.files {
		n += f.size - max(f.read, 0)
	}
	return n
}

// finishLocked logs an agent's summary once, and the all-agents summary once
// every agent is done.
func (p *Progress) finishLocked(ctx context.Context, a *agentProgress, at time.Time) {
	if !a.doneAt.IsZero() {
		return
	}
	a.doneAt = at
	elapsed := a.doneAt.Sub(a.start)
	if a.filesFound > 0 && len(a.files) > 0 {
		// Gone quiet: the rest was read by an earlier run.
		a.filesRead = a.filesFound
	}
	sessions := len(a.sessions)
	p.telemetry.AgentLogBackfillDuration.Record(ctx, elapsed.Seconds(), a.attr)
	p.telemetry.AgentLogBackfillSessions.Record(ctx, int64(sessions), a.attr)
	if a.filesFound > 0 {
		p.logger.Info(fmt.Sprintf("%s: history read in %s: %s, %s, %s (%s failed), %s tokens",
			a.key, FormatDuration(elapsed), textutil.PluralGrouped(int64(sessions), "session"), textutil.PluralGrouped(int64(int(a.turns)), "turn"),
			textutil.PluralGrouped(int64(int(a.toolCalls)), "tool call"), textutil.Grouped(a.toolFails), textutil.Grouped(a.tokens)),
			zap.String("agent", a.key), zap.Int("sessions", sessions), zap.Int64("turns", a.turns),
			zap.Int64("tool_calls", a.toolCalls), zap.Int64("tool_calls_failed", a.toolFails),
			zap.Int64("tokens", a.tokens), zap.Int("files", a.filesFound), zap.Int64("bytes_read", a.bytesRead),
			zap.Duration("elapsed", elapsed))
	}
	a.sessionCount = sessions
	a.sessions = nil // bounded: only the backfill needs them
	a.files = nil
	p.logTotalLocked()
}

// logTotalLocked logs, once every agent is done, one line for the whole
// history when more than one agent had any.
func (p *Progress) logTotalLocked() {
	if p.total {
		return
	}
	var (
		withHistory, sessions, files int
		turns, calls, fails, tokens  int64
		last                         time.Time
	)
	for _, key := range p.order {
		a := p.agents[key]
		if a.doneAt.IsZero() {
			return
		}
		if a.doneAt.After(last) {
			last = a.doneAt
		}
		if a.filesFound == 0 {
			continue
		}
		withHistory++
		sessions += a.sessionCount
		files += a.filesFound
		turns += a.turns
		calls += a.toolCalls
		fails += a.toolFails
		tokens += a.tokens
	}
	p.total = true
	if withHistory < 2 {
		return
	}
	p.logger.Info(fmt.Sprintf("History of %d agents read in %s: %s, %s, %s (%s failed), %s tokens",
		withHistory, FormatDuration(last.Sub(p.begin)), textutil.PluralGrouped(int64(sessions), "session"), textutil.PluralGrouped(int64(int(turns)), "turn"),
		textutil.PluralGrouped(int64(int(calls)), "tool call"), textutil.Grouped(fails), textutil.Grouped(tokens)),
		zap.Int("agents", withHistory), zap.Int("files", files), zap.Int("sessions", sessions), zap.Int64("turns", turns),
		zap.Int64("tool_calls", calls), zap.Int64("tool_calls_failed", fails), zap.Int64("tokens", tokens),
		zap.Duration("elapsed", last.Sub(p.begin)))
}

// History is what an agent has to read at start.
type History struct {
	sizes      map[string]int64 // file → size
	unmeasured bool             // read as a whole (see found)
	// files and bytes count an unmeasured history found without keeping
	// its paths (OpenCode's tree: tens of thousands of small files).
	files int
	bytes int64
}

// FileHistory is the history of an agent whose patterns match its files:
// the files they match now (as the tailer matches them), with their sizes.
func FileHistory(include, exclude []string) History {
	return History{sizes: historySizes(include, exclude)}
}

// TreeHistory is the history of an agent whose patterns name directories
// (OpenCode's data directories), reported as unmeasured.
func TreeHistory(dirs []string) History {
	files, bytes := treeTotals(dirs)
	return History{files: files, bytes: bytes, unmeasured: true}
}

// historySizes finds an agent's history: the files its patterns match now
// (as the tailer matches them), with their sizes.
func historySizes(include, exclude []string) map[string]int64 {
	out := map[string]int64{}
	m, err := matcher.New(matcher.Criteria{Include: include, Exclude: exclude})
	if err != nil {
		return out
	}
	files, _ := m.MatchFiles() // no match is an error to it, an empty history to us
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			out[f] = fi.Size()
		}
	}
	return out
}

// treeTotals counts the history of an agent whose include patterns name
// directories (OpenCode's data directory): the regular files below them and
// their bytes. It keeps no path: the tree may hold ~100k files.
func treeTotals(dirs []string) (files int, bytes int64) {
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
				files++
				bytes += fi.Size()
			}
			return nil
		})
	}
	return files, bytes
}

// FormatBytes writes a size in decimal units: 812.0 MB.
func FormatBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// FormatDuration rounds a duration for people: 1m05s, 4.2s, 120ms.
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
