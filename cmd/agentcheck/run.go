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
	"github.com/agentotel/agentotel/internal/agents"
	_ "github.com/agentotel/agentotel/internal/vendors/all" // every agent the check compares registers itself
)

// staging is what stageFixtures laid out besides the default locations.
type staging struct {
	notes []string
	// dataDirs are each agent's data directories besides its default ones
	// (agents.Staging.DataDir: a data directory holds one OpenCode
	// database, so every SQLite fixture gets its own).
	dataDirs map[agentevent.Source][]string
}

// stageFixtures lays the fixture roots out as one home: each agent's files
// in its default location (agents.StageCorpus). Formats the receiver does
// not read from a default location (OpenCode API dumps) are left out, and
// said so. Two roots may not put different files at one path.
func stageFixtures(roots []string, home string) (*staging, error) {
	var st agents.Staged
	for i, root := range roots {
		if err := agents.StageCorpus(root, i, home, &st); err != nil {
			return nil, fmt.Errorf("%s: %w", root, err)
		}
	}
	return &staging{notes: st.Notes, dataDirs: st.DataDirs}, nil
}

// collectorConfig reads every agent of home with the receiver's defaults
// (plus an agent's extra data directories, when given) and prices the events
// with gen_ai_cost in both of its placements: in the logs pipeline, between
// agent_log and agent_span (events.jsonl: every event, priced;
// traces.jsonl: the spans made of them), and in the traces pipeline, after
// a second agent_span fed the same events unpriced (traces-priced.jsonl).
// State goes to out too.
func collectorConfig(out, home string, idle time.Duration, dataDirs map[agentevent.Source][]string) string {
	var extra strings.Builder
	st := agents.Staged{DataDirs: dataDirs}
	for _, d := range agents.All() {
		if len(dataDirs[d.Source]) == 0 {
			continue
		}
		b, _ := json.Marshal(st.Include(d, home))
		fmt.Fprintf(&extra, "\n    %s:\n      include: %s", d.Source, b)
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
`, out, idle, extra.String())
}

// agentEnv is the environment the agents' default locations depend on:
// HOME and, for a staged home, nothing that would point the receiver (or
// ccusage) elsewhere. A user's own home keeps the user's settings
// (CLAUDE_CONFIG_DIR, CODEX_HOME, …): they say where that user's agents write.
func agentEnv(home string, staged bool) []string {
	var env []string
	relocate := map[string]bool{}
	for _, v := range agents.LocationVars() {
		relocate[v] = true
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || (staged && relocate[k]) {
			continue
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
func runCollector(ctx context.Context, bin, home string, staged bool, dataDirs map[agentevent.Source][]string, out string, idle, quiet, timeout time.Duration) (*outputs, error) {
	cfg := filepath.Join(out, "config.yaml")
	if err := os.WriteFile(cfg, []byte(collectorConfig(out, home, idle, dataDirs)), 0o600); err != nil {
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

// runCcusage runs `ccusage <agent> session --json --offline` over home,
// and once more over each extra data directory of the agent, named by
// ccusage's variable for it (agents.Ccusage.DataDirEnv).
func runCcusage(ctx context.Context, bin string, d *agents.Descriptor, home string, staged bool, dataDirs []string) ([]ccSession, error) {
	envs := [][]string{agentEnv(home, staged)}
	if d.Ccusage.DataDirEnv != "" {
		for _, dir := range dataDirs {
			envs = append(envs, append(agentEnv(home, staged), d.Ccusage.DataDirEnv+"="+dir))
		}
	}
	var sessions []ccSession
	for _, env := range envs {
		cmd := exec.CommandContext(ctx, bin, d.Ccusage.Command, "session", "--json", "--offline") //nolint:gosec // G204: bin is the ccusage the user named
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("ccusage %s: %w: %s", d.Ccusage.Command, err, stderr.String())
		}
		s, err := parseCcusage(d, out)
		if err != nil {
			return nil, err
		}
		sessions = append(sessions, s...)
	}
	return sessions, nil
}

// parseCcusage reads ccusage's session report. Its inputTokens are net of
// cache reads for every agent; some agents' outputTokens leave thoughts /
// reasoning out (agents.Ccusage.ReasoningOutsideOutput: their totalTokens
// have them).
func parseCcusage(d *agents.Descriptor, out []byte) ([]ccSession, error) {
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
		return nil, fmt.Errorf("ccusage %s output: %w", d.Ccusage.Command, err)
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
		if d.Ccusage.ReasoningOutsideOutput {
			cs.Reasoning = s.TotalTokens - s.InputTokens - s.OutputTokens - s.CacheReadTokens - s.CacheCreationTokens
		}
		sessions = append(sessions, cs)
	}
	return sessions, nil
}
