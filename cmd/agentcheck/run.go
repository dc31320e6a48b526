// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// staging is what stageFixtures laid out besides the default locations.
type staging struct {
	notes []string
	// opencodeDirs are OpenCode data directories besides the default one:
	// a data directory holds one database, so every SQLite fixture gets its
	// own (~/.local/share/opencode-fixtures/<root>-<case>).
	opencodeDirs []string
}

// stageFixtures lays the fixture roots out as one home: each agent's files
// in its default location. Formats the receiver does not read from a
// default location (OpenCode API dumps) are left out, and said so. Two
// roots may not put different files at one path.
func stageFixtures(roots []string, home string) (*staging, error) {
	st := &staging{}
	for i, root := range roots {
		if err := stageRoot(st, i, root, home); err != nil {
			return nil, fmt.Errorf("%s: %w", root, err)
		}
	}
	return st, nil
}

func stageRoot(st *staging, index int, fixtures, home string) error {
	cp := func(src, dst string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if old, err := os.ReadFile(dst); err == nil && !bytes.Equal(old, b) {
			return fmt.Errorf("%s: another fixture is already staged at %s", src, dst)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600) //nolint:gosec // G703: staging the fixtures the user named into the scratch home is the job
	}
	tree := func(src, dst string) error {
		return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			return cp(p, filepath.Join(dst, rel))
		})
	}
	glob := func(pattern string) []string {
		m, _ := filepath.Glob(filepath.Join(fixtures, pattern))
		return m
	}
	isDir := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	}
	// Claude Code: ~/.claude/projects/<project>/...; a loose file goes to a
	// project of its own.
	for _, p := range glob("claude_code/*") {
		var err error
		if isDir(p) {
			err = tree(p, filepath.Join(home, ".claude", "projects", filepath.Base(p)))
		} else {
			err = cp(p, filepath.Join(home, ".claude", "projects", "fixtures", filepath.Base(p)))
		}
		if err != nil {
			return err
		}
	}
	// Codex: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl.
	for _, p := range glob("codex/*.jsonl") {
		if err := cp(p, filepath.Join(home, ".codex", "sessions", "2025", "01", "01", "rollout-"+filepath.Base(p))); err != nil {
			return err
		}
	}
	// Gemini CLI: ~/.gemini/tmp/<project>/chats/session-*.json and logs.json;
	// a subagent chat (kind "subagent") in chats/<parent session>/<its id>.json,
	// its parent named "parent-of-<its id>" (the corpus has no parent chat).
	// A case folder (the JSONL chats) is a project of its own: its files go
	// to ~/.gemini/tmp/<case>/chats/.
	for _, p := range glob("gemini/chat_*.json") {
		dst := filepath.Join(home, ".gemini", "tmp", "fixtures", "chats", "session-"+strings.TrimPrefix(filepath.Base(p), "chat_"))
		if b, err := os.ReadFile(p); err == nil {
			var chat struct {
				SessionID string `json:"sessionId"`
				Kind      string `json:"kind"`
			}
			if json.Unmarshal(b, &chat) == nil && chat.Kind == "subagent" && chat.SessionID != "" {
				dst = filepath.Join(home, ".gemini", "tmp", "fixtures", "chats", "parent-of-"+chat.SessionID, chat.SessionID+".json")
			}
		}
		if err := cp(p, dst); err != nil {
			return err
		}
	}
	for i, p := range glob("gemini/logs_*.json") {
		if err := cp(p, filepath.Join(home, ".gemini", "tmp", fmt.Sprintf("fixtures-logs-%d-%d", index, i), "logs.json")); err != nil {
			return err
		}
	}
	for _, p := range glob("gemini/*") {
		if isDir(p) {
			if err := tree(p, filepath.Join(home, ".gemini", "tmp", filepath.Base(p), "chats")); err != nil {
				return err
			}
		}
	}
	// Pi: ~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl.
	for _, p := range glob("pi/*.jsonl") {
		if err := cp(p, filepath.Join(home, ".pi", "agent", "sessions", "--fixtures--", filepath.Base(p))); err != nil {
			return err
		}
	}
	// OpenCode: ~/.local/share/opencode/storage (every JSON tree merged); a
	// SQLite database (opencode.db and its -wal, -shm) in a data directory
	// of its own, since one directory holds one database and a database
	// hides the JSON tree beside it.
	for _, p := range glob("opencode/*/storage") {
		if err := tree(p, filepath.Join(home, ".local", "share", "opencode", "storage")); err != nil {
			return err
		}
	}
	for _, db := range glob("opencode/*/opencode.db") {
		c := filepath.Dir(db)
		dir := filepath.Join(home, ".local", "share", "opencode-fixtures", fmt.Sprintf("%d-%s", index, filepath.Base(c)))
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if _, err := os.Stat(db + suffix); err != nil {
				continue
			}
			if err := cp(db+suffix, filepath.Join(dir, "opencode.db"+suffix)); err != nil {
				return err
			}
		}
		st.opencodeDirs = append(st.opencodeDirs, dir)
	}
	if m := glob("opencode/*.json"); len(m) > 0 {
		st.notes = append(st.notes, fmt.Sprintf("opencode: %d API dump file(s) of %s left out: not a format OpenCode keeps in its data directory", len(m), fixtures))
	}
	// GitHub Copilot CLI: ~/.copilot/session-state/ and history-session-state/
	// (every fixture's folders merged).
	for _, p := range append(glob("copilot_cli/*/session-state"), glob("copilot_cli/*/history-session-state")...) {
		if err := tree(p, filepath.Join(home, ".copilot", filepath.Base(p))); err != nil {
			return err
		}
	}
	// Amp: ~/.local/share/amp/threads/T-*.json.
	for _, p := range glob("amp/threads/*.json") {
		if err := cp(p, filepath.Join(home, ".local", "share", "amp", "threads", filepath.Base(p))); err != nil {
			return err
		}
	}
	return nil
}

// collectorConfig reads every agent of home with the receiver's defaults
// (plus extra OpenCode data directories, when given) and prices the events
// with gen_ai_cost in both of its placements: in the logs pipeline, between
// agent_log and agent_span (events.jsonl: every event, priced;
// traces.jsonl: the spans made of them), and in the traces pipeline, after
// a second agent_span fed the same events unpriced (traces-priced.jsonl).
// State goes to out too.
func collectorConfig(out string, idle time.Duration, opencodeDirs []string) string {
	opencode := ""
	if len(opencodeDirs) > 0 {
		dirs, _ := json.Marshal(append([]string{"~/.local/share/opencode"}, opencodeDirs...))
		opencode = "\n    opencode:\n      include: " + string(dirs)
	}
	return fmt.Sprintf(`extensions:
  file_storage:
    directory: %[1]s/state
    create_directory: true
receivers:
  agent_log:
    storage: file_storage
    emit_unparsed: true%[3]s
processors:
  gen_ai_cost:
connectors:
  agent_span:
    storage: file_storage
    turn_idle_timeout: %[2]s
  agent_span/unpriced:
    storage: file_storage
    turn_idle_timeout: %[2]s
exporters:
  file/events:
    path: %[1]s/events.jsonl
    format: json
  file/traces:
    path: %[1]s/traces.jsonl
    format: json
  file/traces-priced:
    path: %[1]s/traces-priced.jsonl
    format: json
service:
  extensions: [file_storage]
  pipelines:
    logs:
      receivers: [agent_log]
      processors: [gen_ai_cost]
      exporters: [agent_span, file/events]
    traces:
      receivers: [agent_span]
      exporters: [file/traces]
    logs/unpriced:
      receivers: [agent_log]
      exporters: [agent_span/unpriced]
    traces/priced:
      receivers: [agent_span/unpriced]
      processors: [gen_ai_cost]
      exporters: [file/traces-priced]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
`, out, idle, opencode)
}

// agentEnv is the environment the agents' default locations depend on:
// HOME and, for a staged home, nothing that would point the receiver (or
// ccusage) elsewhere. A user's own home keeps the user's settings
// (CLAUDE_CONFIG_DIR, CODEX_HOME, …): they say where that user's agents write.
func agentEnv(home string, staged bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME":
			continue
		case "CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "XDG_DATA_HOME", "GEMINI_DIR",
			"COPILOT_HOME", "AMP_DATA_DIR",
			// ccusage's own spellings of the same locations.
			"OPENCODE_DATA_DIR", "GEMINI_DATA_DIR", "PI_AGENT_DIR":
			if staged {
				continue
			}
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home)
}

// outputs is what the collector wrote: the events priced in the logs
// pipeline, the spans made of them, and the spans priced in the traces
// pipeline.
type outputs struct {
	events []agentevent.Event
	spans  []span
	priced []span
}

// runCollector runs the built collector over home until its outputs have
// been quiet for quiet, then stops it (SIGTERM) and returns what it wrote.
func runCollector(ctx context.Context, bin, home string, staged bool, opencodeDirs []string, out string, idle, quiet, timeout time.Duration) (*outputs, error) {
	cfg := filepath.Join(out, "config.yaml")
	if err := os.WriteFile(cfg, []byte(collectorConfig(out, idle, opencodeDirs)), 0o600); err != nil {
		return nil, err
	}
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--config", cfg)
	cmd.Env = agentEnv(home, staged)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var waitErr error // set before done is closed
	done := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(done) }()

	size := func() int64 {
		var n int64
		for _, f := range []string{"events.jsonl", "traces.jsonl", "traces-priced.jsonl"} {
			if fi, err := os.Stat(filepath.Join(out, f)); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	start := time.Now()
	last, lastChange := int64(-1), time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-done:
			// %v: waitErr is nil after a clean exit, which %w would print as %!w(<nil>).
			return nil, fmt.Errorf("the collector exited early (%v):\n%s", waitErr, logs.String()) //nolint:errorlint // see above
		case <-tick.C:
			if n := size(); n != last {
				last, lastChange = n, time.Now()
			}
			if last > 0 && time.Since(lastChange) >= quiet {
				break wait
			}
			if time.Since(start) > timeout {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
				return nil, fmt.Errorf("no output settled within %s:\n%s", timeout, logs.String())
			}
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	var o outputs
	var err error
	if o.events, err = readEvents(filepath.Join(out, "events.jsonl")); err != nil {
		return nil, err
	}
	if o.spans, err = readSpans(filepath.Join(out, "traces.jsonl")); err != nil {
		return nil, err
	}
	if o.priced, err = readSpans(filepath.Join(out, "traces-priced.jsonl")); err != nil {
		return nil, err
	}
	return &o, nil
}

func eachLine(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func readEvents(path string) ([]agentevent.Event, error) {
	var events []agentevent.Event
	var u plog.JSONUnmarshaler
	err := eachLine(path, func(b []byte) error {
		ld, err := u.UnmarshalLogs(b)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		evs, skipped := agentevent.DecodeLogs(ld)
		if skipped > 0 {
			return fmt.Errorf("%s: %d log records are not agent events", path, skipped)
		}
		events = append(events, evs...)
		return nil
	})
	return events, err
}

func readSpans(path string) ([]span, error) {
	var spans []span
	var u ptrace.JSONUnmarshaler
	err := eachLine(path, func(b []byte) error {
		td, err := u.UnmarshalTraces(b)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		spans = append(spans, spansOf(td)...)
		return nil
	})
	return spans, err
}

// ccusageAgents names the ccusage command of each agent the check compares.
var ccusageAgents = map[agentevent.Source]string{
	agentevent.SourceClaudeCode: "claude",
	agentevent.SourceCodex:      "codex",
	agentevent.SourceGemini:     "gemini",
	agentevent.SourcePi:         "pi",
	agentevent.SourceOpenCode:   "opencode",
	agentevent.SourceCopilotCLI: "copilot",
	agentevent.SourceAmp:        "amp",
}

// runCcusage runs `ccusage <agent> session --json --offline` over home,
// and for OpenCode once more over each extra data directory
// (OPENCODE_DATA_DIR).
func runCcusage(ctx context.Context, bin string, src agentevent.Source, home string, staged bool, opencodeDirs []string) ([]ccSession, error) {
	envs := [][]string{agentEnv(home, staged)}
	if src == agentevent.SourceOpenCode {
		for _, d := range opencodeDirs {
			envs = append(envs, append(agentEnv(home, staged), "OPENCODE_DATA_DIR="+d))
		}
	}
	var sessions []ccSession
	for _, env := range envs {
		cmd := exec.CommandContext(ctx, bin, ccusageAgents[src], "session", "--json", "--offline") //nolint:gosec // G204: bin is the ccusage the user named
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("ccusage %s: %w: %s", ccusageAgents[src], err, stderr.String())
		}
		s, err := parseCcusage(src, out)
		if err != nil {
			return nil, err
		}
		sessions = append(sessions, s...)
	}
	return sessions, nil
}

// parseCcusage reads ccusage's session report. Its inputTokens are net of
// cache reads for every agent; Gemini's and OpenCode's outputTokens leave
// thoughts / reasoning out (their totalTokens have them).
func parseCcusage(src agentevent.Source, out []byte) ([]ccSession, error) {
	var report struct {
		Sessions []struct {
			SessionID           string `json:"sessionId"`
			SessionFile         string `json:"sessionFile"`
			InputTokens         int64  `json:"inputTokens"`
			OutputTokens        int64  `json:"outputTokens"`
			CacheReadTokens     int64  `json:"cacheReadTokens"`
			CacheCreationTokens int64  `json:"cacheCreationTokens"`
			TotalTokens         int64  `json:"totalTokens"`
			// totalCost for most agents, costUSD for Codex.
			TotalCost       *float64 `json:"totalCost"`
			CostUSD         *float64 `json:"costUSD"`
			ModelBreakdowns []struct {
				ModelName string  `json:"modelName"`
				Cost      float64 `json:"cost"`
			} `json:"modelBreakdowns"`
			// Codex: the models of a session, without costs.
			Models map[string]struct {
				IsFallback bool `json:"isFallback"`
			} `json:"models"`
		} `json:"sessions"`
	}
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:] // a notice before the JSON
	}
	if err := json.Unmarshal(out, &report); err != nil {
		return nil, fmt.Errorf("ccusage %s output: %w", ccusageAgents[src], err)
	}
	var sessions []ccSession
	for _, s := range report.Sessions {
		cs := ccSession{Key: s.SessionID, Tokens: tokens{
			Input: s.InputTokens, Output: s.OutputTokens, CacheRead: s.CacheReadTokens, CacheCreation: s.CacheCreationTokens,
		}}
		if s.SessionFile != "" {
			cs.Key = s.SessionFile
		}
		switch {
		case s.TotalCost != nil:
			cs.Cost = *s.TotalCost
		case s.CostUSD != nil:
			cs.Cost = *s.CostUSD
		}
		for _, b := range s.ModelBreakdowns {
			if cs.ModelCosts == nil {
				cs.ModelCosts = map[string]float64{}
			}
			cs.ModelCosts[ccusageModel(b.ModelName)] += b.Cost
		}
		for _, m := range s.Models {
			cs.Fallback = cs.Fallback || m.IsFallback
		}
		if src == agentevent.SourceGemini || src == agentevent.SourceOpenCode {
			cs.Reasoning = s.TotalTokens - s.InputTokens - s.OutputTokens - s.CacheReadTokens - s.CacheCreationTokens
		}
		sessions = append(sessions, cs)
	}
	return sessions, nil
}
