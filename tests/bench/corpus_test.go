// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package bench measures agentotel's mapping path — vendor records → AgentEvents → spans — on a
// corpus made by replicating real session files to a chosen size (default 1 GB, env
// AGENTOTEL_BENCH_CORPUS_MB). Run it with `make bench`.
package bench

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentotel/agentotel/tests/testenv"
)

// sessionFile is one replicated session file, split into lines.
type sessionFile struct {
	path  string
	lines [][]byte
	size  int64
}

func repoRoot(tb testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// sourceFiles are the Claude Code session files the corpus is made of: the shared fixtures when
// present (more variety), else the repository's testdata.
func sourceFiles(tb testing.TB) (dir string, files []string) {
	root := repoRoot(tb)
	dirs := []string{filepath.Join(root, "..", "shared", "fixtures", "claude_code"), filepath.Join(root, "testdata", "claude_code")}
	if d := os.Getenv("AGENTOTEL_FIXTURES"); d != "" {
		dirs = append([]string{filepath.Join(d, "claude_code")}, dirs...)
	}
	for _, dir := range dirs {
		files = nil
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return nil
		})
		if len(files) > 0 {
			sort.Strings(files)
			return dir, files
		}
	}
	tb.Fatal("no Claude Code session files found for the benchmark corpus")
	return "", nil
}

// buildCorpus replicates the source files until they hold at least targetBytes. Each replica gets
// its own session id (and file path), so downstream every replica is a distinct session.
func buildCorpus(tb testing.TB, targetBytes int64) ([]sessionFile, int64) {
	dir, srcs := sourceFiles(tb)
	keep := map[string]bool{}
	for _, p := range srcs {
		keep[p] = true
	}
	replicas, total := testenv.Replicate(tb, dir, func(p string) bool { return keep[p] }, testenv.ClaudeSessionID, targetBytes)
	out := make([]sessionFile, 0, len(replicas))
	for _, r := range replicas {
		f := sessionFile{path: fmt.Sprintf("/bench/r%d/%s", r.Replica, r.Rel), size: int64(len(r.Data))}
		for _, line := range bytes.Split(r.Data, []byte{'\n'}) {
			if len(line) > 0 {
				f.lines = append(f.lines, line)
			}
		}
		out = append(out, f)
	}
	return out, total
}

func corpusTarget() int64 {
	mb := int64(1024)
	if v := os.Getenv("AGENTOTEL_BENCH_CORPUS_MB"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			mb = n
		}
	}
	return mb << 20
}
