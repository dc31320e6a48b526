// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// geminiTestdataHome is a ~/.gemini-like tree holding every chat and
// logs.json of the Gemini testdata cases (each case's tmp/<project>
// directory), plus one logs.json whose only session has a chat: its entries
// map to nothing (the chat's prompts are emitted from the chat), so no
// delivery ever names it.
func geminiTestdataHome(t *testing.T) (home string, files int) {
	t.Helper()
	home = t.TempDir()
	projects, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "gemini", "*", "tmp", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, projects)
	for i, p := range projects {
		err := filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(p, path)
			require.NoError(t, err)
			b, err := os.ReadFile(path) //nolint:gosec // G122: the repository's testdata, read in place
			require.NoError(t, err)
			dst := filepath.Join(home, "tmp", filepath.Base(p)+"-"+string(rune('a'+i)), rel)
			require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
			require.NoError(t, os.WriteFile(dst, b, 0o600)) //nolint:gosec // G703: the data written was read from a file; the path is the test's own
			files++
			return nil
		})
		require.NoError(t, err)
	}
	chat := filepath.Join(home, "tmp", "solo", "chats", "session-solo.json")
	writeChat(t, chat, "solo", gemUser("u1", "hello", 0), gemAnswer("g1", "hi", 0))
	testfiles.WriteFile(t, filepath.Join(home, "tmp", "solo", "logs.json"),
		`[{"sessionId":"solo","messageId":0,"type":"user","message":"hello","timestamp":"2026-04-20T10:00:00.000Z"}]`)
	// Settled: older than the settle delay.
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{chat, filepath.Join(home, "tmp", "solo", "logs.json")} {
		require.NoError(t, os.Chtimes(f, old, old))
	}
	return home, files + 2
}

// TestGeminiBackfillLogsHistoryRead: a snapshot source (Gemini) says its
// history has been read once every file found at start has been read —
// including files whose reading delivers nothing (a logs.json of sessions
// that have chats; on a restart, every file). The progress ticker, which
// would take a quiet agent as done, does not run during the test: the line
// must come from the reading itself.
func TestGeminiBackfillLogsHistoryRead(t *testing.T) {
	home, files := geminiTestdataHome(t)
	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := geminiConfig(t, home)
	cfg.Storage = &ext.ID

	summary := regexp.MustCompile(`^gemini: history read in \S+: (\d+) sessions?, `)
	for _, run := range []string{"first run", "restart: nothing new to deliver"} {
		h := newHarness(t, cfg, host, withProgressInterval(time.Hour))
		h.start()
		found := h.logs.FilterMessageSnippet("gemini: found").All()
		require.Len(t, found, 1, run)
		assert.Equal(t, int64(files), found[0].ContextMap()["files"], run)
		require.Eventually(t, func() bool { return h.logs.FilterMessageSnippet("gemini: history read in").Len() == 1 },
			20*time.Second, 10*time.Millisecond, "%s: waiting for the summary line; got %v", run, messages(h.logs))
		line := h.logs.FilterMessageSnippet("gemini: history read in").All()[0]
		assert.Regexp(t, summary, line.Message, run)
		if run == "first run" {
			assert.Positive(t, line.ContextMap()["sessions"], run)
		} else {
			assert.Empty(t, h.events(), "%s: nothing is emitted twice", run)
		}
		h.stop()
		assert.Zero(t, h.logs.FilterMessageSnippet("gemini: stopped with").Len(), "%s: %v", run, messages(h.logs))
	}
}
