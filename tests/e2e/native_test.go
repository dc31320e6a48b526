// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/testhome"
	"github.com/agentotel/agentotel/tests/testenv"
)

// nativeConfig writes a copy of config/<name> with the agent_span connector's idle bounds cut to
// short: an agent's own telemetry has no end-of-turn marker and no end of file, so its turns close
// on wall-clock idleness, and a test should not wait the 5 minutes a laptop does. Nothing else
// changes; the ports, state and backend come from the environment as they do for a user.
func nativeConfig(t *testing.T, name string, idle time.Duration) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "config", name))
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	connectors, _ := cfg["connectors"].(map[string]any)
	require.NotNil(t, connectors, "config/%s has no connectors", name)
	span, _ := connectors["agent_span"].(map[string]any)
	require.NotNil(t, span, "config/%s has no agent_span connector", name)
	span["turn_idle_timeout"] = idle.String()
	// The captures are fragments: a tool call whose result is not in them must not hold its
	// turn for the 4 hours a running build gets.
	span["max_open_tool_duration"] = idle.String()
	out, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, out, 0o600))
	return path
}

// waitListening waits until something accepts TCP connections on the loopback port.
func waitListening(t *testing.T, p *testenv.Process, port int) {
	t.Helper()
	waitFor(t, 60*time.Second, fmt.Sprintf("a listener on 127.0.0.1:%d", port), func() (bool, string) {
		if p.Exited() {
			return true, "exited"
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	})
	require.False(t, p.Exited(), "the collector stopped: %s", p.LogText())
}

// postOTLP sends one OTLP/JSON export to an OTLP/HTTP receiver, as an agent with
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json does, and requires it accepted whole.
func postOTLP(t *testing.T, port int, signal string, body []byte) {
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/%s", port, signal)
	resp, err := http.Post(url, "application/json", bytes.NewReader(body)) //nolint:gosec // G107: the collector this test started
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "POST %s: %s", url, answer)
	// A partial success names records the collector refused.
	assert.NotContains(t, string(answer), "rejected", "POST %s: %s", url, answer)
}

// captureLine is one export of a native capture: one line of an *.otlp.jsonl file.
type captureLine struct {
	file  string
	line  int
	body  []byte
	first time.Time // the earliest record time in the export, to send in the agent's order
}

// nativeCaptures reads the log or trace exports of an agent's captures in place
// (../shared/fixtures/native_otel/<agent>/<signal>-*.otlp.jsonl; no license, never copied), and
// skips the test when the corpus is absent.
func nativeCaptures(t *testing.T, agent, signal string) []captureLine {
	t.Helper()
	dir := filepath.Join(testenv.FixturesDir(t), "native_otel", agent)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("native captures absent: %s", dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, signal+"-*.otlp.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no %s captures in %s", signal, dir)
	sort.Strings(files)
	var out []captureLine
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for n := 1; sc.Scan(); n++ {
			body := bytes.Clone(sc.Bytes())
			if len(bytes.TrimSpace(body)) == 0 {
				continue
			}
			cl := captureLine{file: filepath.Base(f), line: n, body: body}
			switch signal {
			case "logs":
				ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(body)
				require.NoError(t, err, "%s:%d", f, n)
				forEachLog(ld, func(_ pcommon.Resource, r plog.LogRecord) {
					if ts := recordTime(r); !ts.IsZero() && (cl.first.IsZero() || ts.Before(cl.first)) {
						cl.first = ts
					}
				})
			case "traces":
				td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(body)
				require.NoError(t, err, "%s:%d", f, n)
				forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
					if ts := sp.StartTimestamp().AsTime(); cl.first.IsZero() || ts.Before(cl.first) {
						cl.first = ts
					}
				})
			}
			out = append(out, cl)
		}
		require.NoError(t, sc.Err())
		fh.Close()
	}
	return out
}

// inAgentOrder sorts exports the way the agent sent them: by their earliest record.
func inAgentOrder(lines []captureLine) {
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].first.Before(lines[j].first) })
}

func recordTime(r plog.LogRecord) time.Time {
	if r.Timestamp() != 0 {
		return r.Timestamp().AsTime()
	}
	return r.ObservedTimestamp().AsTime()
}

func forEachLog(ld plog.Logs, fn func(res pcommon.Resource, r plog.LogRecord)) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			recs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < recs.Len(); k++ {
				fn(rl.Resource(), recs.At(k))
			}
		}
	}
}

func forEachSpan(td ptrace.Traces, fn func(res pcommon.Resource, sp ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			sps := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < sps.Len(); k++ {
				fn(rs.Resource(), sps.At(k))
			}
		}
	}
}

// attrInt reads an attribute the way agents send numbers: int, double or decimal string.
func attrInt(m pcommon.Map, key string) (int64, bool) {
	v, ok := m.Get(key)
	if !ok {
		return 0, false
	}
	return agentevent.NativeInt(v.AsRaw())
}

// tokenSum is input (cache reads and writes included) and output tokens.
type tokenSum struct{ In, Out int64 }

// nativeExpectation is what the captured log events must become: per agent and session, the
// tokens of the model calls that belong to a turn, and for each turn whose prompt is in the
// captures (a turn of its own, rooted in invoke_agent) the children its root must have.
type nativeExpectation struct {
	tokens map[string]tokenSum  // service|session → tokens
	turns  map[string]turnShape // service|session|turn → the children of a turn with its prompt
}

// turnShape says which children a turn's root has: chat spans (model calls with usage) and
// execute_tool spans.
type turnShape struct{ chat, tool bool }

// expectedFromCaptures walks the log exports in the order they are sent and sums, per session,
// the tokens of each model call that belongs to a turn, by the rules of the model (NATIVE.md):
//   - Claude Code: an api_request with a prompt.id belongs to that prompt's turn, whether or not
//     its user_prompt is in the captures; one without (a session title) belongs to the session's
//     open turn, or waits for the next turn to start (a turn marked prompt_missing when none
//     does). Tokens: input_tokens + cache_read_tokens +
//     cache_creation_tokens (Anthropic's input excludes the cache), output_tokens.
//   - Codex: a codex.sse_event response.completed with usage belongs to the turn of the
//     conversation's latest codex.user_prompt sent before it; one sent before any prompt waits as
//     the conversation's preamble and joins the turn of the next prompt (agent_span carries a
//     thread's preamble into its next turn), or a turn of its own marked prompt_missing when no
//     prompt follows. Tokens:
//     input_token_count (cache reads included), output_token_count.
func expectedFromCaptures(t *testing.T, lines []captureLine) nativeExpectation {
	t.Helper()
	exp := nativeExpectation{tokens: map[string]tokenSum{}, turns: map[string]turnShape{}}
	prompted := map[string]bool{}         // codex conversation → a user_prompt was sent
	pending := map[string]tokenSum{}      // session → usage sent before its first turn
	started := map[string]bool{}          // Claude Code session → a turn has started
	parts := map[string]map[string]bool{} // service|session|turn → kinds of event seen
	note := func(key, kind string) {
		if parts[key] == nil {
			parts[key] = map[string]bool{}
		}
		parts[key][kind] = true
	}
	for _, cl := range lines {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(cl.body)
		require.NoError(t, err)
		forEachLog(ld, func(_ pcommon.Resource, r plog.LogRecord) {
			a := r.Attributes()
			name, _ := a.Get("event.name")
			switch {
			case r.Body().Str() == "claude_code."+name.Str():
				session, _ := a.Get("session.id")
				key := "claude-code|" + session.Str()
				prompt, ok := a.Get("prompt.id")
				if !ok || prompt.Str() == "" {
					// A call that names no turn (a session title): part of the session's open
					// turn, or of the next one to start.
					if name.Str() == "api_request" {
						in, _ := attrInt(a, "input_tokens")
						cr, _ := attrInt(a, "cache_read_tokens")
						cc, _ := attrInt(a, "cache_creation_tokens")
						out, _ := attrInt(a, "output_tokens")
						dst := &pending
						if started[key] {
							dst = &exp.tokens
						}
						v := (*dst)[key]
						v.In += in + cr + cc
						v.Out += out
						(*dst)[key] = v
					}
					return
				}
				turn := key + "|" + prompt.Str()
				if claudeTurnEvent(name.Str(), a) && !started[key] {
					started[key] = true
					if p, ok := pending[key]; ok {
						v := exp.tokens[key]
						v.In += p.In
						v.Out += p.Out
						exp.tokens[key] = v
						delete(pending, key)
					}
				}
				if claudeTurnEvent(name.Str(), a) {
					note(turn, "turn")
				}
				switch name.Str() {
				case "user_prompt":
					note(turn, "prompt")
				case "tool_result":
					note(turn, "tool")
				case "api_request":
					note(turn, "chat")
					in, _ := attrInt(a, "input_tokens")
					cr, _ := attrInt(a, "cache_read_tokens")
					cc, _ := attrInt(a, "cache_creation_tokens")
					out, _ := attrInt(a, "output_tokens")
					s := exp.tokens[key]
					s.In += in + cr + cc
					s.Out += out
					exp.tokens[key] = s
				}
			case strings.HasPrefix(name.Str(), "codex."):
				conv, _ := a.Get("conversation.id")
				if conv.Str() == "" {
					return
				}
				key := "codex|" + conv.Str()
				turn := key + "|turn"
				switch name.Str() {
				case "codex.user_prompt":
					prompted[conv.Str()] = true
					note(turn, "prompt")
					if p, ok := pending[conv.Str()]; ok {
						s := exp.tokens[key]
						s.In += p.In
						s.Out += p.Out
						exp.tokens[key] = s
						note(turn, "chat")
						delete(pending, conv.Str())
					}
				case "codex.tool_result":
					if prompted[conv.Str()] {
						note(turn, "tool")
					}
				case "codex.sse_event":
					kind, _ := a.Get("event.kind")
					in, hasUsage := attrInt(a, "input_token_count")
					if kind.Str() != "response.completed" || !hasUsage {
						return
					}
					out, _ := attrInt(a, "output_token_count")
					if !prompted[conv.Str()] {
						p := pending[conv.Str()]
						p.In += in
						p.Out += out
						pending[conv.Str()] = p
						return
					}
					note(turn, "chat")
					s := exp.tokens[key]
					s.In += in
					s.Out += out
					exp.tokens[key] = s
				}
			}
		})
	}
	// Model calls that never saw a prompt (a session title with no turn, a Codex conversation
	// whose prompt record is not in the captures) are a turn of their own once the idle timeout
	// passes, marked agent.turn.prompt_missing (span-model.md): their tokens are kept.
	for session, p := range pending {
		key := session
		if !strings.HasPrefix(key, "claude-code|") {
			key = "codex|" + session
		}
		s := exp.tokens[key]
		s.In += p.In
		s.Out += p.Out
		exp.tokens[key] = s
		note(key+"|prompt_missing", "turn")
		note(key+"|prompt_missing", "chat")
	}
	for turn, kinds := range parts {
		// A Claude Code turn is formed by any record that names it (prompt.id), with or without
		// its user_prompt; a Codex turn by its prompt.
		if kinds["prompt"] || kinds["turn"] {
			exp.turns[turn] = turnShape{chat: kinds["chat"], tool: kinds["tool"]}
		}
	}
	return exp
}

// claudeTurnEvent reports whether a Claude Code log event with a prompt.id becomes an event of
// its turn (claudecode's README, "Native OTLP log events"): session bookkeeping and accepted tool
// decisions do not.
func claudeTurnEvent(name string, a pcommon.Map) bool {
	switch name {
	case "user_prompt", "api_request", "assistant_response", "api_error", "api_retries_exhausted", "api_refusal",
		"tool_result", "compaction", "subagent_completed", "hook_execution_complete", "permission_mode_changed",
		"skill_activated", "at_mention", "internal_error":
		return true
	case "tool_decision":
		d, _ := a.Get("decision")
		return d.Str() == "reject"
	}
	return false
}

// nativeSpanIDs are the span ids of the captured native spans, with their capture name and the
// short span type Claude Code gives (span.type) or the name.
func nativeSpanIDs(t *testing.T, lines []captureLine) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, cl := range lines {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(cl.body)
		require.NoError(t, err)
		forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
			kind := sp.Name()
			if v, ok := sp.Attributes().Get("span.type"); ok {
				kind = v.Str()
			}
			if _, usage := sp.Attributes().Get("input_tokens"); kind == "llm_request" && !usage {
				kind = "llm_request without usage" // a failed call (aborted, refused) states none
			}
			out[sp.SpanID().String()] = kind
		})
	}
	return out
}

// jaegerServices lists the services Jaeger knows.
func (j *jaeger) services(t *testing.T) []string {
	t.Helper()
	resp, err := http.Get(j.url("/api/services"))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Data []string `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out.Data
}

// allSpans are every span of every service in Jaeger, by span id, with the service it came under.
func (j *jaeger) allSpans(t *testing.T) (map[string]jSpan, map[string]string, []jTrace) {
	t.Helper()
	spans := map[string]jSpan{}
	service := map[string]string{}
	var traces []jTrace
	for _, svc := range j.services(t) {
		got := j.traces(t, svc)
		for i := range got {
			tr := &got[i]
			traces = append(traces, *tr)
			for k := range tr.Spans {
				sp := &tr.Spans[k]
				spans[sp.SpanID] = *sp
				service[sp.SpanID] = tr.Processes[sp.ProcessID].ServiceName
			}
		}
	}
	return spans, service, traces
}

// TestNativeCapturesThroughCollector runs config/native.yaml (idle bounds cut short) with a real
// Jaeger, and sends every captured export of Claude Code and Codex to its OTLP/HTTP receiver as
// the agents would (JSON, in the order of their records): first the log events, then the spans.
// Through Jaeger's API:
//   - turns built from the log events: traces rooted in one invoke_agent span with chat and
//     execute_tool children, whose chat spans carry, per session, exactly the tokens the captured
//     api_request / sse_event records hold (every model call that belongs to a turn, once);
//   - the agents' own spans, normalized in place: every captured span arrives, marked
//     agent.origin=otlp, Claude Code's interaction / llm_request / tool spans renamed
//     invoke_agent / chat / execute_tool, under the services claude-code and codex.
func TestNativeCapturesThroughCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector and Jaeger (skipped with -short)")
	}
	logLines := append(nativeCaptures(t, "claude_code", "logs"), nativeCaptures(t, "codex", "logs")...)
	traceLines := append(nativeCaptures(t, "claude_code", "traces"), nativeCaptures(t, "codex", "traces")...)
	inAgentOrder(logLines)
	inAgentOrder(traceLines)
	exp := expectedFromCaptures(t, logLines)
	require.NotEmpty(t, exp.tokens)
	require.Equal(t, turnShape{chat: true, tool: true},
		exp.turns["claude-code|c7592d4c-20b0-4440-b167-09f9f0e2e6c4|3bc10a7f-ce7c-4432-8022-7a7458702814"],
		"the Claude captures hold a whole turn: prompt, model calls, a tool call")
	native := nativeSpanIDs(t, traceLines)
	require.NotEmpty(t, native)

	bin := collectorBinary(t)
	j := startJaeger(t)
	ports := testenv.FreePorts(t, 2)
	p := start(t, "collector", bin, append(testhome.Env(t.TempDir()),
		// no session files: every event comes over OTLP
		"CLAUDE_CONFIG_DIR=",
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		fmt.Sprintf("AGENTOTEL_OTLP_GRPC_PORT=%d", ports[0]),
		fmt.Sprintf("AGENTOTEL_OTLP_HTTP_PORT=%d", ports[1]),
		fmt.Sprintf("OTLP_ENDPOINT=127.0.0.1:%d", j.otlpGRPC),
	), "--config", nativeConfig(t, "native.yaml", 2*time.Second))
	waitListening(t, p, ports[1])

	for _, cl := range logLines {
		postOTLP(t, ports[1], "logs", cl.body)
	}

	// The turns the log events make: tokens per session on chat spans outside the captured spans.
	got := map[string]tokenSum{}
	var traces []jTrace
	waitFor(t, 90*time.Second, "the captured model calls' tokens on turn chat spans in Jaeger", func() (bool, string) {
		require.False(t, p.Exited(), "the collector stopped: %s", p.LogText())
		_, _, traces = j.allSpans(t)
		got = map[string]tokenSum{}
		for _, tr := range traces {
			for _, sp := range tr.Spans {
				if !strings.HasPrefix(sp.OperationName, "chat ") {
					continue
				}
				key := tr.Processes[sp.ProcessID].ServiceName + "|" + sp.tagString("gen_ai.conversation.id")
				s := got[key]
				s.In += tagInt(sp, "gen_ai.usage.input_tokens")
				s.Out += tagInt(sp, "gen_ai.usage.output_tokens")
				got[key] = s
			}
		}
		return len(got) >= len(exp.tokens), fmt.Sprintf("%d of %d sessions with tokens", len(got), len(exp.tokens))
	})
	time.Sleep(3 * time.Second) // a last turn closing after the first ones: let it arrive
	_, _, traces = j.allSpans(t)
	got = map[string]tokenSum{}
	rooted := map[string][]turnShape{} // service|session → the children of each rooted turn
	for _, tr := range traces {
		var roots []jSpan
		children := map[string]int{}
		for _, sp := range tr.Spans {
			if sp.parent() == "" {
				roots = append(roots, sp)
			}
		}
		// A turn whose prompt record is not in the captures still has its root (marked
		// agent.turn.prompt_missing, span-model.md): every trace has exactly one.
		require.Len(t, roots, 1, "trace %s has one root", tr.TraceID)
		root := roots[0]
		assert.True(t, strings.HasPrefix(root.OperationName, "invoke_agent "), "trace %s root %q", tr.TraceID, root.OperationName)
		svc := tr.Processes[tr.Spans[0].ProcessID].ServiceName
		for _, sp := range tr.Spans {
			switch {
			case strings.HasPrefix(sp.OperationName, "chat "):
				key := svc + "|" + sp.tagString("gen_ai.conversation.id")
				s := got[key]
				s.In += tagInt(sp, "gen_ai.usage.input_tokens")
				s.Out += tagInt(sp, "gen_ai.usage.output_tokens")
				got[key] = s
				if sp.parent() == root.SpanID {
					children["chat"]++
				}
			case strings.HasPrefix(sp.OperationName, "execute_tool ") && sp.parent() == root.SpanID:
				children["tool"]++
			}
		}
		if root.SpanID != "" {
			key := svc + "|" + root.tagString("gen_ai.conversation.id")
			rooted[key] = append(rooted[key], turnShape{chat: children["chat"] > 0, tool: children["tool"] > 0})
		}
	}
	assert.Equal(t, exp.tokens, got, "tokens per session: the captured model calls of each turn, once")
	bySession := map[string][]turnShape{}
	for turn, shape := range exp.turns {
		service, rest, _ := strings.Cut(turn, "|")
		session, _, _ := strings.Cut(rest, "|")
		bySession[service+"|"+session] = append(bySession[service+"|"+session], shape)
	}
	for _, svc := range []string{"claude-code", "codex"} {
		n := 0
		for key, shapes := range bySession {
			if !strings.HasPrefix(key, svc+"|") {
				continue
			}
			n++
			// Every captured turn with its prompt is a trace rooted in invoke_agent, whose
			// children include what the captures hold of it.
			assert.Len(t, rooted[key], len(shapes), "%s: one rooted trace per captured prompt", key)
			for _, want := range shapes {
				found := false
				for _, got := range rooted[key] {
					found = found || ((!want.chat || got.chat) && (!want.tool || got.tool))
				}
				assert.True(t, found, "%s: a turn with chat spans %v, execute_tool spans %v", key, want.chat, want.tool)
			}
		}
		assert.Positive(t, n, "%s: a turn with its prompt in the captures", svc)
	}

	// Then the agents' own spans.
	for _, cl := range traceLines {
		postOTLP(t, ports[1], "traces", cl.body)
	}
	var spans map[string]jSpan
	var service map[string]string
	waitFor(t, 60*time.Second, fmt.Sprintf("the %d captured spans in Jaeger", len(native)), func() (bool, string) {
		spans, service, _ = j.allSpans(t)
		n := 0
		for id := range native {
			if _, ok := spans[id]; ok {
				n++
			}
		}
		return n == len(native), fmt.Sprintf("%d of %d", n, len(native))
	})
	// Claude Code's span.type, Codex's span names: the turn, a model call, the one span per tool
	// call (Codex's holds the call's codex.tool_result event).
	wantPrefix := map[string]string{
		"interaction": "invoke_agent ", "llm_request": "chat ", "llm_request without usage": "chat ", "tool": "execute_tool ",
		"session_task.turn": "invoke_agent ", "dispatch_tool_call_with_terminal_outcome": "execute_tool ",
	}
	for id, kind := range native {
		sp := spans[id]
		assert.Equal(t, "otlp", sp.tagString(agentevent.AttrOrigin), "span %s (%s)", id, kind)
		assert.Contains(t, []string{"claude-code", "codex"}, service[id], "span %s (%s): service", id, kind)
		if prefix, ok := wantPrefix[kind]; ok {
			assert.True(t, strings.HasPrefix(sp.OperationName, prefix), "span %s (%s) named %q, want %s…", id, kind, sp.OperationName, prefix)
		}
		if kind == "llm_request" {
			assert.Equal(t, "chat", sp.tagString("gen_ai.operation.name"), "span %s", id)
			assert.NotEmpty(t, sp.tagString("gen_ai.usage.input_tokens"), "span %s", id)
		}
	}
}

// tagInt is a numeric span tag (0 when absent).
func tagInt(sp jSpan, key string) int64 {
	v, ok := sp.tag(key)
	if !ok {
		return 0
	}
	n, _ := agentevent.NativeInt(normalizeJSONNumber(v))
	return n
}

// normalizeJSONNumber turns what encoding/json gives for a number (float64) or a string into
// what NativeInt reads.
func normalizeJSONNumber(v any) any {
	switch x := v.(type) {
	case float64, string, int64:
		return x
	case int:
		return int64(x)
	}
	return fmt.Sprint(v)
}

// TestNativeClaudeSessionStory is one Claude Code session told over OTLP, as an agent in a CI
// container sends it: a prompt, a model call that asks for a tool, the Bash call's result, and
// the model's answer (records built in Go from the captured shapes, see nativerecords_test.go),
// each export sent when Claude Code's batch processor would. In Jaeger: one trace, rooted in
// invoke_agent claude-code, with the two model calls as chat spans and the Bash call as an
// execute_tool span under it; tokens counted the AgentEvent way (input includes the cache), the
// stated cost on the chat spans, and no identity attribute (user.email, ids) on any span.
func TestNativeClaudeSessionStory(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector and Jaeger (skipped with -short)")
	}
	bin := collectorBinary(t)
	j := startJaeger(t)
	ports := testenv.FreePorts(t, 2)
	p := start(t, "collector", bin, append(testhome.Env(t.TempDir()),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		fmt.Sprintf("AGENTOTEL_OTLP_GRPC_PORT=%d", ports[0]),
		fmt.Sprintf("AGENTOTEL_OTLP_HTTP_PORT=%d", ports[1]),
		fmt.Sprintf("OTLP_ENDPOINT=127.0.0.1:%d", j.otlpGRPC),
	), "--config", nativeConfig(t, "native.yaml", 2*time.Second))
	waitListening(t, p, ports[1])

	session := testUUID(0x5e55, 1)
	prompt := testUUID(0x9e07, 1)
	s := newClaudeSessionOTLP(session, time.Now().Add(-10*time.Minute).Truncate(time.Millisecond))
	const model = claudeModel
	first := []claudeRecord{
		s.userPrompt(prompt, 42),
		s.apiRequest(prompt, 2, 86, 10126, 12344, 0.130663),
	}
	second := []claudeRecord{
		s.toolResult(prompt, "Bash", "toolu_e2eStory0000000000001", true, 504),
		s.apiRequest(prompt, 506, 14, 22470, 69, 0.037787),
	}
	postOTLP(t, ports[1], "logs", claudeExport(t, first))
	postOTLP(t, ports[1], "logs", claudeExport(t, second))

	var traces []jTrace
	waitFor(t, 60*time.Second, "the session's turn in Jaeger", func() (bool, string) {
		require.False(t, p.Exited(), "the collector stopped: %s", p.LogText())
		traces = j.traces(t, "claude-code")
		return len(traces) > 0, "no trace yet"
	})
	time.Sleep(3 * time.Second) // anything else the session made (it must not) has arrived
	traces = j.traces(t, "claude-code")
	require.Len(t, traces, 1, "one turn, one trace")
	tr := traces[0]

	var root jSpan
	names := map[string]int{}
	var in, out int64
	var cost float64
	for _, sp := range tr.Spans {
		names[sp.OperationName]++
		if sp.parent() == "" {
			root = sp
		}
		for _, tg := range sp.Tags {
			assert.NotContains(t, []string{"user.email", "user.account_uuid", "user.account_id", "organization.id", "user.id"}, tg.Key,
				"span %s carries an identity attribute", sp.OperationName)
		}
	}
	require.Equal(t, "invoke_agent claude-code", root.OperationName)
	assert.Equal(t, session, root.tagString("gen_ai.conversation.id"))
	assert.Equal(t, map[string]int{"invoke_agent claude-code": 1, "chat " + model: 2, "execute_tool Bash": 1}, names)
	for _, sp := range tr.Spans {
		if sp.SpanID == root.SpanID {
			continue
		}
		assert.Equal(t, root.SpanID, sp.parent(), "%s is a child of the turn", sp.OperationName)
		switch sp.OperationName {
		case "chat " + model:
			in += tagInt(sp, "gen_ai.usage.input_tokens")
			out += tagInt(sp, "gen_ai.usage.output_tokens")
			c, _ := sp.tag("agent.usage.cost_usd")
			f, _ := c.(float64)
			cost += f
			assert.Equal(t, "log", sp.tagString("agent.usage.cost_source"), "the cost Claude Code stated")
		case "execute_tool Bash":
			assert.Equal(t, "toolu_e2eStory0000000000001", sp.tagString("gen_ai.tool.call.id"))
			assert.NotEqual(t, "ERROR", sp.tagString("otel.status_code"))
		}
	}
	assert.Equal(t, int64(2+10126+12344+506+22470+69), in, "input tokens: Anthropic's input plus cache reads and writes")
	assert.Equal(t, int64(86+14), out)
	assert.InDelta(t, 0.130663+0.037787, cost, 1e-9)
	assert.Equal(t, "2", root.tagString("agent.turn.model_calls"))
	assert.Equal(t, "1", root.tagString("agent.turn.tool_calls"))
}
