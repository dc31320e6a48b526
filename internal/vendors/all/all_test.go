// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package all

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

var update = flag.Bool("update", false, "rewrite the README's agent table from the registry")

// TestServiceNames: the service.name of every agent read before the
// registry stays what it was (dashboards, alert rules and span_metrics
// labels key on it); every agent has one of its own.
func TestServiceNames(t *testing.T) {
	for src, name := range map[agentevent.Source]string{
		"claude_code": "claude-code", "codex": "codex", "gemini": "gemini-cli", "opencode": "opencode",
		"pi": "pi", "copilot_cli": "copilot-cli", "amp": "amp",
	} {
		d := agents.Lookup(src)
		require.NotNil(t, d, src)
		assert.Equal(t, name, d.Service, src)
		assert.Equal(t, name, src.ServiceName(), src)
		assert.Equal(t, src, agentevent.SourceFromServiceName(name), src)
	}
	for i, field := range []func(d *agents.Descriptor) string{
		func(d *agents.Descriptor) string { return d.Service },
		func(d *agents.Descriptor) string { return d.Display },
		func(d *agents.Descriptor) string { return d.Fixtures.Dir },
	} {
		seen := map[string]agentevent.Source{}
		for _, d := range agents.All() {
			v := field(d)
			other, dup := seen[v]
			assert.False(t, dup, "field %d: %s and %s share %q", i, d.Source, other, v)
			seen[v] = d.Source
		}
	}
}

// TestDescriptors: every registered descriptor is usable by every part
// that ranges over the registry.
func TestDescriptors(t *testing.T) {
	require.NotEmpty(t, agents.All())
	env := agents.Env{Home: "/home/dev", Getenv: func(string) string { return "" }}
	for _, d := range agents.All() {
		dirs, err := d.DataFolders(env)
		require.NoError(t, err, d.Source)
		for _, dir := range dirs {
			for _, p := range d.Include(dir) {
				assert.True(t, p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)),
					"%s: pattern %s outside its folder %s", d.Source, p, dir)
			}
		}
		assert.NotEmpty(t, d.Color, d.Source)
		assert.NotEmpty(t, d.Doc.Versions, d.Source)
		assert.NotNil(t, d.Fixtures.Stage, "%s: its fixtures cannot be staged", d.Source)
		if d.Ccusage != nil {
			assert.NotEmpty(t, d.Ccusage.Command, d.Source)
		}
		if n := d.Native; n != nil {
			assert.True(t, n.NewMapper != nil || n.Normalize != nil, "%s: native without a mapping", d.Source)
			assert.Positive(t, len(n.Services)+len(n.ServicePrefixes)+len(n.ScopePrefixes), "%s: native telemetry nothing recognizes", d.Source)
		}
		if d.Fixtures.Keep != nil || d.Fixtures.Place != nil {
			assert.True(t, d.Fixtures.Keep != nil && d.Fixtures.Place != nil, "%s: Keep and Place go together", d.Source)
			assert.Positive(t, d.Fixtures.Share, "%s: a generated history copies it, with no share", d.Source)
		}
	}
}

const (
	tableBegin = "<!-- agents table: generated from the registry (internal/vendors/all, go test -update) -->"
	tableEnd   = "<!-- end of agents table -->"
)

// readmeTable is the README's table of agents, rendered from the registry.
func readmeTable() string {
	var b strings.Builder
	b.WriteString("| agent | versions seen | read by default | native OTLP (`agent_native`) |\n|---|---|---|---|\n")
	for _, d := range agents.All() {
		native := d.Doc.NativeOTLP
		if native == "" {
			native = "—"
		}
		b.WriteString("| " + d.Display + " | " + d.Doc.Versions + " | " + d.DocLocations() + " | " + native + " |\n")
	}
	return b.String()
}

// TestReadmeAgentTable: the README's table of supported agents is the
// registry's (go test -update rewrites it).
func TestReadmeAgentTable(t *testing.T) {
	path := filepath.Join("..", "..", "..", "README.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	require.True(t, i >= 0 && j > i, "the README has no generated agent table (%s … %s)", tableBegin, tableEnd)
	want := s[:i] + tableBegin + "\n" + readmeTable() + s[j:]
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o600)) //nolint:gosec // G703: the repository's README, rewritten on purpose
		return
	}
	assert.Equal(t, want, s, "the README's agent table is not the registry's: go test ./internal/vendors/all -update")
}

// TestAgentsDoc: docs/agents.md has one row per registered agent, in the
// registry's order, naming it, linking its parser's README, and giving the
// versions its descriptor gives, with what its files hold and lack.
func TestAgentsDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "agents.md"))
	require.NoError(t, err)
	var rows []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "| [") {
			rows = append(rows, line)
		}
	}
	all := agents.All()
	require.Len(t, rows, len(all), "docs/agents.md: one row per registered agent")
	for i, d := range all {
		cells := strings.Split(strings.Trim(rows[i], "| "), " | ")
		require.Len(t, cells, 4, rows[i])
		assert.True(t, strings.HasPrefix(cells[0], "["+d.Display+"](../internal/vendors/"), "row %d: %s", i, cells[0])
		link := strings.TrimSuffix(strings.SplitN(cells[0], "](", 2)[1], ")")
		_, err := os.Stat(filepath.Join("..", "..", "..", "docs", link))
		assert.NoError(t, err, "%s: its parser README", d.Source)
		assert.Equal(t, d.Doc.Versions, cells[1], d.Source)
		assert.NotEmpty(t, strings.TrimSpace(cells[2]), "%s: where it is read", d.Source)
		assert.NotEmpty(t, strings.TrimSpace(cells[3]), "%s: what its files hold and lack", d.Source)
	}
}

// notYetRead are the folders of the fixture corpus whose agents are not
// registered yet: their tests skip them by name until the agent's package
// reads them.
var notYetRead = map[string]string{
	"cline": "Cline and Roo Code: not read yet",
	"crush": "Crush: not read yet",
}

// notAgents are the folders of a fixture corpus that hold no agent's files.
var notAgents = map[string]string{
	"native_otel": "the agents' own OTLP captures (agent_native)",
	"other":       "files of no agent agentotel reads",
}

// TestEveryCorpusFolderIsRead: every folder of every fixture root is a
// registered agent's (its Fixtures.Dir), so that the corpus tests, make
// check and the benchmark history read it; the folders of agents still to
// come are skipped by name.
func TestEveryCorpusFolderIsRead(t *testing.T) {
	roots := testenv.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, roots[0])
	dirs := map[string]bool{}
	for _, d := range agents.All() {
		dirs[d.Fixtures.Dir] = true
	}
	for _, root := range roots {
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		for _, e := range entries {
			name := e.Name()
			switch {
			case !e.IsDir() || dirs[name] || notAgents[name] != "":
			case notYetRead[name] != "":
				t.Logf("%s: skipped (%s)", filepath.Join(root, name), notYetRead[name])
			default:
				t.Errorf("%s: no registered agent reads this folder", filepath.Join(root, name))
			}
		}
	}
}
