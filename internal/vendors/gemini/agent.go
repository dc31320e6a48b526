// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// Source is Gemini CLI's event source.
const Source agentevent.Source = "gemini"

// Gemini CLI rewrites its chat files in place (one JSON object per
// session), and appends to JSONL chats records that replace earlier ones:
// neither can be tailed by byte offset, so its files are re-read whole
// (agents.RewrittenFiles). What is Gemini's below: which files are chats
// and which logs.json, in which order they are read, and the threads
// (ThreadKey) a chat's messages belong to.
func init() {
	agents.Register(agents.Descriptor{
		Source:  Source,
		Service: "gemini-cli",
		Display: "Gemini CLI",
		Color:   "blue",
		// The CLI keeps its data in ~/.gemini (GEMINI_CLI_HOME is not
		// honored: it could not be confirmed in the CLI's source).
		Folders:  []agents.Folder{{Home: []string{".gemini"}}},
		Include:  chatPatterns,
		Optional: true,
		Reader: agents.Reader{
			Kind:        agents.RewrittenFiles,
			NewSnapshot: func() agents.SnapshotMapper { return &chatMapper{chats: map[string]bool{}} },
		},
		Ccusage: &agents.Ccusage{
			Command: "gemini", Env: []string{"GEMINI_DATA_DIR", "GEMINI_DIR"},
			ReasoningOutsideOutput: true,
		},
		Fixtures: agents.Fixtures{
			Dir:   "gemini",
			Stage: stage,
			Keep:  func(rel string) bool { return strings.HasSuffix(rel, ".json") || strings.HasSuffix(rel, ".jsonl") },
			// A .jsonl chat is rewritten by its upserts, not a log a line
			// reader makes sense of: no JSONLInclude.
			Place: func(r int, rel string, _ []byte) string {
				dir := filepath.Join(".gemini", "tmp", fmt.Sprintf("bench-r%04d", r))
				if strings.HasPrefix(filepath.Base(rel), "logs") {
					return filepath.Join(dir, "logs.json")
				}
				return filepath.Join(dir, "chats", filepath.Base(rel))
			},
			Share: 0.05,
		},
		Doc: agents.Doc{Versions: "JSON chats; JSONL chats (v0.39+)"},
	})
}

// stage lays a corpus out as ~/.gemini/tmp/<project>/chats/session-*.json
// and logs.json: a subagent chat (kind "subagent") in
// chats/<parent session>/<its id>.json, its parent named "parent-of-<its
// id>" (the corpus has no parent chat); a case folder (the JSONL chats) is
// a project of its own.
func stage(s *agents.Staging) error {
	for _, p := range s.Glob("chat_*.json") {
		dst := filepath.Join(".gemini", "tmp", "fixtures", "chats", "session-"+strings.TrimPrefix(filepath.Base(p), "chat_"))
		if b, err := os.ReadFile(p); err == nil {
			var chat struct {
				SessionID string `json:"sessionId"`
				Kind      string `json:"kind"`
			}
			if jsonx.Unmarshal(b, &chat) == nil && chat.Kind == "subagent" && chat.SessionID != "" {
				dst = filepath.Join(".gemini", "tmp", "fixtures", "chats", "parent-of-"+chat.SessionID, chat.SessionID+".json")
			}
		}
		if err := s.Copy(p, dst); err != nil {
			return err
		}
	}
	for i, p := range s.Glob("logs_*.json") {
		if err := s.Copy(p, filepath.Join(".gemini", "tmp", fmt.Sprintf("fixtures-logs-%d-%d", s.Root, i), "logs.json")); err != nil {
			return err
		}
	}
	for _, p := range s.Glob("*") {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			if err := s.Tree(p, filepath.Join(".gemini", "tmp", filepath.Base(p), "chats")); err != nil {
				return err
			}
		}
	}
	return nil
}

// logsGrace is how far behind now logs.json entries are considered:
// the CLI writes logs.json as the user submits, before the chat has the
// message.
const logsGrace = time.Minute

// chatPatterns are the files read below a Gemini CLI home directory.
func chatPatterns(dir string) []string {
	tmp := filepath.Join(dir, "tmp", "*")
	return []string{
		filepath.Join(tmp, "chats", "*.json"),
		filepath.Join(tmp, "chats", "*.jsonl"),
		filepath.Join(tmp, "chats", "*", "*.json"),
		filepath.Join(tmp, "chats", "*", "*.jsonl"),
		filepath.Join(tmp, "logs.json"),
	}
}

// chatMapper maps Gemini CLI's chats and logs.json files.
type chatMapper struct {
	// chats are the session ids of the top-level chats read in this run
	// (poll goroutine only).
	chats map[string]bool
}

func (*chatMapper) NewWatermark() agents.Watermark { return Watermark{} }

func (*chatMapper) UnmarshalWatermark(b []byte) (agents.Watermark, error) {
	return UnmarshalState(b)
}

// Sort puts top-level chats first, then nested chats, then logs.json files
// (MapLogs asks whether a session has a chat), each group by path.
func (*chatMapper) Sort(paths []string) {
	rank := func(p string) int {
		switch {
		case isLogs(p):
			return 2
		case isNested(p):
			return 1
		}
		return 0
	}
	slices.SortFunc(paths, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
}

func isLogs(p string) bool { return filepath.Base(p) == "logs.json" }

func isNested(p string) bool {
	parent, _ := Placement(p)
	return parent != ""
}

func (m *chatMapper) Read(ctx context.Context, r *agents.SnapshotRead) (string, error) {
	if isLogs(r.Path) {
		return m.readLogs(ctx, r)
	}
	return m.readChat(ctx, r)
}

func readReason(err error) string {
	if de, ok := errors.AsType[*DecodeError](err); ok {
		return de.Reason
	}
	return ReasonMalformedJSON
}

// readChat maps one chat file.
func (m *chatMapper) readChat(ctx context.Context, r *agents.SnapshotRead) (string, error) {
	var chat Chat
	var bad []agentevent.Event
	b := r.Data
	if strings.HasSuffix(r.Path, ".jsonl") {
		var errs []*DecodeError
		chat, errs = DecodeChatJSONL(b)
		for _, de := range errs {
			if de.Line == int64(bytes.Count(b, []byte("\n")))+1 && !bytes.HasSuffix(b, []byte("\n")) {
				continue // the last line, still being written
			}
			if !r.ReportOnce(fmt.Sprint(de.Line), de.Reason+"/"+de.Error()) {
				continue
			}
			bad = append(bad, lineUnparsed(r.Path, chat.SessionID, de.Line, r.ModTime, lineOf(b, de.Line), de))
		}
	} else {
		var err error
		chat, err = DecodeChat(b)
		if err != nil {
			return readReason(err), err
		}
	}
	if chat.SessionID == "" {
		return ReasonUnexpectedShape, &DecodeError{Reason: ReasonUnexpectedShape, Err: errors.New("no sessionId")}
	}
	parent, skill := Placement(r.Path)
	c := Context{LogFile: r.Path, ParentSessionID: parent, SkillExtraction: skill}
	if parent == "" {
		// A decoded string shares the memory of the whole file: kept, it is
		// copied.
		m.chats[strings.Clone(chat.SessionID)] = true
	}
	r.Records(ctx, len(chat.Messages))
	r.Deliver(ctx, ThreadKey(c, chat), func(th *agents.SnapshotThread) agents.SnapshotResult {
		c.Sequence = th.Seq + 1
		res := MapChat(c, chat, th.Emitted.(Watermark), r.Settled)
		return agents.SnapshotResult{Events: append(res.Events, bad...), Emitted: res.Emitted, CaughtUp: res.Held == ""}
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
func (m *chatMapper) readLogs(ctx context.Context, r *agents.SnapshotRead) (string, error) {
	entries, skipped, err := DecodeLogs(r.Data)
	if err != nil {
		return readReason(err), err
	}
	// Entries without a sessionId: counted and reported as they appear.
	for range r.Skipped(skipped) {
		r.Bad(ctx, 0, ReasonUnexpectedShape)
	}
	r.Records(ctx, len(entries))
	bySession := map[string][]LogEntry{}
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
	before := r.Now.Add(-logsGrace)
	if r.Skip {
		before = time.Time{}
	}
	hasChat := func(id string) bool {
		if m.chats[id] {
			return true
		}
		for k := range r.Peek(ctx, id).Emitted.(Watermark) {
			if !strings.HasPrefix(k, id+":log:") {
				return true
			}
		}
		return false
	}
	for _, id := range order {
		chat := hasChat(id)
		ok := r.Deliver(ctx, id, func(th *agents.SnapshotThread) agents.SnapshotResult {
			res := MapLogs(Context{LogFile: r.Path, Sequence: th.Seq + 1}, bySession[id],
				func(string) bool { return chat }, th.Emitted.(Watermark), before)
			return agents.SnapshotResult{Events: res.Events, Emitted: res.Emitted, CaughtUp: true}
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

// lineUnparsed is the event of a JSONL line that could not be decoded.
func lineUnparsed(path, session string, line int64, mod time.Time, raw []byte, err error) agentevent.Event {
	ev := agentevent.Event{
		Source:     Source,
		SessionID:  session,
		EventID:    agentevent.StableID(path, line, 0),
		Timestamp:  mod,
		Type:       agentevent.TypeLog,
		Role:       agentevent.RoleSystem,
		Channel:    agentevent.ChannelSystem,
		LogFile:    path,
		LogLine:    line,
		Raw:        raw,
		Unparsed:   readReason(err),
		Attributes: map[string]any{agentevent.AttrUnparsedDetail: err.Error()},
	}
	agentevent.Normalize(&ev)
	return ev
}
