// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testenv // import "github.com/agentotel/agentotel/tests/testenv"

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// HistoryFile is one file of a written history.
type HistoryFile struct {
	Agent string // fixtures folder of the agent: claude_code, codex, copilot_cli, …
	Path  string // absolute
	Size  int64
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
		if p := historyAgents[f.Agent].jsonlInclude; p != "" && !seen[p] {
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

// historyAgent says which fixtures of an agent make its history and where the agent keeps them.
type historyAgent struct {
	keep func(rel string) bool
	// place is the path below the home directory of copy r of the fixture file rel (rel with its
	// ids already made unique).
	place func(r int, rel string, data []byte) string
	// jsonlInclude is the pattern, below the home directory, of the agent's line-delimited files
	// ("" for an agent whose files are whole JSON documents).
	jsonlInclude string
	// sessionID, when set, reads a session id that idRe may not find (a free-form id).
	sessionID func(data []byte) string
}

var piSessionRe = regexp.MustCompile(`^\{"type":"session"[^\n]*?"id":"([^"]+)"`)

var codexDay = regexp.MustCompile(`"timestamp":"(\d{4})-(\d{2})-(\d{2})T`)

// historyAgents are the agents the agent_log receiver reads, by fixtures folder.
var historyAgents = map[string]historyAgent{
	"claude_code": {
		keep: func(rel string) bool { return strings.HasSuffix(rel, ".jsonl") },
		// ~/.claude/projects/<project>/<session>.jsonl (subagents below <session>/subagents/):
		// the fixture folder is the project.
		place: func(r int, rel string, _ []byte) string {
			project, rest, ok := strings.Cut(rel, "/")
			if !ok {
				project, rest = "misc", rel
			}
			return filepath.Join(".claude", "projects", fmt.Sprintf("-bench-r%04d-%s", r, project), rest)
		},
		jsonlInclude: ".claude/projects/**/*.jsonl",
	},
	"codex": {
		keep: func(rel string) bool { return strings.HasSuffix(rel, ".jsonl") },
		// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<…>-<id>.jsonl, dated by its first record.
		place: func(r int, rel string, data []byte) string {
			day := []string{"2025", "01", "01"}
			if m := codexDay.FindSubmatch(data); m != nil {
				day = []string{string(m[1]), string(m[2]), string(m[3])}
			}
			name := strings.TrimSuffix(filepath.Base(rel), ".jsonl")
			if id := CodexSessionID(data); id != "" {
				name = id
			}
			return filepath.Join(".codex", "sessions", day[0], day[1], day[2], fmt.Sprintf("rollout-r%04d-%s.jsonl", r, name))
		},
		jsonlInclude: ".codex/sessions/**/*.jsonl",
	},
	"pi": {
		keep: func(rel string) bool { return strings.HasSuffix(rel, ".jsonl") },
		// ~/.pi/agent/sessions/--<cwd>--/<name>.jsonl
		place: func(r int, rel string, _ []byte) string {
			return filepath.Join(".pi", "agent", "sessions", fmt.Sprintf("--bench-r%04d--", r), filepath.Base(rel))
		},
		jsonlInclude: ".pi/agent/sessions/**/*.jsonl",
		sessionID: func(data []byte) string {
			if m := piSessionRe.FindSubmatch(data); m != nil {
				return string(m[1])
			}
			return ""
		},
	},
	"gemini": {
		keep: func(rel string) bool { return strings.HasSuffix(rel, ".json") },
		// ~/.gemini/tmp/<project>/chats/<chat>.json and ~/.gemini/tmp/<project>/logs.json
		place: func(r int, rel string, _ []byte) string {
			dir := filepath.Join(".gemini", "tmp", fmt.Sprintf("bench-r%04d", r))
			if strings.HasPrefix(filepath.Base(rel), "logs") {
				return filepath.Join(dir, "logs.json")
			}
			return filepath.Join(dir, "chats", filepath.Base(rel))
		},
	},
	"copilot_cli": {
		// ~/.copilot/session-state/<id>/events.jsonl (+ workspace.yaml), older
		// ~/.copilot/session-state/<id>.jsonl and ~/.copilot/history-session-state/*.json: the
		// fixture folder is a ~/.copilot.
		keep: func(rel string) bool {
			return strings.Contains(rel, "session-state/") &&
				(strings.HasSuffix(rel, ".jsonl") || strings.HasSuffix(rel, ".json") || strings.HasSuffix(rel, "/workspace.yaml"))
		},
		place: func(_ int, rel string, _ []byte) string {
			_, rest, _ := strings.Cut(rel, "/")
			return filepath.Join(".copilot", rest)
		},
		jsonlInclude: ".copilot/session-state/**/*.jsonl",
	},
	"amp": {
		// ~/.local/share/amp/threads/T-<id>.json
		keep: func(rel string) bool { return strings.HasPrefix(rel, "threads/T-") && strings.HasSuffix(rel, ".json") },
		place: func(_ int, rel string, _ []byte) string {
			return filepath.Join(".local", "share", "amp", rel)
		},
	},
	"opencode": {
		// The storage tree (storage/{project,session,message,part}/…), one per fixture folder.
		keep: func(rel string) bool { return strings.Contains(rel, "/storage/") && strings.HasSuffix(rel, ".json") },
		place: func(_ int, rel string, _ []byte) string {
			_, rest, _ := strings.Cut(rel, "/storage/")
			return filepath.Join(".local", "share", "opencode", "storage", rest)
		},
	},
}

// HistoryAgents are the agents WriteHistory lays out, sorted.
func HistoryAgents() []string {
	var out []string
	for a := range historyAgents {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// idRe finds the ids a copy must not share with another: UUIDs (sessions, records, messages) and
// the vendors' prefixed ids (Anthropic message and request ids, OpenCode sessions, messages and
// parts, tool calls).
var idRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\b(?:msg|req|ses|prt|toolu|call|resp)_[0-9A-Za-z]{8,}`)

// replicaOf makes copy r of an id: ReplicaID for a UUID (still a UUID), else the id with a
// suffix (ids that sorted before still sort the same).
func replicaOf(id []byte, r int) []byte {
	if len(id) == 36 && id[8] == '-' {
		return []byte(ReplicaID(string(id), r))
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
// every agent in fixtures (the shared fixtures folder), each agent up to its share of
// DefaultHistoryShares (at least one copy of each): copy r of
// every file with each session, message, request, part and tool-call id made unique (the same
// way in every file of the copy, so references between files hold), laid out where the agent
// keeps its sessions. Line-delimited files end with "\n" and hold no blank line (a reader never
// waits for an unterminated last line). Every file is dated two days ago, a finished history.
// Agents whose fixtures are absent are left out.
func WriteHistory(tb testing.TB, fixtures, home string, targetBytes int64) History {
	tb.Helper()
	return WriteHistoryShares(tb, fixtures, home, targetBytes, DefaultHistoryShares)
}

// DefaultHistoryShares is the mix of a history by agent (shares of its bytes): mostly Claude Code
// and Codex, as the histories users report, and every other agent the receiver reads.
var DefaultHistoryShares = map[string]float64{
	"claude_code": 0.45, "codex": 0.30,
	"pi": 0.05, "copilot_cli": 0.05, "gemini": 0.05, "opencode": 0.05, "amp": 0.05,
}

// WriteHistoryShares is WriteHistory with each agent's share of the bytes given (agents absent
// from shares, or with a share of 0, are left out).
func WriteHistoryShares(tb testing.TB, fixtures, home string, targetBytes int64, shares map[string]float64) History {
	tb.Helper()
	type source struct {
		agent string
		rel   idTemplate
		data  idTemplate
		jsonl bool
		lines int64
	}
	var srcs []source
	var perCopy int64
	for _, name := range HistoryAgents() {
		a := historyAgents[name]
		dir := filepath.Join(fixtures, name)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil || !a.keep(filepath.ToSlash(rel)) {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := source{agent: name, rel: newIDTemplate([]byte(filepath.ToSlash(rel))),
				jsonl: a.jsonlInclude != "" && strings.HasSuffix(rel, ".jsonl")}
			if s.jsonl {
				var clean []byte
				for _, line := range bytes.Split(b, []byte{'\n'}) {
					if len(bytes.TrimSpace(line)) > 0 {
						clean = append(append(clean, line...), '\n')
						s.lines++
					}
				}
				b = clean
			}
			var extra []string
			if a.sessionID != nil {
				extra = append(extra, a.sessionID(b))
			}
			s.data = newIDTemplate(b, extra...)
			srcs = append(srcs, s)
			perCopy += int64(len(b))
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			tb.Fatalf("history from %s: %v", dir, err)
		}
	}
	if perCopy == 0 {
		tb.Fatalf("history: no agent session files below %s", fixtures)
	}
	h := History{Home: home}
	written := map[string]bool{}
	// A reader that knows files by a fingerprint of their first bytes (file_log, agent_log: 1000 bytes)
	// would read a copy that starts like another once: every file must start its own way.
	heads := map[string]string{}
	var buf []byte
	finished := time.Now().Add(-48 * time.Hour)
	byAgent := map[string][]int{}
	var agents []string
	for i, s := range srcs {
		if _, ok := byAgent[s.agent]; !ok {
			agents = append(agents, s.agent)
		}
		byAgent[s.agent] = append(byAgent[s.agent], i)
	}
	var total float64
	for _, a := range agents {
		total += shares[a]
	}
	for _, a := range agents {
		if shares[a] <= 0 {
			continue
		}
		// Copies of the agent's sessions until it holds its share (at least one copy).
		want := int64(float64(targetBytes) * shares[a] / total)
		var have int64
		for r := 0; r == 0 || have < want; r++ {
			for _, i := range byAgent[a] {
				s := srcs[i]
				buf = s.data.copy(r, buf)
				rel := string(s.rel.copy(r, nil))
				path := filepath.Join(home, historyAgents[s.agent].place(r, rel, buf))
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
				if err := os.WriteFile(path, buf, 0o644); err != nil {
					tb.Fatal(err)
				}
				// A finished history: files last written days ago, not files a reader must
				// expect more of any moment (agent_log holds a fresh file's last events back
				// until it settles).
				if err := os.Chtimes(path, finished, finished); err != nil {
					tb.Fatal(err)
				}
				f := HistoryFile{Agent: s.agent, Path: path, Size: int64(len(buf))}
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
