// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// corpusPlacement is where a flat-named corpus fixture lived under
// ~/.gemini (SOURCES.md): only the nesting of a subagent chat matters.
var corpusPlacement = map[string]string{
	"chat_2026-04_subagent_chat.json": "tmp/idaho-vault/chats/b1f31681-4b57-4337-8bc5-ac73580f752a/tl63m8.json",
}

// TestCorpus maps every Gemini fixture of every corpus root (gemini/ of
// vendortest.FixtureRoots), read in place: every message mapped, zero
// unparsed, zero Validate violations, every tool call paired, and token
// sums equal to the messages' own tokens (input incl. cached, output incl.
// thoughts, total = input + output + thoughts + tool as the CLI records it).
// A .jsonl chat counts each message once however often it was re-appended.
// logs.json: every entry decodes, and mapped alone (no chat) it validates.
// Chats also hold the per-session tokens to ccusage's.
func TestCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "gemini", func(t *testing.T, dir string) {
		var chats []string
		require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			name := d.Name()
			switch {
			case strings.HasPrefix(name, "logs") && strings.HasSuffix(name, ".json"):
				t.Run(rel, func(t *testing.T) { corpusLogs(t, path, rel) })
			case strings.HasSuffix(name, ".jsonl"),
				strings.HasSuffix(name, ".json") && (strings.HasPrefix(name, "chat_") || strings.HasPrefix(name, "session-")):
				chats = append(chats, path)
				t.Run(rel, func(t *testing.T) { corpusChat(t, path, rel) })
			case strings.HasSuffix(name, ".json"):
				t.Errorf("%s: neither a chat nor a logs.json; the corpus test does not know this layout", rel)
			}
			return nil
		}))
		require.NotEmpty(t, chats, "no Gemini chat fixture in %s", dir)
		if testing.Short() {
			t.Log("-short: not running ccusage")
			return
		}
		assertCcusageTotals(t, chats)
	})
}

func corpusChat(t *testing.T, path, name string) {
	chat := loadChat(t, path)
	parent, skill := Placement(corpusPlacement[name])
	if chat.Kind == KindSubagent {
		require.NotEmpty(t, parent, "subagent fixture %s needs its place in corpusPlacement", name)
	}
	r := MapChat(Context{LogFile: name, ParentSessionID: parent, SkillExtraction: skill, Sequence: 1}, chat, nil, true)
	keys := 0
	for i := range chat.Messages {
		m := &chat.Messages[i]
		require.Contains(t, r.Emitted, m.ID)
		keys += 1 + 2*len(m.ToolCalls) // the message, each call and each result
	}
	if chat.Summary != "" {
		keys++
	}
	require.Len(t, r.Emitted, keys)
	require.NotEmpty(t, r.Events)
	for i := range r.Events {
		ev := &r.Events[i]
		require.Empty(t, ev.Unparsed, "event %s: %v", ev.EventID, ev.Attributes)
		require.Equal(t, Source, ev.Source)
		if parent != "" {
			// A subagent chat keeps its own session id and names its parent.
			require.Equal(t, chat.SessionID, ev.SessionID)
			require.Equal(t, parent, ev.Attributes[agentevent.AttrParentSessionID])
			require.Equal(t, parent, agentevent.TreeSession(ev))
			require.Equal(t, chat.SessionID, ev.AgentID)
			require.Equal(t, agentevent.SubagentLinkTurn, ev.Attributes[agentevent.AttrSubagentLink])
		}
	}
	report := agentevent.Validate(r.Events)
	require.Empty(t, report.Violations)
	require.Empty(t, report.OpenToolCalls)

	var want, got tokenSums
	calls, results := 0, 0
	for i := range chat.Messages {
		m := &chat.Messages[i]
		calls += len(m.ToolCalls)
		if t := m.Tokens; t != nil {
			want.input += t.Input
			want.output += t.Output + t.Thoughts
			want.cached += t.Cached
			want.thinking += t.Thoughts
			want.total += t.Total
		}
	}
	for i := range r.Events {
		ev := &r.Events[i]
		got.input += agentevent.Value(ev.TokensInput)
		got.output += agentevent.Value(ev.TokensOutput)
		got.cached += agentevent.Value(ev.TokensCached)
		got.thinking += agentevent.Value(ev.TokensThinking)
		got.total += agentevent.Value(ev.TokensTotal)
		if ev.Type == agentevent.TypeToolResult {
			results++
		}
	}
	require.Equal(t, want, got)
	require.Equal(t, calls, results, "every tool call has its result")
	if strings.HasSuffix(path, ".jsonl") {
		// A message re-appended as it grows is one message: as many as
		// distinct ids in the file (these files never rewind).
		require.Len(t, chat.Messages, jsonlMessageIDs(t, path))
	}
	t.Logf("%d messages, %d events, %d tool calls; tokens %+v", len(chat.Messages), len(r.Events), calls, got)
}

// jsonlMessageIDs counts the distinct ids of a .jsonl chat's message
// records, read line by line without the package's decoder.
func jsonlMessageIDs(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	ids := map[string]bool{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var rec struct {
			ID       string          `json:"id"`
			RewindTo json.RawMessage `json:"$rewindTo"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		require.Nil(t, rec.RewindTo, "a rewinding chat needs another count")
		if rec.ID != "" {
			ids[rec.ID] = true
		}
	}
	return len(ids)
}

func corpusLogs(t *testing.T, path, name string) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	entries, skipped, err := DecodeLogs(b)
	require.NoError(t, err)
	require.Zero(t, skipped)
	require.NotEmpty(t, entries)
	r := MapLogs(Context{LogFile: name, Sequence: 1}, entries, nil, nil, time.Time{})
	require.NotEmpty(t, r.Events)
	require.Empty(t, agentevent.Validate(r.Events).Violations)
	// With every session's chat present, logs.json adds nothing.
	r = MapLogs(Context{LogFile: name}, entries, func(string) bool { return true }, nil, time.Time{})
	require.Empty(t, r.Events)
}

type tokenSums struct{ input, output, cached, thinking, total int64 }

// ccusageTokens are a session's tokens the way ccusage reports Gemini CLI
// usage: input net of cached, output without thoughts, total with both.
type ccusageTokens struct {
	Input     int64 `json:"inputTokens"`
	Output    int64 `json:"outputTokens"`
	CacheRead int64 `json:"cacheReadTokens"`
	Total     int64 `json:"totalTokens"`
}

// assertCcusageTotals holds each chat session's tokens, as the mapped
// events carry them, to `ccusage gemini session`, run over a scratch home
// with every chat under ~/.gemini/tmp/<project>/chats/.
func assertCcusageTotals(t *testing.T, chats []string) {
	t.Helper()
	got := map[string]ccusageTokens{}
	home := map[string]string{}
	for i, path := range chats {
		chat := loadChat(t, path)
		r := MapChat(Context{LogFile: path, Sequence: 1}, chat, nil, true)
		s := got[chat.SessionID]
		for i := range r.Events {
			ev := &r.Events[i]
			cached := agentevent.Value(ev.TokensCached)
			s.Input += agentevent.Value(ev.TokensInput) - cached
			s.CacheRead += cached
			s.Output += agentevent.Value(ev.TokensOutput) - agentevent.Value(ev.TokensThinking)
			s.Total += agentevent.Value(ev.TokensTotal)
		}
		got[chat.SessionID] = s
		home[filepath.Join(".gemini", "tmp", fmt.Sprintf("p%d", i), "chats", filepath.Base(path))] = path
	}
	type session struct {
		SessionID string `json:"sessionId"`
		ccusageTokens
	}
	oracle := map[string]ccusageTokens{}
	for _, s := range testenv.CcusageSessions[session](t, testenv.CcusageHome(t, home), "gemini") {
		oracle[s.SessionID] = s.ccusageTokens
	}
	for id, g := range got {
		if g == (ccusageTokens{}) {
			assert.NotContainsf(t, oracle, id, "session %s: ccusage counts tokens the events do not", id)
			continue
		}
		assert.Equalf(t, oracle[id], g, "session %s: token totals differ from ccusage", id)
	}
	for id := range oracle {
		assert.Containsf(t, got, id, "ccusage reports session %s, which no chat holds", id)
	}
	t.Logf("%d Gemini chat sessions compared with ccusage", len(got))
}
