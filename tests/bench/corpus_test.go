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

// corpusSource is one Claude Code session file of the corpus, and its path below the corpus:
// <root>/<case>/…, root the fixture root it comes from.
type corpusSource struct{ path, rel string }

// sourceFiles are the Claude Code session files the corpus is made of: those of every fixture root
// (testenv.FixtureRoots) when the fixtures are present (more variety), else the repository's
// testdata.
func sourceFiles(tb testing.TB) []corpusSource {
	var dirs []string
	for _, root := range testenv.FixtureRoots(tb) {
		dirs = append(dirs, filepath.Join(root, "claude_code"))
	}
	var out []corpusSource
	for _, dir := range dirs {
		out = append(out, jsonlBelow(dir, filepath.Base(filepath.Dir(dir)))...)
	}
	if len(out) == 0 {
		out = jsonlBelow(filepath.Join(repoRoot(tb), "testdata", "claude_code"), "testdata")
	}
	if len(out) == 0 {
		tb.Fatal("no Claude Code session files found for the benchmark corpus")
	}
	return out
}

// jsonlBelow lists the .jsonl files below dir, in path order, with prefix/<path below dir>.
func jsonlBelow(dir, prefix string) []corpusSource {
	var out []corpusSource
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, corpusSource{path: p, rel: filepath.ToSlash(filepath.Join(prefix, rel))})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out
}

// buildCorpus replicates the source files until they hold at least targetBytes. Each replica gets
// its own session id (and file path), so downstream every replica is a distinct session. A replica
// holds every source file, in the same order: replica-major, then source by source.
func buildCorpus(tb testing.TB, targetBytes int64) ([]sessionFile, int64) {
	type source struct {
		rel, sid string
		data     []byte
	}
	var srcs []source
	for _, s := range sourceFiles(tb) {
		b, err := os.ReadFile(s.path)
		if err != nil {
			tb.Fatal(err)
		}
		srcs = append(srcs, source{rel: s.rel, sid: testenv.ClaudeSessionID(b), data: b})
	}
	var out []sessionFile
	var total int64
	for r := 0; total < targetBytes; r++ {
		for _, s := range srcs {
			data, rel := s.data, s.rel
			if s.sid != "" {
				id := testenv.ReplicaID(s.sid, r)
				data = bytes.ReplaceAll(data, []byte(s.sid), []byte(id))
				rel = strings.ReplaceAll(rel, s.sid, id)
			}
			f := sessionFile{path: fmt.Sprintf("/bench/r%d/%s", r, rel), size: int64(len(data))}
			for line := range bytes.SplitSeq(data, []byte{'\n'}) {
				if len(line) > 0 {
					f.lines = append(f.lines, line)
				}
			}
			out = append(out, f)
			total += f.size
		}
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
