// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/gemini"
)

// Gemini CLI rewrites its chat files in place (one JSON object per
// session), and appends to JSONL chats records that replace earlier ones:
// neither can be tailed by byte offset. A poller re-reads a file whole when
// its size or modification time changes and emits what the gemini package
// maps that was not emitted before: the watermark is the set of emitted
// keys per thread (gemini.ThreadKey), kept in the storage extension, so a
// chat copied under another directory, and a restart, emit nothing twice.

// geminiSettleDelay is how long a chat file must stay unchanged before its
// last gemini message, which the CLI may still be completing (tokens, tool
// calls), is taken as final. Tests shorten it.
var geminiSettleDelay = 5 * time.Second

// logsGrace is how far behind now logs.json entries are considered: the CLI
// writes logs.json as the user submits, before the chat has the message.
const geminiLogsGrace = time.Minute

// geminiInclude: the CLI keeps its data in ~/.gemini (GEMINI_CLI_HOME is not
// honoured: it could not be confirmed in the CLI's source). Chats are
// tmp/<project hash or name>/chats/*.json(l), nested chats (subagents,
// skill extraction) one directory below, user inputs in tmp/<dir>/logs.json.
func geminiInclude(env environment) ([]string, error) {
	if env.home == "" {
		return nil, errNoHome
	}
	return geminiPatterns(filepath.Join(env.home, ".gemini")), nil
}

// geminiPatterns are the files read below a Gemini CLI home directory.
func geminiPatterns(dir string) []string {
	tmp := filepath.Join(dir, "tmp", "*")
	return []string{
		filepath.Join(tmp, "chats", "*.json"),
		filepath.Join(tmp, "chats", "*.jsonl"),
		filepath.Join(tmp, "chats", "*", "*.json"),
		filepath.Join(tmp, "chats", "*", "*.jsonl"),
		filepath.Join(tmp, "logs.json"),
	}
}

// geminiReader polls Gemini CLI's files. Like the OpenCode reader it borrows
// a tailer for the store, emitting and reporting bad records.
type geminiReader struct {
	poller
	settleDelay time.Duration
	now         func() time.Time

	// Touched by the poll goroutine only (and by stop once it has ended).
	files    map[string]*geminiFile
	threads  map[string]*geminiThread
	chats    map[string]bool   // session ids of the top-level chats read
	reported map[string]string // path → signature of the bad file reported
	polls    int
}

// geminiFile is what the reader knows of one file.
type geminiFile struct {
	sig fileSig
	// mapped: sig was read and mapped; settled: mapped as settled (nothing
	// held back). badSig is the signature of a file that did not decode:
	// it is reported when it still does not decode unchanged at the next
	// poll (a file caught mid-rewrite decodes then).
	mapped, settled bool
	badSig          fileSig
	// messages (entries of logs.json) and skipped (logs.json entries
	// without a session) at the last read, for the counters.
	messages, skipped int
}

// geminiThread is the watermark of one thread, as kept in the storage.
type geminiThread struct {
	loaded bool
	w      gemini.Watermark
	seq    int64
}

type geminiMark struct {
	Emitted  json.RawMessage `json:"emitted"`
	Sequence int64           `json:"sequence"`
}

func startGemini(r *logsReceiver, host component.Host, a agent, ac *AgentConfig, env environment, hostname string) (snapshotReader, error) {
	include, exclude, err := resolvePatterns(a, ac, env)
	if errors.Is(err, errNoHome) && len(ac.Include) == 0 {
		r.set.Logger.Warn("The agent's default location is unknown ($HOME is not set); set its `include` to read it",
			zap.String("agent", a.key))
		return nopReader{}, nil
	}
	if err != nil {
		return nil, err
	}
	rd := &geminiReader{
		poller:      newPoller(r, host, a, ac, include, exclude, hostname),
		settleDelay: geminiSettleDelay,
		now:         time.Now,
		files:       map[string]*geminiFile{},
		threads:     map[string]*geminiThread{},
		chats:       map[string]bool{},
		reported:    map[string]string{},
	}
	rd.start(r.cfg.PollInterval, func(ctx context.Context) { rd.poll(ctx, false) })
	return rd, nil
}

// stop ends polling, then reads once more taking every file as settled: a
// last gemini message held back is emitted rather than left to the next
// run.
func (rd *geminiReader) stop() error {
	rd.halt()
	rd.poll(context.Background(), true)
	return nil
}

// matches returns the files the include patterns match: top-level chats
// first, then nested chats, then logs.json files (MapLogs asks whether a
// session has a chat), each group by path.
func (rd *geminiReader) matches() []string {
	var out []string
	for _, pattern := range rd.include {
		ms, err := doublestar.FilepathGlob(pattern)
		if err != nil {
			continue // validated at load
		}
		for _, m := range ms {
			if !rd.excluded(m) && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	rank := func(p string) int {
		switch {
		case isGeminiLogs(p):
			return 2
		case geminiNested(p):
			return 1
		}
		return 0
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
	return out
}

func isGeminiLogs(p string) bool { return filepath.Base(p) == "logs.json" }

func geminiNested(p string) bool {
	parent, _ := gemini.Placement(p)
	return parent != ""
}

// poll reads the files that changed, and maps again as settled those whose
// last message was held back and that have not changed for settleDelay.
// final takes every file as settled (shutdown).
func (rd *geminiReader) poll(ctx context.Context, final bool) {
	first := rd.polls == 0
	rd.polls++
	now := rd.now()
	for _, path := range rd.matches() {
		if ctx.Err() != nil {
			return
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if rd.excludeOlderThan > 0 && now.Sub(fi.ModTime()) > rd.excludeOlderThan {
			continue
		}
		f := rd.files[path]
		if f == nil {
			f = &geminiFile{}
			rd.files[path] = f
		}
		sig := sigOf(fi)
		settled := final || now.Sub(fi.ModTime()) >= rd.settleDelay
		if f.mapped && f.sig == sig && (f.settled || !settled) {
			continue
		}
		// History (start_at: end, first poll): recorded as emitted, not sent.
		skip := first && rd.startAtEnd && fi.ModTime().Before(rd.startedAt.Add(-time.Second))
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// Work that has begun is finished even while the receiver stops.
		wctx := context.WithoutCancel(ctx)
		var ok bool
		if isGeminiLogs(path) {
			ok = rd.readLogs(wctx, f, path, sig, b, skip)
		} else {
			ok = rd.readChat(wctx, f, path, sig, b, settled || skip, skip)
		}
		if ok {
			f.sig, f.mapped, f.settled = sig, true, settled || skip
		}
	}
}

// readChat maps one chat file; false when it does not decode (to be read
// again at the next poll).
func (rd *geminiReader) readChat(ctx context.Context, f *geminiFile, path string, sig fileSig, b []byte, settled, skip bool) bool {
	var chat gemini.Chat
	var bad []agentevent.Event
	if strings.HasSuffix(path, ".jsonl") {
		var errs []*gemini.DecodeError
		chat, errs = gemini.DecodeChatJSONL(b)
		for _, de := range errs {
			if de.Line == int64(bytes.Count(b, []byte("\n")))+1 && !bytes.HasSuffix(b, []byte("\n")) {
				continue // the last line, still being written
			}
			key := fmt.Sprintf("%s:%d", path, de.Line)
			sigStr := de.Reason + "/" + de.Error()
			if rd.reported[key] == sigStr {
				continue
			}
			rd.reported[key] = sigStr
			rd.bad(ctx, path, de.Line, de.Reason)
			bad = append(bad, rd.unparsed(path, chat.SessionID, de.Line, sig, lineOf(b, de.Line), de))
		}
	} else {
		var err error
		chat, err = gemini.DecodeChat(b)
		if err != nil {
			rd.badFile(ctx, path, sig, b, err)
			return false
		}
	}
	if chat.SessionID == "" {
		rd.badFile(ctx, path, sig, b, &gemini.DecodeError{Reason: gemini.ReasonUnexpectedShape, Err: errors.New("no sessionId")})
		return false
	}
	parent, skill := gemini.Placement(path)
	c := gemini.Context{LogFile: path, ParentSessionID: parent, SkillExtraction: skill}
	if parent == "" {
		rd.chats[chat.SessionID] = true
	}
	th := rd.thread(ctx, gemini.ThreadKey(c, chat))
	c.Sequence = th.seq + 1
	res := gemini.MapChat(c, chat, th.w, settled)
	if n := len(chat.Messages) - f.messages; n > 0 {
		rd.r.telemetry.AgentLogRecordsRead.Add(ctx, int64(n), rd.agentAttr)
	}
	f.messages = len(chat.Messages)
	if len(res.Emitted) == 0 && len(bad) == 0 {
		return true
	}
	if !skip {
		for _, ev := range res.Events {
			if ev.Unparsed != "" {
				rd.bad(ctx, path, 0, ev.Unparsed) // a message of an odd shape or unknown type
			}
		}
		rd.send(ctx, path, append(res.Events, bad...))
	}
	th.seq += int64(len(res.Events))
	th.w.Add(res.Emitted)
	rd.saveThread(ctx, gemini.ThreadKey(c, chat), th)
	return true
}

// readLogs maps the entries of one logs.json of sessions without a chat,
// per session thread.
//
// A session has a chat when one was read in this run, or when its thread
// has emitted chat messages before (a chat deleted since, or left out by
// exclude_older_than): its prompts were emitted from the chat then. With
// exclude_older_than, entries older than the cutoff are left out too, as
// the chats of that age are.
func (rd *geminiReader) readLogs(ctx context.Context, f *geminiFile, path string, sig fileSig, b []byte, skip bool) bool {
	entries, skipped, err := gemini.DecodeLogs(b)
	if err != nil {
		rd.badFile(ctx, path, sig, b, err)
		return false
	}
	// Entries without a sessionId: counted and reported as they appear.
	if n := skipped - f.skipped; n > 0 {
		for range n {
			rd.bad(ctx, path, 0, gemini.ReasonUnexpectedShape)
		}
	}
	f.skipped = skipped
	if n := len(entries) - f.messages; n > 0 {
		rd.r.telemetry.AgentLogRecordsRead.Add(ctx, int64(n), rd.agentAttr)
	}
	f.messages = len(entries)
	bySession := map[string][]gemini.LogEntry{}
	var order []string
	for _, e := range entries {
		if rd.excludeOlderThan > 0 {
			if at, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil && rd.now().Sub(at) > rd.excludeOlderThan {
				continue
			}
		}
		if _, ok := bySession[e.SessionID]; !ok {
			order = append(order, e.SessionID)
		}
		bySession[e.SessionID] = append(bySession[e.SessionID], e)
	}
	before := rd.now().Add(-geminiLogsGrace)
	if skip {
		before = time.Time{}
	}
	hasChat := func(id string) bool {
		if rd.chats[id] {
			return true
		}
		for k := range rd.thread(ctx, id).w {
			if !strings.HasPrefix(k, id+":log:") {
				return true
			}
		}
		return false
	}
	for _, id := range order {
		th := rd.thread(ctx, id)
		res := gemini.MapLogs(gemini.Context{LogFile: path, Sequence: th.seq + 1}, bySession[id], hasChat, th.w, before)
		if len(res.Emitted) == 0 {
			continue
		}
		if !skip {
			rd.send(ctx, path, res.Events)
		}
		th.seq += int64(len(res.Events))
		th.w.Add(res.Emitted)
		rd.saveThread(ctx, id, th)
	}
	return true
}

func lineOf(b []byte, n int64) []byte {
	for i := int64(1); len(b) > 0; i++ {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		if i == n {
			return line
		}
		b = rest
	}
	return nil
}

func geminiStateKey(thread string) string { return "thread." + thread }

// thread returns the watermark of a thread, restored from the storage the
// first time.
func (rd *geminiReader) thread(ctx context.Context, key string) *geminiThread {
	th := rd.threads[key]
	if th == nil {
		th = &geminiThread{w: gemini.Watermark{}}
		rd.threads[key] = th
	}
	if th.loaded || !rd.persist {
		th.loaded = true
		return th
	}
	th.loaded = true
	b, err := rd.store.Get(ctx, geminiStateKey(key))
	if err != nil {
		rd.storageError(fmt.Errorf("read watermark of Gemini thread %s: %w", key, err))
		return th
	}
	if b == nil {
		return th
	}
	var m geminiMark
	if err := json.Unmarshal(b, &m); err != nil {
		return th
	}
	w, err := gemini.UnmarshalState(m.Emitted)
	if err != nil {
		return th
	}
	th.w, th.seq = w, m.Sequence
	return th
}

func (rd *geminiReader) saveThread(ctx context.Context, key string, th *geminiThread) {
	if !rd.persist {
		return
	}
	emitted, err := th.w.MarshalState()
	var b []byte
	if err == nil {
		b, err = json.Marshal(geminiMark{Emitted: emitted, Sequence: th.seq})
	}
	if err == nil {
		err = rd.store.Set(ctx, geminiStateKey(key), b)
	}
	if err != nil {
		rd.storageError(fmt.Errorf("save watermark of Gemini thread %s: %w", key, err))
	}
}

// badFile reports a file that does not decode once it has stayed so,
// unchanged, for two polls (a file caught mid-rewrite decodes at the next
// one), and once per version of it.
func (rd *geminiReader) badFile(ctx context.Context, path string, sig fileSig, raw []byte, err error) {
	f := rd.files[path]
	if f == nil || f.badSig != sig {
		if f != nil {
			f.badSig = sig
		}
		return
	}
	if rd.reported[path] == sig.String() {
		return
	}
	rd.reported[path] = sig.String()
	reason := gemini.ReasonMalformedJSON
	var de *gemini.DecodeError
	if errors.As(err, &de) {
		reason = de.Reason
	}
	rd.bad(ctx, path, 0, reason)
	if rd.r.cfg.EmitUnparsed {
		rd.send(ctx, path, []agentevent.Event{rd.unparsed(path, "", 0, sig, raw, err)})
	}
}

// unparsed is the event of a file or JSONL line that could not be decoded.
func (rd *geminiReader) unparsed(path, session string, line int64, sig fileSig, raw []byte, err error) agentevent.Event {
	reason := gemini.ReasonMalformedJSON
	var de *gemini.DecodeError
	if errors.As(err, &de) {
		reason = de.Reason
	}
	ev := agentevent.Event{
		Source:     agentevent.SourceGemini,
		SessionID:  session,
		EventID:    agentevent.StableID(path, line, 0),
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
	return ev
}

// send applies the content settings and emits events. Unparsed events
// among them have been counted and reported already; they are emitted only
// with emit_unparsed.
func (rd *geminiReader) send(ctx context.Context, path string, events []agentevent.Event) {
	out := make([]agentevent.Event, 0, len(events))
	for _, ev := range events {
		if ev.Unparsed != "" && !rd.r.cfg.EmitUnparsed {
			continue
		}
		if !rd.r.cfg.IncludeContent {
			agentevent.StripContent(&ev)
		}
		if !rd.r.cfg.IncludeRaw {
			ev.Raw = nil
		}
		out = append(out, ev)
	}
	if len(out) > 0 {
		rd.consume(ctx, path, out)
	}
}
