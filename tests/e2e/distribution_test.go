// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/testhome"
)

// readmeManifest is the ocb manifest the recipe docs/recipes/own-collector.md shows: the fenced
// block that starts with its dist: section.
func readmeManifest(t *testing.T, root string) string {
	t.Helper()
	recipe, err := os.ReadFile(filepath.Join(root, "docs", "recipes", "own-collector.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```yaml\n(dist:\n  name: otelcol-team\n.*?)```").FindSubmatch(recipe) //nolint:gocritic // regexpSimplify: the recipe's text, spaced as written
	require.NotNil(t, m, "docs/recipes/own-collector.md has no ocb manifest for otelcol-team")
	return string(m[1])
}

// TestUserDistribution builds the distribution a user would build with ocb from the recipe's
// manifest — agentotel's receiver and connector plus only otlp_grpc and file_storage, agentotel
// from this checkout through `replaces` — then runs it on the Claude testdata and checks that
// every turn reaches a real Jaeger.
func TestUserDistribution(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds a distribution with ocb (skipped with -short)")
	}
	root := repoRoot(t)
	manifest := readmeManifest(t, root)
	out := t.TempDir()
	// The two things a user adapts: where the binary goes and where the checkout is.
	require.Contains(t, manifest, "output_path: ./_build\n")
	require.Contains(t, manifest, "github.com/agentotel/agentotel => /path/to/agentotel\n")
	manifest = strings.Replace(manifest, "output_path: ./_build\n", "output_path: "+out+"\n", 1)
	manifest = strings.Replace(manifest, "=> /path/to/agentotel\n", "=> "+root+"\n", 1)
	manifestPath := filepath.Join(t.TempDir(), "builder-config.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(manifest), 0o600))

	ocb := exec.Command("make", "-s", "ocb")
	ocb.Dir = root
	ocbOut, err := ocb.Output()
	require.NoError(t, err, "make ocb")
	lines := strings.Split(strings.TrimSpace(string(ocbOut)), "\n")
	build := exec.Command(lines[len(lines)-1], "--config", manifestPath) //nolint:gosec // G204: the ocb that `make ocb` installed
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	log, err := build.CombinedOutput()
	require.NoError(t, err, "ocb: %s", log)
	bin := filepath.Join(out, "otelcol-team")

	// Exactly the components the manifest names.
	comps, err := exec.Command(bin, "components").Output()
	require.NoError(t, err)
	for _, want := range []string{"name: agent_log", "name: agent_span", "name: otlp_grpc", "name: file_storage"} {
		assert.Contains(t, string(comps), want)
	}
	for _, absent := range []string{"name: debug", "name: batch", "name: otlp\n", "name: agent_event"} {
		assert.NotContains(t, string(comps), absent)
	}

	// Run it as the user would, on a config with only those components.
	j := startJaeger(t)
	exp := expectedFromGoldens(t, root)
	want := 0
	for _, n := range exp.turns {
		want += n
	}
	home := t.TempDir()
	cases, err := filepath.Glob(filepath.Join(root, "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	sort.Strings(cases)
	for _, c := range cases {
		dir := filepath.Dir(c)
		copyTree(t, dir, filepath.Join(home, ".claude", "projects", "-team-"+filepath.Base(dir)),
			func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
	}
	config := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(config, []byte(fmt.Sprintf(`extensions:
  file_storage:
    directory: %s
    create_directory: true
receivers:
  agent_log:
    storage: file_storage
connectors:
  agent_span:
    storage: file_storage
exporters:
  otlp_grpc:
    endpoint: 127.0.0.1:%d
    tls:
      insecure: true
service:
  extensions: [file_storage]
  pipelines:
    logs:
      receivers: [agent_log]
      exporters: [agent_span]
    traces:
      receivers: [agent_span]
      exporters: [otlp_grpc]
  telemetry:
    metrics:
      level: none
`, filepath.Join(t.TempDir(), "state"), j.otlpGRPC)), 0o600))
	p := start(t, "otelcol-team", bin, testhome.Env(home), "--config", config)

	waitFor(t, 90*time.Second, fmt.Sprintf("%d claude-code turns in Jaeger", want), func() (bool, string) {
		if p.Exited() {
			return true, "exited"
		}
		perSession := map[string]int{}
		for _, tr := range j.traces(t, "claude-code") {
			for _, sp := range tr.Spans {
				if sp.parent() == "" && sp.OperationName == "invoke_agent claude-code" {
					perSession[sp.tagString("gen_ai.conversation.id")]++
				}
			}
		}
		return assert.ObjectsAreEqual(exp.turns, perSession), fmt.Sprintf("turns per session %v, want %v", perSession, exp.turns)
	})
	require.False(t, p.Exited(), "the distribution stopped: %s", p.LogText())
}
