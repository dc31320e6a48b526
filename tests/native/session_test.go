// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package native tests turn assembly from agents' own telemetry end to end:
// whole Claude Code and Codex sessions, built record by record in the shape
// the agents send (records_test.go), go as OTLP logs through the
// agent_native processor into the agent_span connector, each made by its
// factory, and the traces that come out are held to the span model: one
// trace per turn, chat spans with the stated durations and the tokens of
// the records, tool spans with their outcome, every parent link, and the
// same traces when the records come twice.
package native

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentotel/agentotel/connector/agentspanconnector"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor"
)

// idle is the connector's turn_idle_timeout (and max_open_tool_duration):
// short, so that a turn the next prompt does not close closes by time
// within the test.
const idle = 100 * time.Millisecond

// --- the pipeline ---

// pipeline is the path an agent's own logs take in the collector: OTLP
// logs as the otlp receiver hands them on → the agent_native processor →
// the agent_span connector → a sink, each made by its factory.
type pipeline struct {
	t    *testing.T
	in   processor.Logs
	conn connector.Logs
	sink *consumertest.TracesSink
	tel  *componenttest.Telemetry
}

func newPipeline(t *testing.T) *pipeline {
	t.Helper()
	ctx := t.Context()
	p := &pipeline{t: t, sink: new(consumertest.TracesSink), tel: componenttest.NewTelemetry()}
	t.Cleanup(func() { _ = p.tel.Shutdown(ctx) })

	cf := agentspanconnector.NewFactory()
	ccfg := cf.CreateDefaultConfig().(*agentspanconnector.Config)
	ccfg.TurnIdleTimeout = idle
	ccfg.MaxOpenToolDuration = idle
	conn, err := cf.CreateLogsToTraces(ctx, connectortest.NewNopSettings(cf.Type()), ccfg, p.sink)
	require.NoError(t, err)
	require.NoError(t, conn.Start(ctx, componenttest.NewNopHost()))
	p.conn = conn

	pf := agentnativeprocessor.NewFactory()
	set := processortest.NewNopSettings(pf.Type())
	set.TelemetrySettings = p.tel.NewTelemetrySettings()
	in, err := pf.CreateLogs(ctx, set, pf.CreateDefaultConfig(), conn)
	require.NoError(t, err)
	require.NoError(t, in.Start(ctx, componenttest.NewNopHost()))
	p.in = in
	return p
}

// send hands one export to the pipeline, as the otlp receiver would.
func (p *pipeline) send(ld plog.Logs) {
	p.t.Helper()
	cp := plog.NewLogs()
	ld.CopyTo(cp) // the processor replaces records in place; some tests send a batch twice
	require.NoError(p.t, p.in.ConsumeLogs(context.Background(), cp))
}

// settle waits until n turns went out (closed by the next prompt or by
// idle time on the connector's one-second ticker): n traces with a chat
// span.
func (p *pipeline) settle(n int) {
	p.t.Helper()
	require.Eventually(p.t, func() bool {
		traces := map[string]bool{}
		for _, s := range spansOf(p.sink.AllTraces()) {
			if s.op() == "chat" {
				traces[s.traceID] = true
			}
		}
		return len(traces) >= n
	}, 10*time.Second, 20*time.Millisecond, "%d turns expected", n)
}

// stop waits out the idle time and shuts the pipeline down: turns still
// open are closed by the idle rule first.
func (p *pipeline) stop() []*span {
	p.t.Helper()
	time.Sleep(2 * idle)
	require.NoError(p.t, p.in.Shutdown(context.Background()))
	require.NoError(p.t, p.conn.Shutdown(context.Background()))
	return spansOf(p.sink.AllTraces())
}

// outcomes reads the processor's otelcol_agent_native_records counter:
// records by agent and outcome (mapped, ignored, unmapped, passed).
func (p *pipeline) outcomes() map[string]int64 {
	p.t.Helper()
	out := map[string]int64{}
	m, err := p.tel.GetMetric("otelcol_agent_native_records")
	require.NoError(p.t, err)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(p.t, ok, "otelcol_agent_native_records is an int sum")
	for _, dp := range sum.DataPoints {
		agent, _ := dp.Attributes.Value("agent")
		outcome, _ := dp.Attributes.Value("outcome")
		out[agent.AsString()+"/"+outcome.AsString()] += dp.Value
	}
	return out
}

// --- the spans ---

type span struct {
	traceID, spanID, parent string
	name                    string
	start, end              time.Time
	statusError             bool
	attrs                   map[string]any
}

func spansOf(tds []ptrace.Traces) []*span {
	var out []*span
	for _, td := range tds {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					s := ss.At(k)
					sp := span{
						traceID: s.TraceID().String(), spanID: s.SpanID().String(), name: s.Name(),
						start: s.StartTimestamp().AsTime(), end: s.EndTimestamp().AsTime(),
						statusError: s.Status().Code() == ptrace.StatusCodeError, attrs: s.Attributes().AsRaw(),
					}
					if !s.ParentSpanID().IsEmpty() {
						sp.parent = s.ParentSpanID().String()
					}
					out = append(out, &sp)
				}
			}
		}
	}
	return out
}

func (s *span) str(k string) string { return agentevent.NativeStr(s.attrs[k]) }

func (s *span) num(k string) int64 {
	n, _ := agentevent.NativeInt(s.attrs[k])
	return n
}

func (s *span) op() string { return s.str("gen_ai.operation.name") }

func roots(spans []*span) []*span {
	var out []*span
	for _, s := range spans {
		if s.parent == "" {
			out = append(out, s)
		}
	}
	return out
}

// --- what a session should give ---

// wantChat is one model call: its response id, the duration its record
// stated (0: none stated, the span starts at the event before), its
// tokens in our convention and its stated cost.
type wantChat struct {
	responseID                     string
	durationMs                     int64
	start, end                     time.Time
	in, out, cacheRead, cacheWrite int64
	reasoning                      int64
	cost                           float64
}

// wantTool is one tool call: a failure has errType.
type wantTool struct {
	callID, name string
	start, end   time.Time
	errType      string
}

type wantTurn struct {
	chats []wantChat
	tools []wantTool
	// promptMissing: the turn's user_prompt never arrived.
	promptMissing bool
}

// scenario is a whole session: the batches the agent sends, in order, and
// the turns they make.
type scenario struct {
	agent   string // the root's gen_ai.agent.name
	batches []plog.Logs
	turns   []wantTurn
	// tokens are the sums over the records' own token attributes, computed
	// from the wire (recordTokens), not from the expectations above.
	tokens tokenSums
	// outcomes are the processor's counts of the records, by agent and
	// outcome.
	outcomes map[string]int64
}

type tokenSums struct{ in, out int64 }

var (
	claudeT0 = time.Date(2026, 1, 4, 21, 45, 14, 598e6, time.UTC)
	codexT0  = time.Date(2026, 1, 7, 6, 32, 19, 917186e3, time.UTC)
)

func at(t0 time.Time, ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// claudeScenario: four turns of one Claude Code session.
//  1. prompt → api_request (tool use) → tool_decision accept → tool_result
//     success → api_request → assistant_response;
//  2. the same with a failing Bash (success "false", error_type ShellError);
//  3. the same shape whose user_prompt never arrived (prompt.id only on
//     the later records);
//  4. prompt → api_request → tool_decision reject (a rule denied the MCP
//     tool) → api_request → assistant_response.
func claudeScenario() scenario {
	s := newClaudeSession("c7f1e2d3-5a6b-4c7d-8e9f-0a1b2c3d4e5f")
	model := "claude-opus-5"
	call := func(id string, in, out, cr, cc int64, cost float64, dur int64) apiCall {
		return apiCall{model: model, in: in, out: out, cacheRead: cr, cacheCreate: cc, costUSD: cost, durationMs: dur, ttftMs: 900, requestID: id}
	}
	chat := func(c apiCall, end time.Time) wantChat {
		return wantChat{
			responseID: c.requestID, durationMs: c.durationMs, start: end.Add(-time.Duration(c.durationMs) * time.Millisecond), end: end,
			in: c.in + c.cacheRead + c.cacheCreate, out: c.out, cacheRead: c.cacheRead, cacheWrite: c.cacheCreate, cost: c.costUSD,
		}
	}
	var sc scenario
	sc.agent = "claude-code"

	// Turn 1.
	p1, t1 := "3bc10a7f-ce7c-4432-8022-000000000001", claudeT0
	r1 := call("req_011CTurnOneCallOne0000", 2, 183, 30632, 18830, 0.208201, 3172)
	r2 := call("req_011CTurnOneCallTwo0000", 6, 241, 49462, 412, 0.031877, 4101)
	sc.batches = append(sc.batches, logs(claudeExport(
		s.userPrompt(p1, t1, 162),
		s.apiRequest(p1, at(t1, 4000), r1),
		s.toolDecision(p1, at(t1, 4100), "Bash", "toolu_01TurnOneBash000000000", "accept", "builtin"),
		s.toolResultOK(p1, at(t1, 4720), "Bash", "toolu_01TurnOneBash000000000", 504),
		s.apiRequest(p1, at(t1, 9000), r2),
		s.assistantResponse(p1, at(t1, 9000), r2),
	)))
	sc.turns = append(sc.turns, wantTurn{
		chats: []wantChat{chat(r1, at(t1, 4000)), chat(r2, at(t1, 9000))},
		tools: []wantTool{{callID: "toolu_01TurnOneBash000000000", name: "Bash", start: at(t1, 4720-504), end: at(t1, 4720)}},
	})

	// Turn 2: the Bash call fails.
	p2, t2 := "3bc10a7f-ce7c-4432-8022-000000000002", at(claudeT0, 60_000)
	r3 := call("req_011CTurnTwoCallOne0000", 2, 95, 50100, 1210, 0.041002, 2210)
	r4 := call("req_011CTurnTwoCallTwo0000", 4, 310, 51310, 388, 0.049113, 5020)
	sc.batches = append(sc.batches, logs(claudeExport(
		s.userPrompt(p2, t2, 48),
		s.apiRequest(p2, at(t2, 3000), r3),
		s.toolDecision(p2, at(t2, 3050), "Bash", "toolu_01TurnTwoBash000000000", "accept", "builtin"),
		s.toolResultShellError(p2, at(t2, 3130), "toolu_01TurnTwoBash000000000", 72),
		s.apiRequest(p2, at(t2, 8400), r4),
		s.assistantResponse(p2, at(t2, 8400), r4),
	)))
	sc.turns = append(sc.turns, wantTurn{
		chats: []wantChat{chat(r3, at(t2, 3000)), chat(r4, at(t2, 8400))},
		tools: []wantTool{{callID: "toolu_01TurnTwoBash000000000", name: "Bash", start: at(t2, 3130-72), end: at(t2, 3130), errType: "ShellError"}},
	})

	// Turn 3: its user_prompt never arrives.
	p3, t3 := "3bc10a7f-ce7c-4432-8022-000000000003", at(claudeT0, 120_000)
	s.seq++ // the lost user_prompt had its event.sequence
	r5 := call("req_011CTurnThreeCallOne00", 2, 130, 51698, 2204, 0.052310, 2890)
	r6 := call("req_011CTurnThreeCallTwo00", 3, 77, 53902, 640, 0.033871, 1894)
	sc.batches = append(sc.batches, logs(claudeExport(
		s.apiRequest(p3, at(t3, 3500), r5),
		s.toolDecision(p3, at(t3, 3600), "Read", "toolu_01TurnThreeRead0000000", "accept", "builtin"),
		s.toolResultOK(p3, at(t3, 3640), "Read", "toolu_01TurnThreeRead0000000", 19),
		s.apiRequest(p3, at(t3, 6000), r6),
		s.assistantResponse(p3, at(t3, 6000), r6),
	)))
	sc.turns = append(sc.turns, wantTurn{
		chats:         []wantChat{chat(r5, at(t3, 3500)), chat(r6, at(t3, 6000))},
		tools:         []wantTool{{callID: "toolu_01TurnThreeRead0000000", name: "Read", start: at(t3, 3640-19), end: at(t3, 3640)}},
		promptMissing: true,
	})

	// Turn 4: a rule rejects the MCP tool call; the model answers anyway.
	p4, t4 := "3bc10a7f-ce7c-4432-8022-000000000004", at(claudeT0, 180_000)
	r7 := call("req_011CTurnFourCallOne000", 2, 88, 54542, 300, 0.030120, 2400)
	r8 := call("req_011CTurnFourCallTwo000", 5, 150, 54842, 221, 0.036006, 3300)
	sc.batches = append(sc.batches, logs(claudeExport(
		s.userPrompt(p4, t4, 31),
		s.apiRequest(p4, at(t4, 2600), r7),
		s.toolDecision(p4, at(t4, 2700), "mcp_tool", "toolu_01TurnFourMcp00000000", "reject", "mcp"),
		s.apiRequest(p4, at(t4, 6100), r8),
		s.assistantResponse(p4, at(t4, 6100), r8),
	)))
	sc.turns = append(sc.turns, wantTurn{
		chats: []wantChat{chat(r7, at(t4, 2600)), chat(r8, at(t4, 6100))},
		// A call that did not run: call and refusal at the decision.
		tools: []wantTool{{callID: "toolu_01TurnFourMcp00000000", name: "mcp_tool", start: at(t4, 2700), end: at(t4, 2700), errType: "permission_denied"}},
	})
	sc.tokens = recordTokens(sc.batches)
	// A tool_decision accept says nothing its tool_result does not: ignored.
	sc.outcomes = map[string]int64{"claude_code/mapped": 19, "claude_code/ignored": 3}
	return sc
}

// codexScenario: one Codex conversation, two turns by prompt order.
//  1. conversation_starts, prompt → response.completed (tool use) →
//     tool_result success → response.completed;
//  2. prompt → response.completed → tool_decision denied → the failed
//     tool_result Codex logs for the denied call → response.completed.
func codexScenario() scenario {
	s := &codexSession{id: "019b8a3c-5e2f-7d10-9a4b-3c2d1e0f9a8b", model: "gpt-6-astra"}
	responseID := func(t time.Time) string { return fmt.Sprintf("%s#%d", s.id, t.UnixNano()) }
	chat := func(u codexUsage, start, end time.Time) wantChat {
		return wantChat{responseID: responseID(end), start: start, end: end, in: u.in, out: u.out, cacheRead: u.cached, reasoning: u.reasoning}
	}
	var sc scenario
	sc.agent = "codex"
	tr1, tr2 := "e87c5e5d8c14fafba4abf91e6dd0dc8a", "4fa66bee5f6d93d301f6236e748f4187"

	// Turn 1.
	t1 := codexT0
	u1 := codexUsage{in: 21836, out: 412, cached: 17408, reasoning: 128}
	u2 := codexUsage{in: 22400, out: 95, cached: 21760}
	sc.batches = append(sc.batches, logs(codexExport(
		s.conversationStarts(at(t1, -120), tr1),
		s.userPrompt(t1, tr1, 57),
		s.completed(at(t1, 3100), u1),
		s.toolResult(at(t1, 3600), tr1, "exec-51221a66-cf84-41db-9125-000000000001", 1, 80, true),
		s.completed(at(t1, 6200), u2),
	)))
	sc.turns = append(sc.turns, wantTurn{
		chats: []wantChat{chat(u1, t1, at(t1, 3100)), chat(u2, at(t1, 3600), at(t1, 6200))},
		tools: []wantTool{{callID: "exec-51221a66-cf84-41db-9125-000000000001", name: "exec_command", start: at(t1, 3600-80), end: at(t1, 3600)}},
	})

	// Turn 2: the user denies the command.
	t2 := at(codexT0, 60_000)
	u3 := codexUsage{in: 22650, out: 230, cached: 22272, reasoning: 64}
	u4 := codexUsage{in: 22990, out: 61, cached: 22784}
	sc.batches = append(sc.batches, logs(codexExport(
		s.userPrompt(t2, tr2, 24),
		s.completed(at(t2, 2900), u3),
		s.toolDecision(at(t2, 4000), tr2, "exec_command", "exec-51221a66-cf84-41db-9125-000000000002", "denied", "User"),
		s.toolResult(at(t2, 4010), tr2, "exec-51221a66-cf84-41db-9125-000000000002", 2, 0, false),
		s.completed(at(t2, 5800), u4),
	)))
	sc.turns = append(sc.turns, wantTurn{
		chats: []wantChat{chat(u3, t2, at(t2, 2900)), chat(u4, at(t2, 4010), at(t2, 5800))},
		tools: []wantTool{{callID: "exec-51221a66-cf84-41db-9125-000000000002", name: "exec_command", start: at(t2, 4000), end: at(t2, 4010), errType: "tool_error"}},
	})
	sc.tokens = recordTokens(sc.batches)
	sc.outcomes = map[string]int64{"codex/mapped": 10}
	return sc
}

// codexPromptMissingScenario: the first turn of codexScenario's
// conversation as a collector started mid-conversation sees it, or as a
// lost export leaves it: no conversation_starts, no user_prompt, and no
// later prompt. The model calls and the tool call wait for a prompt in
// agent_span; when none came within turn_idle_timeout they are a turn of
// their own, marked prompt_missing, every response's tokens on its chat
// span.
func codexPromptMissingScenario() scenario {
	s := &codexSession{id: "019b8a3c-5e2f-7d10-9a4b-3c2d1e0f9a8c", model: "gpt-6-astra"}
	responseID := func(t time.Time) string { return fmt.Sprintf("%s#%d", s.id, t.UnixNano()) }
	chat := func(u codexUsage, start, end time.Time) wantChat {
		return wantChat{responseID: responseID(end), start: start, end: end, in: u.in, out: u.out, cacheRead: u.cached, reasoning: u.reasoning}
	}
	var sc scenario
	sc.agent = "codex"
	tr1 := "e87c5e5d8c14fafba4abf91e6dd0dc8b"
	t1 := codexT0
	u1 := codexUsage{in: 21836, out: 412, cached: 17408, reasoning: 128}
	u2 := codexUsage{in: 22400, out: 95, cached: 21760}
	sc.batches = append(sc.batches, logs(codexExport(
		s.completed(at(t1, 3100), u1),
		s.toolResult(at(t1, 3600), tr1, "exec-51221a66-cf84-41db-9125-000000000003", 1, 80, true),
		s.completed(at(t1, 6200), u2),
	)))
	sc.turns = append(sc.turns, wantTurn{
		chats:         []wantChat{chat(u1, at(t1, 3100), at(t1, 3100)), chat(u2, at(t1, 3600), at(t1, 6200))},
		tools:         []wantTool{{callID: "exec-51221a66-cf84-41db-9125-000000000003", name: "exec_command", start: at(t1, 3600-80), end: at(t1, 3600)}},
		promptMissing: true,
	})
	sc.tokens = recordTokens(sc.batches)
	sc.outcomes = map[string]int64{"codex/mapped": 3}
	return sc
}

// recordTokens sums the token attributes of the records as sent: Claude
// Code's api_request (input_tokens + cache_read_tokens +
// cache_creation_tokens, output_tokens), Codex's response.completed
// (input_token_count, output_token_count), whatever their wire type.
func recordTokens(batches []plog.Logs) tokenSums {
	var t tokenSums
	n := func(m pcommon.Map, k string) int64 {
		v, ok := m.Get(k)
		if !ok {
			return 0
		}
		i, _ := agentevent.NativeInt(v.AsRaw())
		return i
	}
	for _, ld := range batches {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					a := lrs.At(k).Attributes()
					name, _ := a.Get("event.name")
					kind, _ := a.Get("event.kind")
					switch {
					case name.Str() == "api_request":
						t.in += n(a, "input_tokens") + n(a, "cache_read_tokens") + n(a, "cache_creation_tokens")
						t.out += n(a, "output_tokens")
					case name.Str() == "codex.sse_event" && kind.Str() == "response.completed":
						t.in += n(a, "input_token_count")
						t.out += n(a, "output_token_count")
					}
				}
			}
		}
	}
	return t
}

// --- the assertions ---

// checkSession holds the spans of a session to its scenario.
func checkSession(t *testing.T, sc scenario, spans []*span) {
	t.Helper()
	byTrace := map[string][]*span{}
	for _, s := range spans {
		byTrace[s.traceID] = append(byTrace[s.traceID], s)
	}
	require.Len(t, byTrace, len(sc.turns), "one trace per turn")
	ids := map[string]bool{}
	for _, s := range spans {
		assert.False(t, ids[s.spanID], "span %s (%s) emitted twice", s.spanID, s.name)
		ids[s.spanID] = true
	}

	var chatIn, chatOut int64
	for _, s := range spans {
		if s.op() == "chat" {
			chatIn += s.num("gen_ai.usage.input_tokens")
			chatOut += s.num("gen_ai.usage.output_tokens")
		}
	}
	assert.Equal(t, tokenSums{chatIn, chatOut}, sc.tokens, "tokens over the chat spans = tokens of the records")
	for i, turn := range sc.turns {
		t.Run(fmt.Sprintf("turn%d", i+1), func(t *testing.T) {
			trace := traceOf(t, byTrace, turn)
			rs := roots(trace)
			var root *span
			if assert.Len(t, rs, 1, "one root span: a turn whose user_prompt never arrived is still a turn (NATIVE.md)") {
				root = rs[0]
				assert.Equal(t, "invoke_agent "+sc.agent, root.name)
				assert.Equal(t, "invoke_agent", root.op())
				assert.Equal(t, "completed", root.str("agent.turn.status"))
				assert.Equal(t, int64(len(turn.chats)), root.num("agent.turn.model_calls"))
				assert.Equal(t, int64(len(turn.tools)), root.num("agent.turn.tool_calls"))
				failures := 0
				for _, w := range turn.tools {
					if w.errType != "" {
						failures++
					}
				}
				assert.Equal(t, int64(failures), root.num("agent.turn.tool_errors"))
				if turn.promptMissing {
					assert.Equal(t, true, root.attrs["agent.turn.prompt_missing"], "the root says its prompt never came")
				} else {
					assert.NotContains(t, root.attrs, "agent.turn.prompt_missing")
				}
			} else {
				// Hold the rest to the span model under the parent the
				// spans name.
				root = &span{spanID: trace[0].parent}
			}

			chats := map[string]*span{}
			tools := map[string]*span{}
			for _, s := range trace {
				if s.spanID == root.spanID {
					continue
				}
				assert.Equal(t, root.spanID, s.parent, "%s is a child of the root", s.name)
				if !root.end.IsZero() {
					assert.False(t, s.start.Before(root.start), "%s starts within the root", s.name)
					assert.False(t, s.end.After(root.end), "%s ends within the root", s.name)
				}
				switch s.op() {
				case "chat":
					chats[s.str(agentevent.AttrResponseID)] = s
				case "execute_tool":
					tools[s.str(agentevent.AttrToolCallID)] = s
				default:
					t.Errorf("unexpected span %q", s.name)
				}
			}
			require.Len(t, chats, len(turn.chats), "chat spans")
			require.Len(t, tools, len(turn.tools), "execute_tool spans")
			for _, w := range turn.chats {
				s, ok := chats[w.responseID]
				if !assert.True(t, ok, "chat span of %s", w.responseID) {
					continue
				}
				assert.True(t, w.end.Equal(s.end), "%s ends at its record: %s, want %s", w.responseID, s.end, w.end)
				assert.True(t, w.start.Equal(s.start), "%s starts at %s, want %s", w.responseID, s.start, w.start)
				if w.durationMs > 0 {
					assert.Equal(t, w.durationMs, s.end.Sub(s.start).Milliseconds(), "%s lasts its duration_ms", w.responseID)
					assert.Equal(t, w.durationMs, s.num(agentevent.AttrChatDurationMs))
				}
				assert.Equal(t, w.in, s.num("gen_ai.usage.input_tokens"), "%s input (cache reads and writes included)", w.responseID)
				assert.Equal(t, w.out, s.num("gen_ai.usage.output_tokens"), "%s output", w.responseID)
				assert.Equal(t, w.cacheRead, s.num("gen_ai.usage.cache_read.input_tokens"), "%s cache read", w.responseID)
				assert.Equal(t, w.cacheWrite, s.num("gen_ai.usage.cache_creation.input_tokens"), "%s cache write", w.responseID)
				assert.Equal(t, w.reasoning, s.num("gen_ai.usage.reasoning.output_tokens"), "%s reasoning", w.responseID)
				if w.cost > 0 {
					cost, ok := agentevent.NativeFloat(s.attrs[agentevent.AttrCostUSD])
					assert.True(t, ok && math.Abs(cost-w.cost) < 1e-12, "%s costs %v as stated, got %v", w.responseID, w.cost, s.attrs[agentevent.AttrCostUSD])
				} else {
					assert.NotContains(t, s.attrs, agentevent.AttrCostUSD, "no cost stated, none invented")
				}
				assert.False(t, s.statusError, "%s succeeded", w.responseID)
			}
			for _, w := range turn.tools {
				s, ok := tools[w.callID]
				if !assert.True(t, ok, "execute_tool span of %s", w.callID) {
					continue
				}
				assert.Equal(t, "execute_tool "+w.name, s.name)
				assert.True(t, w.start.Equal(s.start), "%s starts at %s, want %s", w.callID, s.start, w.start)
				assert.True(t, w.end.Equal(s.end), "%s ends at %s, want %s", w.callID, s.end, w.end)
				assert.NotContains(t, s.attrs, "process.exit.code", "no native exit code")
				if w.errType == "" {
					assert.False(t, s.statusError, "%s succeeded", w.callID)
					assert.Equal(t, "success", s.str(agentevent.AttrToolStatus))
					assert.NotContains(t, s.attrs, agentevent.AttrErrorType)
					continue
				}
				assert.True(t, s.statusError, "%s failed: status Error", w.callID)
				assert.Equal(t, "error", s.str(agentevent.AttrToolStatus))
				assert.Equal(t, w.errType, s.str(agentevent.AttrErrorType))
			}
		})
	}
}

// traceOf finds the trace holding the turn's first model call.
func traceOf(t *testing.T, byTrace map[string][]*span, turn wantTurn) []*span {
	t.Helper()
	for _, trace := range byTrace {
		for _, s := range trace {
			if s.op() == "chat" && s.str(agentevent.AttrResponseID) == turn.chats[0].responseID {
				return trace
			}
		}
	}
	require.FailNow(t, "no trace holds "+turn.chats[0].responseID)
	return nil
}

type spanKey struct{ trace, id, parent, name string }

func keys(spans []*span) []spanKey {
	out := make([]spanKey, 0, len(spans))
	for _, s := range spans {
		out = append(out, spanKey{s.traceID, s.spanID, s.parent, s.name})
	}
	slices.SortFunc(out, func(a, b spanKey) int {
		if c := compare(a.trace, b.trace); c != 0 {
			return c
		}
		return compare(a.id, b.id)
	})
	return out
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// --- the tests ---

func scenarios() map[string]func() scenario {
	return map[string]func() scenario{
		"claude_code":          claudeScenario,
		"codex":                codexScenario,
		"codex_prompt_missing": codexPromptMissingScenario,
	}
}

// TestSessionTurns: a whole session, one export per turn, gives one trace
// per turn held to the span model.
func TestSessionTurns(t *testing.T) {
	for name, build := range scenarios() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := build()
			p := newPipeline(t)
			for _, b := range sc.batches {
				p.send(b)
			}
			spans := p.stop()
			checkSession(t, sc, spans)
			assert.Equal(t, sc.outcomes, p.outcomes(), "records mapped and ignored; none unmapped")
		})
	}
}

// TestSessionOneBatch: the whole session in one export (the agent's
// batching interval can hold several turns) gives the same traces.
func TestSessionOneBatch(t *testing.T) {
	for name, build := range scenarios() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := build()
			whole := plog.NewLogs()
			for _, b := range sc.batches {
				b.ResourceLogs().MoveAndAppendTo(whole.ResourceLogs())
			}
			p := newPipeline(t)
			p.send(whole)
			checkSession(t, sc, p.stop())

			perTurn := newPipeline(t)
			for _, b := range build().batches {
				perTurn.send(b)
			}
			assert.Equal(t, keys(perTurn.stop()), keys(spansOf(p.sink.AllTraces())), "the same trace and span ids however the records are batched")
		})
	}
}

// TestSessionSentTwice: the same records sent again (an exporter's retry,
// a replayed queue) give no extra span — whether the turns went out in
// between or not — and a fresh pipeline given the same records makes the
// same traces, ids included.
func TestSessionSentTwice(t *testing.T) {
	for name, build := range scenarios() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := build()
			once := newPipeline(t)
			for _, b := range sc.batches {
				once.send(b)
			}
			want := keys(once.stop())

			// Again after every turn went out.
			p := newPipeline(t)
			for _, b := range build().batches {
				p.send(b)
			}
			p.settle(len(sc.turns))
			for _, b := range build().batches {
				p.send(b)
			}
			spans := p.stop()
			assert.Equal(t, want, keys(spans), "records sent again after their turns went out: the same spans, none more")
			checkSession(t, sc, spans)

			// Again while the turns are still open.
			q := newPipeline(t)
			for _, b := range build().batches {
				q.send(b)
				q.send(b)
			}
			spans = q.stop()
			assert.Equal(t, want, keys(spans), "records sent twice in a row: the same spans, none more")
			checkSession(t, sc, spans)
		})
	}
}
