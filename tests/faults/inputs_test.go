// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	codexlog "github.com/agentotel/agentotel/internal/vendors/codex"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// fixtures is ../shared/fixtures (or $AGENTOTEL_FIXTURES); the suite skips without it.
func fixtures(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AGENTOTEL_FIXTURES")
	if dir == "" {
		dir = filepath.Join(testenv.RepoRoot(t), "..", "shared", "fixtures")
	}
	vendortest.SkipIfAbsent(t, filepath.Join(dir, "claude_code"))
	return dir
}

var timestampRe = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})`)

// shiftTimes moves every RFC 3339 timestamp in data by d, keeping its precision and zone.
func shiftTimes(data []byte, d time.Duration) []byte {
	return timestampRe.ReplaceAllFunc(data, func(m []byte) []byte {
		ts, err := time.Parse(time.RFC3339Nano, string(m))
		if err != nil {
			return m
		}
		layout := "2006-01-02T15:04:05"
		if i := bytes.IndexByte(m, '.'); i > 0 {
			digits := bytes.IndexAny(m[i+1:], "Z+-") // the fraction runs to the zone
			layout += "." + strings.Repeat("0", digits)
		}
		return []byte(ts.Add(d).Format(layout + "Z07:00"))
	})
}

// firstTime is the earliest timestamp in data.
func firstTime(data []byte) time.Time {
	var first time.Time
	for _, m := range timestampRe.FindAll(data, -1) {
		if ts, err := time.Parse(time.RFC3339Nano, string(m)); err == nil && (first.IsZero() || ts.Before(first)) {
			first = ts
		}
	}
	return first
}

// writeBackfill writes a history of at least claudeBytes of Claude Code sessions, codexBytes of
// Codex rollouts and geminiBytes of Gemini CLI chats, made by replicating the real fixture
// sessions: each copy with its own session id
// and its timestamps a week after the previous copy's (so that no two copies overlap in time, which
// the connector's cross-session anchoring of Codex /review rollouts would otherwise see as a tie).
func writeBackfill(t *testing.T, logs string, claudeBytes, codexBytes, geminiBytes int64) (files int, total int64) {
	t.Helper()
	fx := fixtures(t)
	jsonl := func(p string) bool { return strings.HasSuffix(p, ".jsonl") }
	week := 7 * 24 * time.Hour
	claude, n := testenv.Replicate(t, filepath.Join(fx, "claude_code"), jsonl, testenv.ClaudeSessionID, claudeBytes)
	total += n
	for _, f := range claude {
		path := filepath.Join(logs, "claude", fmt.Sprintf("r%03d", f.Replica), f.Rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, shiftTimes(f.Data, time.Duration(f.Replica)*week), 0o600))
		files++
	}
	codex, n := testenv.Replicate(t, filepath.Join(fx, "codex"), jsonl, codexlog.RolloutSessionID, codexBytes)
	total += n
	for _, f := range codex {
		name := strings.TrimSuffix(f.Rel, ".jsonl")
		if id := codexlog.RolloutSessionID(f.Data); id != "" {
			name = id
		}
		path := filepath.Join(logs, "codex", "sessions", fmt.Sprintf("r%03d", f.Replica), "rollout-"+name+".jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, shiftTimes(f.Data, time.Duration(f.Replica)*week), 0o600))
		files++
	}
	gemini, n := testenv.Replicate(t, filepath.Join(fx, "gemini"), func(p string) bool {
		return strings.HasPrefix(filepath.Base(p), "chat_") && strings.HasSuffix(p, ".json")
	}, geminiSessionID, geminiBytes)
	total += n
	for _, f := range gemini {
		id := geminiSessionID(f.Data)
		require.NotEmpty(t, id, f.Rel)
		path := filepath.Join(logs, "gemini", "tmp", fmt.Sprintf("project-r%03d", f.Replica), "chats", "session-"+id+".json")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, shiftTimes(f.Data, time.Duration(f.Replica)*week), 0o600))
		files++
	}
	// History: written a month ago, so that no reader takes a file for one still being written.
	old := time.Now().Add(-30 * 24 * time.Hour)
	require.NoError(t, filepath.WalkDir(logs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old) //nolint:gosec // G122: the test's temporary logs folder
	}))
	return files, total
}

// geminiSessionID is the session id of a Gemini CLI chat.
func geminiSessionID(data []byte) string {
	var chat struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(data, &chat) != nil {
		return ""
	}
	return chat.SessionID
}

// step is one write an agent makes to its log: a line appended, or a whole chat rewritten.
type step struct {
	at      time.Duration // since the start of the session
	agent   string
	path    string // below the logs folder
	data    []byte
	rewrite bool
	midTurn bool // a tool call was just written and its result was not: the turn is open
}

// liveInput is three sessions written live, the same bytes for every deployment: a Claude Code
// session with its subagent (lines appended in time order across both files), a Codex rollout
// (lines appended), a Gemini CLI chat (rewritten whole after each message, as the CLI does).
type liveInput struct {
	steps []step
	dur   time.Duration
}

// newLiveInput spreads the three sessions evenly over dur. Their timestamps are moved to now, so
// their turns are live: with the suite's idle timeout a turn closes when its next prompt comes.
// The Gemini chat ends after a user message, so that its last message is not one the reader holds
// back until the file settles (which would make the end of a run depend on the clock).
func newLiveInput(t *testing.T, dur time.Duration) *liveInput {
	t.Helper()
	fx := fixtures(t)
	now := time.Now()
	in := &liveInput{dur: dur}

	// Claude Code: a session with a subagent; the lines of both files merged by timestamp.
	cdir := filepath.Join(fx, "claude_code", "v2.1.68_opus_haiku_with_subagent")
	main := filepath.Join(cdir, "66db2ce0-393a-4771-9986-2462861a8eb7.jsonl")
	subs, errGlob := filepath.Glob(filepath.Join(cdir, "66db2ce0-393a-4771-9986-2462861a8eb7", "subagents", "*.jsonl"))
	require.NoError(t, errGlob)
	require.NotEmpty(t, subs)
	type line struct {
		rel  string
		ts   time.Time
		data []byte
	}
	var lines []line
	var first time.Time
	for _, p := range append([]string{main}, subs...) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		if ft := firstTime(b); first.IsZero() || ft.Before(first) {
			first = ft
		}
		rel, err := filepath.Rel(cdir, p)
		require.NoError(t, err)
		var last time.Time
		for l := range bytes.SplitSeq(b, []byte{'\n'}) {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			var rec struct {
				Timestamp time.Time `json:"timestamp"`
			}
			if json.Unmarshal(l, &rec) == nil && !rec.Timestamp.IsZero() {
				last = rec.Timestamp
			}
			lines = append(lines, line{rel: filepath.Join("claude", "-home-u-proj", rel), ts: last, data: l})
		}
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].ts.Before(lines[j].ts) })
	claudeShift := now.Sub(first)
	for i, l := range lines {
		data := append(shiftTimes(l.data, claudeShift), '\n')
		in.steps = append(in.steps, step{
			at: spread(i, len(lines), dur), agent: "claude-code", path: l.rel, data: data,
			midTurn: bytes.Contains(l.data, []byte(`"type":"assistant"`)) && bytes.Contains(l.data, []byte(`"type":"tool_use"`)),
		})
	}

	// Codex: a rollout with tool calls, appended line by line.
	b, err := os.ReadFile(filepath.Join(fx, "codex", "v0.117.0_exec_patch_events.jsonl"))
	require.NoError(t, err)
	b = shiftTimes(b, now.Sub(firstTime(b)))
	id := codexlog.RolloutSessionID(b)
	require.NotEmpty(t, id)
	rlines := bytes.SplitAfter(b, []byte{'\n'})
	for i, l := range rlines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if l[len(l)-1] != '\n' {
			l = append(l, '\n')
		}
		in.steps = append(in.steps, step{
			at: spread(i, len(rlines), dur), agent: "codex",
			path: filepath.Join("codex", "sessions", "2026", "rollout-"+id+".jsonl"), data: l,
			midTurn: bytes.Contains(l, []byte(`"type":"function_call"`)) || bytes.Contains(l, []byte(`"type":"custom_tool_call"`)),
		})
	}

	// Gemini CLI: a multi-turn chat, rewritten after each message.
	b, err = os.ReadFile(filepath.Join(fx, "gemini", "chat_2026-03_hashdir_multi_turn.json"))
	require.NoError(t, err)
	b = shiftTimes(b, now.Sub(firstTime(b)))
	var chat map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &chat))
	var msgs []json.RawMessage
	require.NoError(t, json.Unmarshal(chat["messages"], &msgs))
	lastUser := -1
	for i, m := range msgs {
		var head struct {
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal(m, &head))
		if head.Type == "user" {
			lastUser = i
		}
	}
	require.Positive(t, lastUser)
	msgs = msgs[:lastUser+1]
	var sid string
	require.NoError(t, json.Unmarshal(chat["sessionId"], &sid))
	var hash string
	require.NoError(t, json.Unmarshal(chat["projectHash"], &hash))
	gpath := filepath.Join("gemini", "tmp", hash, "chats", "session-"+sid[:8]+".json")
	for k := 1; k <= len(msgs); k++ {
		var m struct {
			Timestamp json.RawMessage `json:"timestamp"`
		}
		require.NoError(t, json.Unmarshal(msgs[k-1], &m))
		chat["messages"], err = json.Marshal(msgs[:k])
		require.NoError(t, err)
		chat["lastUpdated"] = m.Timestamp
		data, err := json.MarshalIndent(chat, "", "  ")
		require.NoError(t, err)
		in.steps = append(in.steps, step{at: spread(k-1, len(msgs), dur), agent: "gemini-cli", path: gpath, data: data, rewrite: true})
	}
	sort.SliceStable(in.steps, func(i, j int) bool { return in.steps[i].at < in.steps[j].at })
	return in
}

// spread is when step i of n happens in a session written over dur.
func spread(i, n int, dur time.Duration) time.Duration {
	return time.Duration(int64(dur) * int64(i) / int64(n))
}

// play writes the steps below logs at their times, as the agents would, and closes the returned
// channel when done. After each step that leaves a turn open it offers a signal on midTurn (never
// blocking).
func (in *liveInput) play(ctx context.Context, logs string, midTurn chan<- struct{}) <-chan error {
	done := make(chan error, 1)
	go func() {
		defer close(done)
		start := time.Now()
		for _, s := range in.steps {
			if wait := s.at - time.Since(start); wait > 0 {
				select {
				case <-ctx.Done():
					done <- ctx.Err()
					return
				case <-time.After(wait):
				}
			}
			if err := s.apply(logs); err != nil {
				done <- err
				return
			}
			if s.midTurn && midTurn != nil {
				select {
				case midTurn <- struct{}{}:
				default:
				}
			}
		}
	}()
	return done
}

func (s step) apply(logs string) error {
	path := filepath.Join(logs, s.path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if s.rewrite {
		// As the Gemini CLI does: truncate and write in place, not a rename.
		return os.WriteFile(path, s.data, 0o600)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(s.data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
