// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/gemini"
)

// Gemini CLI rewrites its chat files in place (one JSON object per
// session), and appends to JSONL chats records that replace earlier ones:
// neither can be tailed by byte offset, so Gemini is a snapshot source
// (source_snapshot.go). This file is the Gemini-specific part: which files
// are chats and which logs.json, in which order they are read, and the
// threads (gemini.ThreadKey) a chat's messages belong to.

// geminiLogsGrace is how far behind now logs.json entries are considered:
// the CLI writes logs.json as the user submits, before the chat has the
// message.
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

// geminiMapper maps Gemini CLI's chats and logs.json files.
type geminiMapper struct {
	// chats are the session ids of the top-level chats read in this run
	// (poll goroutine only).
	chats map[string]bool
}

func newGeminiMapper() snapshotMapper { return &geminiMapper{chats: map[string]bool{}} }

func (*geminiMapper) newWatermark() watermark { return gemini.Watermark{} }

func (*geminiMapper) unmarshalWatermark(b []byte) (watermark, error) {
	return gemini.UnmarshalState(b)
}

// sort puts top-level chats first, then nested chats, then logs.json files
// (MapLogs asks whether a session has a chat), each group by path.
func (*geminiMapper) sort(paths []string) {
	rank := func(p string) int {
		switch {
		case isGeminiLogs(p):
			return 2
		case geminiNested(p):
			return 1
		}
		return 0
	}
	slices.SortFunc(paths, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
}

func isGeminiLogs(p string) bool { return filepath.Base(p) == "logs.json" }

func geminiNested(p string) bool {
	parent, _ := gemini.Placement(p)
	return parent != ""
}

func (m *geminiMapper) read(ctx context.Context, r *snapshotRead) (string, error) {
	if isGeminiLogs(r.path) {
		return m.readLogs(ctx, r)
	}
	return m.readChat(ctx, r)
}

func decodeReason(err error) string {
	var de *gemini.DecodeError
	if errors.As(err, &de) {
		return de.Reason
	}
	return gemini.ReasonMalformedJSON
}

// readChat maps one chat file.
func (m *geminiMapper) readChat(ctx context.Context, r *snapshotRead) (string, error) {
	var chat gemini.Chat
	var bad []agentevent.Event
	b := r.data
	if strings.HasSuffix(r.path, ".jsonl") {
		var errs []*gemini.DecodeError
		chat, errs = gemini.DecodeChatJSONL(b)
		for _, de := range errs {
			if de.Line == int64(bytes.Count(b, []byte("\n")))+1 && !bytes.HasSuffix(b, []byte("\n")) {
				continue // the last line, still being written
			}
			if !r.reportOnce(fmt.Sprint(de.Line), de.Reason+"/"+de.Error()) {
				continue
			}
			bad = append(bad, geminiUnparsed(r.path, chat.SessionID, de.Line, r.sig, lineOf(b, de.Line), de))
		}
	} else {
		var err error
		chat, err = gemini.DecodeChat(b)
		if err != nil {
			return decodeReason(err), err
		}
	}
	if chat.SessionID == "" {
		return gemini.ReasonUnexpectedShape, &gemini.DecodeError{Reason: gemini.ReasonUnexpectedShape, Err: errors.New("no sessionId")}
	}
	parent, skill := gemini.Placement(r.path)
	c := gemini.Context{LogFile: r.path, ParentSessionID: parent, SkillExtraction: skill}
	if parent == "" {
		// A decoded string shares the memory of the whole file: kept, it is
		// copied.
		m.chats[strings.Clone(chat.SessionID)] = true
	}
	if n := len(chat.Messages) - r.file.records; n > 0 {
		r.src.emitter.read(ctx, int64(n))
	}
	r.file.records = len(chat.Messages)
	r.deliver(ctx, gemini.ThreadKey(c, chat), func(th *snapshotThread) threadResult {
		c.Sequence = th.seq + 1
		res := gemini.MapChat(c, chat, th.emitted.(gemini.Watermark), r.settled)
		return threadResult{events: append(res.Events, bad...), emitted: res.Emitted, caughtUp: res.Held == ""}
	})
	return "", nil
}

// readLogs maps the entries of one logs.json of sessions without a chat,
// per session thread.
//
// A session has a chat when one was read in this run, or when its thread
// has emitted chat messages before (a chat deleted since, or left out by
// exclude_older_than): its prompts were emitted from the chat then. With
// exclude_older_than, entries older than the cutoff are left out too, as
// the chats of that age are.
func (m *geminiMapper) readLogs(ctx context.Context, r *snapshotRead) (string, error) {
	entries, skipped, err := gemini.DecodeLogs(r.data)
	if err != nil {
		return decodeReason(err), err
	}
	// Entries without a sessionId: counted and reported as they appear.
	for range skipped - r.file.skipped {
		r.bad(ctx, 0, gemini.ReasonUnexpectedShape)
	}
	r.file.skipped = skipped
	if n := len(entries) - r.file.records; n > 0 {
		r.src.emitter.read(ctx, int64(n))
	}
	r.file.records = len(entries)
	bySession := map[string][]gemini.LogEntry{}
	var order []string
	olderThan := r.src.ac.ExcludeOlderThan
	for _, e := range entries {
		if olderThan > 0 {
			if at, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil && r.now.Sub(at) > olderThan {
				continue
			}
		}
		if _, ok := bySession[e.SessionID]; !ok {
			order = append(order, e.SessionID)
		}
		bySession[e.SessionID] = append(bySession[e.SessionID], e)
	}
	before := r.now.Add(-geminiLogsGrace)
	if r.skip {
		before = time.Time{}
	}
	hasChat := func(id string) bool {
		if m.chats[id] {
			return true
		}
		for k := range r.peek(ctx, id).emitted.(gemini.Watermark) {
			if !strings.HasPrefix(k, id+":log:") {
				return true
			}
		}
		return false
	}
	for _, id := range order {
		chat := hasChat(id)
		ok := r.deliver(ctx, id, func(th *snapshotThread) threadResult {
			res := gemini.MapLogs(gemini.Context{LogFile: r.path, Sequence: th.seq + 1}, bySession[id],
				func(string) bool { return chat }, th.emitted.(gemini.Watermark), before)
			return threadResult{events: res.Events, emitted: res.Emitted, caughtUp: true}
		})
		if !ok {
			break
		}
	}
	return "", nil
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

// geminiUnparsed is the event of a JSONL line that could not be decoded.
func geminiUnparsed(path, session string, line int64, sig fileSig, raw []byte, err error) agentevent.Event {
	ev := agentevent.Event{
		Source:     agentevent.SourceGemini,
		SessionID:  session,
		EventID:    agentevent.StableID(path, line, 0),
		Timestamp:  sig.mod,
		Type:       agentevent.TypeLog,
		Role:       agentevent.RoleSystem,
		Channel:    agentevent.ChannelSystem,
		LogFile:    path,
		LogLine:    line,
		Raw:        raw,
		Unparsed:   decodeReason(err),
		Attributes: map[string]any{"agent.unparsed.detail": err.Error()},
	}
	agentevent.Normalize(&ev)
	return ev
}
