// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// corpusPlacement is where a flat-named corpus fixture lived under
// ~/.gemini (SOURCES.md): only the nesting of a subagent chat matters.
var corpusPlacement = map[string]string{
	"chat_2026-04_subagent_chat.json": "tmp/idaho-vault/chats/b1f31681-4b57-4337-8bc5-ac73580f752a/tl63m8.json",
}

// TestCorpus maps every Gemini fixture of ../shared/fixtures/gemini (or
// $AGENTOTEL_FIXTURES/gemini), read in place: every message mapped, zero
// unparsed, zero Validate violations, every tool call paired, and token
// sums equal to the messages' own tokens (input incl. cached, output incl.
// thoughts, total = input + output + thoughts + tool as the CLI records it).
// logs.json: every entry decodes, and mapped alone (no chat) it validates.
func TestCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "gemini", func(t *testing.T, dir string) {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		chats := 0
		for _, e := range entries {
			name := e.Name()
			path := filepath.Join(dir, name)
			switch {
			case strings.HasPrefix(name, "chat_") && strings.HasSuffix(name, ".json"):
				chats++
				t.Run(name, func(t *testing.T) { corpusChat(t, path, name) })
			case strings.HasPrefix(name, "logs_") && strings.HasSuffix(name, ".json"):
				t.Run(name, func(t *testing.T) { corpusLogs(t, path, name) })
			case e.IsDir():
				// A folder of JSONL chats (one line per write: upserts
				// and $set lines), as the CLI writes them since v0.39.
				files, err := filepath.Glob(filepath.Join(path, "*.jsonl"))
				require.NoError(t, err)
				for _, f := range files {
					chats++
					rel := filepath.Join(name, filepath.Base(f))
					t.Run(rel, func(t *testing.T) { corpusChat(t, f, rel) })
				}
			}
		}
		require.NotZero(t, chats, "no Gemini chat fixture in %s", dir)
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
	for _, m := range chat.Messages {
		require.Contains(t, r.Emitted, m.ID)
		keys += 1 + 2*len(m.ToolCalls) // the message, each call and each result
	}
	if chat.Summary != "" {
		keys++
	}
	require.Len(t, r.Emitted, keys)
	require.NotEmpty(t, r.Events)
	for _, ev := range r.Events {
		require.Empty(t, ev.Unparsed, "event %s: %v", ev.EventID, ev.Attributes)
		require.Equal(t, agentevent.SourceGemini, ev.Source)
		if parent != "" {
			// A subagent chat keeps its own session id and names its parent.
			require.Equal(t, chat.SessionID, ev.SessionID)
			require.Equal(t, parent, ev.Attributes[agentevent.AttrParentSessionID])
			require.Equal(t, parent, agentevent.TreeSession(&ev))
			require.Equal(t, chat.SessionID, ev.AgentID)
			require.Equal(t, agentevent.SubagentLinkTurn, ev.Attributes[agentevent.AttrSubagentLink])
		}
	}
	report := agentevent.Validate(r.Events)
	require.Empty(t, report.Violations)
	require.Empty(t, report.OpenToolCalls)

	var want, got tokenSums
	calls, results := 0, 0
	for _, m := range chat.Messages {
		calls += len(m.ToolCalls)
		if t := m.Tokens; t != nil {
			want.input += t.Input
			want.output += t.Output + t.Thoughts
			want.cached += t.Cached
			want.thinking += t.Thoughts
			want.total += t.Total
		}
	}
	for _, ev := range r.Events {
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
