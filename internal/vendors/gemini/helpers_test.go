// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// loadChat decodes a .json or .jsonl chat file, failing the test on any
// decode error.
func loadChat(tb testing.TB, path string) Chat {
	tb.Helper()
	b, err := os.ReadFile(path)
	require.NoError(tb, err)
	if strings.HasSuffix(path, ".jsonl") {
		c, errs := DecodeChatJSONL(b)
		require.Empty(tb, errs, path)
		return c
	}
	c, err := DecodeChat(b)
	require.NoError(tb, err, path)
	return c
}

// mapDir maps a ~/.gemini-like tree the way a reader does once every file
// is settled: top-level chats first, then nested (subagent and
// skill-extraction) chats, then logs.json files for the sessions no chat
// holds. One emitted set per chat session id (so a copy of a chat under
// another directory adds nothing) and one Sequence counter per thread.
// LogFile is the path relative to dir.
func mapDir(tb testing.TB, dir string) []agentevent.Event {
	var top, nested, logs []string
	require.NoError(tb, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Name() == "logs.json":
			logs = append(logs, rel)
		case strings.HasSuffix(rel, ".json") || strings.HasSuffix(rel, ".jsonl"):
			if !strings.Contains(rel, "chats/") {
				return nil
			}
			if parent, _ := Placement(rel); parent != "" {
				nested = append(nested, rel)
			} else {
				top = append(top, rel)
			}
		}
		return nil
	}))
	slices.Sort(top)
	slices.Sort(nested)
	slices.Sort(logs)
	emitted := map[string]Watermark{}
	seq := map[string]int64{}
	chats := map[string]bool{}
	var events []agentevent.Event
	for _, rel := range append(top, nested...) {
		chat := loadChat(tb, filepath.Join(dir, rel))
		parent, skill := Placement(rel)
		c := Context{LogFile: rel, ParentSessionID: parent, SkillExtraction: skill}
		thread := ThreadKey(c, chat)
		if parent == "" {
			chats[chat.SessionID] = true
		}
		if emitted[thread] == nil {
			emitted[thread] = Watermark{}
		}
		c.Sequence = seq[thread] + 1
		r := MapChat(c, chat, emitted[thread], true)
		require.Empty(tb, r.Held)
		emitted[thread].Add(r.Emitted)
		seq[thread] += int64(len(r.Events))
		events = append(events, r.Events...)
	}
	logEmitted := Watermark{}
	for _, rel := range logs {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		require.NoError(tb, err)
		entries, skipped, err := DecodeLogs(b)
		require.NoError(tb, err)
		require.Zero(tb, skipped)
		r := MapLogs(Context{LogFile: rel, Sequence: 1}, entries, func(id string) bool { return chats[id] }, logEmitted, time.Time{})
		logEmitted.Add(r.Emitted)
		events = append(events, r.Events...)
	}
	return events
}
