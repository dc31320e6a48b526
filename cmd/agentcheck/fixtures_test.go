// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// knownConnectorIssues are the problems the check finds over the fixtures
// today that belong to the agent_span connector (issue 10, being fixed
// there), each an agent and the text its failure line starts with. Every
// other problem fails the test; one listed here that no longer shows is
// logged, to be taken off this list. Nothing on the parser side (unparsed
// records, duplicate ids, event tokens against ccusage) may be listed.
var knownConnectorIssues = []struct{ agent, prefix, why string }{
	{"claude-code", "session 7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9: events", "the usage of the flat warmup agents (agent-0c4c3cf8, agent-90fa40b6: no spawning call) is in no chat span"},
	{"codex", "session 019b5669-8da8-7bc3-bed8-e1c1b805dad5: events", "a /review rollout whose parent (the anchor) is not in the data never becomes spans"},
}

// TestFixtures runs the check the way `make check` does over
// ../shared/fixtures with the built collector ($AGENTOTEL_COLLECTOR, set by
// `make test`) and ccusage.
func TestFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the built collector")
	}
	collector := os.Getenv("AGENTOTEL_COLLECTOR")
	if collector == "" {
		t.Skip("AGENTOTEL_COLLECTOR not set (make test sets it to the built collector)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	fixtures := os.Getenv("AGENTOTEL_FIXTURES")
	if fixtures == "" {
		fixtures = filepath.Join(root, "..", "shared", "fixtures")
	}
	if _, err := os.Stat(fixtures); err != nil {
		t.Skipf("fixture corpus %s absent", fixtures)
	}
	out, err := exec.CommandContext(t.Context(), "bash", filepath.Join(root, "scripts", "ensure-ccusage.sh")).Output()
	require.NoError(t, err, "scripts/ensure-ccusage.sh could not provide ccusage")

	var stdout, stderr bytes.Buffer
	code := run([]string{"-collector", collector, "-ccusage", strings.TrimSpace(string(out)), "-fixtures", fixtures}, &stdout, &stderr)
	t.Log(stdout.String())
	require.NotEqual(t, 2, code, "the check could not run: %s", stderr.String())

	seen := make([]bool, len(knownConnectorIssues))
	for _, line := range strings.Split(stdout.String(), "\n") {
		if !strings.HasPrefix(line, "  ") || !strings.Contains(line, ": ") {
			continue
		}
		line = strings.TrimSpace(line)
		known := false
		for i, k := range knownConnectorIssues {
			agent, rest, _ := strings.Cut(line, ": ")
			if agent != k.agent || !strings.HasPrefix(rest, k.prefix) {
				continue
			}
			known, seen[i] = true, true
		}
		assert.True(t, known, "problem: %s", line)
	}
	for i, k := range knownConnectorIssues {
		if !seen[i] {
			t.Logf("known connector issue no longer seen (take it off knownConnectorIssues): %s %s (%s)", k.agent, k.prefix, k.why)
		}
	}
	if code == 0 {
		t.Log("make check is clean over the fixtures")
	}
}

// TestHomeIsReadOnly: `make check HOME_DIR=…` writes nothing into the home
// it reads (state and outputs go to a temporary directory).
func TestHomeIsReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the built collector")
	}
	collector := os.Getenv("AGENTOTEL_COLLECTOR")
	if collector == "" {
		t.Skip("AGENTOTEL_COLLECTOR not set (make test sets it to the built collector)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	home := t.TempDir()
	_, err = stageFixtures(filepath.Join(root, "testdata"), home) // the repository's own testdata, as a home
	require.NoError(t, err)
	listing := func() map[string]string {
		files := map[string]string{}
		require.NoError(t, filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			files[p] = info.Mode().String() + " " + info.ModTime().String() + " " + strconv.FormatInt(info.Size(), 10)
			return nil
		}))
		return files
	}
	before := listing()
	require.NotEmpty(t, before)
	var stdout, stderr bytes.Buffer
	code := run([]string{"-collector", collector, "-home", home, "-quiet", "2s"}, &stdout, &stderr)
	require.NotEqual(t, 2, code, "the check could not run: %s", stderr.String())
	assert.Contains(t, stdout.String(), "== claude-code")
	assert.Equal(t, before, listing(), "the home is left as it was")
}
