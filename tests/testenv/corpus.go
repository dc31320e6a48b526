// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// ReplicaFile is one copy of a real session file whose session id was made unique.
type ReplicaFile struct {
	Replica int    // which copy of the source files (0, 1, …)
	Rel     string // path below the source directory, with the session id replaced
	Data    []byte
}

// Replicate copies the session files below dir that keep accepts until the copies hold at least
// targetBytes. In copy r, every occurrence of a file's session id (sessionID reads it from the
// file, "" for a file without one) is replaced, in the content and in the path, by ReplicaID(id,
// r): each copy is a session of its own. Copy 0 is changed too, so the corpus never collides with
// the fixtures themselves.
func Replicate(tb testing.TB, dir string, keep func(path string) bool, sessionID func(data []byte) string, targetBytes int64) ([]ReplicaFile, int64) {
	tb.Helper()
	type source struct {
		rel  string
		data []byte
		sid  string
	}
	var srcs []source
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !keep(p) {
			return err
		}
		b, err := os.ReadFile(p) //nolint:gosec // G122: dir is the fixture corpus, read in place
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		srcs = append(srcs, source{rel: rel, data: b, sid: sessionID(b)})
		return nil
	})
	if err != nil {
		tb.Fatalf("replicate %s: %v", dir, err)
	}
	if len(srcs) == 0 {
		tb.Fatalf("replicate %s: no session files", dir)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].rel < srcs[j].rel })
	var out []ReplicaFile
	var total int64
	for r := 0; total < targetBytes; r++ {
		for _, s := range srcs {
			data, rel := s.data, s.rel
			if s.sid != "" {
				id := ReplicaID(s.sid, r)
				data = bytes.ReplaceAll(data, []byte(s.sid), []byte(id))
				rel = strings.ReplaceAll(rel, s.sid, id)
			}
			out = append(out, ReplicaFile{Replica: r, Rel: rel, Data: data})
			total += int64(len(data))
		}
	}
	return out, total
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ReplicaID is the session id of copy r of session id: still a UUID when id is one (parsers that
// take the id from a file name look for a UUID), unique per (id, r).
func ReplicaID(id string, r int) string {
	if uuidRe.MatchString(id) {
		return fmt.Sprintf("%s%04x%08x", id[:24], r&0xffff, crc32.ChecksumIEEE([]byte(id)))
	}
	return fmt.Sprintf("%s-r%d", id, r)
}

// ClaudeSessionID is the session id of a Claude Code session file (its first "sessionId").
func ClaudeSessionID(data []byte) string {
	const key = `"sessionId":"`
	_, after, ok := bytes.Cut(data, []byte(key))
	if !ok {
		return ""
	}
	rest := after
	if j := bytes.IndexByte(rest, '"'); j > 0 {
		return string(rest[:j])
	}
	return ""
}
