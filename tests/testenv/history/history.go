// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package history writes a user's history of agent sessions for the benchmarks and the fault
// tests: copies of every registered agent's fixtures, laid out where the agent keeps them
// (agents.Fixtures), each copy with its ids made unique.
package history

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentotel/agentotel/internal/agents"
	// The agents whose fixtures a history copies.
	_ "github.com/agentotel/agentotel/internal/vendors/all"
	"github.com/agentotel/agentotel/tests/testenv"
)

// HistoryFile is one file of a written history.
type HistoryFile struct {
	Agent string // fixtures folder of the agent: claude_code, codex, copilot_cli, …
	Path  string // absolute
	Size  int64
	// Replica is the copy of the fixtures the file belongs to (0, 1, …).
	Replica int
	// Source is the fixture file it is a copy of; for OpenCode, the storage tree's file or the
	// database its objects were read from.
	Source string
	// Lines is the number of records of a line-delimited (JSONL) file, 0 for a whole-JSON file.
	Lines int64
}

// History is a user's history of agent sessions, written below Home where each agent keeps it.
type History struct {
	Home  string
	Files []HistoryFile
	Bytes int64
}

// JSONL are the line-delimited files of the history (what a line reader such as contrib's
// file_log can read): their paths' include patterns, bytes and records.
func (h History) JSONL() (include []string, bytes, lines int64) {
	seen := map[string]bool{}
	for _, f := range h.Files {
		if f.Lines == 0 {
			continue
		}
		bytes += f.Size
		lines += f.Lines
		if p := historyAgents()[f.Agent].JSONLInclude; p != "" && !seen[p] {
			seen[p] = true
			include = append(include, filepath.Join(h.Home, p))
		}
	}
	sort.Strings(include)
	return include, bytes, lines
}

// ByAgent sums the files and bytes of each agent.
func (h History) ByAgent() map[string][2]int64 {
	out := map[string][2]int64{}
	for _, f := range h.Files {
		v := out[f.Agent]
		v[0]++
		v[1] += f.Size
		out[f.Agent] = v
	}
	return out
}

// historyAgent says which fixtures of an agent make its history and where the agent keeps them:
// the agent's registered fixture layout (agents.Fixtures).
type historyAgent struct {
	d *agents.Descriptor
	agents.Fixtures
}

// historyAgents are the agents the agent_log receiver reads whose fixtures a history can copy,
// by fixtures folder.
var historyAgents = sync.OnceValue(func() map[string]historyAgent {
	out := map[string]historyAgent{}
	for _, d := range agents.All() {
		if d.Fixtures.Keep != nil && d.Fixtures.Place != nil {
			out[d.Fixtures.Dir] = historyAgent{d: d, Fixtures: d.Fixtures}
		}
	}
	return out
})

// HistoryAgents are the agents WriteHistory lays out, sorted.
func HistoryAgents() []string {
	var out []string
	for a := range historyAgents() {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// idRe finds the ids a copy must not share with another: UUIDs (sessions, records, messages) and
// the vendors' prefixed ids (Anthropic message and request ids, OpenCode sessions, messages and
// parts, tool calls).
// A prefixed id may hold underscores after its prefix (OpenCode ≥ 1.16's tool calls,
// call_00_<…>). Ids that only name something inside their session (Gemini's and Pi's tool-call
// and entry ids) are left as they are: each copy is a session of its own.
var idRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\b(?:msg|req|ses|prt|toolu|srvtoolu|tooluse|call|resp)_[0-9A-Za-z][0-9A-Za-z_]{7,}`)

// replicaOf makes copy r of an id: ReplicaID for a UUID (still a UUID), else the id with a
// suffix (ids that sorted before still sort the same).
func replicaOf(id []byte, r int) []byte {
	if len(id) == 36 && id[8] == '-' {
		return []byte(testenv.ReplicaID(string(id), r))
	}
	return append(append(append([]byte{}, id...), 'Z'), strconv.FormatInt(int64(r), 36)...)
}

// idTemplate is a text with the places of its ids found once, so that each copy is one pass.
type idTemplate struct {
	text []byte
	ids  [][2]int
}

// newIDTemplate finds idRe's ids in text, and every quoted occurrence of the extra ids.
func newIDTemplate(text []byte, extra ...string) idTemplate {
	t := idTemplate{text: text}
	for _, m := range idRe.FindAllIndex(text, -1) {
		t.ids = append(t.ids, [2]int{m[0], m[1]})
	}
	for _, id := range extra {
		if id == "" || idRe.MatchString(id) {
			continue
		}
		q := []byte(`"` + id + `"`)
		for off := 0; ; {
			i := bytes.Index(text[off:], q)
			if i < 0 {
				break
			}
			t.ids = append(t.ids, [2]int{off + i + 1, off + i + len(q) - 1})
			off += i + len(q)
		}
	}
	sort.Slice(t.ids, func(i, j int) bool { return t.ids[i][0] < t.ids[j][0] })
	return t
}

func (t idTemplate) copy(r int, buf []byte) []byte {
	buf = buf[:0]
	last := 0
	for _, m := range t.ids {
		buf = append(buf, t.text[last:m[0]]...)
		buf = append(buf, replicaOf(t.text[m[0]:m[1]], r)...)
		last = m[1]
	}
	return append(buf, t.text[last:]...)
}

// WriteHistory writes a history of about targetBytes below home by copying the sessions of
// every agent in roots (testenv.FixtureRoots: the shared fixtures and the newest real files), each agent
// up to its share of DefaultHistoryShares (at least one copy of each): copy r of every file with
// each session, message, request, part and tool-call id made unique (the same way in every file
// of the copy, so references between files hold), laid out where the agent keeps its sessions.
// Line-delimited files end with "\n" and hold no blank line (a reader never waits for an
// unterminated last line). Every file is dated two days ago, a finished history. Agents whose
// fixtures are absent are left out.
func WriteHistory(tb testing.TB, roots []string, home string, targetBytes int64) History {
	tb.Helper()
	return WriteHistoryShares(tb, roots, home, targetBytes, DefaultHistoryShares)
}

// DefaultHistoryShares is the mix of a history by agent (shares of its bytes, agents.Fixtures.Share):
// mostly Claude Code and Codex, as the histories users report, and every other agent the receiver
// reads.
var DefaultHistoryShares = func() map[string]float64 {
	out := map[string]float64{}
	for name, a := range historyAgents() {
		out[name] = a.Share
	}
	return out
}()

// WriteHistoryShares is WriteHistory with each agent's share of the bytes given (agents absent
// from shares, or with a share of 0, are left out).
func WriteHistoryShares(tb testing.TB, roots []string, home string, targetBytes int64, shares map[string]float64) History {
	tb.Helper()
	srcs := historySources(tb, roots)
	var total float64
	for a := range srcs.byAgent {
		total += shares[a]
	}
	return writeHistory(tb, srcs, home, func(agent string, r int, have int64) bool {
		if shares[agent] <= 0 {
			return false
		}
		// Copies of the agent's sessions until it holds its share (at least one copy).
		return r == 0 || have < int64(float64(targetBytes)*shares[agent]/total)
	})
}

// WriteHistoryCopies is WriteHistory with exactly copies copies of every agent's sessions,
// whatever their size.
func WriteHistoryCopies(tb testing.TB, roots []string, home string, copies int) History {
	tb.Helper()
	return writeHistory(tb, historySources(tb, roots), home, func(_ string, r int, _ int64) bool { return r < copies })
}

// historySource is one fixture file a history copies.
type historySource struct {
	agent  string
	origin string // the fixture file, or the OpenCode database
	rel    idTemplate
	data   idTemplate
	jsonl  bool
	lines  int64
}

type historySourceSet struct {
	srcs    []historySource
	byAgent map[string][]int // indexes into srcs, in HistoryAgents order
	agents  []string
}

// historySources reads the session files of every agent below every root.
func historySources(tb testing.TB, roots []string) historySourceSet {
	tb.Helper()
	set := historySourceSet{byAgent: map[string][]int{}}
	for _, name := range HistoryAgents() {
		a := historyAgents()[name]
		for _, root := range roots {
			dir := filepath.Join(root, name)
			dirs := []string{dir}
			origin := map[string]string{} // tree folder → the database it was made of
			if a.d.Reader.Kind == agents.OpenCodeStore {
				dbs, err := filepath.Glob(filepath.Join(dir, "*", a.d.Reader.Database))
				if err != nil {
					tb.Fatal(err)
				}
				for _, db := range dbs {
					tree := filepath.Join(tb.TempDir(), filepath.Base(filepath.Dir(db)))
					testenv.OpenCodeTree(tb, filepath.Dir(db), filepath.Join(tree, "storage"))
					dirs = append(dirs, filepath.Dir(tree))
					origin[tree] = db
				}
			}
			for _, d := range dirs {
				err := filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
					if err != nil || de.IsDir() {
						return err
					}
					rel, err := filepath.Rel(d, p)
					if err != nil || !a.Keep(filepath.ToSlash(rel)) {
						return err
					}
					b, err := os.ReadFile(p) //nolint:gosec // G122: d is a folder of the fixture corpus, read in place
					if err != nil {
						return err
					}
					s := historySource{
						agent: name, origin: p, rel: newIDTemplate([]byte(filepath.ToSlash(rel))),
						jsonl: a.JSONLInclude != "" && strings.HasSuffix(rel, ".jsonl"),
					}
					if db, ok := origin[filepath.Join(d, strings.SplitN(filepath.ToSlash(rel), "/", 2)[0])]; ok {
						s.origin = db
					}
					if s.jsonl {
						var clean []byte
						for line := range bytes.SplitSeq(b, []byte{'\n'}) {
							if len(bytes.TrimSpace(line)) > 0 {
								clean = append(append(clean, line...), '\n')
								s.lines++
							}
						}
						b = clean
					}
					var extra []string
					if a.SessionID != nil {
						extra = append(extra, a.SessionID(b))
					}
					s.data = newIDTemplate(b, extra...)
					if _, ok := set.byAgent[name]; !ok {
						set.agents = append(set.agents, name)
					}
					set.byAgent[name] = append(set.byAgent[name], len(set.srcs))
					set.srcs = append(set.srcs, s)
					return nil
				})
				if err != nil && !os.IsNotExist(err) {
					tb.Fatalf("history from %s: %v", d, err)
				}
			}
		}
	}
	if len(set.srcs) == 0 {
		tb.Fatalf("history: no agent session files below %v", roots)
	}
	return set
}

// writeHistory writes copy r = 0, 1, … of each agent's sources while more(agent, r, bytes of
// the agent written so far) says so.
func writeHistory(tb testing.TB, set historySourceSet, home string, more func(agent string, r int, have int64) bool) History {
	tb.Helper()
	h := History{Home: home}
	written := map[string]bool{}
	// A reader that knows files by a fingerprint of their first bytes (file_log, agent_log: 1000 bytes)
	// would read a copy that starts like another once: every file must start its own way.
	heads := map[string]string{}
	var buf []byte
	finished := time.Now().Add(-48 * time.Hour)
	for _, a := range set.agents {
		var have int64
		for r := 0; more(a, r, have); r++ {
			for _, i := range set.byAgent[a] {
				s := set.srcs[i]
				buf = s.data.copy(r, buf)
				rel := string(s.rel.copy(r, nil))
				path := filepath.Join(home, historyAgents()[s.agent].Place(r, rel, buf))
				if written[path] {
					continue // the same file in every copy (OpenCode's project file)
				}
				written[path] = true
				if head := string(buf[:min(len(buf), 1000)]); len(buf) >= 16 {
					if other, ok := heads[head]; ok {
						tb.Fatalf("history: %s starts like %s (an id of the fixture is not made unique)", path, other)
					}
					heads[head] = path
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					tb.Fatal(err)
				}
				if err := os.WriteFile(path, buf, 0o600); err != nil {
					tb.Fatal(err)
				}
				// A finished history: files last written days ago, not files a reader must
				// expect more of any moment (agent_log holds a fresh file's last events back
				// until it settles).
				if err := os.Chtimes(path, finished, finished); err != nil {
					tb.Fatal(err)
				}
				f := HistoryFile{Agent: s.agent, Path: path, Size: int64(len(buf)), Replica: r, Source: s.origin}
				if s.jsonl {
					f.Lines = s.lines
				}
				h.Files = append(h.Files, f)
				h.Bytes += f.Size
				have += f.Size
			}
		}
	}
	return h
}

// UniqueIDs is copy r of data with every session, message, request, part and tool-call id made
// unique, the way WriteHistory makes its copies.
func UniqueIDs(data []byte, r int) []byte {
	return newIDTemplate(data).copy(r, nil)
}
