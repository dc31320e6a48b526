// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package homeguard proves that the tests never read the agents' folders of
// whoever runs them.
package homeguard

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/testhome"
)

// guarded are the packages whose tests resolve the agents' default
// locations: the receiver (its lifecycle tests start it with the defaults),
// the fidelity check, and the exporter (it refuses the agents' folders).
var guarded = []string{"./receiver/agentlogreceiver/...", "./cmd/agentcheck/", "./exporter/agenteventexporter/"}

// stamp is the access time given to every file and folder of the home
// laid out: far before their modification time, so that the file system
// records any read of them (relatime updates an access time older than the
// modification time).
var stamp = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// TestTestsNeverReadTheRealHome runs the guarded packages' tests with HOME
// at a home that holds every registered agent's folders, each with its
// files, and fails naming every one of them the tests read or listed. Each
// guarded package sandboxes its tests (testhome.Sandbox), so none should be.
func TestTestsNeverReadTheRealHome(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the guarded packages' tests once more")
	}
	if os.Getenv("AGENTOTEL_HOMEGUARD_CHILD") != "" {
		t.Skip("inside the guard's own run")
	}
	home := t.TempDir()
	env := agents.Env{Home: home, Getenv: func(string) string { return "" }}
	for _, d := range agents.All() {
		for _, dir := range d.KnownFolders(env) {
			for _, p := range d.Include(dir) {
				for _, alt := range alternatives(p) {
					layOut(t, dir, alt)
				}
			}
			if d.Reader.Database != "" {
				layOut(t, dir, filepath.Join(dir, d.Reader.Database))
				layOut(t, dir, filepath.Join(dir, "storage", "session", "*", "*.json"))
			}
		}
	}
	if !recordsAccess(t, home) {
		t.Skip("the file system of the temporary folder does not record access times")
	}
	laidOut := stampAll(t, home)

	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), "go", append([]string{"test", "-short", "-count=1"}, guarded...)...) //nolint:gosec // G204: the module's own packages
	cmd.Dir = root
	cmd.Env = append(append(childEnv(t), testhome.Env(home)...), "AGENTOTEL_HOMEGUARD_CHILD=1", "GOTELEMETRY=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The guarded tests' own failures are theirs to report, in their own run of the suite (under
	// the load of a whole suite, a timing test may fail here alone); what the guard needs is
	// that they ran.
	if err := cmd.Run(); err != nil {
		require.NotContains(t, out.String(), "[build failed]", "the guarded tests did not build")
		require.NotContains(t, out.String(), "[setup failed]", "the guarded tests did not build")
		t.Logf("the guarded tests failed (%v); their own run reports why:\n%s", err, out.String())
	}

	var read []string
	for _, p := range laidOut {
		if p != home && accessed(t, p) {
			rel, _ := filepath.Rel(home, p)
			read = append(read, "~/"+rel)
		}
	}
	require.Empty(t, read, "tests of %s read these agents' folders of the home they ran with", strings.Join(guarded, " "))
}

// layOut makes the folders of an include pattern below dir, as far as the
// pattern names them, with a file where it names files.
func layOut(t *testing.T, dir, pattern string) {
	t.Helper()
	rel, err := filepath.Rel(dir, pattern)
	require.NoError(t, err)
	at := dir
	require.NoError(t, os.MkdirAll(at, 0o755))
	for seg := range strings.SplitSeq(rel, string(filepath.Separator)) {
		if seg == "." {
			break
		}
		name := strings.NewReplacer("**", "deep", "*", "x", "?", "x").Replace(seg)
		at = filepath.Join(at, name)
		if strings.Contains(name, ".") {
			require.NoError(t, os.WriteFile(at, []byte("{}\n"), 0o600))
			return
		}
		require.NoError(t, os.MkdirAll(at, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(at, "sentinel"), []byte("{}\n"), 0o600))
}

// alternatives are the patterns a pattern's {a,b,…} groups stand for (not
// nested), so that a file is laid out for each.
func alternatives(pattern string) []string {
	i := strings.IndexByte(pattern, '{')
	j := strings.IndexByte(pattern[max(i, 0):], '}')
	if i < 0 || j < 0 {
		return []string{pattern}
	}
	var out []string
	for alt := range strings.SplitSeq(pattern[i+1:i+j], ",") {
		out = append(out, alternatives(pattern[:i]+alt+pattern[i+j+1:])...)
	}
	return out
}

// recordsAccess tells whether reading a file below dir changes its access
// time.
func recordsAccess(t *testing.T, dir string) bool {
	t.Helper()
	p := filepath.Join(dir, "probe")
	require.NoError(t, os.WriteFile(p, []byte("probe"), 0o600))
	require.NoError(t, os.Chtimes(p, stamp, time.Now()))
	_, err := os.ReadFile(p)
	require.NoError(t, err)
	seen := accessed(t, p)
	require.NoError(t, os.Remove(p))
	return seen
}

// stampAll stamps every file and folder below dir, and returns them.
func stampAll(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}))
	now := time.Now()
	for _, p := range paths {
		require.NoError(t, os.Chtimes(p, stamp, now))
	}
	return paths
}

// accessed tells whether p was read since stampAll.
func accessed(t *testing.T, p string) bool {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(p, &st))
	return time.Unix(st.Atim.Unix()).After(stamp.Add(time.Hour))
}

// childEnv is this process's environment less what testhome.Env sets, with
// the Go tool's folders and agentotel's tool cache where they are now
// (they default to below HOME).
func childEnv(t *testing.T) []string {
	t.Helper()
	drop := map[string]bool{"HOME": true}
	for _, v := range agents.LocationVars() {
		drop[v] = true
	}
	out, err := exec.CommandContext(t.Context(), "go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	require.NoError(t, err)
	var env []string
	for i, v := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k := []string{"GOCACHE", "GOMODCACHE", "GOPATH"}[i]
		drop[k] = true
		env = append(env, k+"="+v)
	}
	if os.Getenv("AGENTOTEL_CACHE") == "" {
		if h, err := os.UserHomeDir(); err == nil {
			env = append(env, "AGENTOTEL_CACHE="+filepath.Join(h, ".cache", "agentotel"))
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return env
}
