// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestCorpusReplicas checks what the benchmarks measure: the corpus reaches its size, and every
// replica of a session file is a session of its own (its own session id and path). The size asked
// for is one byte more than one replica, so that there are two whatever the fixtures weigh.
func TestCorpusReplicas(t *testing.T) {
	var one int64
	for _, s := range sourceFiles(t) {
		info, err := os.Stat(s.path)
		if err != nil {
			t.Fatal(err)
		}
		one += info.Size()
	}
	target := one + 1
	files, total := buildCorpus(t, target)
	if total < target {
		t.Fatalf("corpus of %d bytes, want at least %d", total, target)
	}
	paths := map[string]bool{}
	for _, f := range files {
		if paths[f.path] {
			t.Fatalf("path %s used twice", f.path)
		}
		paths[f.path] = true
		var size int64
		for _, l := range f.lines {
			size += int64(len(l)) + 1
			if bytes.IndexByte(l, '\n') >= 0 {
				t.Fatalf("%s: a line holds a newline", f.path)
			}
		}
		if size > f.size+1 || size < f.size-int64(len(f.lines)) {
			t.Fatalf("%s: lines add up to %d bytes, file has %d", f.path, size, f.size)
		}
	}
	// Each replica holds every source file once: compare every file of replica 0 with its copy
	// in replica 1 — same records, other session ids.
	perReplica := 0
	for _, f := range files {
		if strings.HasPrefix(f.path, "/bench/r0/") {
			perReplica++
		}
	}
	if perReplica == 0 || len(files) < 2*perReplica {
		t.Fatalf("%d files, %d per replica: want at least two replicas", len(files), perReplica)
	}
	for i := range perReplica {
		a, b := files[i], files[i+perReplica]
		if len(a.lines) != len(b.lines) {
			t.Fatalf("%s and %s differ in length", a.path, b.path)
		}
		if bytes.Contains(a.lines[len(a.lines)-1], []byte(`"sessionId"`)) && bytes.Equal(a.lines[len(a.lines)-1], b.lines[len(b.lines)-1]) {
			t.Fatalf("%s and %s share their session id", a.path, b.path)
		}
	}
}
