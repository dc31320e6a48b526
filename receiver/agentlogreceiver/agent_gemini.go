// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

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
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/snapshot"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// geminiAgent: Gemini CLI rewrites its chat files in place (one JSON object
// per session), and appends to JSONL chats records that replace earlier
// ones: neither can be tailed by byte offset, so Gemini is a snapshot
// source (internal/snapshot). What is Gemini's below: which files are chats
// and which logs.json, in which order they are read, and the threads
// (gemini.ThreadKey) a chat's messages belong to.
var geminiAgent = agent{
	key:            "gemini",
	source:         agentevent.SourceGemini,
	config:         func(c *Config) *AgentConfig { return &c.Gemini },
	defaultInclude: geminiInclude,
	kind:           sourceSnapshot,
	newSnapshot:    func() snapshot.Mapper { return &geminiMapper{chats: map[string]bool{}} },
	optional:       true,
}

// geminiLogsGrace is how far behind now logs.json entries are considered:
// the CLI writes logs.json as the user submits, before the chat has the
// message.
const geminiLogsGrace = time.Minute

// geminiInclude: the CLI keeps its data in ~/.gemini (GEMINI_CLI_HOME is not
// honored: it could not be confirmed in the CLI's source). Chats are
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

func (*geminiMapper) NewWatermark() snapshot.Watermark { return gemini.Watermark{} }

func (*geminiMapper) UnmarshalWatermark(b []byte) (snapshot.Watermark, error) {
	return gemini.UnmarshalState(b)
}

// Sort puts top-level chats first, then nested chats, then logs.json files
// (MapLogs asks whether a session has a chat), each group by path.
func (*geminiMapper) Sort(paths []string) {
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

func (m *geminiMapper) Read(ctx context.Context, r *snapshot.Read) (string, error) {
	if isGeminiLogs(r.Path) {
		return m.readLogs(ctx, r)
	}
	return m.readChat(ctx, r)
}

func decodeReason(err error) string {
	if de, ok := errors.AsType[*gemini.DecodeError](err); ok {
		return de.Reason
	}
	return gemini.ReasonMalformedJSON
}

// readChat maps one chat file.
func (m *geminiMapper) readChat(ctx context.Context, r *snapshot.Read) (string, error) {
	var chat gemini.Chat
	var bad []agentevent.Event
	b := r.Data
	if strings.HasSuffix(r.Path, ".jsonl") {
		var errs []*gemini.DecodeError
		chat, errs = gemini.DecodeChatJSONL(b)
		for _, de := range errs {
			if de.Line == int64(bytes.Count(b, []byte("\n")))+1 && !bytes.HasSuffix(b, []byte("\n")) {
				continue // the last line, still being written
			}
			if !r.ReportOnce(fmt.Sprint(de.Line), de.Reason+"/"+de.Error()) {
				continue
			}
			bad = append(bad, geminiUnparsed(r.Path, chat.SessionID, de.Line, r.Sig, lineOf(b, de.Line), de))
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
	parent, skill := gemini.Placement(r.Path)
	c := gemini.Context{LogFile: r.Path, ParentSessionID: parent, SkillExtraction: skill}
	if parent == "" {
		// A decoded string shares the memory of the whole file: kept, it is
		// copied.
		m.chats[strings.Clone(chat.SessionID)] = true
	}
	r.Records(ctx, len(chat.Messages))
	r.Deliver(ctx, gemini.ThreadKey(c, chat), func(th *snapshot.Thread) snapshot.Result {
		c.Sequence = th.Seq + 1
		res := gemini.MapChat(c, chat, th.Emitted.(gemini.Watermark), r.Settled)
		return snapshot.Result{Events: append(res.Events, bad...), Emitted: res.Emitted, CaughtUp: res.Held == ""}
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
func (m *geminiMapper) readLogs(ctx context.Context, r *snapshot.Read) (string, error) {
	entries, skipped, err := gemini.DecodeLogs(r.Data)
	if err != nil {
		return decodeReason(err), err
	}
	// Entries without a sessionId: counted and reported as they appear.
	for range r.Skipped(skipped) {
		r.Bad(ctx, 0, gemini.ReasonUnexpectedShape)
	}
	r.Records(ctx, len(entries))
	bySession := map[string][]gemini.LogEntry{}
	var order []string
	olderThan := r.ExcludeOlderThan
	for _, e := range entries {
		if olderThan > 0 {
			if at, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil && r.Now.Sub(at) > olderThan {
				continue
			}
		}
		if _, ok := bySession[e.SessionID]; !ok {
			order = append(order, e.SessionID)
		}
		bySession[e.SessionID] = append(bySession[e.SessionID], e)
	}
	before := r.Now.Add(-geminiLogsGrace)
	if r.Skip {
		before = time.Time{}
	}
	hasChat := func(id string) bool {
		if m.chats[id] {
			return true
		}
		for k := range r.Peek(ctx, id).Emitted.(gemini.Watermark) {
			if !strings.HasPrefix(k, id+":log:") {
				return true
			}
		}
		return false
	}
	for _, id := range order {
		chat := hasChat(id)
		ok := r.Deliver(ctx, id, func(th *snapshot.Thread) snapshot.Result {
			res := gemini.MapLogs(gemini.Context{LogFile: r.Path, Sequence: th.Seq + 1}, bySession[id],
				func(string) bool { return chat }, th.Emitted.(gemini.Watermark), before)
			return snapshot.Result{Events: res.Events, Emitted: res.Emitted, CaughtUp: true}
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
func geminiUnparsed(path, session string, line int64, sig source.FileSig, raw []byte, err error) agentevent.Event {
	ev := agentevent.Event{
		Source:     agentevent.SourceGemini,
		SessionID:  session,
		EventID:    agentevent.StableID(path, line, 0),
		Timestamp:  sig.Mod,
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
